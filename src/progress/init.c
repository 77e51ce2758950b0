/* The life cycle (wrapped.spec's lifecycle hooks): MPI_Init and MPI_Init_thread ask the library for
 * MPI_THREAD_MULTIPLE (the thread calls MPI while the program does) and start the thread;
 * MPI_Finalize stops it first. A library that cannot give MPI_THREAD_MULTIPLE gets no thread, and
 * the run goes on without it, said once. */
#include <stdio.h>

#include "layer.h"

static const char *level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
    }
}

static void say_started(const ml_progress_spec_t *spec)
{
    mpilens_progress_info_t info;
    ml_progress_state(&info);
    char timing[96] = "", where[32] = "not bound";
    if (spec->mode == MODE_SLEEP || spec->mode == MODE_RT)
        snprintf(timing, sizeof timing, ", %ld us between polls", spec->interval_us);
    else if (spec->mode == MODE_EVENT && spec->interval_us > 0)
        snprintf(timing, sizeof timing, ", woken by %d descriptors or after %ld us", info.descriptors,
                 spec->interval_us);
    else if (spec->mode == MODE_EVENT)
        snprintf(timing, sizeof timing, ", woken by %d descriptors only", info.descriptors);
    if (info.cpu >= 0)
        snprintf(where, sizeof where, "on cpu %d", info.cpu);
    ml_progress_say(1, "progress thread started: %s%s%s, %s (rank 0)", info.mode, timing,
                    spec->mode == MODE_RT && !info.realtime ? " at normal priority" : "", where);
}

/* After MPI's initialisation gave `provided`: the thread, if the setting and the level allow. */
void ml_progress_start_layer(int provided)
{
    char why[240];
    ml_progress_spec_t spec = ml_progress_wanted(why, sizeof why);
    ml_progress_freeze();
    if (why[0]) {
        ml_progress_say(1, "%s", why);
        ml_progress_note(why);
    }
    if (spec.mode == MODE_OFF)
        return;
    if (provided < MPI_THREAD_MULTIPLE) {
        snprintf(why, sizeof why, "the MPI library provides %s, not MPI_THREAD_MULTIPLE: no progress thread",
                 level_name(provided));
        ml_progress_say(1, "%s", why);
        ml_progress_note(why);
        return;
    }
    char placed[240];
    if (spec.mode == MODE_EVENT) {
        ml_progress_events_choose(&spec, placed, sizeof placed);
        if (placed[0]) {
            ml_progress_say(1, "%s", placed);
            ml_progress_note(placed);
        }
    }
    spec.cpu = ml_progress_choose_cpu(spec.cpu, placed, sizeof placed);
    if (placed[0]) {
        ml_progress_say(1, "%s", placed);
        ml_progress_note(placed);
    }
    if (ml_progress_start(&spec, why, sizeof why) != 0) {
        ml_progress_say(0, "%s", why);
        ml_progress_note(why);
        return;
    }
    say_started(&spec);
}

/* Just before MPI_Init: MPILENS_PROGRESS=off leaves the thread level as the program asked; event
 * notes the descriptors open now, which are not the library's. */
int ml_progress_thread_level(int required)
{
    char why[240];
    ml_progress_mode_t mode = ml_progress_wanted(why, sizeof why).mode;
    if (mode == MODE_EVENT)
        ml_progress_events_before_init();
    return mode == MODE_OFF ? required : MPI_THREAD_MULTIPLE;
}
