/** \file mpilens/progress.h
 * \brief libmpilens-progress: a progress thread that gives any MPI library background progress
 * (docs/progress-library.md is the contract).
 *
 * Status convention (the same words in every mpilens public header and in docs/CONTRIBUTING.md):
 * every function returns its library's status type, except `*_status_string`, which names a
 * status. `*_OK` is 0 and means success; every other value names what went wrong. A function
 * writes its outputs (what its pointer parameters point to) only when it returns `*_OK`: after
 * an error, everything the caller owns is as it was. Getters follow the same rule: they write the
 * value through a pointer and return the status, a null pointer being `*_ERR_ARG`.
 * `*_status_string` names every status of its library, and "unknown status" for a value that is
 * none. The monitoring API, mpi_monitoring.h, keeps the seed's convention instead: `MPI_SUCCESS`
 * or a negative `MPI_M_*` code, which `MPI_M_error_string` names.
 *
 * Preloaded (LD_PRELOAD=libmpilens-progress.so) or linked before the MPI library, it starts one
 * thread per process at MPI_Init, asking the library for MPI_THREAD_MULTIPLE, and stops it at
 * MPI_Finalize. The thread drives the library's progress engine with calls on a communicator of
 * its own, never touching the program's requests. It is configured by the environment,
 *
 *     MPILENS_PROGRESS=MODE[,cpu=N|cpu=spare]
 *     MODE: off | poll | yield | sleep:US | rt[:US] | event[:US]
 *
 * or, before MPI_Init, by mpilens_progress_configure() with the same text. */
#ifndef MPILENS_PROGRESS_H
#define MPILENS_PROGRESS_H

#ifdef __cplusplus
extern "C" {
#endif

/** \brief The name of the layer's thread (what top, ps -L and /proc/PID/task/TID/comm show;
 * mpilens-progress counts that thread's context switches by it). */
#define MPILENS_PROGRESS_THREAD_NAME "mpilens-prog"

/** \brief What a libmpilens-progress function did: MPILENS_PROGRESS_OK, or why it failed. */
typedef enum {
    MPILENS_PROGRESS_OK = 0,      /**< success */
    MPILENS_PROGRESS_ERR_SPEC,    /**< the text does not name a mode and placement */
    MPILENS_PROGRESS_ERR_STARTED, /**< MPI_Init already ran: configure before it */
    MPILENS_PROGRESS_ERR_ARG      /**< a null pointer */
} mpilens_progress_status_t;

/** \brief Sets mode and placement, before MPI_Init (it overrides MPILENS_PROGRESS).
 * \param spec MODE[,cpu=N|cpu=spare], as in MPILENS_PROGRESS
 * \return MPILENS_PROGRESS_OK; MPILENS_PROGRESS_ERR_ARG (NULL), MPILENS_PROGRESS_ERR_SPEC (text
 *         that does not parse), MPILENS_PROGRESS_ERR_STARTED (after MPI_Init) */
mpilens_progress_status_t mpilens_progress_configure(const char *spec);

/** \brief What the layer is doing, as mpilens_progress_info() reports it. */
typedef struct {
    int running;               /**< the thread is running now */
    char mode[16];             /**< off, poll, yield, sleep, rt, event */
    long interval_us;          /**< sleep and rt: the pause between polls; event: the longest wait (0: none) */
    int cpu;                   /**< the processing unit the thread is bound to, or -1 */
    int realtime;              /**< rt: SCHED_FIFO was granted */
    unsigned long long polls;  /**< progress calls made so far */
    char reason[160];          /**< why there is no thread, or why a setting fell back ("" if none) */
    unsigned long long events; /**< event: wake-ups by one of the library's descriptors (not the timer) */
    int descriptors;           /**< event: the library's descriptors watched now */
} mpilens_progress_info_t;

/** \brief What the layer is doing, at any time (polls is read without stopping the thread).
 * \param info receives the state
 * \return MPILENS_PROGRESS_OK; MPILENS_PROGRESS_ERR_ARG (NULL) */
mpilens_progress_status_t mpilens_progress_info(mpilens_progress_info_t *info);

/** \brief Names a status.
 * \param status a status a libmpilens-progress function returned
 * \return a constant English phrase; "unknown status" for a value that is not an
 *         mpilens_progress_status_t code */
const char *mpilens_progress_status_string(mpilens_progress_status_t status);

#ifdef __cplusplus
}
#endif

#endif
