/* What every mpilens benchmark program does around its measurements: MPI initialisation at the
 * thread level it needs, the option table (its own rows plus the common ones), the metadata, the
 * results file and --resume, progress, and the error convention (one line, exit status 2).
 *
 * Typical use:
 *     ml_program_t p;
 *     ml_program_init(&p, &spec, my_options, argc, argv);
 *     ml_program_begin(&p, points_total);
 *     for each point: if (!ml_program_skip(&p, key)) { measure; ml_program_point(&p, &record); }
 *                     ml_program_progress(&p, key);
 *     return ml_program_finish(&p);
 */
#ifndef MPILENS_CORE_PROGRAM_H
#define MPILENS_CORE_PROGRAM_H

#include <mpi.h>

#include "clock.h"
#include "json.h"
#include "options.h"
#include "progress.h"
#include "results.h"
#include "stats.h"

typedef struct {
    const char *family;        /* "sanity" */
    const char *program;       /* "mpilens-sanity" */
    const char *summary;       /* a paragraph for --help */
    int thread_level;          /* MPI thread level asked for */
    int thread_level_required; /* below this the program cannot run at all; benchmarks that need
                                  more than this check p->thread_level themselves */
    /* Optional: a higher level than thread_level that the command line's own options need (a
     * benchmark named explicitly), read from argv before MPI_Init_thread; --thread-level given
     * explicitly still wins. */
    int (*thread_level_for_args)(int argc, char **argv);
    const char *default_reps; /* default of --reps: "auto" or a count; NULL when the program sets it
                                 with ml_options_default_late before ml_program_begin */
} ml_program_spec_t;

typedef struct {
    const ml_program_spec_t *spec;
    int rank, size, thread_level;
    MPI_Comm sync; /* private duplicate of MPI_COMM_WORLD for mpilens' own messages */
    ml_clock_info_t clock;
    int argc;
    char **argv;

    /* common options */
    char default_output[64]; /* <program>.jsonl */
    const char *output;
    int resume;
    ml_reps_t reps;
    double precision;
    const char *progress_mode;
    const char *thread_level_asked;
    char thread_level_default[16]; /* --thread-level's default: the spec's, or its args' (above) */
    ml_stop_rule_t stop_rule;      /* from --reps, set by ml_program_begin */

    ml_option_t *options;  /* the program's rows followed by the common ones */
    ml_results_t *results; /* rank 0 only */
    ml_keyset_t done;      /* points already in the file, known on every rank */
    ml_progress_t progress;

    /* what the program runs under, beyond its options (ml_program_set_context) */
    const char *context_name, *context_hint;
    char *context_json;
} ml_program_t;

/* Initialises MPI and parses the options. On --help/--version prints (rank 0) and exits 0; on a
 * bad option prints one line (rank 0) and exits 2, after MPI_Finalize on every rank. Measures the
 * clock. own_options ends with ML_OPTIONS_END. */
void ml_program_init(ml_program_t *p, const ml_program_spec_t *spec, const ml_option_t *own_options, int argc,
                     char **argv);

/* Collective over MPI_COMM_WORLD: ends the program with a usage error (exit 2) when `need` bytes
 * of buffers per rank exceed, on any rank, half of that rank's share of its node's memory. The
 * message reads "WHAT need N of buffers per rank, more than half of the M each rank has on this
 * node; ADVICE". */
void ml_program_check_memory(ml_program_t *p, double need, const char *what, const char *advice);
/* Ends the program on every rank with one line (printed by rank 0) and exit status 2. Collective:
 * for errors every rank detects, such as an option combination that cannot run. */
void ml_program_exit_usage(ml_program_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* Before ml_program_begin: what the run is measured under that its options do not say (a
 * preloaded layer and its settings), as a JSON object `json` recorded in the meta record under
 * `name`. --resume refuses a file recorded under another context: it would mix two experiments
 * under the same keys. `hint` ends that error: how to get the same context again. Returns 0, or
 * -1 without memory. */
int ml_program_set_context(ml_program_t *p, const char *name, const char *json, const char *hint);

/* Collective. Writes the meta record and opens (or resumes) the results file; exits 2 on every
 * rank if that fails. points_total: how many points the run plans. */
void ml_program_begin(ml_program_t *p, long points_total);

/* Whether the point is already in a resumed file (same answer on every rank). */
int ml_program_skip(const ml_program_t *p, const char *key);

/* Rank 0 appends the record; other ranks ignore it. A write failure aborts the job: the points
 * written before it stay in the file. */
void ml_program_point(ml_program_t *p, const ml_json_t *record);
/* The end of a point record, which closes with its stats object: closes both, appends the record
 * (ml_program_point) and frees it. */
void ml_program_point_end(ml_program_t *p, ml_json_t *record);
void ml_program_note(ml_program_t *p, const char *level, const char *text, const char *key);

/* Collective. Every rank passes its record (or an empty ml_json_t when it has none); rank 0
 * writes them in rank order. For benchmarks where several ranks measure at once (pairs). */
void ml_program_gather_points(ml_program_t *p, const ml_json_t *mine);

/* Called by every rank after each point, measured or skipped. */
void ml_program_progress(ml_program_t *p, const char *what);

/* Rank 0 broadcasts whether to go on; every rank gets the decision. For loops whose repetitions
 * involve every rank, decided by rank 0's stopping rule. */
int ml_program_agree(ml_program_t *p, int go_on);

/* Collective. Closes the results, finalizes MPI. Returns the exit status for main. */
int ml_program_finish(ml_program_t *p);

#endif
