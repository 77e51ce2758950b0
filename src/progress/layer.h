/* Inside libmpilens-progress (docs/progress-library.md is the contract).
 *
 * One thread per process drives the MPI library's progress engine: MPI_Iprobe on a communicator
 * of the layer's own, which in Open MPI and MPICH runs the whole engine when nothing matches,
 * and touches no request of the program (MPI forbids using one request from two threads). */
#ifndef MPILENS_PROGRESS_LAYER_H
#define MPILENS_PROGRESS_LAYER_H

#include <mpi.h>
#include <pthread.h>

#include "mpilens/progress.h"

typedef enum { MODE_OFF, MODE_POLL, MODE_YIELD, MODE_SLEEP, MODE_RT, MODE_EVENT } ml_progress_mode_t;

enum { CPU_ANY = -1, CPU_SPARE = -2 };

typedef struct {
    ml_progress_mode_t mode;
    long interval_us; /* sleep and rt: the pause between polls; event: the longest wait (0: none) */
    int cpu;          /* a processing unit (OS index), CPU_SPARE or CPU_ANY */
} ml_progress_spec_t;

/* ---- configuration (config.c) ------------------------------------------------------------------ */

/* Parses MODE[,cpu=N|cpu=spare]; on error returns -1 with a message in `why`. */
int ml_progress_parse(const char *text, ml_progress_spec_t *spec, char *why, size_t why_size);
/* The spec in force at MPI_Init: the API's, else MPILENS_PROGRESS's, else the default. A spec
 * that cannot be read gives mode off, with the reason in `why`. */
ml_progress_spec_t ml_progress_wanted(char *why, size_t why_size);
const char *ml_progress_mode_name(ml_progress_mode_t mode);
/* The pause of the sleep mode event falls back to: its longest wait, or the default for event:0. */
long ml_progress_event_fallback_us(long interval_us);
/* Marks the configuration as fixed (MPI_Init ran). */
void ml_progress_freeze(void);

/* Prints one line on stderr, prefixed with the library's name (rank 0 only if `once`). */
void ml_progress_say(int once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- placement (placement.c) ---------------------------------------------------------------------- */

/* The processing unit the thread should run on (OS index), or CPU_ANY; collective over
 * MPI_COMM_WORLD when `cpu` is CPU_SPARE (the node's ranks compare their bindings). A request
 * that cannot be met falls back to CPU_ANY with the reason in `why`. */
int ml_progress_choose_cpu(int cpu, char *why, size_t why_size);
/* Binds `thread` to `cpu` (unless CPU_ANY); returns 0 or -1 with the reason. */
int ml_progress_bind(pthread_t thread, int cpu, char *why, size_t why_size);
/* Gives `thread` SCHED_FIFO at the lowest real-time priority; returns 0 or -1 with the reason. */
int ml_progress_realtime(pthread_t thread, char *why, size_t why_size);

/* ---- the event mode's wait (events.c) ------------------------------------------------------------ */

/* Before MPI_Init: notes the descriptors open then, which are not the library's. */
void ml_progress_events_before_init(void);
/* After MPI_Init: watches the sockets, event fds and epoll sets opened since; returns how many,
 * or -1 with the reason when there is none to watch. */
int ml_progress_events_open(char *why, size_t why_size);
/* Blocks until a watched descriptor has news or timeout_us passed (0: no timeout); returns 1 when
 * a descriptor woke it. Looks for new descriptors after wake-ups. Thread only. */
int ml_progress_events_wait(long timeout_us);
int ml_progress_events_watched(void);
/* Ends the thread's wait at once (to stop it). */
void ml_progress_events_interrupt(void);
void ml_progress_events_close(void);
/* Event mode at MPI_Init (collective over MPI_COMM_WORLD): keeps it when the library has
 * descriptors to wait on, else turns *spec into sleep, with the reason in `why`. */
void ml_progress_events_choose(ml_progress_spec_t *spec, char *why, size_t why_size);

/* ---- the thread (thread.c) ------------------------------------------------------------------------ */

/* Starts the thread for `spec` (cpu already chosen), on a duplicate of MPI_COMM_WORLD, then binds
 * it and raises its priority as asked; what fell back is said and noted. Returns -1 with the
 * reason in `why` if there is no thread. */
int ml_progress_start(const ml_progress_spec_t *spec, char *why, size_t why_size);
/* Stops and joins it, frees its communicator. */
void ml_progress_stop(void);
void ml_progress_state(mpilens_progress_info_t *info);
/* Records why there is no thread, or why a setting fell back, for mpilens_progress_info (the
 * first reason is kept). Main thread only. */
void ml_progress_note(const char *why);

/* The life cycle (init.c; wrapped.spec's lifecycle hooks): the thread level to ask for, the
 * thread started after MPI_Init and stopped before MPI_Finalize. */
int ml_progress_thread_level(int required);
void ml_progress_start_layer(int provided);

#endif
