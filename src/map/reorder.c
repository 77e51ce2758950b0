/* The MPI part of libmpilens-map: the machine a communicator runs on, and the reordering of seed
 * 004's figure 1 (gather the matrix at a root, map, broadcast, MPI_Comm_split).
 *
 * Every function here is collective and must end the same way on every rank: a rank that fails
 * alone (a null pointer, memory, hwloc) must not leave the others waiting in a collective. So
 * local failures are agreed on (an allreduce of the status, agree()) before any collective that
 * would need the failed rank, and whatever root 0 decides reaches every rank in one broadcast
 * with the status in it. Only comm == MPI_COMM_NULL is returned at once: such a rank cannot take
 * part in anything.
 *
 * This is not a PMPI layer: it calls MPI_ functions. Under libmpilens-monitor they go through the
 * monitor's wrappers, so sessions active on comm count the reordering's own messages (the gather
 * of the matrix, the broadcasts, the split); the session whose data is being read is suspended
 * and sees none of them. */
#include <dlfcn.h>
#include <hwloc.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "map_internal.h"

enum { ROOT = 0, DESCRIPTION_LEN = 1024 };

/* The same status on every rank: the largest code any rank has (MPILENS_MAP_OK is 0). */
static int agree(MPI_Comm comm, int status)
{
    int agreed;
    if (MPI_Allreduce(&status, &agreed, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return MPILENS_MAP_ERR_MPI;
    return agreed;
}

/* ---- where this process runs ---------------------------------------------------------------- */

/* Slots are whole cores when no two slots share a core (PUs were left out of the tree because
 * cores have one each); otherwise they are PUs. */
static int slots_are_cores(const mpilens_map_topology_t *node)
{
    if (!node->core)
        return 0;
    for (long s = 1; s < node->slots; s++)
        if (node->core[s] == node->core[s - 1])
            return 0;
    return 1;
}

static hwloc_obj_t core_of(hwloc_topology_t machine, hwloc_obj_t pu)
{
    return hwloc_get_ancestor_obj_by_type(machine, HWLOC_OBJ_CORE, pu);
}

/* The hwloc object a slot stands for, found from the PU OS index the topology keeps. */
static hwloc_obj_t slot_object(hwloc_topology_t machine, const mpilens_map_topology_t *node, int cores, long slot)
{
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(machine, (unsigned)node->pu[slot]);
    if (!pu || !cores)
        return pu;
    hwloc_obj_t core = core_of(machine, pu);
    return core ? core : pu;
}

/* Which slots a binding allows: the one slot it lies inside, or the PU slots of the one core it
 * is exactly (map.h counts a rank bound to a single core as bound when slots are PUs); *count = 0
 * when the binding spans more. The PUs of a core are consecutive slots. */
static int locate_binding(hwloc_topology_t machine, const mpilens_map_topology_t *node, hwloc_const_cpuset_t bound,
                          int *first, int *count)
{
    int cores = slots_are_cores(node);
    long inside = -1, hits = 0, pus_first = -1, pus_last = -1, pus = 0;
    for (long s = 0; s < node->slots; s++) {
        hwloc_obj_t slot = slot_object(machine, node, cores, s);
        if (!slot)
            return MPILENS_MAP_ERR_HWLOC;
        if (hwloc_bitmap_isincluded(bound, slot->cpuset)) {
            inside = s;
            hits++;
        }
        if (!cores && hwloc_bitmap_isincluded(slot->cpuset, bound)) {
            if (pus_first < 0)
                pus_first = s;
            pus_last = s;
            pus++;
        }
    }
    if (hits == 1) {
        *first = (int)inside;
        *count = 1;
    } else if (pus > 1 && pus == pus_last - pus_first + 1) {
        hwloc_obj_t core = core_of(machine, hwloc_get_pu_obj_by_os_index(machine, (unsigned)node->pu[pus_first]));
        if (core && hwloc_bitmap_isequal(core->cpuset, bound)) {
            *first = (int)pus_first;
            *count = (int)pus;
        }
    }
    return MPILENS_MAP_OK;
}

/* The slots of `node` (this machine, from mpilens_map_topology_hwloc) this process is bound to:
 * *count = 0 when it is not bound to one slot or one core. The topology object keeps no hwloc
 * handle, so the machine is loaded again here to read the binding in its terms. */
static int binding_slots(const mpilens_map_topology_t *node, int *first, int *count)
{
    *first = 0;
    *count = 0;
    if (!node->pu)
        return MPILENS_MAP_OK;
    hwloc_topology_t machine;
    if (hwloc_topology_init(&machine) != 0)
        return MPILENS_MAP_ERR_HWLOC;
    int status = MPILENS_MAP_OK;
    hwloc_bitmap_t bound = NULL;
    if (hwloc_topology_load(machine) != 0)
        status = MPILENS_MAP_ERR_HWLOC;
    else if (!(bound = hwloc_bitmap_alloc()))
        status = MPILENS_MAP_ERR_NOMEM;
    else if (hwloc_get_cpubind(machine, bound, HWLOC_CPUBIND_PROCESS) == 0)
        status = locate_binding(machine, node, bound, first, count);
    hwloc_bitmap_free(bound);
    hwloc_topology_destroy(machine);
    return status;
}

/* ---- the machine of a communicator ---------------------------------------------------------- */

/* What each rank tells the root about itself (as bytes: all ranks run the same library). */
typedef struct {
    int status;                 /* OK, or ERR_SHAPE: its node is not shaped like the root's */
    int first_slot, slot_count; /* the slots of its node its binding allows (0: unbound) */
    char host[MPI_MAX_PROCESSOR_NAME];
} ml_rank_report_t;

/* One rank's view of its node, then the layout the root decides for all. */
typedef struct {
    mpilens_map_topology_t *node;
    char description[DESCRIPTION_LEN];
    ml_rank_report_t mine;
    ml_rank_report_t *reports; /* root: every rank's */
    int nodes, all_bound;
    long *slot_of_rank;             /* [size] */
    char (*hosts)[ML_MAP_HOST_LEN]; /* [nodes], when nodes > 1 */
} ml_machine_t;

static void machine_free(ml_machine_t *m)
{
    if (m->node)
        mpilens_map_topology_free(m->node);
    free(m->reports);
    free(m->slot_of_rank);
    free(m->hosts);
}

static int probe_node(ml_machine_t *m, int rank, int size)
{
    int status = mpilens_map_topology_hwloc(&m->node);
    if (status == MPILENS_MAP_OK)
        status = mpilens_map_topology_describe(m->node, m->description, sizeof m->description);
    if (status == MPILENS_MAP_OK)
        status = binding_slots(m->node, &m->mine.first_slot, &m->mine.slot_count);
    int length = 0;
    if (status == MPILENS_MAP_OK && MPI_Get_processor_name(m->mine.host, &length) != MPI_SUCCESS)
        status = MPILENS_MAP_ERR_MPI;
    m->slot_of_rank = malloc((size_t)size * sizeof *m->slot_of_rank);
    if (rank == ROOT)
        m->reports = malloc((size_t)size * sizeof *m->reports);
    if (status == MPILENS_MAP_OK && (!m->slot_of_rank || (rank == ROOT && !m->reports)))
        status = MPILENS_MAP_ERR_NOMEM;
    return status;
}

/* Every rank compares its node's shape with the root's and reports to the root. */
static int gather_reports(MPI_Comm comm, ml_machine_t *m)
{
    char root_description[DESCRIPTION_LEN];
    memcpy(root_description, m->description, sizeof root_description);
    if (MPI_Bcast(root_description, DESCRIPTION_LEN, MPI_CHAR, ROOT, comm) != MPI_SUCCESS)
        return MPILENS_MAP_ERR_MPI;
    m->mine.status = strcmp(root_description, m->description) ? MPILENS_MAP_ERR_SHAPE : MPILENS_MAP_OK;
    if (MPI_Gather(&m->mine, sizeof m->mine, MPI_BYTE, m->reports, sizeof m->mine, MPI_BYTE, ROOT, comm) != MPI_SUCCESS)
        return MPILENS_MAP_ERR_MPI;
    return MPILENS_MAP_OK;
}

typedef struct {
    const char *host;
    int rank;
} ml_host_rank_t;

static int by_host_then_rank(const void *a, const void *b)
{
    const ml_host_rank_t *x = a, *y = b;
    int c = strcmp(x->host, y->host);
    return c ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

/* Root: node_of[rank], nodes numbered in order of their lowest rank, and each node's host name
 * (cut to what a topology keeps). Sorting by name keeps this O(P log P) for many nodes. */
static int number_nodes(ml_machine_t *m, int size, int *node_of)
{
    ml_host_rank_t *sorted = malloc((size_t)size * sizeof *sorted);
    int *lowest = malloc((size_t)size * sizeof *lowest);
    if (!sorted || !lowest) {
        free(sorted);
        free(lowest);
        return MPILENS_MAP_ERR_NOMEM;
    }
    for (int r = 0; r < size; r++)
        sorted[r] = (ml_host_rank_t){m->reports[r].host, r};
    qsort(sorted, (size_t)size, sizeof *sorted, by_host_then_rank);
    for (int i = 0; i < size; i++) {
        int same_host = i > 0 && strcmp(sorted[i].host, sorted[i - 1].host) == 0;
        lowest[sorted[i].rank] = same_host ? lowest[sorted[i - 1].rank] : sorted[i].rank;
    }
    m->nodes = 0;
    for (int r = 0; r < size; r++)
        node_of[r] = lowest[r] == r ? m->nodes++ : node_of[lowest[r]];
    int status = MPILENS_MAP_OK;
    if (m->nodes > 1) {
        m->hosts = calloc((size_t)m->nodes, sizeof *m->hosts);
        if (!m->hosts)
            status = MPILENS_MAP_ERR_NOMEM;
        for (int r = 0; m->hosts && r < size; r++)
            if (lowest[r] == r)
                memcpy(m->hosts[node_of[r]], m->reports[r].host, strnlen(m->reports[r].host, ML_MAP_HOST_LEN - 1));
    }
    free(sorted);
    free(lowest);
    return status;
}

/* The least loaded of n slots from `from`, the first one on ties: filling free slots in order,
 * then going round again, keeps a node's slots evenly shared. */
static long least_loaded(const int *load, long from, long n)
{
    long best = from;
    for (long s = from + 1; s < from + n; s++)
        if (load[s] < load[best])
            best = s;
    return best;
}

/* Root: each rank's slot. Ranks bound to one slot take it; then ranks bound to one core take
 * that core's least used PU; then unbound ranks, in rank order, the least used slots of their
 * node (the free ones first, in slot order). The result is a list of places the mapping can
 * trade: a slot taken several times is oversubscribed. */
static int assign_slots(ml_machine_t *m, int size, const int *node_of)
{
    long node_slots = m->node->slots;
    int *load = calloc((size_t)m->nodes * (size_t)node_slots, sizeof *load);
    if (!load)
        return MPILENS_MAP_ERR_NOMEM;
    m->all_bound = 1;
    for (int pass = 0; pass < 3; pass++)
        for (int r = 0; r < size; r++) {
            const ml_rank_report_t *report = &m->reports[r];
            int count = report->slot_count;
            if ((pass == 0 && count != 1) || (pass == 1 && count <= 1) || (pass == 2 && count != 0))
                continue;
            long base = node_of[r] * node_slots;
            long slot =
                count ? least_loaded(load, base + report->first_slot, count) : least_loaded(load, base, node_slots);
            load[slot]++;
            m->slot_of_rank[r] = slot;
            if (!count)
                m->all_bound = 0;
        }
    free(load);
    return MPILENS_MAP_OK;
}

static int lay_out_at_root(ml_machine_t *m, int size)
{
    for (int r = 0; r < size; r++)
        if (m->reports[r].status != MPILENS_MAP_OK)
            return m->reports[r].status;
    int *node_of = malloc((size_t)size * sizeof *node_of);
    if (!node_of)
        return MPILENS_MAP_ERR_NOMEM;
    int status = number_nodes(m, size, node_of);
    if (status == MPILENS_MAP_OK)
        status = assign_slots(m, size, node_of);
    free(node_of);
    return status;
}

/* The root's layout to every rank; the status travels with it, so all end alike. */
static int share_layout(MPI_Comm comm, int rank, int size, int status, ml_machine_t *m)
{
    int header[3] = {status, m->nodes, m->all_bound};
    if (MPI_Bcast(header, 3, MPI_INT, ROOT, comm) != MPI_SUCCESS)
        return MPILENS_MAP_ERR_MPI;
    if (header[0] != MPILENS_MAP_OK)
        return header[0];
    m->nodes = header[1];
    m->all_bound = header[2];
    if (MPI_Bcast(m->slot_of_rank, size, MPI_LONG, ROOT, comm) != MPI_SUCCESS)
        return MPILENS_MAP_ERR_MPI;
    if (m->nodes == 1)
        return MPILENS_MAP_OK;
    status = MPILENS_MAP_OK;
    if (rank != ROOT && !(m->hosts = calloc((size_t)m->nodes, sizeof *m->hosts)))
        status = MPILENS_MAP_ERR_NOMEM;
    status = agree(comm, status);
    if (status == MPILENS_MAP_OK &&
        MPI_Bcast(m->hosts, m->nodes * ML_MAP_HOST_LEN, MPI_CHAR, ROOT, comm) != MPI_SUCCESS)
        status = MPILENS_MAP_ERR_MPI;
    return status;
}

/* The whole machine: this node's tree when there is one node, else one copy per node. */
static int machine_topology(ml_machine_t *m, mpilens_map_topology_t **topology)
{
    if (m->nodes == 1) {
        *topology = m->node;
        m->node = NULL;
        return MPILENS_MAP_OK;
    }
    const char **hosts = malloc((size_t)m->nodes * sizeof *hosts);
    if (!hosts)
        return MPILENS_MAP_ERR_NOMEM;
    for (int n = 0; n < m->nodes; n++)
        hosts[n] = m->hosts[n];
    int status = mpilens_map_topology_join(m->node, m->nodes, hosts, topology);
    free(hosts);
    return status;
}

mpilens_map_status_t mpilens_map_topology_of_comm(MPI_Comm comm, mpilens_map_topology_t **topology, long *slot_of_rank,
                                                  int *all_bound)
{
    int rank, size;
    if (comm == MPI_COMM_NULL)
        return MPILENS_MAP_ERR_ARG;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return MPILENS_MAP_ERR_MPI;
    ml_machine_t m = {0};
    int status = !topology || !slot_of_rank || !all_bound ? MPILENS_MAP_ERR_ARG : probe_node(&m, rank, size);
    status = agree(comm, status);
    if (status == MPILENS_MAP_OK)
        status = gather_reports(comm, &m);
    if (status == MPILENS_MAP_OK) {
        int decided = rank == ROOT ? lay_out_at_root(&m, size) : MPILENS_MAP_OK;
        status = share_layout(comm, rank, size, decided, &m);
    }
    mpilens_map_topology_t *machine = NULL;
    if (status == MPILENS_MAP_OK)
        status = agree(comm, machine_topology(&m, &machine));
    if (status == MPILENS_MAP_OK) {
        memcpy(slot_of_rank, m.slot_of_rank, (size_t)size * sizeof *slot_of_rank);
        *all_bound = m.all_bound;
        *topology = machine;
    } else if (machine) {
        mpilens_map_topology_free(machine);
    }
    machine_free(&m);
    return status;
}

/* ---- reordering ------------------------------------------------------------------------------- */

/* One nonzero entry of a row, as gathered: (destination, bytes). */
typedef struct {
    unsigned long to, bytes;
} ml_entry_t;

/* What one rank prepares before the first agreement, so that nothing can fail alone later. */
typedef struct {
    ml_entry_t *entries; /* this rank's nonzeros */
    int nonzeros;
    long *places;     /* [size]: the slot each rank runs on now */
    int *new_rank_of; /* [size] */
    int *gathered;    /* root: [size] nonzeros per rank */
} ml_reorder_t;

static void reorder_free(ml_reorder_t *w)
{
    free(w->entries);
    free(w->places);
    free(w->new_rank_of);
    free(w->gathered);
}

static int prepare(const unsigned long *row, int rank, int size, ml_reorder_t *w)
{
    for (int to = 0; to < size; to++)
        w->nonzeros += row[to] != 0;
    w->entries = malloc((size_t)(w->nonzeros ? w->nonzeros : 1) * sizeof *w->entries);
    w->places = malloc((size_t)size * sizeof *w->places);
    w->new_rank_of = malloc((size_t)size * sizeof *w->new_rank_of);
    if (rank == ROOT)
        w->gathered = malloc((size_t)size * sizeof *w->gathered);
    if (!w->entries || !w->places || !w->new_rank_of || (rank == ROOT && !w->gathered))
        return MPILENS_MAP_ERR_NOMEM;
    int n = 0;
    for (int to = 0; to < size; to++)
        if (row[to])
            w->entries[n++] = (ml_entry_t){(unsigned long)to, row[to]};
    return MPILENS_MAP_OK;
}

/* Arguments every rank must give alike (a topology or none, the same algorithm) are compared in
 * the same allreduce that agrees on the local checks. */
static int agree_arguments(MPI_Comm comm, int status, const mpilens_map_topology_t *topology, mpilens_map_algo_t algo)
{
    int mine[5] = {status, topology == NULL, topology != NULL, (int)algo, -(int)algo}, all[5];
    if (MPI_Allreduce(mine, all, 5, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return MPILENS_MAP_ERR_MPI;
    if (all[0] != MPILENS_MAP_OK)
        return all[0];
    return (all[1] && all[2]) || all[3] != -all[4] ? MPILENS_MAP_ERR_ARG : MPILENS_MAP_OK;
}

static int check_arguments(const unsigned long *row, mpilens_map_algo_t algo, const MPI_Comm *newcomm,
                           const int *new_rank_of)
{
    int available = 0;
    if (!row || !newcomm || !new_rank_of)
        return MPILENS_MAP_ERR_ARG;
    int status = mpilens_map_algo_available(algo, &available);
    if (status != MPILENS_MAP_OK)
        return status;
    return available ? MPILENS_MAP_OK : MPILENS_MAP_ERR_UNSUPPORTED;
}

/* The matrix at the root from the nonzero entries only: a count per rank, then the entries
 * (never a dense size x size gather). Other ranks get *matrix = NULL. */
static int gather_matrix(MPI_Comm comm, int rank, int size, ml_reorder_t *w, mpilens_map_matrix_t **matrix)
{
    if (MPI_Gather(&w->nonzeros, 1, MPI_INT, w->gathered, 1, MPI_INT, ROOT, comm) != MPI_SUCCESS)
        return MPILENS_MAP_ERR_MPI;
    ml_entry_t *all = NULL;
    int *displacements = NULL, status = MPILENS_MAP_OK;
    if (rank == ROOT) {
        long long total = 0;
        for (int r = 0; r < size; r++)
            total += w->gathered[r];
        /* Gatherv counts entries in int: a matrix with more nonzeros cannot be gathered at once */
        displacements = malloc((size_t)size * sizeof *displacements);
        all = total <= INT_MAX ? malloc((size_t)(total ? total : 1) * sizeof *all) : NULL;
        if (!displacements || !all)
            status = MPILENS_MAP_ERR_NOMEM;
        for (int r = 0, at = 0; displacements && r < size; at += w->gathered[r], r++)
            displacements[r] = at;
    }
    if (MPI_Bcast(&status, 1, MPI_INT, ROOT, comm) != MPI_SUCCESS)
        status = MPILENS_MAP_ERR_MPI;
    MPI_Datatype entry = MPI_DATATYPE_NULL;
    if (status == MPILENS_MAP_OK &&
        (MPI_Type_contiguous(2, MPI_UNSIGNED_LONG, &entry) != MPI_SUCCESS || MPI_Type_commit(&entry) != MPI_SUCCESS))
        status = MPILENS_MAP_ERR_MPI;
    if (status == MPILENS_MAP_OK &&
        MPI_Gatherv(w->entries, w->nonzeros, entry, all, w->gathered, displacements, entry, ROOT, comm) != MPI_SUCCESS)
        status = MPILENS_MAP_ERR_MPI;
    if (entry != MPI_DATATYPE_NULL)
        MPI_Type_free(&entry);
    if (status == MPILENS_MAP_OK && rank == ROOT)
        status = mpilens_map_matrix_create(size, matrix);
    for (int r = 0; status == MPILENS_MAP_OK && rank == ROOT && r < size; r++)
        for (int e = displacements[r]; status == MPILENS_MAP_OK && e < displacements[r] + w->gathered[r]; e++)
            status = mpilens_map_matrix_add(*matrix, r, (int)all[e].to, (double)all[e].bytes);
    if (status != MPILENS_MAP_OK && rank == ROOT && *matrix) {
        mpilens_map_matrix_free(*matrix);
        *matrix = NULL;
    }
    free(all);
    free(displacements);
    return status;
}

/* The process now at place p takes the role j the mapping put on p. Where several processes
 * share a slot (and as many roles, since compute_onto pairs roles with the entries of `places`),
 * they are paired in increasing order, so that the result is a permutation. */
static int roles_from_mapping(const long *places, const long *slot_of, int size, int *new_rank_of)
{
    ml_map_keyed_t *processes = malloc((size_t)size * sizeof *processes);
    ml_map_keyed_t *roles = malloc((size_t)size * sizeof *roles);
    if (!processes || !roles) {
        free(processes);
        free(roles);
        return MPILENS_MAP_ERR_NOMEM;
    }
    for (int i = 0; i < size; i++) {
        processes[i] = (ml_map_keyed_t){(double)places[i], i}; /* exact below 2^53 slots */
        roles[i] = (ml_map_keyed_t){(double)slot_of[i], i};
    }
    qsort(processes, (size_t)size, sizeof *processes, ml_map_by_key);
    qsort(roles, (size_t)size, sizeof *roles, ml_map_by_key);
    for (int i = 0; i < size; i++)
        new_rank_of[processes[i].index] = roles[i].index;
    free(processes);
    free(roles);
    return MPILENS_MAP_OK;
}

/* The ranks' current places when the caller gives the topology: rank r on slot r, and with more
 * ranks than slots, round robin over the slots (slot r % slots), each then oversubscribed. */
static int places_on_given_topology(const mpilens_map_topology_t *topology, int size, long *places)
{
    long slots;
    int status = mpilens_map_topology_slots(topology, &slots);
    if (status != MPILENS_MAP_OK)
        return status;
    for (int r = 0; r < size; r++)
        places[r] = r % slots;
    return MPILENS_MAP_OK;
}

/* The root's figures: what the current placement costs and what the new one does. */
typedef struct {
    int status;
    mpilens_map_cost_t before, after;
} ml_outcome_t;

static int map_at_root(const mpilens_map_topology_t *topology, const mpilens_map_matrix_t *matrix,
                       mpilens_map_algo_t algo, int size, ml_reorder_t *w, ml_outcome_t *outcome)
{
    long *slot_of = malloc((size_t)size * sizeof *slot_of);
    if (!slot_of)
        return MPILENS_MAP_ERR_NOMEM;
    int status = mpilens_map_compute_onto(topology, matrix, algo, 0, w->places, slot_of);
    if (status == MPILENS_MAP_OK)
        status = roles_from_mapping(w->places, slot_of, size, w->new_rank_of);
    if (status == MPILENS_MAP_OK)
        status = mpilens_map_cost(topology, matrix, w->places, &outcome->before);
    if (status == MPILENS_MAP_OK)
        status = mpilens_map_cost(topology, matrix, slot_of, &outcome->after);
    free(slot_of);
    return status;
}

static int share_outcome(MPI_Comm comm, int size, ml_outcome_t *outcome, int *new_rank_of)
{
    if (MPI_Bcast(outcome, sizeof *outcome, MPI_BYTE, ROOT, comm) != MPI_SUCCESS)
        return MPILENS_MAP_ERR_MPI;
    if (outcome->status != MPILENS_MAP_OK)
        return outcome->status;
    if (MPI_Bcast(new_rank_of, size, MPI_INT, ROOT, comm) != MPI_SUCCESS)
        return MPILENS_MAP_ERR_MPI;
    return MPILENS_MAP_OK;
}

/* Where the ranks are, the matrix at the root, the mapping there, and its outcome everywhere. */
static int reorder_collectively(MPI_Comm comm, int rank, int size, const mpilens_map_topology_t *topology,
                                mpilens_map_algo_t algo, ml_reorder_t *w, ml_outcome_t *outcome)
{
    mpilens_map_topology_t *machine = NULL;
    int all_bound, placed = MPILENS_MAP_OK;
    if (!topology) {
        int status = mpilens_map_topology_of_comm(comm, &machine, w->places, &all_bound);
        if (status != MPILENS_MAP_OK)
            return status; /* already the same on every rank */
        topology = machine;
    } else if (rank == ROOT) {
        placed = places_on_given_topology(topology, size, w->places);
    }
    /* From here the root's status decides: it reaches every rank with the outcome */
    mpilens_map_matrix_t *matrix = NULL;
    int status = gather_matrix(comm, rank, size, w, &matrix);
    if (status == MPILENS_MAP_OK && rank == ROOT)
        status = placed != MPILENS_MAP_OK ? placed : map_at_root(topology, matrix, algo, size, w, outcome);
    outcome->status = status;
    status = share_outcome(comm, size, outcome, w->new_rank_of);
    if (matrix)
        mpilens_map_matrix_free(matrix);
    if (machine)
        mpilens_map_topology_free(machine);
    return status;
}

mpilens_map_status_t mpilens_map_reorder(MPI_Comm comm, const unsigned long *row_bytes,
                                         const mpilens_map_topology_t *topology, mpilens_map_algo_t algo,
                                         MPI_Comm *newcomm, int *new_rank_of, mpilens_map_cost_t *before,
                                         mpilens_map_cost_t *after)
{
    int rank, size;
    if (comm == MPI_COMM_NULL)
        return MPILENS_MAP_ERR_ARG;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return MPILENS_MAP_ERR_MPI;
    ml_reorder_t w = {0};
    int status = check_arguments(row_bytes, algo, newcomm, new_rank_of);
    if (status == MPILENS_MAP_OK)
        status = prepare(row_bytes, rank, size, &w);
    status = agree_arguments(comm, status, topology, algo);
    ml_outcome_t outcome = {0};
    if (status == MPILENS_MAP_OK)
        status = reorder_collectively(comm, rank, size, topology, algo, &w, &outcome);
    MPI_Comm split = MPI_COMM_NULL;
    if (status == MPILENS_MAP_OK && MPI_Comm_split(comm, 0, w.new_rank_of[rank], &split) != MPI_SUCCESS)
        status = MPILENS_MAP_ERR_MPI;
    if (status == MPILENS_MAP_OK) {
        *newcomm = split;
        memcpy(new_rank_of, w.new_rank_of, (size_t)size * sizeof *new_rank_of);
        if (before)
            *before = outcome.before;
        if (after)
            *after = outcome.after;
    }
    reorder_free(&w);
    return status;
}

/* ---- from a monitoring session -------------------------------------------------------------- */

typedef int (*ml_get_info_t)(MPI_M_msid, int *, int *);
typedef int (*ml_get_data_t)(MPI_M_msid, unsigned long *, unsigned long *, int);

/* This rank's row of the session, through the MPI_M_ functions of the running program. They are
 * looked up, not linked: linking libmpilens-monitor would put its wrappers under every program
 * that maps. A session of the same size on another communicator cannot be told apart: the API
 * does not say which communicator a session watches. */
static int session_row(MPI_M_msid msid, int flags, int size, unsigned long *row)
{
    ml_get_info_t get_info = (ml_get_info_t)dlsym(RTLD_DEFAULT, "MPI_M_get_info");
    ml_get_data_t get_data = (ml_get_data_t)dlsym(RTLD_DEFAULT, "MPI_M_get_data");
    int array_size;
    if (!get_info || !get_data)
        return MPILENS_MAP_ERR_MONITOR; /* the program does not use libmpilens-monitor */
    if (get_info(msid, MPI_M_INT_IGNORE, &array_size) != MPI_SUCCESS || array_size != size)
        return MPILENS_MAP_ERR_MONITOR;
    if (get_data(msid, MPI_M_DATA_IGNORE, row, flags) != MPI_SUCCESS)
        return MPILENS_MAP_ERR_MONITOR; /* not suspended, or flags the session refuses */
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_reorder_session(MPI_Comm comm, MPI_M_msid msid, int flags,
                                                 const mpilens_map_topology_t *topology, mpilens_map_algo_t algo,
                                                 MPI_Comm *newcomm, int *new_rank_of, mpilens_map_cost_t *before,
                                                 mpilens_map_cost_t *after)
{
    int size;
    if (comm == MPI_COMM_NULL)
        return MPILENS_MAP_ERR_ARG;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return MPILENS_MAP_ERR_MPI;
    unsigned long *row = malloc((size_t)size * sizeof *row);
    int status = row ? session_row(msid, flags, size, row) : MPILENS_MAP_ERR_NOMEM;
    status = agree(comm, status);
    if (status == MPILENS_MAP_OK)
        status = mpilens_map_reorder(comm, row, topology, algo, newcomm, new_rank_of, before, after);
    free(row);
    return status;
}
