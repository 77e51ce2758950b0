/* Point-to-point overhead (seed 002, §V-A): a ping-pong with a pre-posted receive. Rank 0, the
 * client, starts the communication (MPI_Irecv, then MPI_Isend) and waits for both (MPI_Waitall);
 * rank 1, the server, receives each message and sends it back. Before each repetition the two
 * synchronise with the ready-first handshake on mpilens' own communicator, so the server is in
 * its receive when the client starts its clock. Other ranks sleep until the end. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "compute.h"
#include "sync.h"

enum { CLIENT = 0, SERVER = 1 };
enum { TAG_DATA = 1 };

typedef struct {
    ml_bench_t *b;
    MPI_Comm pair; /* the client and the server, for their context switches */
    int64_t size;
    int64_t t_b;    /* the computation of time-based points, ns */
    uint64_t units; /* work-based: the workload λ calibrated to t_b */
} p2p_t;

static void start_pingpong(void *ctx, MPI_Request *requests)
{
    p2p_t *p = ctx;
    MPI_Irecv(p->b->recv_buf, (int)p->size, MPI_BYTE, SERVER, TAG_DATA, p->b->comm, &requests[0]);
    MPI_Isend(p->b->send_buf, (int)p->size, MPI_BYTE, SERVER, TAG_DATA, p->b->comm, &requests[1]);
}

/* The server's side of every repetition of a point, until the client says stop. */
static void serve(p2p_t *p)
{
    int cmd;
    while (ml_handshake_follow(p->b->prog.sync, CLIENT, &cmd) == MPI_SUCCESS && cmd != ML_CMD_STOP) {
        MPI_Recv(p->b->recv_buf, (int)p->size, MPI_BYTE, CLIENT, TAG_DATA, p->b->comm, MPI_STATUS_IGNORE);
        MPI_Send(p->b->send_buf, (int)p->size, MPI_BYTE, CLIENT, TAG_DATA, p->b->comm);
    }
}

/* The client's repetition of a point. */
static void once(p2p_t *p, const ml_point_t *pt, ml_rep_t *rep)
{
    ml_comm_t comm = {start_pingpong, p, 2};
    /* t_c just before: the workload alone, under the same conditions as the overlapped run */
    int64_t c = pt->work > 0 ? ml_compute_work(p->units) : 0;
    ml_handshake_lead(p->b->prog.sync, SERVER, ML_CMD_GO);
    ml_point_once(&comm, pt, p->b->test_placement, p->t_b, p->units, c, rep);
}

/* Client: a warm-up repetition (connection set-up, first touch), then repetitions until the
 * stopping rule, on t_o, says stop; STOP releases the server. */
static ml_stop_t lead(p2p_t *p, const ml_point_t *pt, ml_samples_t *s)
{
    ml_rep_t rep;
    ml_stopper_t stopper;
    ml_stop_t reason;
    once(p, pt, &rep);
    ml_stopper_start(&stopper, &p->b->prog.stop_rule);
    do {
        once(p, pt, &rep);
        ml_samples_add(s, &rep);
    } while ((reason = ml_stopper_check(&stopper, &s->o)) == ML_STOP_CONTINUE);
    ml_handshake_lead(p->b->prog.sync, SERVER, ML_CMD_STOP);
    return reason;
}

static void prepare(void *ctx, int work, double t_b)
{
    p2p_t *p = ctx;
    p->t_b = (int64_t)llround(t_b);
    p->units = work && p->b->prog.rank == CLIENT ? ml_workload_units(p->t_b) : 0;
}

/* A point on the client: its repetitions and its record; returns the median t_o (t_b for the
 * blocking point, where all the time is inside MPI). The server returns the messages. */
static double measure(void *ctx, const ml_point_t *pt, const char *key, double t_b)
{
    p2p_t *p = ctx;
    ml_switch_snapshot_t before;
    ml_switches_snapshot(&before);
    if (p->b->prog.rank != CLIENT) {
        serve(p);
        ml_switches_gather(&before, p->pair);
        return NAN;
    }
    ml_samples_t s = {0};
    ml_stop_t reason = lead(p, pt, &s);
    ml_switches_t *both = ml_switches_gather(&before, p->pair);
    double t_o = ml_median(&s.o);
    ml_json_t j;
    ml_point_begin(&j, p->b, pt, key, 0);
    ml_json_double(&j, "t_b_ns", pt->work < 0 ? t_o : t_b);
    if (pt->work > 0)
        ml_json_int(&j, "workload_units", (int64_t)p->units);
    if (pt->work >= 0)
        ml_samples_json(&j, &s, pt->work);
    ml_switches_json(&j, both, 2);
    ml_json_sample(&j, "sample", &s.o, &p->b->prog.stop_rule, reason);
    ml_program_point_end(&p->b->prog, &j);
    ml_samples_free(&s);
    free(both);
    return t_o;
}

long ml_p2p_points(const ml_bench_t *b)
{
    return ml_list_contains(&b->benches, "p2p") ? (long)b->n_sizes * ml_sweep_points(b) : 0;
}

void ml_p2p_run(ml_bench_t *b)
{
    if (!ml_list_contains(&b->benches, "p2p"))
        return;
    int rank = b->prog.rank;
    MPI_Comm pair;
    MPI_Comm_split(b->prog.sync, rank <= SERVER ? 0 : MPI_UNDEFINED, rank, &pair);
    if (rank <= SERVER) {
        p2p_t p = {.b = b, .pair = pair};
        ml_sweep_t sweep = {&p, pair, 0, prepare, measure};
        for (size_t i = 0; i < b->n_sizes; i++) {
            p.size = b->size_values[i];
            ml_sweep_size(b, &sweep, "p2p", NULL, p.size);
        }
        MPI_Comm_free(&pair);
    }
    /* the other ranks have waited here from the start, asleep, leaving the cores to 0 and 1 */
    ml_idle_barrier(b->prog.sync);
}
