/* Topologies: synthetic descriptions, this machine or an XML export through hwloc, description
 * files, nodes joined under a root; the accessors, and where each slot is. */
#include <ctype.h>
#include <hwloc.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map_internal.h"

/* Defined in matrix.c, which reads matrix files the same way (the whole file, NUL-terminated). */

/* ---- the object ------------------------------------------------------------------------------- */

/* below[] and slots from the arities, whose product the caller has checked fits an int. */
static void count_slots(mpilens_map_topology_t *t)
{
    t->below[t->depth] = 1;
    for (int d = t->depth - 1; d >= 0; d--)
        t->below[d] = t->below[d + 1] * t->arity[d];
    t->slots = t->below[0];
}

/* 10^(depth-1-d): each level up costs ten times the one below it. */
static void default_costs(mpilens_map_topology_t *t)
{
    double cost = 1.0;
    for (int d = t->depth - 1; d >= 0; d--, cost *= 10.0)
        t->cost[d] = cost;
}

static int costs_valid(const double *costs, int levels)
{
    for (int d = 0; d < levels; d++)
        if (!isfinite(costs[d]) || costs[d] < 0 || (d > 0 && costs[d] > costs[d - 1]))
            return 0;
    return 1;
}

/* Names of the top-level objects, which are nodes: copies of `names`, or node0, node1... */
static int name_hosts(mpilens_map_topology_t *t, const char *const *names)
{
    int nodes = t->arity[0];
    for (int i = 0; names && i < nodes; i++)
        if (!names[i] || strlen(names[i]) >= ML_MAP_HOST_LEN)
            return MPILENS_MAP_ERR_ARG;
    t->hosts = calloc((size_t)nodes, sizeof *t->hosts);
    if (!t->hosts)
        return MPILENS_MAP_ERR_NOMEM;
    for (int i = 0; i < nodes; i++) {
        if (names)
            strcpy(t->hosts[i], names[i]);
        else
            snprintf(t->hosts[i], ML_MAP_HOST_LEN, "node%d", i);
    }
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_topology_free(mpilens_map_topology_t *topology)
{
    if (topology) {
        free(topology->hosts);
        free(topology->core);
        free(topology->pu);
        free(topology);
    }
    return MPILENS_MAP_OK;
}

int ml_map_common_level(const mpilens_map_topology_t *t, long a, long b)
{
    for (int d = 0; d < t->depth; d++)
        if (a / t->below[d + 1] != b / t->below[d + 1])
            return d - 1;
    return t->depth - 1;
}

/* ---- synthetic descriptions ------------------------------------------------------------------- */

#define WORD_MAX 1024 /* longer words are not a description */

static int is_name_char(int c) { return isalnum(c) || c == '_' || c == '-'; }

/* "NAME:ARITY", keeping the product of the arities within an int (processes are ints). */
static int parse_level(const char *word, char *name, int *arity, long *slots)
{
    size_t length = 0;
    while (is_name_char((unsigned char)word[length]))
        length++;
    if (length == 0 || length >= ML_MAP_NAME_LEN || word[length] != ':')
        return MPILENS_MAP_ERR_SPEC;
    const char *digits = word + length + 1;
    long value = 0;
    if (!*digits)
        return MPILENS_MAP_ERR_SPEC;
    for (const char *c = digits; *c; c++) {
        if (!isdigit((unsigned char)*c))
            return MPILENS_MAP_ERR_SPEC;
        value = value * 10 + (*c - '0');
        if (value > INT_MAX)
            return MPILENS_MAP_ERR_SPEC;
    }
    if (value < 1 || *slots > INT_MAX / value)
        return MPILENS_MAP_ERR_SPEC;
    memcpy(name, word, length);
    name[length] = '\0';
    *arity = (int)value;
    *slots *= value;
    return MPILENS_MAP_OK;
}

/* "C0,C1,...": as many numbers as levels, valid as costs_valid says. */
static int parse_costs(char *list, double *costs, int levels)
{
    int count = 0;
    for (char *piece = list;; piece++) {
        char *end;
        double value = strtod(piece, &end);
        if (end == piece || (*end && *end != ',') || count == levels)
            return MPILENS_MAP_ERR_SPEC;
        costs[count++] = value;
        if (!*end)
            break;
        piece = end;
    }
    return count == levels && costs_valid(costs, levels) ? MPILENS_MAP_OK : MPILENS_MAP_ERR_SPEC;
}

/* The words of the description, into t (levels first, then at most one cost= word). */
static int parse_synthetic(const char *spec, mpilens_map_topology_t *t)
{
    char word[WORD_MAX];
    long slots = 1;
    int have_costs = 0;
    for (const char *c = spec;;) {
        while (isspace((unsigned char)*c))
            c++;
        if (!*c)
            break;
        size_t length = 0;
        while (c[length] && !isspace((unsigned char)c[length]))
            length++;
        if (length >= WORD_MAX || have_costs)
            return MPILENS_MAP_ERR_SPEC;
        memcpy(word, c, length);
        word[length] = '\0';
        c += length;
        int status;
        if (strncmp(word, "cost=", 5) == 0) {
            status = parse_costs(word + 5, t->cost, t->depth);
            have_costs = 1;
        } else if (t->depth == MPILENS_MAP_MAX_DEPTH) {
            status = MPILENS_MAP_ERR_SPEC;
        } else {
            status = parse_level(word, t->level_name[t->depth], &t->arity[t->depth], &slots);
            t->depth++;
        }
        if (status != MPILENS_MAP_OK)
            return status;
    }
    if (t->depth == 0)
        return MPILENS_MAP_ERR_SPEC;
    if (!have_costs)
        default_costs(t);
    count_slots(t);
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_topology_synthetic(const char *spec, mpilens_map_topology_t **topology)
{
    if (!spec || !topology)
        return MPILENS_MAP_ERR_ARG;
    mpilens_map_topology_t *t = calloc(1, sizeof *t);
    if (!t)
        return MPILENS_MAP_ERR_NOMEM;
    int status = parse_synthetic(spec, t);
    if (status == MPILENS_MAP_OK && strcmp(t->level_name[0], "node") == 0)
        status = name_hosts(t, NULL);
    if (status != MPILENS_MAP_OK) {
        mpilens_map_topology_free(t);
        return status;
    }
    *topology = t;
    return MPILENS_MAP_OK;
}

/* The shortest text strtod reads back as exactly `value`; whole numbers in full (100, not 1e+02)
 * while they are short. */
static void format_cost(double value, char *text, size_t room)
{
    if (value == floor(value) && fabs(value) < 1e15) {
        snprintf(text, room, "%.0f", value);
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, room, "%.*g", digits, value);
        if (strtod(text, NULL) == value)
            break;
    }
}

/* Enough for MPILENS_MAP_MAX_DEPTH levels of " NAME:ARITY" and " cost=" with their costs. */
#define DESCRIPTION_MAX 512

mpilens_map_status_t mpilens_map_topology_describe(const mpilens_map_topology_t *topology, char *text, size_t room)
{
    if (!topology || !text)
        return MPILENS_MAP_ERR_ARG;
    char description[DESCRIPTION_MAX], cost[32];
    size_t used = 0;
    for (int d = 0; d < topology->depth; d++)
        used += (size_t)snprintf(description + used, sizeof description - used, "%s%s:%d", d ? " " : "",
                                 topology->level_name[d], topology->arity[d]);
    for (int d = 0; d < topology->depth; d++) {
        format_cost(topology->cost[d], cost, sizeof cost);
        used += (size_t)snprintf(description + used, sizeof description - used, "%s%s", d ? "," : " cost=", cost);
    }
    if (used + 1 > room)
        return MPILENS_MAP_ERR_ARG;
    memcpy(text, description, used + 1);
    return MPILENS_MAP_OK;
}

/* ---- hwloc ------------------------------------------------------------------------------------ */

/* The candidate levels, from the top. */
enum { HW_PACKAGE, HW_NUMA, HW_L3, HW_CORE, HW_PU, HW_LEVELS };
static const char *const hw_level_name[HW_LEVELS] = {"package", "numa", "l3", "core", "pu"};

/* The allowed PUs (the leaves), and which object holds each of them at each candidate level. */
typedef struct {
    int pus;
    int *group[HW_LEVELS]; /* [pus]: the holding object, numbered 0 .. groups - 1; -1: none */
    int groups[HW_LEVELS];
    int *core;         /* [pus]: logical index of the PU's core (of the PU without cores) */
    int *os_index;     /* [pus] */
    int *seen, *count; /* scratch, each as long as the largest of groups */
} hw_pus_t;

/* The NUMA nodes local to a PU are the memory children of its nearest ancestor that has some
 * (there may be several there, DRAM and HBM: they count as one place). */
static int local_numa(hwloc_obj_t obj)
{
    for (; obj; obj = obj->parent)
        if (obj->memory_arity > 0)
            return (int)obj->memory_first_child->logical_index;
    return -1;
}

static int ancestor_index(hwloc_topology_t topo, hwloc_obj_type_t type, hwloc_obj_t pu)
{
    hwloc_obj_t obj = hwloc_get_ancestor_obj_by_type(topo, type, pu);
    return obj ? (int)obj->logical_index : -1;
}

static int hw_collect(hwloc_topology_t topo, hw_pus_t *h)
{
    int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    int packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    int numas = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    int l3s = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_L3CACHE);
    if (pus <= 0 || packages < 0 || cores < 0 || numas < 0 || l3s < 0 || cores > INT_MAX - pus)
        return MPILENS_MAP_ERR_HWLOC;
    h->pus = pus;
    h->groups[HW_PACKAGE] = packages > 0 ? packages : 1;
    h->groups[HW_NUMA] = numas;
    h->groups[HW_L3] = l3s;
    h->groups[HW_CORE] = cores + pus; /* a PU outside any core is its own core */
    h->groups[HW_PU] = pus;
    int most = 0;
    for (int l = 0; l < HW_LEVELS; l++)
        if (h->groups[l] > most)
            most = h->groups[l];
    int *block = malloc((size_t)pus * (HW_LEVELS + 2) * sizeof *block);
    int *scratch = malloc((size_t)most * 2 * sizeof *scratch);
    if (!block || !scratch) {
        free(block);
        free(scratch);
        return MPILENS_MAP_ERR_NOMEM;
    }
    for (int l = 0; l < HW_LEVELS; l++)
        h->group[l] = block + (size_t)l * pus;
    h->core = block + (size_t)HW_LEVELS * pus;
    h->os_index = h->core + pus;
    h->seen = scratch;
    h->count = scratch + most;
    for (int i = 0; i < pus; i++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
        int package = ancestor_index(topo, HWLOC_OBJ_PACKAGE, pu);
        int core = ancestor_index(topo, HWLOC_OBJ_CORE, pu);
        h->group[HW_PACKAGE][i] = package >= 0 ? package : 0;
        h->group[HW_NUMA][i] = local_numa(pu);
        h->group[HW_L3][i] = ancestor_index(topo, HWLOC_OBJ_L3CACHE, pu);
        h->group[HW_CORE][i] = core >= 0 ? core : cores + i;
        h->group[HW_PU][i] = i;
        h->core[i] = core >= 0 ? core : i;
        h->os_index[i] = (int)pu->os_index;
    }
    return MPILENS_MAP_OK;
}

static void hw_release(hw_pus_t *h)
{
    free(h->group[0]);
    free(h->seen);
}

/* Whether every object of `lower` lies inside one object of `upper` (and every PU has both). */
static int hw_nests(const hw_pus_t *h, int lower, int upper)
{
    int *upper_of = h->seen;
    for (int g = 0; g < h->groups[lower]; g++)
        upper_of[g] = -1;
    for (int i = 0; i < h->pus; i++) {
        int l = h->group[lower][i], u = h->group[upper][i];
        if (l < 0 || u < 0 || (upper_of[l] >= 0 && upper_of[l] != u))
            return 0;
        upper_of[l] = u;
    }
    return 1;
}

/* How many `lower` objects each `upper` object holds (upper -1: the machine) when they all hold
 * as many, else -1. `lower` must nest in `upper`. */
static int hw_arity(const hw_pus_t *h, int upper, int lower)
{
    int uppers = upper >= 0 ? h->groups[upper] : 1;
    memset(h->seen, 0, (size_t)h->groups[lower] * sizeof *h->seen);
    memset(h->count, 0, (size_t)uppers * sizeof *h->count);
    for (int i = 0; i < h->pus; i++) {
        int l = h->group[lower][i];
        if (!h->seen[l]) {
            h->seen[l] = 1;
            h->count[upper >= 0 ? h->group[upper][i] : 0]++;
        }
    }
    int arity = -1;
    for (int u = 0; u < uppers; u++) {
        if (h->count[u] == 0)
            continue;
        if (arity < 0)
            arity = h->count[u];
        else if (h->count[u] != arity)
            return -1;
    }
    return arity;
}

static void drop_level(int *kept, int *levels, int i)
{
    memmove(kept + i, kept + i + 1, (size_t)(*levels - i - 1) * sizeof *kept);
    (*levels)--;
}

/* The levels kept, from the top, into kept[]; returns how many.
 *
 * Candidates: package; NUMA node and L3 where they split a package (they must nest in a package
 * and hold whole cores; when both do, the finer must nest in the coarser or it is left out);
 * core; PU when some core has more than one.
 *
 * The tree must be balanced, yet a cgroup or a batch system may give a job part of a machine
 * (5 cores of one package and 3 of another). So, from the bottom up: a level whose objects do
 * not all hold the same number of objects of the next kept level is dropped, its children then
 * hang from the level above, and the check starts again from the bottom; with 5 + 3 cores the
 * packages go and 8 cores remain, side by side. Bottom up, because dropping a finer level can
 * balance a coarser one: two L3 of 2 cores in one package and one L3 of 4 cores in the other
 * lose their L3 level and keep their packages.
 *
 * Last, levels of arity 1 (one package, one PU per core, an L3 per package) say nothing and are
 * dropped, except the last when all are (a machine of one PU). */
static int hw_choose_levels(const hw_pus_t *h, int *kept)
{
    int levels = 0;
    kept[levels++] = HW_PACKAGE;
    int middle[2], middles = 0;
    for (int l = HW_NUMA; l <= HW_L3; l++)
        if (hw_nests(h, l, HW_PACKAGE) && hw_nests(h, HW_CORE, l))
            middle[middles++] = l;
    if (middles == 2 && hw_arity(h, -1, middle[1]) < hw_arity(h, -1, middle[0])) {
        int swap = middle[0];
        middle[0] = middle[1];
        middle[1] = swap;
    }
    if (middles == 2 && !hw_nests(h, middle[1], middle[0]))
        middles = 1;
    for (int m = 0; m < middles; m++)
        kept[levels++] = middle[m];
    kept[levels++] = HW_CORE;
    if (hw_arity(h, -1, HW_CORE) < h->pus)
        kept[levels++] = HW_PU;

    for (int i = levels - 2; i >= 0;) {
        if (hw_arity(h, kept[i], kept[i + 1]) < 0) {
            drop_level(kept, &levels, i);
            i = levels - 2;
        } else {
            i--;
        }
    }

    int arity[HW_LEVELS];
    for (int i = 0; i < levels; i++)
        arity[i] = hw_arity(h, i > 0 ? kept[i - 1] : -1, kept[i]);
    for (int i = 0; i < levels && levels > 1;) {
        if (arity[i] == 1) {
            drop_level(kept, &levels, i);
            memmove(arity + i, arity + i + 1, (size_t)(levels - i) * sizeof *arity);
        } else {
            i++;
        }
    }
    return levels;
}

typedef struct {
    const hw_pus_t *h;
    const int *kept;
    int levels;
} hw_order_t;

/* PUs in the order of their objects at the kept levels: the slots' mixed-radix order. */
static int hw_compare(const void *a, const void *b, void *arg)
{
    const hw_order_t *o = arg;
    int i = *(const int *)a, j = *(const int *)b;
    for (int l = 0; l < o->levels; l++) {
        int gi = o->h->group[o->kept[l]][i], gj = o->h->group[o->kept[l]][j];
        if (gi != gj)
            return gi < gj ? -1 : 1;
    }
    return (i > j) - (i < j);
}

/* The topology of the kept levels: names, arities, default costs, and core and PU of each slot. */
static int hw_build(const hw_pus_t *h, const int *kept, int levels, mpilens_map_topology_t *t)
{
    t->depth = levels;
    for (int l = 0; l < levels; l++) {
        t->arity[l] = hw_arity(h, l > 0 ? kept[l - 1] : -1, kept[l]);
        strcpy(t->level_name[l], hw_level_name[kept[l]]);
    }
    default_costs(t);
    count_slots(t);
    if (t->slots != h->pus)
        return MPILENS_MAP_ERR_HWLOC;
    int *order = malloc((size_t)h->pus * sizeof *order);
    t->core = malloc((size_t)h->pus * sizeof *t->core);
    t->pu = malloc((size_t)h->pus * sizeof *t->pu);
    if (!order || !t->core || !t->pu) {
        free(order);
        return MPILENS_MAP_ERR_NOMEM;
    }
    for (int i = 0; i < h->pus; i++)
        order[i] = i;
    hw_order_t by = {h, kept, levels};
    qsort_r(order, (size_t)h->pus, sizeof *order, hw_compare, &by);
    for (int s = 0; s < h->pus; s++) {
        t->core[s] = h->core[order[s]];
        t->pu[s] = h->os_index[order[s]];
    }
    free(order);
    return MPILENS_MAP_OK;
}

static int hw_topology(hwloc_topology_t topo, mpilens_map_topology_t **topology)
{
    hw_pus_t h;
    int status = hw_collect(topo, &h);
    if (status != MPILENS_MAP_OK)
        return status;
    int kept[HW_LEVELS];
    int levels = hw_choose_levels(&h, kept);
    mpilens_map_topology_t *t = calloc(1, sizeof *t);
    status = t ? hw_build(&h, kept, levels, t) : MPILENS_MAP_ERR_NOMEM;
    hw_release(&h);
    if (status != MPILENS_MAP_OK) {
        mpilens_map_topology_free(t);
        return status;
    }
    *topology = t;
    return MPILENS_MAP_OK;
}

/* This machine (xml NULL) or an XML export of length bytes. hwloc keeps only the allowed PUs
 * (its default), so a job restricted by a cgroup sees what it may use. */
static int hw_load(const char *xml, size_t length, mpilens_map_topology_t **topology)
{
    if (xml && length >= INT_MAX)
        return MPILENS_MAP_ERR_HWLOC;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return MPILENS_MAP_ERR_HWLOC;
    int status = MPILENS_MAP_ERR_HWLOC;
    if ((!xml || hwloc_topology_set_xmlbuffer(topo, xml, (int)length + 1) == 0) && hwloc_topology_load(topo) == 0)
        status = hw_topology(topo, topology);
    hwloc_topology_destroy(topo);
    return status;
}

mpilens_map_status_t mpilens_map_topology_hwloc(mpilens_map_topology_t **topology)
{
    if (!topology)
        return MPILENS_MAP_ERR_ARG;
    return hw_load(NULL, 0, topology);
}

/* ---- files, joins, costs ---------------------------------------------------------------------- */

/* '#' starts a comment, to the end of the line. */
static void blank_comments(char *text)
{
    for (char *c = strchr(text, '#'); c; c = strchr(c, '#'))
        while (*c && *c != '\n')
            *c++ = ' ';
}

mpilens_map_status_t mpilens_map_topology_load(const char *path, mpilens_map_topology_t **topology)
{
    if (!path || !topology)
        return MPILENS_MAP_ERR_ARG;
    char *text;
    size_t length;
    int status = ml_map_read_file(path, &text, &length);
    if (status != MPILENS_MAP_OK)
        return status;
    const char *start = text;
    while (isspace((unsigned char)*start))
        start++;
    if (*start == '<') {
        status = hw_load(text, length, topology);
    } else {
        blank_comments(text);
        status = mpilens_map_topology_synthetic(text, topology);
    }
    free(text);
    return status;
}

/* `nodes` copies of a per-slot array, or NULL when the node has none. */
static int replicate(const int *per_slot, long slots, int nodes, int **copy)
{
    *copy = NULL;
    if (!per_slot)
        return MPILENS_MAP_OK;
    *copy = malloc((size_t)slots * (size_t)nodes * sizeof **copy);
    if (!*copy)
        return MPILENS_MAP_ERR_NOMEM;
    for (int n = 0; n < nodes; n++)
        memcpy(*copy + (size_t)n * (size_t)slots, per_slot, (size_t)slots * sizeof **copy);
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_topology_join(const mpilens_map_topology_t *node, int nodes, const char *const *hosts,
                                               mpilens_map_topology_t **topology)
{
    if (!node || nodes < 1 || !topology)
        return MPILENS_MAP_ERR_ARG;
    if (node->depth + 1 > MPILENS_MAP_MAX_DEPTH || node->slots > INT_MAX / nodes)
        return MPILENS_MAP_ERR_SPEC;
    mpilens_map_topology_t *t = calloc(1, sizeof *t);
    if (!t)
        return MPILENS_MAP_ERR_NOMEM;
    t->depth = node->depth + 1;
    t->arity[0] = nodes;
    strcpy(t->level_name[0], "node");
    /* Costs do not increase downwards, so cost[0] is the node's highest. */
    t->cost[0] = node->cost[0] > 0 ? 10.0 * node->cost[0] : 1.0;
    memcpy(t->arity + 1, node->arity, (size_t)node->depth * sizeof *t->arity);
    memcpy(t->level_name + 1, node->level_name, (size_t)node->depth * sizeof *t->level_name);
    memcpy(t->cost + 1, node->cost, (size_t)node->depth * sizeof *t->cost);
    count_slots(t);
    int status = name_hosts(t, hosts);
    if (status == MPILENS_MAP_OK)
        status = replicate(node->core, node->slots, nodes, &t->core);
    if (status == MPILENS_MAP_OK)
        status = replicate(node->pu, node->slots, nodes, &t->pu);
    if (status != MPILENS_MAP_OK) {
        mpilens_map_topology_free(t);
        return status;
    }
    *topology = t;
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_topology_set_costs(mpilens_map_topology_t *topology, const double *costs, int levels)
{
    if (!topology || !costs || levels != topology->depth || !costs_valid(costs, levels))
        return MPILENS_MAP_ERR_ARG;
    memcpy(topology->cost, costs, (size_t)levels * sizeof *costs);
    return MPILENS_MAP_OK;
}

/* ---- accessors -------------------------------------------------------------------------------- */

mpilens_map_status_t mpilens_map_topology_depth(const mpilens_map_topology_t *topology, int *depth)
{
    if (!topology || !depth)
        return MPILENS_MAP_ERR_ARG;
    *depth = topology->depth;
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_topology_arity(const mpilens_map_topology_t *topology, int level, int *arity)
{
    if (!topology || !arity || level < 0 || level >= topology->depth)
        return MPILENS_MAP_ERR_ARG;
    *arity = topology->arity[level];
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_topology_level_name(const mpilens_map_topology_t *topology, int level,
                                                     const char **name)
{
    if (!topology || !name || level < 0 || level >= topology->depth)
        return MPILENS_MAP_ERR_ARG;
    *name = topology->level_name[level];
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_topology_cost(const mpilens_map_topology_t *topology, int level, double *cost)
{
    if (!topology || !cost || level < 0 || level >= topology->depth)
        return MPILENS_MAP_ERR_ARG;
    *cost = topology->cost[level];
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_topology_slots(const mpilens_map_topology_t *topology, long *slots)
{
    if (!topology || !slots)
        return MPILENS_MAP_ERR_ARG;
    *slots = topology->slots;
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_topology_slot_place(const mpilens_map_topology_t *topology, long slot,
                                                     const char **host, int *core, int *pu)
{
    if (!topology || !host || !core || !pu || slot < 0 || slot >= topology->slots)
        return MPILENS_MAP_ERR_ARG;
    /* Without core and PU arrays (synthetic topologies) a slot is its own core and PU. */
    long per_host = topology->hosts ? topology->below[1] : topology->slots;
    *host = topology->hosts ? topology->hosts[slot / per_host] : "localhost";
    *core = topology->core ? topology->core[slot] : (int)(slot % per_host);
    *pu = topology->pu ? topology->pu[slot] : (int)(slot % per_host);
    return MPILENS_MAP_OK;
}
