/* The placements a launcher makes without looking at the traffic, which the algorithms are measured
 * against (seed 004, section 6.5: round robin, random): identity, packed, round robin over the
 * top-level objects (mpirun --map-by node), and a seeded random permutation of packed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "map_internal.h"

static int compare_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* splitmix64 (Steele, Lea and Flood): a small generator whose whole state is the seed, so the
 * library keeps no global state and leaves the application's rand() alone. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* An entry of `allowed` and where round robin puts it: the `rank`-th place of top-level object
 * `top`, counting copies of a slot as later places (every slot of an object gets its first
 * process before any gets a second). */
typedef struct {
    long slot, copy, top, rank;
} rr_entry_t;

static int compare_in_object(const void *a, const void *b)
{
    const rr_entry_t *x = a, *y = b;
    if (x->top != y->top)
        return (x->top > y->top) - (x->top < y->top);
    if (x->copy != y->copy)
        return (x->copy > y->copy) - (x->copy < y->copy);
    return (x->slot > y->slot) - (x->slot < y->slot);
}

static int compare_round(const void *a, const void *b)
{
    const rr_entry_t *x = a, *y = b;
    if (x->rank != y->rank)
        return (x->rank > y->rank) - (x->rank < y->rank);
    return (x->top > y->top) - (x->top < y->top);
}

static int round_robin(const mpilens_map_topology_t *t, int order, const long *sorted, long *slot_of)
{
    rr_entry_t *e = malloc((size_t)order * sizeof *e);
    if (!e)
        return MPILENS_MAP_ERR_NOMEM;
    for (int i = 0; i < order; i++) {
        long copy = i > 0 && sorted[i] == sorted[i - 1] ? e[i - 1].copy + 1 : 0;
        e[i] = (rr_entry_t){sorted[i], copy, sorted[i] / t->below[1], 0};
    }
    qsort(e, (size_t)order, sizeof *e, compare_in_object);
    for (int i = 0; i < order; i++)
        e[i].rank = i > 0 && e[i].top == e[i - 1].top ? e[i - 1].rank + 1 : 0;
    qsort(e, (size_t)order, sizeof *e, compare_round);
    for (int p = 0; p < order; p++)
        slot_of[p] = e[p].slot;
    free(e);
    return MPILENS_MAP_OK;
}

int ml_map_baseline(const mpilens_map_topology_t *t, mpilens_map_algo_t algo, unsigned seed, int order,
                    const long *allowed, long *slot_of)
{
    int status = MPILENS_MAP_OK;
    if (algo == MPILENS_MAP_IDENTITY) {
        memcpy(slot_of, allowed, (size_t)order * sizeof *slot_of);
        return MPILENS_MAP_OK;
    }
    if (algo != MPILENS_MAP_PACKED && algo != MPILENS_MAP_ROUND_ROBIN && algo != MPILENS_MAP_RANDOM)
        return MPILENS_MAP_ERR_ARG;
    long *sorted = malloc((size_t)order * sizeof *sorted);
    if (!sorted)
        return MPILENS_MAP_ERR_NOMEM;
    memcpy(sorted, allowed, (size_t)order * sizeof *sorted);
    qsort(sorted, (size_t)order, sizeof *sorted, compare_long);
    if (algo == MPILENS_MAP_ROUND_ROBIN) {
        status = round_robin(t, order, sorted, slot_of);
    } else {
        if (algo == MPILENS_MAP_RANDOM) {
            uint64_t state = seed;
            for (int i = order - 1; i > 0; i--) {
                int j = (int)(splitmix64(&state) % (uint64_t)(i + 1));
                long swap = sorted[i];
                sorted[i] = sorted[j];
                sorted[j] = swap;
            }
        }
        memcpy(slot_of, sorted, (size_t)order * sizeof *slot_of);
    }
    free(sorted);
    return status;
}
