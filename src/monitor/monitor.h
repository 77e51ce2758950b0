/* libmpilens-monitor internals: the counters every wrapper feeds, and the session engine.
 *
 * Counting is separate from sessions: wrappers add each message to process-wide cumulative
 * counters, indexed by kind and by destination rank in MPI_COMM_WORLD (three atomic adds, no
 * lock: the hot path). A session is a set of snapshots of those counters: at start and at each
 * continue it notes the totals, at each suspend it adds what changed since. So sessions are
 * independent, may overlap and nest, and cost nothing while messages flow. */
#ifndef MPILENS_MONITOR_H
#define MPILENS_MONITOR_H

#include <mpi.h>
#include <sched.h>
#include <stdint.h>

enum { ML_P2P, ML_COLL, ML_OSC, ML_KINDS };

/* One destination's counters. Threads count concurrently, so a reader could see a message's
 * count without its bytes; `begun` makes a consistent read possible without a lock: a writer
 * adds to begun, then bytes, then messages (release), so messages also counts the updates that
 * have ended, and begun == messages means none is half done (ml_cell_read). */
typedef struct {
    uint64_t begun, messages, bytes;
} ml_cell_t;

typedef struct {
    int recording; /* wrappers count only once the engine is up */
    int world_size, world_rank;
    ml_cell_t *cells[ML_KINDS]; /* cumulative, by destination rank in MPI_COMM_WORLD */
} ml_monitor_t;

extern ml_monitor_t ml_mon;

static inline int ml_recording(void) { return __atomic_load_n(&ml_mon.recording, __ATOMIC_ACQUIRE); }

static inline void ml_count_world(int kind, int world_rank, uint64_t bytes)
{
    ml_cell_t *cell = &ml_mon.cells[kind][world_rank];
    __atomic_fetch_add(&cell->begun, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&cell->bytes, bytes, __ATOMIC_RELEASE);
    __atomic_fetch_add(&cell->messages, 1, __ATOMIC_RELEASE);
}

/* A consistent (messages, bytes) pair of one cell: every message counted with its bytes.
 * Reads messages, bytes, then begun; if begun still equals the messages read, no update began
 * or was half done in between. Retries otherwise (updates take nanoseconds). */
static inline void ml_cell_read(int kind, int world_rank, uint64_t *messages, uint64_t *bytes)
{
    const ml_cell_t *cell = &ml_mon.cells[kind][world_rank];
    for (int attempt = 1;; attempt++) {
        uint64_t m = __atomic_load_n(&cell->messages, __ATOMIC_ACQUIRE);
        uint64_t b = __atomic_load_n(&cell->bytes, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&cell->begun, __ATOMIC_ACQUIRE) == m) {
            *messages = m;
            *bytes = b;
            return;
        }
        if (attempt % 64 == 0) /* a writer was descheduled mid-update: let it finish */
            sched_yield();
    }
}

/* ---- recording (record.c): what wrappers call ------------------------------------------------ *
 * Wrappers check ml_recording() first and count nothing while it is 0; these functions are safe
 * to call then too (they do nothing), but ml_count_world is not. */

/* count x size of the datatype; 0 for MPI_DATATYPE_NULL or a failed query. */
uint64_t ml_bytes(MPI_Count count, MPI_Datatype type);

/* Rank in MPI_COMM_WORLD of rank `rank` of comm (of its remote group for an intercommunicator);
 * -1 for MPI_PROC_NULL, a negative rank or a process outside MPI_COMM_WORLD. Cached per
 * communicator. */
int ml_world_rank(MPI_Comm comm, int rank);
int ml_win_world_rank(MPI_Win win, int rank);

/* One message of `bytes` from this process to rank `rank` of comm. */
void ml_record(int kind, MPI_Comm comm, int rank, uint64_t bytes);
/* One-sided: an access of `bytes` at rank `target` of the window's group. */
void ml_record_win(MPI_Win win, int target, uint64_t bytes);

/* Persistent operations: their messages are counted at each MPI_Start. A send registers one
 * message; a persistent collective registers the messages of its logical pattern. */
typedef struct {
    int world_rank;
    uint64_t bytes;
} ml_message_t;
int ml_persistent_add(MPI_Request request, int kind, const ml_message_t *messages, int n);
void ml_persistent_start(MPI_Request request);
void ml_persistent_free(MPI_Request request);

/* ---- engine (record.c) ---------------------------------------------------------------------- */

/* Turns counting on (reference counted: the public API and the whole-run mode both use it).
 * Needs MPI initialised. Returns 0, or -1 if memory or MPI failed. */
int ml_engine_up(void);
void ml_engine_down(void);

#endif
