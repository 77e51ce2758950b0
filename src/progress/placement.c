/* Where the progress thread runs: a given processing unit, or a spare one (a core no rank of this
 * node is bound to), and whether it may run at a real-time priority. */
#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer.h"

enum { MASK_WORDS = 64 }; /* processing units up to OS index 4095 */

typedef struct {
    uint64_t w[MASK_WORDS];
} pu_mask_t;

static void mask_from_bitmap(hwloc_const_bitmap_t set, pu_mask_t *m)
{
    memset(m, 0, sizeof *m);
    unsigned i;
    hwloc_bitmap_foreach_begin(i, set) if (i < 64 * MASK_WORDS) m->w[i / 64] |= 1ULL << (i % 64);
    hwloc_bitmap_foreach_end();
}

static int mask_has(const pu_mask_t *m, unsigned i) { return i < 64 * MASK_WORDS && (m->w[i / 64] >> (i % 64)) & 1; }

static int mask_equal(const pu_mask_t *a, const pu_mask_t *b) { return memcmp(a, b, sizeof *a) == 0; }

/* The processing units of `allowed` in no rank's binding, as whole cores where possible: the
 * node_rank-th such core's first unit. Returns CPU_ANY if there is none. */
static int spare_unit(hwloc_topology_t topo, const pu_mask_t *used, int node_rank)
{
    int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE), free_cores = 0;
    int free_core_first[1024];
    for (int c = 0; c < cores && free_cores < 1024; c++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, c);
        int all_free = 1, first = -1;
        unsigned i;
        hwloc_bitmap_foreach_begin(i, core->cpuset) if (mask_has(used, i)) all_free = 0;
        else if (first < 0) first = (int)i;
        hwloc_bitmap_foreach_end();
        if (all_free && first >= 0)
            free_core_first[free_cores++] = first;
    }
    return free_cores ? free_core_first[node_rank % free_cores] : CPU_ANY;
}

/* cpu=spare: the node's ranks share their bindings; the thread of each takes a core that none
 * of them is bound to. Unbound ranks may run anywhere, so then no core is known to be spare. */
static int choose_spare(hwloc_topology_t topo, char *why, size_t why_size)
{
    MPI_Comm node;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_rank, node_size;
    PMPI_Comm_rank(node, &node_rank);
    PMPI_Comm_size(node, &node_size);
    pu_mask_t mine, allowed;
    hwloc_bitmap_t bound = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_PROCESS) != 0)
        hwloc_bitmap_copy(bound, hwloc_topology_get_allowed_cpuset(topo));
    mask_from_bitmap(bound, &mine);
    mask_from_bitmap(hwloc_topology_get_allowed_cpuset(topo), &allowed);
    hwloc_bitmap_free(bound);
    int unbound = mask_equal(&mine, &allowed), any_unbound = 0;
    PMPI_Allreduce(&unbound, &any_unbound, 1, MPI_INT, MPI_LOR, node);
    pu_mask_t used;
    PMPI_Allreduce(mine.w, used.w, MASK_WORDS, MPI_UINT64_T, MPI_BOR, node);
    PMPI_Comm_free(&node);
    if (any_unbound) {
        snprintf(why, why_size,
                 "cpu=spare: the ranks are not bound to cores, so no core is known to be free (bind them, as "
                 "with mpirun --bind-to core); the thread is not bound");
        return CPU_ANY;
    }
    int cpu = spare_unit(topo, &used, node_rank);
    if (cpu == CPU_ANY)
        snprintf(why, why_size,
                 "cpu=spare: no spare core, the %d ranks of this node are bound to every core; the thread "
                 "shares its rank's cores",
                 node_size);
    return cpu;
}

int ml_progress_choose_cpu(int cpu, char *why, size_t why_size)
{
    why[0] = '\0';
    if (cpu == CPU_ANY)
        return CPU_ANY;
    hwloc_topology_t topo;
    hwloc_topology_init(&topo);
    hwloc_topology_load(topo);
    int chosen = cpu;
    if (cpu == CPU_SPARE) {
        chosen = choose_spare(topo, why, why_size);
    } else if (!hwloc_bitmap_isset(hwloc_topology_get_allowed_cpuset(topo), (unsigned)cpu)) {
        char *list = NULL;
        hwloc_bitmap_list_asprintf(&list, hwloc_topology_get_allowed_cpuset(topo));
        snprintf(why, why_size, "cpu=%d is not a processing unit this process may use (%s); the thread is not bound",
                 cpu, list ? list : "?");
        free(list);
        chosen = CPU_ANY;
    }
    hwloc_topology_destroy(topo);
    return chosen;
}

int ml_progress_bind(pthread_t thread, int cpu, char *why, size_t why_size)
{
    if (cpu == CPU_ANY)
        return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int rc = pthread_setaffinity_np(thread, sizeof set, &set);
    if (rc != 0) {
        snprintf(why, why_size, "cannot bind the thread to cpu %d (%s); it is not bound", cpu, strerror(rc));
        return -1;
    }
    return 0;
}

int ml_progress_realtime(pthread_t thread, char *why, size_t why_size)
{
    struct sched_param param = {.sched_priority = sched_get_priority_min(SCHED_FIFO)};
    int rc = pthread_setschedparam(thread, SCHED_FIFO, &param);
    if (rc != 0) {
        snprintf(why, why_size,
                 "rt: SCHED_FIFO is not permitted here (%s; it needs CAP_SYS_NICE or an RLIMIT_RTPRIO above 0); the "
                 "thread runs with the normal policy",
                 strerror(rc));
        return -1;
    }
    return 0;
}
