/* Analytic latencies of the reference algorithms under a hop delay d (docs/methods/coll.md,
 * "Ground truth"). Only the delays count: every send of a reference algorithm waits d first, and
 * with d much larger than a message's latency the rest is noise. The trees are those of algos.c,
 * with the root at rank 0. */
#include <stdlib.h>

#include "coll.h"

/* Children of v in the order v sends to them (broadcast); returns how many. */
static int children(coll_algo_t algo, int v, int np, int *out)
{
    int n = 0;
    switch (algo) {
    case ALGO_LINEAR:
        if (v + 1 < np)
            out[n++] = v + 1;
        break;
    case ALGO_BACKWARD: {
        int next = (v - 1 + np) % np;
        if (next != 0)
            out[n++] = next;
        break;
    }
    case ALGO_BINOMIAL: {
        int mask = 1;
        if (v == 0) {
            while (mask < np)
                mask <<= 1;
            mask >>= 1;
        } else {
            mask = (v & -v) >> 1;
        }
        for (; mask > 0; mask >>= 1)
            if (v + mask < np)
                out[n++] = v + mask;
        break;
    }
    case ALGO_FLAT:
        if (v == 0)
            for (int j = 1; j < np; j++)
                out[n++] = j;
        break;
    default: break;
    }
    return n;
}

/* Broadcast from rank 0: the time each rank returns. A rank that received at t sends its k-th
 * message at t + k d and returns after its last send. Ranks are visited in an order where every
 * parent comes before its children (a queue from the root). */
static void bcast_returns(coll_algo_t algo, int np, double d, double *ret)
{
    double *recv_at = calloc((size_t)np, sizeof *recv_at);
    int *queue = malloc((size_t)np * sizeof *queue), *kids = malloc((size_t)np * sizeof *kids);
    int head = 0, tail = 0;
    queue[tail++] = 0;
    while (head < tail) {
        int v = queue[head++];
        int n = children(algo, v, np, kids);
        for (int k = 0; k < n; k++) {
            recv_at[kids[k]] = recv_at[v] + (k + 1) * d;
            queue[tail++] = kids[k];
        }
        ret[v] = recv_at[v] + n * d;
    }
    free(recv_at);
    free(queue);
    free(kids);
}

/* Sends on the way from v to the root when the reduction follows the broadcast tree backwards:
 * v's depth in that tree. */
static int depth(coll_algo_t algo, int v, int np)
{
    int hops = 0;
    while (v != 0) {
        switch (algo) {
        case ALGO_LINEAR: v = v - 1; break;
        case ALGO_BACKWARD: v = (v + 1) % np; break;
        case ALGO_BINOMIAL: v -= v & -v; break;
        default: v = 0; break;
        }
        hops++;
    }
    return hops;
}

double coll_truth(coll_op_t op, coll_algo_t algo, int np, double hop_ns, double *per_rank)
{
    if (algo == ALGO_LIBRARY)
        return -1;
    if (op == OP_REDUCE) {
        /* rank i enters last: its contribution climbs the tree, one delayed send per level */
        for (int i = 0; i < np; i++)
            per_rank[i] = depth(algo, i, np) * hop_ns;
    } else {
        /* allreduce with the root entering last: the reduction has already reached the root
         * through the other ranks, so only the broadcast part remains */
        bcast_returns(algo, np, hop_ns, per_rank);
    }
    double max = 0;
    for (int i = op == OP_BCAST ? 1 : 0; i < np; i++)
        if (per_rank[i] > max)
            max = per_rank[i];
    return max;
}
