/* The order a map's sizes are measured in (docs/overlap.md, "Sweep order"): coarse to fine, the
 * smallest and largest size first, then the middle, then the middles of each half, and so on,
 * level by level. A run stopped at any point (a budget, an allocation's end, SIGTERM) has its
 * sizes spread over the whole range, so its maps show where the protocol changes, coarsely,
 * rather than the small sizes alone; --resume fills in the rest. */
#include <stdlib.h>

#include "overlap.h"

void overlap_sweep_order(size_t n, size_t order[])
{
    if (n == 0)
        return;
    size_t k = 0;
    order[k++] = 0;
    if (n == 1)
        return;
    order[k++] = n - 1;
    /* The intervals still to split, first in first out: each level before the next. Each of the
     * n - 2 middles pushes two: 2n - 3 intervals in all. */
    size_t low[2 * MAX_VALUES], high[2 * MAX_VALUES], head = 0, tail = 0;
    low[tail] = 0;
    high[tail++] = n - 1;
    while (head < tail) {
        size_t a = low[head], b = high[head++];
        if (b - a < 2)
            continue;
        size_t m = a + (b - a) / 2;
        order[k++] = m;
        low[tail] = a, high[tail++] = m;
        low[tail] = m, high[tail++] = b;
    }
}

int overlap_neighbour_class(const int classes[], size_t n, size_t i)
{
    int left = -1, right = -1;
    for (size_t j = i; j-- > 0;)
        if (classes[j] >= 0) {
            left = classes[j];
            break;
        }
    for (size_t j = i + 1; j < n; j++)
        if (classes[j] >= 0) {
            right = classes[j];
            break;
        }
    if (left < 0)
        return right;
    return right < 0 || right == left ? left : OVERLAP_CLASS_MIXED;
}

int *overlap_classes_new(size_t rows, size_t n)
{
    size_t count = rows * n;
    int *classes = malloc(sizeof *classes * (count > 0 ? count : 1));
    if (!classes)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (size_t k = 0; k < count; k++)
        classes[k] = -1;
    return classes;
}
