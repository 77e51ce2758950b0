/* Synchronisation between ranks without MPI_Barrier.
 *
 * - The ready-first handshake (seed 000, "Barrier skew"): MPI_Barrier releases ranks in an order
 *   that depends on the library, so a pair of ranks synchronises with explicit messages whose
 *   order makes the follower (the side that does not time) ready before the leader starts its
 *   clock. The leader's message carries a command, so the follower learns whether to measure
 *   another repetition or stop without any extra message.
 * - Clock offsets against rank 0 by minimum-round-trip ping-pong, and a start of all ranks at one
 *   global time (seed 002 / NBCBench, Netgauge, MPIPerf).
 * All messages go on the communicator given, which should be private to mpilens (a duplicate) so
 * they never match a benchmark's messages. */
#ifndef MPILENS_CORE_SYNC_H
#define MPILENS_CORE_SYNC_H

#include <mpi.h>
#include <stdint.h>

#include "clock.h"

/* Commands carried by the leader's handshake message; benchmarks may use values >= 16. */
enum { ML_CMD_GO = 0, ML_CMD_STOP = 1 };

/* Leader side: sends `cmd`, returns once the follower has answered that it is ready. After it
 * returns the follower is already in its part of the protocol. */
int ml_handshake_lead(MPI_Comm comm, int follower, int cmd);

/* Follower side: waits for the leader's command, answers ready, returns the command. The caller
 * must enter its part of the protocol (post its receive, ...) right after. */
int ml_handshake_follow(MPI_Comm comm, int leader, int *cmd);

typedef struct {
    int64_t offset_ns; /* this rank's clock minus rank 0's clock */
    int64_t rtt_ns;    /* round trip of the exchange the offset was taken from */
    int rounds;        /* ping-pongs made */
} ml_offset_t;

/* Collective. Estimates every rank's clock offset against rank 0: ping-pongs in which the peer
 * reads its clock, keeping the exchange with the smallest round trip; stops after `patience`
 * exchanges without a smaller round trip, or after max_rounds. The error of the estimate is at
 * most rtt/2 (plus the clock resolution), whatever the asymmetry of the two directions. */
int ml_offset_estimate(MPI_Comm comm, int max_rounds, int patience, ml_offset_t *mine);

/* The same with another clock than ml_clock_ns (tests give ranks clocks with a known skew). */
typedef int64_t (*ml_clock_fn)(void);
int ml_offset_estimate_with(MPI_Comm comm, int max_rounds, int patience, ml_clock_fn clock, ml_offset_t *mine);

/* Rank 0's clock as seen from this rank. */
static inline int64_t ml_global_ns(const ml_offset_t *o) { return ml_clock_ns() - o->offset_ns; }

/* Collective. A barrier for ranks that have nothing to do meanwhile: it sleeps between checks
 * instead of spinning in the MPI progress engine, so on shared cores it takes no CPU from the
 * ranks that are measuring. Not for timed regions: it returns up to ~10 ms late. */
int ml_idle_barrier(MPI_Comm comm);

typedef struct {
    int go;              /* rank 0's decision: start (1) or stop (0, and nothing else is set) */
    int64_t start_ns;    /* the common start time, on rank 0's clock */
    int64_t lateness_ns; /* how long after it this rank left the wait */
    int late;            /* the time had already passed when this rank got there: the lead was
                            shorter than the broadcast took */
} ml_start_t;

/* Collective. Rank 0 picks the global time "now + lead_ns" and broadcasts it; every rank spins
 * until its global clock reaches it. Rank 0's `go` travels with the time (other ranks' is
 * ignored): with go = 0 every rank returns at once with out->go = 0, so a repetition loop learns
 * that it is over from the message that would have started the next repetition. */
int ml_start_together(MPI_Comm comm, const ml_offset_t *offset, int64_t lead_ns, int go, ml_start_t *out);
int ml_start_together_with(MPI_Comm comm, ml_clock_fn clock, const ml_offset_t *offset, int64_t lead_ns, int go,
                           ml_start_t *out);

/* How far ahead rank 0 sets the common start of repeated collectives. A repetition in which some
 * rank got there late is not kept and the lead doubles (up to 100 ms), so that ranks really start
 * together; after 16 on-time starts in a row it halves again (down to 100 us), so that a busy
 * spell of the machine does not slow the rest of the run. */
typedef struct {
    int64_t lead_ns;
    int on_time; /* on-time starts since the lead last changed */
} ml_lead_t;

void ml_lead_init(ml_lead_t *lead);
/* After a repetition (any_late: some rank started late): 1 if it counts, else 0. */
int ml_lead_update(ml_lead_t *lead, int64_t any_late);

#endif
