/* The sweep order of a map's sizes (sweep.c): coarse to fine, a permutation whose every prefix is
 * spread over the range, and the class a point's neighbours give its decision. */
#include <string.h>

#include "check.h"
#include "overlap.h"

/* Whether order[0..n-1] holds every index below n once. */
static int is_permutation(const size_t *order, size_t n)
{
    unsigned char seen[MAX_VALUES] = {0};
    for (size_t k = 0; k < n; k++) {
        if (order[k] >= n || seen[order[k]])
            return 0;
        seen[order[k]] = 1;
    }
    return 1;
}

/* The widest run of consecutive sizes not measured after the first `done` of the order. */
static size_t widest_gap(const size_t *order, size_t n, size_t done)
{
    unsigned char measured[MAX_VALUES] = {0};
    for (size_t k = 0; k < done; k++)
        measured[order[k]] = 1;
    size_t widest = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
        run = measured[i] ? 0 : run + 1;
        if (run > widest)
            widest = run;
    }
    return widest;
}

int main(void)
{
    size_t order[MAX_VALUES];

    /* both ends, then the middles level by level: 11 sizes (1 KiB to 1 MiB) */
    const size_t eleven[] = {0, 10, 5, 2, 7, 1, 3, 6, 8, 4, 9};
    overlap_sweep_order(11, order);
    CHECK(memcmp(order, eleven, sizeof eleven) == 0);
    overlap_sweep_order(1, order);
    CHECK(order[0] == 0);
    overlap_sweep_order(2, order);
    CHECK(order[0] == 0 && order[1] == 1);
    overlap_sweep_order(3, order);
    CHECK(order[0] == 0 && order[1] == 2 && order[2] == 1);

    /* every count: a permutation, and after 2^k + 1 sizes no gap wider than n / 2^k */
    for (size_t n = 1; n <= MAX_VALUES; n++) {
        overlap_sweep_order(n, order);
        CHECK(is_permutation(order, n));
        for (size_t parts = 1; parts + 1 <= n; parts *= 2)
            CHECK(widest_gap(order, n, parts + 1) <= (n - 1 + parts - 1) / parts);
    }

    /* neighbours: nothing measured, one side, both agreeing, both differing, no class */
    int classes[6] = {-1, -1, -1, -1, -1, -1};
    CHECK(overlap_neighbour_class(classes, 6, 2) == -1);
    classes[0] = 1;
    CHECK(overlap_neighbour_class(classes, 6, 2) == 1);
    classes[5] = 1;
    CHECK(overlap_neighbour_class(classes, 6, 2) == 1);
    classes[4] = 2;
    CHECK(overlap_neighbour_class(classes, 6, 2) == OVERLAP_CLASS_MIXED);
    CHECK(overlap_neighbour_class(classes, 6, 5) == 2); /* the nearest on its only side */
    classes[4] = -1;                                    /* an invalid point has no class */
    CHECK(overlap_neighbour_class(classes, 6, 2) == 1);
    CHECK_DONE();
}
