/* What libmpilens-monitor's wrappers call (wrapped.spec): point-to-point and one-sided counting,
 * inline as they run on every message, the collective patterns, and the whole-run mode's life
 * cycle. */
#ifndef MPILENS_MONITOR_HOOKS_H
#define MPILENS_MONITOR_HOOKS_H

#include "coll_patterns.h"
#include "monitor.h"

/* Point-to-point sends (docs/monitor.md, "Point-to-point"): one message of count x type size from
 * this process to the destination, counted when the send is posted (as Open MPI's monitoring
 * counts it), whatever the send mode. Receives are never counted: the sender counts every
 * message. */
static inline void ml_sent(MPI_Comm comm, int dest, MPI_Count count, MPI_Datatype type)
{
    if (ml_recording())
        ml_record(ML_P2P, comm, dest, ml_bytes(count, type));
}

/* After a successful MPI_*send_init: the message each MPI_Start of *request will send. Only
 * requests created while counting is on are known (translating dest needs the engine up). */
static inline void ml_persistent_send(MPI_Comm comm, int dest, MPI_Count count, MPI_Datatype type,
                                      const MPI_Request *request)
{
    if (!ml_recording())
        return;
    ml_message_t message = {ml_world_rank(comm, dest), ml_bytes(count, type)};
    if (message.world_rank >= 0) /* MPI_PROC_NULL: nothing to count at any start */
        ml_persistent_add(*request, ML_P2P, &message, 1);
}

/* One-sided operations (docs/monitor.md, "One-sided"): each is one message from the origin to the
 * target, counted when it is issued, of the size of the data accessed at the target: written for
 * a Put or an accumulate, read for a Get (the bytes travel the other way, but the origin is the
 * process that asked). The target's arguments describe that data in every operation, whatever
 * the origin's buffers hold (a Get_accumulate with MPI_NO_OP has no origin data at all). */
static inline void ml_accessed(MPI_Win win, int target, MPI_Count count, MPI_Datatype type)
{
    if (ml_recording())
        ml_record_win(win, target, ml_bytes(count, type));
}

/* The whole-run mode (wholerun.c): a session from MPI_Init to MPI_Finalize when MPILENS_MONITOR
 * names where to write it. */
void ml_wholerun_begin(int provided);
void ml_wholerun_finish(void);

#endif
