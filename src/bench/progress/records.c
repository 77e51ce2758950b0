/* The point records of mpilens-progress (docs/results-schema.md, "progress"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const char *compute_name(int work) { return work ? "work" : "time"; }

static int has_interval(const ml_point_t *pt) { return strncmp(pt->strategy, "test", 4) == 0; }

void ml_point_key(char *buf, size_t len, const ml_point_t *pt)
{
    char op[48] = "", compute[24] = "", interval[40] = "";
    if (pt->op)
        snprintf(op, sizeof op, "/op=%s", pt->op);
    if (pt->work >= 0)
        snprintf(compute, sizeof compute, "/compute=%s", compute_name(pt->work));
    /* test-best is one point per kind: its interval is a result, not part of its name */
    if (strcmp(pt->strategy, "test") == 0)
        snprintf(interval, sizeof interval, "/interval=%" PRId64, pt->interval);
    snprintf(buf, len, "%s%s/size=%" PRId64 "%s/strategy=%s%s", pt->bench, op, pt->size, compute, pt->strategy,
             interval);
}

void ml_point_begin(ml_json_t *j, const ml_bench_t *b, const ml_point_t *pt, const char *key, int ranks)
{
    ml_json_init(j);
    ml_record_point_begin(j, FAMILY, pt->bench, key);
    ml_json_begin_object(j, "params");
    if (pt->op)
        ml_json_string(j, "op", pt->op);
    ml_json_int(j, "size_bytes", pt->size);
    if (pt->work >= 0)
        ml_json_string(j, "compute", compute_name(pt->work));
    ml_json_string(j, "strategy", pt->strategy);
    if (has_interval(pt)) {
        ml_json_int(j, "interval_bytes", pt->interval);
        ml_json_string(j, "test_placement", b->test_placement_name);
    }
    if (ranks > 0)
        ml_json_int(j, "ranks", ranks);
    ml_json_string(j, "progress", b->setting.label);
    ml_json_end_object(j);
    ml_json_begin_object(j, "stats");
}

ml_switches_t *ml_switches_gather(const ml_switch_snapshot_t *before, MPI_Comm comm)
{
    ml_switch_snapshot_t after;
    ml_switches_snapshot(&after);
    ml_switches_t mine = ml_switches_since(&after, before);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int64_t words[ML_SWITCH_WORDS], *all = rank == 0 ? malloc(sizeof words * (size_t)size) : NULL;
    ml_switches_t *ranks = rank == 0 ? malloc(sizeof *ranks * (size_t)size) : NULL;
    if (rank == 0 && (!all || !ranks))
        MPI_Abort(MPI_COMM_WORLD, 2);
    ml_switches_pack(&mine, words);
    MPI_Gather(words, ML_SWITCH_WORDS, MPI_INT64_T, all, ML_SWITCH_WORDS, MPI_INT64_T, 0, comm);
    for (int r = 0; ranks && r < size; r++)
        ranks[r] = ml_switches_unpack(all + (size_t)r * ML_SWITCH_WORDS);
    free(all);
    return ranks;
}

void ml_switches_json(ml_json_t *j, const ml_switches_t *ranks, int n)
{
    static const char *const groups[ML_SWITCH_GROUPS] = {"rank", "progress_thread", "other_threads"};
    int progress = 0;
    for (int r = 0; r < n; r++)
        progress |= ranks[r].has_progress;
    ml_json_begin_object(j, "context_switches");
    for (int g = 0; g < ML_SWITCH_GROUPS; g++) {
        if (g == ML_SWITCH_PROGRESS && !progress) {
            ml_json_null(j, groups[g]);
            continue;
        }
        ml_json_begin_object(j, groups[g]);
        ml_json_begin_array(j, "voluntary");
        for (int r = 0; r < n; r++)
            ml_json_int(j, NULL, ranks[r].group[g].voluntary);
        ml_json_end_array(j);
        ml_json_begin_array(j, "involuntary");
        for (int r = 0; r < n; r++)
            ml_json_int(j, NULL, ranks[r].group[g].involuntary);
        ml_json_end_array(j);
        ml_json_end_object(j);
    }
    ml_json_end_object(j);
}

void ml_samples_json(ml_json_t *j, const ml_samples_t *s, int work)
{
    ml_json_double(j, "t_o_ns", ml_median(&s->o));
    ml_json_double(j, "t_mpi_ns", ml_median(&s->mpi));
    ml_json_double(j, "t_ov_ns", ml_median(&s->ov));
    ml_json_double(j, "t_start_ns", ml_median(&s->start));
    ml_json_double(j, "t_test_ns", ml_median(&s->test));
    ml_json_double(j, "t_wait_ns", ml_median(&s->wait));
    if (work)
        ml_json_double(j, "t_c_ns", ml_median(&s->c));
    ml_json_int(j, "tests", s->tests);
}

int ml_recorded_number(const char *path, const char *key, const char *field, double *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *line = NULL, found[256];
    size_t cap = 0;
    int rc = -1;
    while (rc != 0 && getline(&line, &cap, f) > 0) {
        const char *value;
        size_t len;
        if (ml_json_get_string(line, "key", found, sizeof found) != 0 || strcmp(found, key) != 0 ||
            ml_json_find(line, field, &value, &len) != 0)
            continue;
        char *end;
        *out = strtod(value, &end);
        rc = end > value ? 0 : -1; /* null: a value that was not finite */
    }
    free(line);
    fclose(f);
    return rc;
}
