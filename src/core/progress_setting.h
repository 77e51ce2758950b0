/* The progress this run has, so that every result can be traced back to it: the preloaded
 * libmpilens-progress and what its thread does, the MPI library's own asynchronous progress as
 * asked for in the environment, and the thread level provided. */
#ifndef MPILENS_PROGRESS_SETTING_H
#define MPILENS_PROGRESS_SETTING_H

#include <mpi.h>

#include "json.h"
#include "program.h"

typedef struct {
    int loaded;  /* libmpilens-progress is in the process (found with dlsym, never linked) */
    int running; /* its thread runs on rank 0 */
    char mode[16];
    long interval_us;
    int cpu; /* rank 0's thread's processing unit, -1 when unbound or without a thread */
    int realtime;
    int descriptors; /* event: the library's descriptors rank 0's thread watches */
    char reason[160];
    int thread_level; /* provided by MPI_Init_thread */
    char label[192];  /* one comparable text, recorded in every point: "none", "thread:yield,cpu=1",
                         "thread:poll+async:MPIR_CVAR_ASYNC_PROGRESS=1" */
} ml_setting_t;

/* This rank's setting, after MPI_Init: the library is looked up, the environment read. */
void ml_setting_find(ml_setting_t *s, int thread_level);

/* Before ml_program_begin, on every rank (collective): finds this run's setting into `s` and makes
 * it the program's context, recorded in the meta record as "progress_setting"
 * (docs/results-schema.md), so that --resume refuses a file measured under another setting. */
void ml_progress_setting_record(ml_program_t *p, ml_setting_t *s);

/* After ml_program_begin: a warning (stderr and a note) when MPILENS_PROGRESS is set but the
 * library is not loaded, and an info note with the library's reason for running no thread or
 * another placement. */
void ml_progress_setting_note(ml_program_t *p, const ml_setting_t *s);

#endif
