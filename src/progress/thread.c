/* The progress thread: MPI_Iprobe on the layer's own communicator, in a loop shaped by the mode:
 * back to back (poll), giving the core away after each call (yield), pausing (sleep, and rt at
 * a real-time priority, where each expiry preempts the computation at once), or blocked until
 * one of the MPI library's descriptors has news (event, events.c: the seed's interrupt-driven
 * thread). */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "layer.h"

static struct {
    ml_progress_spec_t spec;
    MPI_Comm comm;
    pthread_t thread;
    int running, realtime, stop;
    unsigned long long polls, events;
    char reason[160];
} progress = {.comm = MPI_COMM_NULL};

void ml_progress_note(const char *why)
{
    if (why && *why && !progress.reason[0])
        snprintf(progress.reason, sizeof progress.reason, "%s", why);
}

static void pause_us(long us)
{
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&t, &t) != 0)
        ;
}

static void *progress_loop(void *unused)
{
    (void)unused;
    while (!__atomic_load_n(&progress.stop, __ATOMIC_ACQUIRE)) {
        int flag;
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, progress.comm, &flag, MPI_STATUS_IGNORE);
        __atomic_add_fetch(&progress.polls, 1, __ATOMIC_RELAXED);
        if (progress.spec.mode == MODE_YIELD)
            sched_yield();
        else if (progress.spec.mode == MODE_SLEEP || progress.spec.mode == MODE_RT)
            pause_us(progress.spec.interval_us);
        else if (progress.spec.mode == MODE_EVENT && ml_progress_events_wait(progress.spec.interval_us))
            __atomic_add_fetch(&progress.events, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int ml_progress_start(const ml_progress_spec_t *spec, char *why, size_t why_size)
{
    progress.spec = *spec;
    PMPI_Comm_dup(MPI_COMM_WORLD, &progress.comm);
    int rc = pthread_create(&progress.thread, NULL, progress_loop, NULL);
    if (rc != 0) {
        snprintf(why, why_size, "cannot start the thread (%s): no progress thread", strerror(rc));
        PMPI_Comm_free(&progress.comm);
        ml_progress_events_close(); /* event: the descriptors it would have watched */
        return -1;
    }
    progress.running = 1;
    pthread_setname_np(progress.thread, MPILENS_PROGRESS_THREAD_NAME); /* a name is a courtesy: no check */
    char fell_back[200];
    if (ml_progress_bind(progress.thread, spec->cpu, fell_back, sizeof fell_back) != 0) {
        ml_progress_say(1, "%s", fell_back);
        ml_progress_note(fell_back);
        progress.spec.cpu = CPU_ANY;
    }
    if (spec->mode == MODE_RT) {
        if (ml_progress_realtime(progress.thread, fell_back, sizeof fell_back) == 0) {
            progress.realtime = 1;
        } else {
            ml_progress_say(1, "%s", fell_back);
            ml_progress_note(fell_back);
        }
    }
    return 0;
}

void ml_progress_stop(void)
{
    if (!progress.running)
        return;
    __atomic_store_n(&progress.stop, 1, __ATOMIC_RELEASE);
    if (progress.spec.mode == MODE_EVENT)
        ml_progress_events_interrupt();
    pthread_join(progress.thread, NULL);
    progress.running = 0;
    PMPI_Comm_free(&progress.comm);
    ml_progress_events_close();
}

void ml_progress_state(mpilens_progress_info_t *info)
{
    memset(info, 0, sizeof *info);
    info->running = progress.running;
    snprintf(info->mode, sizeof info->mode, "%s", ml_progress_mode_name(progress.spec.mode));
    info->interval_us = progress.spec.interval_us;
    info->cpu = progress.spec.cpu < 0 ? -1 : progress.spec.cpu;
    info->realtime = progress.realtime;
    info->polls = __atomic_load_n(&progress.polls, __ATOMIC_RELAXED);
    info->events = __atomic_load_n(&progress.events, __ATOMIC_RELAXED);
    info->descriptors = progress.spec.mode == MODE_EVENT ? ml_progress_events_watched() : 0;
    snprintf(info->reason, sizeof info->reason, "%s", progress.reason);
}
