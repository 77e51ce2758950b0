#include "meta.h"
#include "cvars.h"
#include "machine.h"

#include <hwloc.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define ML_HOST_LEN 256
#define ML_BINDING_LEN 256
#define ML_MACHINE_LEN 24

/* Environment variables that change what an MPI library or mpilens does. */
static const char *const tuning_prefixes[] = {
    "OMPI_MCA_", "PRTE_MCA_", "PMIX_MCA_", "MPIR_CVAR_",    "MPICH_",        "HYDRA_",   "I_MPI_", "MV2_",
    "UCX_",      "FI_",       "PSM2_",     "SLURM_JOB_ID=", "SLURM_NTASKS=", "MPILENS_", NULL,
};

/* Variables with those prefixes that launchers set to wire up the job (addresses, session
 * directories, job ids; Intel MPI's hydra also hands every rank a description of the machine,
 * I_MPI_INFO_*): they differ at every run or machine and tune nothing. OMPI_MCA_mpi_oversubscribe,
 * also set by mpirun, is kept: it says whether Open MPI believes the node is oversubscribed. */
static const char *const launcher_internal_prefixes[] = {
    "OMPI_MCA_orte_",
    "OMPI_MCA_ess=",
    "OMPI_MCA_ess_",
    "OMPI_MCA_pmix=",
    "OMPI_MCA_initial_wdir=",
    "OMPI_MCA_shmem_RUNTIME_QUERY_hint=",
    "PMIX_MCA_mca_base_component_show_load_errors=",
    "PMIX_MCA_psec=",
    "PSM2_DEVICES=",
    "MPIR_CVAR_CH3_INTERFACE_HOSTNAME=",
    "I_MPI_INFO_",
    "I_MPI_HYDRA_UUID=",
    NULL,
};

static int has_prefix_in(const char *entry, const char *const *prefixes)
{
    for (const char *const *prefix = prefixes; *prefix; prefix++)
        if (strncmp(entry, *prefix, strlen(*prefix)) == 0)
            return 1;
    return 0;
}

const char *ml_mpi_flavour(const char *v)
{
    /* Derived libraries name their base too, so the specific names are tested first. */
    if (strstr(v, "Intel"))
        return "intelmpi";
    if (strstr(v, "MVAPICH"))
        return "mvapich";
    if (strstr(v, "CRAY MPICH") || strstr(v, "Cray MPICH"))
        return "craympich";
    if (strstr(v, "Open MPI"))
        return "openmpi";
    if (strstr(v, "MPICH"))
        return "mpich";
    return "unknown";
}

void ml_binding_string(char *buf, size_t len)
{
    cpu_set_t set;
    size_t used = 0;
    buf[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        snprintf(buf, len, "unknown");
        return;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &set))
            continue;
        int last = cpu;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
            last++;
        int n = last > cpu ? snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", cpu, last)
                           : snprintf(buf + used, len - used, "%s%d", used ? "," : "", cpu);
        if (n < 0 || (size_t)n >= len - used) {
            snprintf(buf + (len > 4 ? len - 4 : 0), 4, "...");
            return;
        }
        used += (size_t)n;
        cpu = last;
    }
}

static const char *const thread_level_names[] = {"single", "funneled", "serialized", "multiple"};
static const int thread_levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE};

const char *ml_thread_level_name(int level)
{
    for (int i = 0; i < 4; i++)
        if (thread_levels[i] == level)
            return thread_level_names[i];
    return "unknown";
}

int ml_thread_level_parse(const char *name, int *level)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(name, thread_level_names[i]) == 0) {
            *level = thread_levels[i];
            return 0;
        }
    return -1;
}

void ml_utc_now(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void write_mpi(ml_json_t *j, int thread_level)
{
    char library[MPI_MAX_LIBRARY_VERSION_STRING], first_line[MPI_MAX_LIBRARY_VERSION_STRING], standard[16];
    int len, major, minor;
    MPI_Get_library_version(library, &len);
    while (len > 0 && (library[len - 1] == '\n' || library[len - 1] == ' ' || library[len - 1] == '\0'))
        library[--len] = '\0';
    snprintf(first_line, sizeof first_line, "%.*s", (int)strcspn(library, "\n"), library);
    MPI_Get_version(&major, &minor);
    snprintf(standard, sizeof standard, "%d.%d", major, minor);

    ml_json_begin_object(j, "mpi");
    ml_json_string(j, "library", first_line);
    ml_json_string(j, "library_full", library);
    ml_json_string(j, "flavour", ml_mpi_flavour(library));
    ml_json_string(j, "standard", standard);
    ml_json_string(j, "thread_level", ml_thread_level_name(thread_level));
    ml_json_end_object(j);
}

static void write_env(ml_json_t *j)
{
    ml_json_begin_object(j, "env");
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || !has_prefix_in(*e, tuning_prefixes) || has_prefix_in(*e, launcher_internal_prefixes))
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
        ml_json_string(j, name, eq + 1);
    }
    ml_json_end_object(j);
}

static void write_topology(ml_json_t *j)
{
    hwloc_topology_t topo;
    ml_json_begin_object(j, "topology");
    if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
        ml_json_int(j, "packages", hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE));
        ml_json_int(j, "cores", hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
        ml_json_int(j, "pus", hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU));
        hwloc_topology_destroy(topo);
    }
    ml_json_end_object(j);
}

static void write_clock(ml_json_t *j, const ml_clock_info_t *clock)
{
    ml_json_begin_object(j, "clock");
    ml_json_string(j, "source", ML_CLOCK_SOURCE);
    ml_json_double(j, "resolution_ns", clock->resolution_ns);
    ml_json_double(j, "reported_resolution_ns", clock->reported_resolution_ns);
    ml_json_double(j, "read_cost_ns", clock->read_cost_ns);
    ml_json_end_object(j);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Distinct names among n, by sorting pointers to them: O(n log n), as a job may have 65536 ranks. */
static int count_distinct(const char *names, int n, size_t stride)
{
    const char **sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted)
        return -1;
    for (int i = 0; i < n; i++)
        sorted[i] = names + (size_t)i * stride;
    qsort(sorted, (size_t)n, sizeof *sorted, compare_names);
    int distinct = n > 0;
    for (int i = 1; i < n; i++)
        distinct += strcmp(sorted[i], sorted[i - 1]) != 0;
    free(sorted);
    return distinct;
}

static void write_string_array(ml_json_t *j, const char *key, const char *items, int n, size_t stride)
{
    ml_json_begin_array(j, key);
    for (int i = 0; i < n; i++)
        ml_json_string(j, NULL, items + (size_t)i * stride);
    ml_json_end_array(j);
}

int ml_meta_build(MPI_Comm comm, const ml_meta_args_t *args, ml_json_t *out)
{
    int rank, size, rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    char mine[ML_HOST_LEN + ML_BINDING_LEN + ML_MACHINE_LEN] = {0};
    gethostname(mine, ML_HOST_LEN - 1);
    ml_binding_string(mine + ML_HOST_LEN, ML_BINDING_LEN);
    ml_machine_id(mine + ML_HOST_LEN + ML_BINDING_LEN, ML_MACHINE_LEN);
    char *all = rank == 0 ? calloc((size_t)size, sizeof mine) : NULL;
    if (rank == 0 && !all)
        return MPI_ERR_NO_MEM;
    rc = MPI_Gather(mine, (int)sizeof mine, MPI_CHAR, all, (int)sizeof mine, MPI_CHAR, 0, comm);
    if (rc != MPI_SUCCESS || rank != 0) {
        free(all);
        return rc;
    }

    int nodes = count_distinct(all, size, sizeof mine);
    if (nodes < 0) {
        free(all);
        return MPI_ERR_NO_MEM;
    }
    char date[32];
    ml_utc_now(date, sizeof date);
    ml_json_begin_object(out, NULL);
    ml_json_string(out, "type", "meta");
    ml_json_int(out, "schema", ML_RESULTS_SCHEMA);
    ml_json_string(out, "family", args->family);
    ml_json_string(out, "program", args->program);
    ml_json_string(out, "mpilens_version", ml_version_string);
    ml_json_string(out, "date", date);
    ml_json_begin_array(out, "command");
    for (int i = 0; i < args->argc; i++)
        ml_json_string(out, NULL, args->argv[i]);
    ml_json_end_array(out);
    write_mpi(out, args->thread_level);
    ml_json_int(out, "ranks", size);
    ml_json_int(out, "nodes", nodes);
    write_string_array(out, "hosts", all, size, sizeof mine);
    write_string_array(out, "binding", all + ML_HOST_LEN, size, sizeof mine);
    write_string_array(out, "machines", all + ML_HOST_LEN + ML_BINDING_LEN, size, sizeof mine);
    ml_json_int(out, "cpus_online", sysconf(_SC_NPROCESSORS_ONLN));
    write_topology(out);
    write_env(out);
    ml_cvars_json(out, "cvars");
    write_clock(out, args->clock);
    ml_options_json(args->options, out, "options");
    ml_json_int(out, "points_total", args->points_total);
    ml_json_end_object(out);
    free(all);
    return out->failed ? MPI_ERR_NO_MEM : MPI_SUCCESS;
}
