/* Monitoring a whole run without changing the program (docs/monitor.md): with
 * MPILENS_MONITOR=PREFIX, a session on MPI_COMM_WORLD runs from MPI_Init to MPI_Finalize, and
 * rank 0 writes PREFIX.jsonl, a results file of family "monitor" with one sparse matrix pair
 * (messages, bytes) per kind of communication. The session is the library's own: the program
 * may use the MPI_M_ API at the same time without seeing it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "meta.h"
#include "hooks.h"
#include "monitor.h"
#include "mpi_monitoring.h"
#include "mpit.h"
#include "results.h"
#include "session.h"

#define PROGRAM "libmpilens-monitor"
#define MAX_ARGS 256

static int session = -1;
static char *output;

static const struct {
    const char *name;
    int flag;
} kinds[] = {{"p2p", MPI_M_P2P_ONLY}, {"coll", MPI_M_COLL_ONLY}, {"osc", MPI_M_OSC_ONLY}};

/* Rank 0 creates the output file right away, so that a prefix that cannot be written is said at
 * the start of the run, not lost at its end; every rank learns whether to monitor. */
static int claim_output(const char *prefix)
{
    int ok = 1;
    if (ml_mon.world_rank == 0) {
        size_t len = strlen(prefix) + 8;
        output = malloc(len);
        snprintf(output, len, "%s.jsonl", prefix);
        int fd = open(output, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0) {
            fprintf(stderr, PROGRAM ": MPILENS_MONITOR=%s: cannot create %s: %s%s; this run is not monitored\n", prefix,
                    output, strerror(errno), errno == EEXIST ? " (remove it or choose another prefix)" : "");
            ok = 0;
        } else {
            close(fd);
        }
    }
    PMPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

void ml_wholerun_begin(int provided)
{
    (void)provided;
    const char *prefix = getenv("MPILENS_MONITOR");
    if (!prefix || !*prefix || ml_engine_up() != 0)
        return;
    if (!claim_output(prefix) || ml_session_start(MPI_COMM_WORLD, 1, &session) != MPI_SUCCESS) {
        session = -1;
        ml_engine_down();
    }
}

/* The program's command line, as the kernel has it (MPI_Init may have been given NULL). */
static int command_line(char *buf, size_t len, char **argv)
{
    int fd = open("/proc/self/cmdline", O_RDONLY), argc = 0;
    ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    for (char *p = buf; p < buf + n && argc < MAX_ARGS; p += strlen(p) + 1)
        argv[argc++] = p;
    return argc;
}

static void write_matrix(ml_json_t *j, const char *key, const unsigned long *m, int size)
{
    ml_json_begin_object(j, key);
    ml_json_string(j, "format", "coo");
    ml_json_begin_array(j, "shape");
    ml_json_int(j, NULL, size);
    ml_json_int(j, NULL, size);
    ml_json_end_array(j);
    ml_json_begin_array(j, "entries");
    for (int i = 0; i < size; i++)
        for (int k = 0; k < size; k++) {
            unsigned long v = m[(size_t)i * (size_t)size + (size_t)k];
            if (v == 0)
                continue;
            ml_json_begin_array(j, NULL);
            ml_json_int(j, NULL, i);
            ml_json_int(j, NULL, k);
            ml_json_int(j, NULL, (int64_t)v);
            ml_json_end_array(j);
        }
    ml_json_end_array(j);
    ml_json_end_object(j);
}

static uint64_t total(const unsigned long *m, int size)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < (size_t)size * (size_t)size; i++)
        sum += m[i];
    return sum;
}

static void write_point(ml_results_t *r, int k, const unsigned long *counts, const unsigned long *sizes, int size)
{
    int coll_decomposed = kinds[k].flag == MPI_M_COLL_ONLY && ml_mpit_active();
    char key[32];
    snprintf(key, sizeof key, "matrix/kind=%s", kinds[k].name);
    ml_json_t j;
    ml_json_init(&j);
    ml_record_point_begin(&j, "monitor", "matrix", key);
    ml_json_begin_object(&j, "params");
    ml_json_string(&j, "kind", kinds[k].name);
    ml_json_end_object(&j);
    ml_json_begin_object(&j, "stats");
    ml_json_string(&j, "backend", coll_decomposed ? "ompi-mpit" : "pmpi");
    if (kinds[k].flag == MPI_M_COLL_ONLY && !coll_decomposed)
        ml_json_string(&j, "backend_reason", ml_mpit_reason());
    ml_json_int(&j, "ranks", size);
    write_matrix(&j, "counts", counts, size);
    write_matrix(&j, "bytes", sizes, size);
    ml_json_int(&j, "total_messages", (int64_t)total(counts, size));
    ml_json_int(&j, "total_bytes", (int64_t)total(sizes, size));
    ml_json_end_object(&j);
    ml_json_end_object(&j);
    if (!j.failed)
        ml_results_append(r, j.buf);
    ml_json_free(&j);
}

/* Rank 0 only: the meta record, as every mpilens results file has it. */
static int write_results(const unsigned long *const *counts, const unsigned long *const *sizes, int size,
                         const char *meta)
{
    char err[512];
    ml_results_t *r;
    if (ml_results_create(output, meta, &r, err, sizeof err) != 0) {
        fprintf(stderr, PROGRAM ": %s\n", err);
        return -1;
    }
    for (int k = 0; k < 3; k++)
        write_point(r, k, counts[k], sizes[k], size);
    return ml_results_close(r);
}

void ml_wholerun_finish(void)
{
    if (session < 0)
        return;
    ml_session_suspend(session, 1);
    int size = ml_mon.world_size, rank = ml_mon.world_rank;
    unsigned long *counts[3] = {0}, *sizes[3] = {0};
    for (int k = 0; k < 3; k++) {
        if (rank == 0) {
            counts[k] = calloc((size_t)size * (size_t)size, sizeof(unsigned long));
            sizes[k] = calloc((size_t)size * (size_t)size, sizeof(unsigned long));
        }
        ml_session_gather(session, 1, 0, counts[k], sizes[k], kinds[k].flag);
    }

    /* the run's context: hosts, bindings, MPI library... gathered like any program's */
    char cmdline[8192], *argv[MAX_ARGS];
    int argc = command_line(cmdline, sizeof cmdline, argv), level;
    ml_clock_info_t clock;
    ml_clock_measure(&clock);
    PMPI_Query_thread(&level);
    ml_option_t no_options[] = {ML_OPTIONS_END};
    ml_meta_args_t args = {"monitor", PROGRAM, argc, argv, &clock, no_options, 3, level};
    ml_json_t meta;
    ml_json_init(&meta);
    ml_meta_build(MPI_COMM_WORLD, &args, &meta);
    if (rank == 0) {
        if (!meta.failed && write_results((const unsigned long *const *)counts, (const unsigned long *const *)sizes,
                                          size, meta.buf) == 0)
            fprintf(stderr, PROGRAM ": communication matrices written to %s\n", output);
        for (int k = 0; k < 3; k++) {
            free(counts[k]);
            free(sizes[k]);
        }
    }
    ml_json_free(&meta);
    free(output);
    ml_session_free_internal(session);
    session = -1;
    ml_engine_down();
}
