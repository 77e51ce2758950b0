#include "sync.h"

#include <limits.h>
#include <time.h>

/* The communicator is private to mpilens, so fixed tags cannot collide with a benchmark's. */
enum { TAG_HANDSHAKE_CMD = 101, TAG_HANDSHAKE_READY, TAG_OFFSET_PING, TAG_OFFSET_PONG };

int ml_handshake_lead(MPI_Comm comm, int follower, int cmd)
{
    int rc = MPI_Send(&cmd, 1, MPI_INT, follower, TAG_HANDSHAKE_CMD, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Recv(NULL, 0, MPI_BYTE, follower, TAG_HANDSHAKE_READY, comm, MPI_STATUS_IGNORE);
}

int ml_handshake_follow(MPI_Comm comm, int leader, int *cmd)
{
    int rc = MPI_Recv(cmd, 1, MPI_INT, leader, TAG_HANDSHAKE_CMD, comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Send(NULL, 0, MPI_BYTE, leader, TAG_HANDSHAKE_READY, comm);
}

/* Ping message from rank 0: {go on?, final offset, final rtt, rounds}. */
enum { PING_CONTINUE, PING_OFFSET, PING_RTT, PING_ROUNDS, PING_LEN };

static int offset_root_side(MPI_Comm comm, int peer, int max_rounds, int patience, ml_clock_fn clock)
{
    int64_t ping[PING_LEN] = {1, 0, 0, 0}, peer_time;
    int64_t best_rtt = INT64_MAX, best_offset = 0;
    int rounds = 0, since_best = 0, rc;

    while (rounds < max_rounds && since_best < patience) {
        int64_t t0 = clock();
        if ((rc = MPI_Send(ping, PING_LEN, MPI_INT64_T, peer, TAG_OFFSET_PING, comm)) != MPI_SUCCESS ||
            (rc = MPI_Recv(&peer_time, 1, MPI_INT64_T, peer, TAG_OFFSET_PONG, comm, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            return rc;
        int64_t t1 = clock();
        rounds++;
        if (t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            /* The peer read its clock somewhere in [t0, t1]; the midpoint errs by <= rtt/2. */
            best_offset = peer_time - (t0 + (t1 - t0) / 2);
            since_best = 0;
        } else {
            since_best++;
        }
    }
    int64_t final[PING_LEN] = {0, best_offset, best_rtt, rounds};
    return MPI_Send(final, PING_LEN, MPI_INT64_T, peer, TAG_OFFSET_PING, comm);
}

static int offset_peer_side(MPI_Comm comm, ml_clock_fn clock, ml_offset_t *mine)
{
    int64_t ping[PING_LEN];
    for (;;) {
        int rc = MPI_Recv(ping, PING_LEN, MPI_INT64_T, 0, TAG_OFFSET_PING, comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!ping[PING_CONTINUE])
            break;
        int64_t now = clock();
        if ((rc = MPI_Send(&now, 1, MPI_INT64_T, 0, TAG_OFFSET_PONG, comm)) != MPI_SUCCESS)
            return rc;
    }
    mine->offset_ns = ping[PING_OFFSET];
    mine->rtt_ns = ping[PING_RTT];
    mine->rounds = (int)ping[PING_ROUNDS];
    return MPI_SUCCESS;
}

int ml_offset_estimate(MPI_Comm comm, int max_rounds, int patience, ml_offset_t *mine)
{
    return ml_offset_estimate_with(comm, max_rounds, patience, ml_clock_ns, mine);
}

int ml_offset_estimate_with(MPI_Comm comm, int max_rounds, int patience, ml_clock_fn clock, ml_offset_t *mine)
{
    int rank, size, rc = MPI_SUCCESS;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank == 0) {
        mine->offset_ns = 0;
        mine->rtt_ns = 0;
        mine->rounds = 0;
        /* One peer at a time: concurrent exchanges would lengthen each other's round trips. */
        for (int peer = 1; peer < size && rc == MPI_SUCCESS; peer++)
            rc = offset_root_side(comm, peer, max_rounds, patience, clock);
        return rc;
    }
    return offset_peer_side(comm, clock, mine);
}

/* Naps grow from 100 us to 10 ms: a rank that waits for a whole benchmark wakes rarely, so it
 * does not preempt the measuring ranks on shared cores, and a short wait still ends soon. */
int ml_idle_barrier(MPI_Comm comm)
{
    struct timespec nap = {0, 100000};
    MPI_Request request;
    int done = 0, rc = MPI_Ibarrier(comm, &request);
    while (rc == MPI_SUCCESS && !done) {
        rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        nanosleep(&nap, NULL);
        if (nap.tv_nsec < 10000000)
            nap.tv_nsec *= 2;
    }
    return rc;
}

int ml_start_together(MPI_Comm comm, const ml_offset_t *offset, int64_t lead_ns, int go, ml_start_t *out)
{
    return ml_start_together_with(comm, ml_clock_ns, offset, lead_ns, go, out);
}

int ml_start_together_with(MPI_Comm comm, ml_clock_fn clock, const ml_offset_t *offset, int64_t lead_ns, int go,
                           ml_start_t *out)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    /* {start time, go}: one broadcast for both */
    int64_t msg[2] = {rank == 0 ? clock() - offset->offset_ns + lead_ns : 0, go};
    int rc = MPI_Bcast(msg, 2, MPI_INT64_T, 0, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    out->go = (int)msg[1];
    if (!out->go)
        return MPI_SUCCESS;
    int64_t start = msg[0], now = clock() - offset->offset_ns;
    out->late = now >= start;
    while (now < start)
        now = clock() - offset->offset_ns;
    out->start_ns = start;
    out->lateness_ns = now - start;
    return MPI_SUCCESS;
}

enum { FIRST_LEAD_NS = 100000, MAX_LEAD_NS = 100000000, ON_TIME_TO_SHRINK = 16 };

void ml_lead_init(ml_lead_t *lead)
{
    lead->lead_ns = FIRST_LEAD_NS;
    lead->on_time = 0;
}

int ml_lead_update(ml_lead_t *lead, int64_t any_late)
{
    if (any_late) {
        lead->on_time = 0;
        if (lead->lead_ns < MAX_LEAD_NS)
            lead->lead_ns *= 2;
        return 0;
    }
    if (++lead->on_time >= ON_TIME_TO_SHRINK && lead->lead_ns > FIRST_LEAD_NS) {
        lead->lead_ns /= 2;
        lead->on_time = 0;
    }
    return 1;
}
