/* The max-heap of candidates the mapping algorithms grow and refine with (treematch.c's greedy
 * grouping, bisection.c's graph growing and Fiduccia-Mattheyses passes). */
#include <stdlib.h>

#include "map_internal.h"

/* Largest key first, then the oldest. */
static int entry_before(ml_map_entry_t a, ml_map_entry_t b)
{
    return a.key > b.key || (a.key == b.key && a.age < b.age);
}

int ml_map_heap_push(ml_map_heap_t *h, double key, int v)
{
    if (h->size == h->capacity) {
        size_t capacity = h->capacity ? 2 * h->capacity : 64;
        ml_map_entry_t *e = realloc(h->e, capacity * sizeof *e);
        if (!e)
            return MPILENS_MAP_ERR_NOMEM;
        h->e = e;
        h->capacity = capacity;
    }
    size_t i = h->size++;
    ml_map_entry_t x = {key, h->pushes++, v};
    while (i > 0 && entry_before(x, h->e[(i - 1) / 2])) {
        h->e[i] = h->e[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->e[i] = x;
    return MPILENS_MAP_OK;
}

ml_map_entry_t ml_map_heap_pop(ml_map_heap_t *h)
{
    ml_map_entry_t top = h->e[0], x = h->e[--h->size];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->size)
            break;
        if (c + 1 < h->size && entry_before(h->e[c + 1], h->e[c]))
            c++;
        if (!entry_before(h->e[c], x))
            break;
        h->e[i] = h->e[c];
        i = c;
    }
    if (h->size)
        h->e[i] = x;
    return top;
}
