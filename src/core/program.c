#include "program.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meta.h"
#include "node.h"
#include "units.h"

/* Options that change how a run is driven, not what it measures: --resume may change them. */
static const char *const driving_options[] = {"output", "resume", "progress", NULL};

static int is_driving(const char *name)
{
    for (const char *const *d = driving_options; *d; d++)
        if (strcmp(*d, name) == 0)
            return 1;
    return 0;
}

__attribute__((noreturn)) static void finalize_and_exit(int status)
{
    MPI_Finalize();
    exit(status);
}

void ml_program_exit_usage(ml_program_t *p, const char *fmt, ...)
{
    if (p->rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "%s: ", p->spec->program);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    finalize_and_exit(2);
}

/* --thread-level must be known before MPI_Init_thread, so before options are parsed: argv is
 * scanned for it here, and the option table validates it afterwards like any other value. */
static int requested_thread_level(int argc, char **argv, int fallback)
{
    const char *value = ml_options_scan(argc, argv, "thread-level");
    if (value)
        ml_thread_level_parse(value, &fallback);
    return fallback;
}

static ml_option_t *merge_options(ml_program_t *p, const ml_option_t *own)
{
    size_t n_own = 0;
    while (own[n_own].name)
        n_own++;
    const ml_option_t common[] = {
        {"reps", ML_OPT_REPS, "N|auto", p->spec->default_reps, NULL,
         "repetitions per point: a count, or auto to stop when the median is known within --precision", &p->reps, 0, 0,
         NULL},
        {"precision", ML_OPT_FRACTION, "P", "2%", NULL,
         "with --reps auto: stop once the median's 95% confidence interval is within P of it", &p->precision, 0, 0,
         NULL},
        {"output", ML_OPT_STRING, "FILE", p->default_output, NULL, "results file (JSON Lines)", &p->output, 0, 0, NULL},
        {"resume", ML_OPT_FLAG, NULL, NULL, NULL, "complete an interrupted results file, skipping finished points",
         &p->resume, 0, 0, NULL},
        {"progress", ML_OPT_CHOICE, "auto|on|off", "auto", "auto,on,off",
         "progress lines on stderr (auto: only on a terminal)", &p->progress_mode, 0, 0, NULL},
        {"thread-level", ML_OPT_CHOICE, "LEVEL", p->thread_level_default, "single,funneled,serialized,multiple",
         "MPI thread level to ask for; benchmarks needing more are skipped with a note", &p->thread_level_asked, 0, 0,
         NULL},
        ML_OPTIONS_END,
    };
    const size_t n_common = sizeof common / sizeof common[0];
    ml_option_t *table = malloc((n_own + n_common) * sizeof *table);
    if (!table)
        return NULL;
    memcpy(table, own, n_own * sizeof *table);
    memcpy(table + n_own, common, n_common * sizeof *table);
    return table;
}

void ml_program_init(ml_program_t *p, const ml_program_spec_t *spec, const ml_option_t *own_options, int argc,
                     char **argv)
{
    memset(p, 0, sizeof *p);
    p->spec = spec;
    snprintf(p->default_output, sizeof p->default_output, "%s.jsonl", spec->program);
    int level = spec->thread_level;
    if (spec->thread_level_for_args) {
        int needed = spec->thread_level_for_args(argc, argv);
        level = needed > level ? needed : level;
    }
    snprintf(p->thread_level_default, sizeof p->thread_level_default, "%s", ml_thread_level_name(level));
    MPI_Init_thread(&argc, &argv, requested_thread_level(argc, argv, level), &p->thread_level);
    /* After MPI_Init_thread: it may take its own arguments out of the command line. */
    p->argc = argc;
    p->argv = argv;
    MPI_Comm_rank(MPI_COMM_WORLD, &p->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p->size);

    p->options = merge_options(p, own_options);
    if (!p->options)
        ml_program_exit_usage(p, "out of memory");
    char err[512];
    switch (ml_options_parse(p->options, p->argc, p->argv, err, sizeof err)) {
    case ML_OPTIONS_HELP:
        if (p->rank == 0)
            ml_options_usage(stdout, spec->program, spec->summary, p->options);
        finalize_and_exit(0);
    case ML_OPTIONS_VERSION:
        if (p->rank == 0)
            printf("%s %s\n", spec->program, ml_version_string);
        finalize_and_exit(0);
    case ML_OPTIONS_ERROR: ml_program_exit_usage(p, "%s", err);
    default: break;
    }
    if (p->thread_level < spec->thread_level_required)
        ml_program_exit_usage(p, "the MPI library provides thread level %d, this program needs %d", p->thread_level,
                              spec->thread_level_required);

    MPI_Comm_dup(MPI_COMM_WORLD, &p->sync);
    ml_clock_measure(&p->clock);
}

int ml_program_set_context(ml_program_t *p, const char *name, const char *json, const char *hint)
{
    size_t len = strlen(name) + strlen(json) + 4;
    free(p->context_json);
    p->context_json = malloc(len);
    p->context_hint = hint;
    if (!p->context_json)
        return -1;
    snprintf(p->context_json, len, "\"%s\":%s", name, json);
    p->context_name = name;
    return 0;
}

/* The meta record with the program's context added as its last member; malloc'ed, or NULL. */
static char *meta_with_context(const ml_program_t *p, const ml_json_t *meta)
{
    size_t len = meta->len - 1; /* without the closing brace */
    size_t extra = p->context_json ? strlen(p->context_json) + 1 : 0;
    char *text = malloc(len + extra + 2);
    if (!text)
        return NULL;
    memcpy(text, meta->buf, len);
    if (extra) {
        text[len] = ',';
        memcpy(text + len + 1, p->context_json, extra - 1);
    }
    strcpy(text + len + extra, "}");
    return text;
}

/* --resume: the file's meta record (its first line) must hold the same context. The writer is
 * the same, so the same context is the same text. */
static int same_context(const ml_program_t *p, char *err, size_t errlen)
{
    if (!p->context_json)
        return 0;
    FILE *f = fopen(p->output, "r");
    if (!f)
        return 0; /* ml_results_resume says why */
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);
    fclose(f);
    /* the context is a member of the meta record itself: looked up as one, since its name may
     * also be an option's (mpilens-progress has both a "progress" option and context) */
    const char *found = NULL;
    size_t found_len = 0;
    const char *mine = p->context_json + strlen(p->context_name) + 3; /* past "name": */
    int rc = 0;
    if (n > 0 && ml_json_find(line, p->context_name, &found, &found_len) == 0 &&
        (found_len != strlen(mine) || strncmp(found, mine, found_len) != 0)) {
        snprintf(err, errlen, "cannot resume \"%s\": it was measured under \"%s\":%.*s, this run under %s; %s",
                 p->output, p->context_name, (int)found_len, found, p->context_json,
                 p->context_hint ? p->context_hint : "run it as it was run");
        rc = -1;
    }
    free(line);
    return rc;
}

/* Rank 0 opens the file; returns 0, or -1 with err set. */
static int open_results(ml_program_t *p, const char *meta, char *err, size_t errlen)
{
    if (!p->resume)
        return ml_results_create(p->output, meta, &p->results, err, errlen);
    if (same_context(p, err, errlen) != 0)
        return -1;
    const char *compared[64];
    size_t n = 0;
    for (const ml_option_t *opt = p->options; opt->name && n + 1 < sizeof compared / sizeof compared[0]; opt++)
        if (!is_driving(opt->name))
            compared[n++] = opt->name;
    compared[n] = NULL;
    return ml_results_resume(p->output, meta, compared, p->argc, p->argv, &p->results, &p->done, err, errlen);
}

/* Sends the keys of the resumed points from rank 0 to every rank. */
static int share_done_keys(ml_program_t *p)
{
    size_t len = 0;
    char *blob = p->rank == 0 ? ml_keyset_to_blob(&p->done, &len) : NULL;
    long long n = p->rank == 0 ? (blob ? (long long)len : -1) : 0;
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, p->sync);
    if (n < 0)
        return -1;
    if (p->rank != 0 && !(blob = malloc((size_t)n + 1)))
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Bcast(blob, (int)n, MPI_CHAR, 0, p->sync);
    int rc = p->rank == 0 ? 0 : ml_keyset_from_blob(&p->done, blob, (size_t)n);
    free(blob);
    return rc;
}

void ml_program_begin(ml_program_t *p, long points_total)
{
    /* Here, not at init: a program may give --reps a default that depends on another option. */
    if (!ml_options_find(p->options, "reps")->value)
        ml_program_exit_usage(p, "internal error: --reps has no value");
    p->stop_rule = p->reps.is_auto ? ml_stop_rule_auto() : ml_stop_rule_fixed(p->reps.count);
    p->stop_rule.precision = p->precision;
    p->stop_rule.floor_ns = p->clock.resolution_ns;

    ml_json_t meta;
    ml_json_init(&meta);
    ml_meta_args_t args = {
        .family = p->spec->family,
        .program = p->spec->program,
        .argc = p->argc,
        .argv = p->argv,
        .clock = &p->clock,
        .options = p->options,
        .points_total = points_total,
        .thread_level = p->thread_level,
    };
    char err[1024] = "";
    int status = ml_meta_build(p->sync, &args, &meta) == MPI_SUCCESS ? 0 : -1;
    if (status != 0)
        snprintf(err, sizeof err, "cannot collect the run's metadata");
    else if (p->rank == 0) {
        char *text = meta_with_context(p, &meta);
        status = text ? open_results(p, text, err, sizeof err) : -1;
        if (!text)
            snprintf(err, sizeof err, "out of memory");
        free(text);
    }
    ml_json_free(&meta);

    MPI_Bcast(&status, 1, MPI_INT, 0, p->sync);
    if (status != 0)
        ml_program_exit_usage(p, "%s", err);
    if (share_done_keys(p) != 0)
        ml_program_exit_usage(p, "out of memory");

    int enabled =
        strcmp(p->progress_mode, "on") == 0 || (strcmp(p->progress_mode, "auto") == 0 && isatty(STDERR_FILENO));
    ml_progress_start(&p->progress, p->rank == 0 && enabled, points_total, (long)p->done.n);
}

int ml_program_skip(const ml_program_t *p, const char *key) { return ml_keyset_has(&p->done, key); }

static void write_failed(ml_program_t *p)
{
    fprintf(stderr, "%s: cannot write results to \"%s\"; the points written before are kept\n", p->spec->program,
            p->output);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

void ml_program_point(ml_program_t *p, const ml_json_t *record)
{
    if (p->rank != 0)
        return;
    if (record->failed || ml_results_append(p->results, record->buf) != 0)
        write_failed(p);
}

void ml_program_point_end(ml_program_t *p, ml_json_t *record)
{
    ml_json_end_object(record); /* stats */
    ml_json_end_object(record);
    ml_program_point(p, record);
    ml_json_free(record);
}

void ml_program_note(ml_program_t *p, const char *level, const char *text, const char *key)
{
    if (p->rank == 0 && ml_results_note(p->results, level, text, key) != 0)
        write_failed(p);
}

void ml_program_gather_points(ml_program_t *p, const ml_json_t *mine)
{
    int len = mine->failed || !mine->buf ? 0 : (int)mine->len + 1;
    int *lens = NULL, *displs = NULL;
    char *texts = NULL;
    if (p->rank == 0) {
        lens = calloc((size_t)p->size, sizeof *lens);
        displs = calloc((size_t)p->size, sizeof *displs);
        if (!lens || !displs)
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, p->sync);
    if (p->rank == 0) {
        int total = 0;
        for (int r = 0; r < p->size; r++) {
            displs[r] = total;
            total += lens[r];
        }
        if (!(texts = malloc((size_t)total + 1)))
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Gatherv(len ? mine->buf : NULL, len, MPI_CHAR, texts, lens, displs, MPI_CHAR, 0, p->sync);
    if (p->rank == 0) {
        for (int r = 0; r < p->size; r++)
            if (lens[r] > 0 && ml_results_append(p->results, texts + displs[r]) != 0)
                write_failed(p);
    }
    free(lens);
    free(displs);
    free(texts);
}

void ml_program_progress(ml_program_t *p, const char *what) { ml_progress_step(&p->progress, what); }

int ml_program_agree(ml_program_t *p, int go_on)
{
    MPI_Bcast(&go_on, 1, MPI_INT, 0, p->sync);
    return go_on;
}

int ml_program_finish(ml_program_t *p)
{
    ml_progress_end(&p->progress);
    int status = 0;
    if (p->rank == 0 && ml_results_close(p->results) != 0) {
        fprintf(stderr, "%s: writing \"%s\" failed at the end\n", p->spec->program, p->output);
        status = 2;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, p->sync);
    ml_keyset_free(&p->done);
    free(p->options);
    free(p->context_json);
    MPI_Comm_free(&p->sync);
    MPI_Finalize();
    return status;
}

void ml_program_check_memory(ml_program_t *p, double need, const char *what, const char *advice)
{
    double have = ml_node_memory_per_rank();
    int too_big = need > have / 2, any;
    MPI_Allreduce(&too_big, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (!any)
        return;
    char needs[32], haves[32];
    ml_format_bytes(needs, sizeof needs, need);
    ml_format_bytes(haves, sizeof haves, have);
    ml_program_exit_usage(p, "%s need %s of buffers per rank, more than half of the %s each rank has on this node; %s",
                          what, needs, haves, advice);
}
