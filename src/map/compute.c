/* The entry points of the mapping algorithms: argument checks, and the dispatch to treematch.c,
 * scotch.c and baselines.c, which all map processes one-to-one onto a list of allowed slots.
 * mpilens_map_compute builds that list from the whole machine: every slot, ceil(order / slots)
 * times when oversubscribed (TreeMatch's extra virtual level), and pads the matrix with
 * processes that send nothing up to the length of the list, so the algorithms choose which slots
 * stay empty; the padding is dropped from the result. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "map_internal.h"

static int check_algo(mpilens_map_algo_t algo)
{
    int available = 0;
    int status = mpilens_map_algo_available(algo, &available);
    if (status != MPILENS_MAP_OK)
        return status;
    return available ? MPILENS_MAP_OK : MPILENS_MAP_ERR_UNSUPPORTED;
}

static int is_baseline(mpilens_map_algo_t algo)
{
    return algo == MPILENS_MAP_IDENTITY || algo == MPILENS_MAP_PACKED || algo == MPILENS_MAP_ROUND_ROBIN ||
           algo == MPILENS_MAP_RANDOM;
}

/* The matrix's processes onto `allowed` (as many entries as the matrix has processes). */
static int run(const mpilens_map_topology_t *t, mpilens_map_matrix_t *m, mpilens_map_algo_t algo, unsigned seed,
               const long *allowed, long *slot_of)
{
    switch (algo) {
    case MPILENS_MAP_TREEMATCH: return ml_map_treematch(t, m, 0, seed, allowed, slot_of);
    case MPILENS_MAP_GREEDY: return ml_map_treematch(t, m, 1, seed, allowed, slot_of);
    case MPILENS_MAP_SCOTCH:
#ifdef MPILENS_HAVE_SCOTCH
        return ml_map_scotch(t, m, seed, allowed, slot_of);
#else
        return MPILENS_MAP_ERR_UNSUPPORTED;
#endif
    default: return ml_map_baseline(t, algo, seed, m->order, allowed, slot_of);
    }
}

mpilens_map_status_t mpilens_map_compute_onto(const mpilens_map_topology_t *topology,
                                              const mpilens_map_matrix_t *matrix, mpilens_map_algo_t algo,
                                              unsigned seed, const long *allowed, long *slot_of)
{
    if (!topology || !matrix || !allowed || !slot_of || matrix->order < 1)
        return MPILENS_MAP_ERR_ARG;
    int status = check_algo(algo), order = matrix->order;
    if (status != MPILENS_MAP_OK)
        return status;
    for (int p = 0; p < order; p++)
        if (allowed[p] < 0 || allowed[p] >= topology->slots)
            return MPILENS_MAP_ERR_ARG;
    long *result = malloc((size_t)order * sizeof *result);
    if (!result)
        return MPILENS_MAP_ERR_NOMEM;
    /* The matrix only gains its merged entries and graph, which it caches for every reader. */
    status = run(topology, (mpilens_map_matrix_t *)matrix, algo, seed, allowed, result);
    if (status == MPILENS_MAP_OK)
        memcpy(slot_of, result, (size_t)order * sizeof *slot_of);
    free(result);
    return status;
}

/* The matrix with processes that send nothing added up to `order`: the same graph, its entries
 * taken from the symmetrised graph (all the algorithms read). */
static int with_padding(mpilens_map_matrix_t *m, int order, mpilens_map_matrix_t **padded)
{
    mpilens_map_matrix_t *p = NULL;
    int status = ml_map_matrix_graph(m);
    if (status == MPILENS_MAP_OK)
        status = mpilens_map_matrix_create(order, &p);
    for (int v = 0; v < m->order && status == MPILENS_MAP_OK; v++)
        for (size_t e = m->row_start[v]; e < m->row_start[v + 1] && status == MPILENS_MAP_OK; e++)
            if (v < m->column[e])
                status = mpilens_map_matrix_add(p, v, m->column[e], m->weight[e]);
    if (status != MPILENS_MAP_OK) {
        if (p)
            mpilens_map_matrix_free(p);
        return status;
    }
    *padded = p;
    return MPILENS_MAP_OK;
}

mpilens_map_status_t mpilens_map_compute(const mpilens_map_topology_t *topology, const mpilens_map_matrix_t *matrix,
                                         mpilens_map_algo_t algo, unsigned seed, long *slot_of)
{
    if (!topology || !matrix || !slot_of || matrix->order < 1 || topology->slots < 1)
        return MPILENS_MAP_ERR_ARG;
    int status = check_algo(algo), order = matrix->order;
    if (status != MPILENS_MAP_OK)
        return status;
    long slots = topology->slots, per_slot = (order + slots - 1) / slots;
    /* A machine of more than INT_MAX places cannot be listed in memory anyway. */
    if (slots > INT_MAX / per_slot)
        return MPILENS_MAP_ERR_NOMEM;
    int places = (int)(slots * per_slot);
    long *allowed = malloc((size_t)places * sizeof *allowed);
    long *result = malloc((size_t)places * sizeof *result);
    mpilens_map_matrix_t *m = (mpilens_map_matrix_t *)matrix, *padded = NULL;
    if (!allowed || !result)
        status = MPILENS_MAP_ERR_NOMEM;
    for (int i = 0; i < places && status == MPILENS_MAP_OK; i++)
        allowed[i] = i / per_slot;
    if (status == MPILENS_MAP_OK && is_baseline(algo))
        /* Random permutes the packed mapping (map.h), so it draws from the first places only;
         * round robin needs them all to spread the processes. */
        status = ml_map_baseline(topology, algo, seed, algo == MPILENS_MAP_RANDOM ? order : places, allowed, result);
    else if (status == MPILENS_MAP_OK && places == order)
        status = run(topology, m, algo, seed, allowed, result);
    else if (status == MPILENS_MAP_OK) {
        status = with_padding(m, places, &padded);
        if (status == MPILENS_MAP_OK)
            status = run(topology, padded, algo, seed, allowed, result);
        if (padded)
            mpilens_map_matrix_free(padded);
    }
    if (status == MPILENS_MAP_OK)
        memcpy(slot_of, result, (size_t)order * sizeof *slot_of);
    free(allowed);
    free(result);
    return status;
}
