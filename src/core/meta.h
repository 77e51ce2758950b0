/* The context of a run: everything a result needs to be traced back (DESIGN.md, "Every
 * measurement records what it ran on"), written as the `meta` record of the results file. */
#ifndef MPILENS_CORE_META_H
#define MPILENS_CORE_META_H

#include <mpi.h>
#include <stddef.h>

#include "clock.h"
#include "json.h"
#include "options.h"

#define ML_RESULTS_SCHEMA 1

typedef struct {
    const char *family;
    const char *program;
    int argc;
    char **argv;
    const ml_clock_info_t *clock;
    const ml_option_t *options;
    long points_total;
    int thread_level; /* as provided by MPI_Init_thread */
} ml_meta_args_t;

/* Collective over comm (gathers host names and core bindings). On rank 0, out receives the meta
 * record as one JSON object; other ranks leave out empty. Returns an MPI error code. */
int ml_meta_build(MPI_Comm comm, const ml_meta_args_t *args, ml_json_t *out);

/* "openmpi", "mpich", "intelmpi", "mvapich", "craympich" or "unknown", from the text of
 * MPI_Get_library_version. */
const char *ml_mpi_flavour(const char *library_version);

/* "single", "funneled", "serialized" or "multiple" for an MPI_THREAD_* level, and back (returns
 * 0, or -1 leaving *level as it was for another name). */
const char *ml_thread_level_name(int level);
int ml_thread_level_parse(const char *name, int *level);

/* The CPUs this process may run on, as a list of ranges ("0-3,8"). */
void ml_binding_string(char *buf, size_t len);

/* The current UTC time in ISO 8601 ("2026-11-22T10:31:05Z"). */
void ml_utc_now(char *buf, size_t len);

/* Version of the mpilens build, with its git commit when built from a checkout. */
extern const char ml_version_string[];

#endif
