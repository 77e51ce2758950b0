/* libmpilens-progress: a progress thread that gives any MPI library background progress
 * (docs/progress-library.md is the contract).
 *
 * Preloaded (LD_PRELOAD=libmpilens-progress.so) or linked before the MPI library, it starts one
 * thread per process at MPI_Init, asking the library for MPI_THREAD_MULTIPLE, and stops it at
 * MPI_Finalize. The thread drives the library's progress engine with calls on a communicator of
 * its own, never touching the program's requests. It is configured by the environment,
 *
 *     MPILENS_PROGRESS=MODE[,cpu=N|cpu=spare]
 *     MODE: off | poll | yield | sleep:US | rt[:US]
 *
 * or, before MPI_Init, by mpilens_progress_configure() with the same text. */
#ifndef MPILENS_PROGRESS_H
#define MPILENS_PROGRESS_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MPILENS_PROGRESS_OK = 0,
    MPILENS_PROGRESS_ERR_SPEC,    /* the text does not name a mode and placement */
    MPILENS_PROGRESS_ERR_STARTED, /* MPI_Init already ran: configure before it */
    MPILENS_PROGRESS_ERR_ARG      /* a null pointer */
};

/* Sets mode and placement, before MPI_Init (it overrides MPILENS_PROGRESS). */
int mpilens_progress_configure(const char *spec);

typedef struct {
    int running;              /* the thread is running now */
    char mode[16];            /* off, poll, yield, sleep, rt */
    long interval_us;         /* sleep and rt: the pause between polls */
    int cpu;                  /* the processing unit the thread is bound to, or -1 */
    int realtime;             /* rt: SCHED_FIFO was granted */
    unsigned long long polls; /* progress calls made so far */
    char reason[160];         /* why there is no thread, or why a setting fell back ("" if none) */
} mpilens_progress_info_t;

/* What the layer is doing (any time; polls is read without stopping the thread). */
int mpilens_progress_info(mpilens_progress_info_t *info);

/* A name for a status code. */
const char *mpilens_progress_status_string(int status);

#ifdef __cplusplus
}
#endif

#endif
