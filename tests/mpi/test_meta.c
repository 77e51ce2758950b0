/* The meta record holds the run's context: checked field by field against what this test knows
 * (rank count, the flavour it was built with, variables it set itself). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "meta.h"
#include "mpitest.h"

/* Whether the "machines" array holds one identity n times: 16 hex digits, or "" on a system
 * without /etc/machine-id (every rank of these tests runs on this machine). */
static int same_machine_everywhere(const char *json, int n)
{
    const char *v;
    size_t len;
    if (ml_json_find(json, "machines", &v, &len) != 0 || *v != '[')
        return 0;
    size_t id_len = strspn(v + 2, "0123456789abcdef");
    if (id_len != 16 && !(id_len == 0 && access("/etc/machine-id", R_OK) != 0))
        return 0;
    for (int i = 0; i < n; i++) {
        const char *item = v + 1 + (size_t)i * (id_len + 3);
        if (item[0] != '"' || strncmp(item + 1, v + 2, id_len) != 0 || item[id_len + 1] != '"')
            return 0;
    }
    return 1;
}

/* Number of elements of the JSON array at path (our own output: strings without brackets). */
static int array_length(const char *json, const char *path)
{
    const char *v;
    size_t len;
    if (ml_json_find(json, path, &v, &len) != 0 || *v != '[')
        return -1;
    int n = 0, in_string = 0;
    for (size_t i = 1; i + 1 < len; i++) {
        if (v[i] == '\\') {
            i++;
            continue;
        }
        if (v[i] == '"' && !in_string)
            n++;
        if (v[i] == '"')
            in_string = !in_string;
    }
    return n;
}

int main(int argc, char **argv)
{
    int rank, size;
    mpitest_init(&argc, &argv, &rank, &size);
    REQUIRE(argc == 2); /* the flavour this build was configured with */
    if (rank == 0) {
        setenv("MPILENS_TEST_MARKER", "42 \"quoted\"", 1);
        setenv("OMPI_MCA_btl_fake_knob", "x", 1);
        setenv("OMPI_MCA_orte_fake_wiring", "y", 1); /* launcher wiring: must be left out */
        setenv("I_MPI_INFO_FAKE", "y", 1);           /* Intel's hydra's machine description: too */
        setenv("UNRELATED_VARIABLE", "z", 1);
        /* A control variable the environment sets has no known default (MPI_T gives none). */
        setenv(strcmp(argv[1], "mpich") == 0      ? "MPIR_CVAR_ASYNC_PROGRESS"
               : strcmp(argv[1], "intelmpi") == 0 ? "I_MPI_DEBUG_COREDUMP"
                                                  : "OMPI_MCA_mpi_yield_when_idle",
               "0", 1);
    }

    ml_clock_info_t clock;
    ml_clock_measure(&clock);
    int flag = 1;
    ml_option_t options[] = {
        {"flag", ML_OPT_FLAG, NULL, NULL, NULL, "", &flag, 0, 0, NULL},
        ML_OPTIONS_END,
    };
    char *cmd[] = {"prog", "--flag"};
    char err[128];
    REQUIRE(ml_options_parse(options, 2, cmd, err, sizeof err) == ML_OPTIONS_OK);
    ml_meta_args_t args = {"fam", "prog", 2, cmd, &clock, options, 7, MPI_THREAD_SINGLE};
    ml_json_t j;
    ml_json_init(&j);
    CHECK(ml_meta_build(MPI_COMM_WORLD, &args, &j) == MPI_SUCCESS);

    if (rank == 0) {
        char s[256];
        int64_t v;
        REQUIRE(j.buf && !j.failed);
        CHECK(ml_json_get_string(j.buf, "type", s, sizeof s) == 0 && strcmp(s, "meta") == 0);
        CHECK(ml_json_get_int(j.buf, "schema", &v) == 0 && v == ML_RESULTS_SCHEMA);
        CHECK(ml_json_get_string(j.buf, "family", s, sizeof s) == 0 && strcmp(s, "fam") == 0);
        CHECK(ml_json_get_string(j.buf, "mpilens_version", s, sizeof s) == 0 && s[0] != '\0');
        CHECK(ml_json_get_int(j.buf, "ranks", &v) == 0 && v == size);
        /* Every rank of this test runs on this machine: one node (tests/cluster checks two). */
        CHECK(ml_json_get_int(j.buf, "nodes", &v) == 0 && v == 1);
        CHECK(array_length(j.buf, "hosts") == size);
        CHECK(array_length(j.buf, "binding") == size);
        CHECK(array_length(j.buf, "machines") == size);
        CHECK(same_machine_everywhere(j.buf, size));
        CHECK(array_length(j.buf, "command") == 2);
        CHECK(ml_json_get_string(j.buf, "mpi.flavour", s, sizeof s) == 0 && strcmp(s, argv[1]) == 0);
        CHECK(ml_json_get_string(j.buf, "mpi.thread_level", s, sizeof s) == 0 && strcmp(s, "single") == 0);
        CHECK(ml_json_get_string(j.buf, "mpi.standard", s, sizeof s) == 0 && s[1] == '.');
        CHECK(ml_json_get_string(j.buf, "clock.source", s, sizeof s) == 0 && strcmp(s, "CLOCK_MONOTONIC") == 0);
        CHECK(ml_json_get_int(j.buf, "points_total", &v) == 0 && v == 7);
        CHECK(ml_json_get_int(j.buf, "cpus_online", &v) == 0 && v >= 1);
        CHECK(ml_json_get_int(j.buf, "topology.pus", &v) == 0 && v >= 1);
        CHECK(ml_json_get_string(j.buf, "env.MPILENS_TEST_MARKER", s, sizeof s) == 0 &&
              strcmp(s, "42 \"quoted\"") == 0);
        CHECK(ml_json_get_string(j.buf, "env.OMPI_MCA_btl_fake_knob", s, sizeof s) == 0);
        CHECK(ml_json_get_string(j.buf, "env.OMPI_MCA_orte_fake_wiring", s, sizeof s) == -1);
        CHECK(ml_json_get_string(j.buf, "env.I_MPI_INFO_FAKE", s, sizeof s) == -1);
        CHECK(ml_json_get_string(j.buf, "env.UNRELATED_VARIABLE", s, sizeof s) == -1);
        const char *opt;
        size_t len;
        CHECK(ml_json_find(j.buf, "options.flag", &opt, &len) == 0 && strncmp(opt, "true", len) == 0);
        /* The library's control variables, as MPI_T lists them: one of each library's known
         * ones, its type and value, and no default where the environment set it. */
        CHECK(ml_json_get_int(j.buf, "cvars.count", &v) == 0 && v >= 100);
        if (strcmp(argv[1], "mpich") == 0) {
            CHECK(ml_json_get_string(j.buf, "cvars.vars.MPIR_CVAR_ASYNC_PROGRESS.type", s, sizeof s) == 0 &&
                  strcmp(s, "int") == 0);
            CHECK(ml_json_get_int(j.buf, "cvars.vars.MPIR_CVAR_ASYNC_PROGRESS.value", &v) == 0 && v == 0);
            CHECK(ml_json_find(j.buf, "cvars.vars.MPIR_CVAR_ASYNC_PROGRESS.default", &opt, &len) == 0 &&
                  strncmp(opt, "null", len) == 0);
            CHECK(ml_json_get_int(j.buf, "cvars.vars.MPIR_CVAR_POLLS_BEFORE_YIELD.default", &v) == 0 && v == 1000);
        } else if (strcmp(argv[1], "intelmpi") == 0) {
            /* Intel MPI reports its own I_MPI_ variables through MPI_T beside MPICH's. */
            CHECK(ml_json_get_string(j.buf, "cvars.vars.I_MPI_DEBUG_COREDUMP.type", s, sizeof s) == 0 &&
                  strcmp(s, "int") == 0);
            CHECK(ml_json_get_int(j.buf, "cvars.vars.I_MPI_DEBUG_COREDUMP.value", &v) == 0 && v == 0);
            CHECK(ml_json_find(j.buf, "cvars.vars.I_MPI_DEBUG_COREDUMP.default", &opt, &len) == 0 &&
                  strncmp(opt, "null", len) == 0);
            CHECK(ml_json_get_string(j.buf, "cvars.vars.MPIR_CVAR_ASYNC_PROGRESS.type", s, sizeof s) == 0);
        } else {
            CHECK(ml_json_get_string(j.buf, "cvars.vars.mpi_yield_when_idle.type", s, sizeof s) == 0 &&
                  strcmp(s, "bool") == 0);
            CHECK(ml_json_find(j.buf, "cvars.vars.mpi_yield_when_idle.value", &opt, &len) == 0 &&
                  strncmp(opt, "false", len) == 0);
            CHECK(ml_json_find(j.buf, "cvars.vars.mpi_yield_when_idle.default", &opt, &len) == 0 &&
                  strncmp(opt, "null", len) == 0);
        }
    } else {
        CHECK(j.len == 0);
    }
    ml_json_free(&j);
    return mpitest_finish();
}
