#include "progress_setting.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mpilens/progress.h>

#include "meta.h"
#include "program.h"

/* The libraries' own asynchronous progress, as their users set it (anchors: MPICH's CVAR and its
 * older MPICH_ spelling, Cray MPICH, Intel MPI, MVAPICH2, Open MPI 5's experimental thread, Open
 * MPI 4's thread for its TCP transport). The program cannot ask the library whether it obeyed: the
 * variables are recorded as given. */
static const char *const async_vars[] = {
    "MPIR_CVAR_ASYNC_PROGRESS",     "MPICH_ASYNC_PROGRESS",
    "MPICH_NEMESIS_ASYNC_PROGRESS", "I_MPI_ASYNC_PROGRESS",
    "MV2_ASYNC_PROGRESS",           "OMPI_MCA_opal_async_progress",
    "OMPI_MCA_mpi_async_progress",  "OMPI_MCA_btl_tcp_progress_thread",
};
/* Recorded with them: what places or configures those threads, and the layer's own variable. */
static const char *const other_vars[] = {
    "MPIR_CVAR_CH4_PROGRESS_THREAD_AFFINITY",
    "I_MPI_ASYNC_PROGRESS_THREADS",
    "I_MPI_ASYNC_PROGRESS_PIN",
    "MPILENS_PROGRESS",
};
#define N_ASYNC (sizeof async_vars / sizeof async_vars[0])
#define N_OTHER (sizeof other_vars / sizeof other_vars[0])

/* Set to something that does not say no. */
static int switched_on(const char *value)
{
    return value && *value && strcmp(value, "0") != 0 && strcasecmp(value, "false") != 0 &&
           strcasecmp(value, "no") != 0 && strcasecmp(value, "off") != 0;
}

__attribute__((format(printf, 3, 4))) static void appendf(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

static void make_label(ml_setting_t *s)
{
    char *l = s->label;
    size_t len = sizeof s->label;
    l[0] = '\0';
    if (s->running) {
        appendf(l, len, "thread:%s", s->mode);
        if (strcmp(s->mode, "sleep") == 0 || strcmp(s->mode, "rt") == 0 || strcmp(s->mode, "event") == 0)
            appendf(l, len, ":%ld", s->interval_us);
        if (s->cpu >= 0)
            appendf(l, len, ",cpu=%d", s->cpu);
    }
    for (size_t i = 0; i < N_ASYNC; i++) {
        const char *value = getenv(async_vars[i]);
        if (switched_on(value))
            appendf(l, len, "%sasync:%s=%s", l[0] ? "+" : "", async_vars[i], value);
    }
    if (!l[0])
        appendf(l, len, "none");
}

void ml_setting_find(ml_setting_t *s, int thread_level)
{
    memset(s, 0, sizeof *s);
    s->cpu = -1;
    s->thread_level = thread_level;
    snprintf(s->mode, sizeof s->mode, "none");
    /* looked up, not linked: the program must run without the layer, and say so */
    __typeof__(&mpilens_progress_info) info_fn =
        (__typeof__(&mpilens_progress_info))dlsym(RTLD_DEFAULT, "mpilens_progress_info");
    mpilens_progress_info_t info;
    if (info_fn && info_fn(&info) == MPILENS_PROGRESS_OK) {
        s->loaded = 1;
        s->running = info.running;
        snprintf(s->mode, sizeof s->mode, "%s", info.mode);
        s->interval_us = info.interval_us;
        s->cpu = info.running ? info.cpu : -1;
        s->realtime = info.realtime;
        s->descriptors = info.descriptors;
        snprintf(s->reason, sizeof s->reason, "%s", info.reason);
    }
    make_label(s);
}

static void env_object(ml_json_t *j, const char *key)
{
    ml_json_begin_object(j, key);
    for (size_t i = 0; i < N_ASYNC + N_OTHER; i++) {
        const char *name = i < N_ASYNC ? async_vars[i] : other_vars[i - N_ASYNC];
        const char *value = getenv(name);
        if (value)
            ml_json_string(j, name, value);
    }
    ml_json_end_object(j);
}

/* The meta record's "progress_setting" object (docs/results-schema.md). Collective: gathers each
 * rank's thread and core; only rank 0's `j` receives the object. */
static void setting_json(const ml_setting_t *s, ml_json_t *j)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int mine[2] = {s->running, s->cpu}, *all = rank == 0 ? malloc(sizeof mine * (size_t)size) : NULL;
    if (rank == 0 && !all)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        ml_json_begin_object(j, NULL);
        ml_json_string(j, "label", s->label);
        ml_json_begin_object(j, "library");
        ml_json_bool(j, "loaded", s->loaded);
        ml_json_bool(j, "running", s->running);
        ml_json_string(j, "mode", s->mode);
        ml_json_int(j, "interval_us", s->interval_us);
        ml_json_int(j, "cpu", s->cpu);
        ml_json_bool(j, "realtime", s->realtime);
        ml_json_int(j, "descriptors", s->descriptors);
        ml_json_string(j, "reason", s->reason);
        ml_json_begin_array(j, "running_per_rank");
        for (int r = 0; r < size; r++)
            ml_json_bool(j, NULL, all[2 * r]);
        ml_json_end_array(j);
        ml_json_begin_array(j, "cpu_per_rank");
        for (int r = 0; r < size; r++)
            ml_json_int(j, NULL, all[2 * r + 1]);
        ml_json_end_array(j);
        ml_json_end_object(j);
        env_object(j, "env");
        ml_json_string(j, "thread_level", ml_thread_level_name(s->thread_level));
        ml_json_end_object(j);
    }
    free(all);
}

/* MPILENS_PROGRESS set while the library is not loaded: the text of a warning, or NULL. */
static const char *setting_warning(const ml_setting_t *s, char *buf, size_t len)
{
    const char *asked = getenv("MPILENS_PROGRESS");
    if (s->loaded || !asked || !*asked)
        return NULL;
    snprintf(buf, len,
             "MPILENS_PROGRESS is %s but libmpilens-progress is not loaded: these points are without its thread "
             "(preload the library)",
             asked);
    return buf;
}

void ml_progress_setting_record(ml_program_t *p, ml_setting_t *s)
{
    ml_setting_find(s, p->thread_level);
    ml_json_t json;
    ml_json_init(&json);
    setting_json(s, &json);
    int failed =
        p->rank == 0 && (json.failed || ml_program_set_context(p, "progress_setting", json.buf,
                                                               "run it with the same progress setting (LD_PRELOAD, "
                                                               "MPILENS_PROGRESS, the MPI library's async progress "
                                                               "variables)") != 0);
    ml_json_free(&json);
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (failed)
        ml_program_exit_usage(p, "out of memory");
}

void ml_progress_setting_note(ml_program_t *p, const ml_setting_t *s)
{
    char text[320];
    const char *warning = setting_warning(s, text, sizeof text);
    if (warning) {
        if (p->rank == 0)
            fprintf(stderr, "%s: warning: %s\n", p->spec->program, warning);
        ml_program_note(p, "warning", warning, NULL);
    }
    if (s->loaded && s->reason[0]) {
        snprintf(text, sizeof text, "libmpilens-progress: %s", s->reason);
        ml_program_note(p, "info", text, NULL);
    }
}
