/* The progress this run has, so that every result can be traced back to it: the preloaded
 * libmpilens-progress and what its thread does, the MPI library's own asynchronous progress as
 * asked for in the environment, and the thread level provided. */
#ifndef MPILENS_PROGRESS_SETTING_H
#define MPILENS_PROGRESS_SETTING_H

#include <mpi.h>

#include "json.h"

typedef struct {
    int loaded;  /* libmpilens-progress is in the process (found with dlsym, never linked) */
    int running; /* its thread runs on rank 0 */
    char mode[16];
    long interval_us;
    int cpu; /* rank 0's thread's processing unit, -1 when unbound or without a thread */
    int realtime;
    char reason[160];
    int thread_level; /* provided by MPI_Init_thread */
    char label[192];  /* one comparable text, recorded in every point: "none", "thread:yield,cpu=1",
                         "thread:poll+async:MPIR_CVAR_ASYNC_PROGRESS=1" */
} ml_setting_t;

/* This rank's setting, after MPI_Init: the library is looked up, the environment read. */
void ml_setting_find(ml_setting_t *s, int thread_level);

/* The meta record's "progress" object (docs/results-schema.md, "progress"). Collective: gathers
 * each rank's thread and core; only rank 0's `j` receives the object. */
void ml_setting_json(const ml_setting_t *s, ml_json_t *j);

/* MPILENS_PROGRESS set while the library is not loaded: the text of a warning, or NULL. */
const char *ml_setting_warning(const ml_setting_t *s, char *buf, size_t len);

#endif
