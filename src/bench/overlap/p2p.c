/* Leader/follower benchmarks of the overlap suite and their references (docs/overlap.md).
 *
 * Each benchmark is a row of a table: what the leader does in one repetition (and how long its
 * sequence and its computation took), what each follower does, and how the leader's sequence
 * time becomes T_measured. One driver runs every row: ready-first handshake with each follower,
 * one warm-up repetition, then repetitions until the stopping rule says stop. */
#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "compute.h"
#include "meta.h"
#include "overlap.h"
#include "sync.h"

/* threads: thread i sends and receives on tag TAG_THREAD + i */
enum { TAG_DATA = 1, TAG_ACK, TAG_CTS, TAG_THREAD };
enum { LEADER = 0 };
/* multi-same: the requests in flight at once to the one peer */
enum { SAME_REQUESTS = 4 };

typedef struct {
    int64_t size; /* payload bytes */
    int count;    /* elements of `type` */
    MPI_Datatype type;
    int64_t compute_ns;
    int first, last; /* the followers: ranks first..last */
    int threads;     /* threads: the communicating threads of each side; 1 elsewhere */
} p2p_point_t;

/* How a leader's sequence time becomes the sample value (docs/overlap.md, column T_measured). */
typedef enum { SEQUENCE, MINUS_LAT0, HALF } measure_t;

typedef struct {
    const char *name;
    void (*lead)(overlap_t *o, const p2p_point_t *pt, int64_t *sequence_ns, int64_t *compute_ns);
    void (*follow)(overlap_t *o, const p2p_point_t *pt);
    measure_t measure;
} p2p_bench_t;

static void wait(MPI_Request *r) { MPI_Wait(r, MPI_STATUS_IGNORE); }

/* ---- one repetition of each benchmark ------------------------------------------------------ */

static void lead_pingpong(overlap_t *o, const p2p_point_t *pt, int64_t *seq, int64_t *comp)
{
    int64_t t0 = ml_clock_ns();
    MPI_Send(o->send_buf, pt->count, pt->type, pt->first, TAG_DATA, o->comm);
    MPI_Recv(o->recv_buf, pt->count, pt->type, pt->first, TAG_DATA, o->comm, MPI_STATUS_IGNORE);
    *seq = ml_clock_ns() - t0;
    *comp = 0;
}

static void follow_pingpong(overlap_t *o, const p2p_point_t *pt)
{
    MPI_Recv(o->recv_buf, pt->count, pt->type, LEADER, TAG_DATA, o->comm, MPI_STATUS_IGNORE);
    MPI_Send(o->send_buf, pt->count, pt->type, LEADER, TAG_DATA, o->comm);
}

static void lead_send(overlap_t *o, const p2p_point_t *pt, int64_t *seq, int64_t *comp)
{
    int64_t t0 = ml_clock_ns();
    MPI_Send(o->send_buf, pt->count, pt->type, pt->first, TAG_DATA, o->comm);
    *seq = ml_clock_ns() - t0;
    *comp = 0;
}

static void follow_recv(overlap_t *o, const p2p_point_t *pt)
{
    MPI_Recv(o->recv_buf, pt->count, pt->type, LEADER, TAG_DATA, o->comm, MPI_STATUS_IGNORE);
}

static void lead_sender(overlap_t *o, const p2p_point_t *pt, int64_t *seq, int64_t *comp)
{
    MPI_Request r;
    int64_t t0 = ml_clock_ns();
    MPI_Isend(o->send_buf, pt->count, pt->type, pt->first, TAG_DATA, o->comm, &r);
    *comp = overlap_compute(o, pt->compute_ns);
    wait(&r);
    MPI_Recv(NULL, 0, MPI_BYTE, pt->first, TAG_ACK, o->comm, MPI_STATUS_IGNORE);
    *seq = ml_clock_ns() - t0;
}

static void follow_and_ack(overlap_t *o, const p2p_point_t *pt)
{
    MPI_Recv(o->recv_buf, pt->count, pt->type, LEADER, TAG_DATA, o->comm, MPI_STATUS_IGNORE);
    MPI_Send(NULL, 0, MPI_BYTE, LEADER, TAG_ACK, o->comm);
}

static void lead_receiver(overlap_t *o, const p2p_point_t *pt, int64_t *seq, int64_t *comp)
{
    MPI_Request r;
    int64_t t0 = ml_clock_ns();
    MPI_Send(NULL, 0, MPI_BYTE, pt->first, TAG_CTS, o->comm);
    MPI_Irecv(o->recv_buf, pt->count, pt->type, pt->first, TAG_DATA, o->comm, &r);
    *comp = overlap_compute(o, pt->compute_ns);
    wait(&r);
    *seq = ml_clock_ns() - t0;
}

static void follow_receiver(overlap_t *o, const p2p_point_t *pt)
{
    MPI_Recv(NULL, 0, MPI_BYTE, LEADER, TAG_CTS, o->comm, MPI_STATUS_IGNORE);
    MPI_Send(o->send_buf, pt->count, pt->type, LEADER, TAG_DATA, o->comm);
}

static void lead_bidir(overlap_t *o, const p2p_point_t *pt, int64_t *seq, int64_t *comp)
{
    MPI_Request r;
    int64_t t0 = ml_clock_ns();
    MPI_Isend(o->send_buf, pt->count, pt->type, pt->first, TAG_DATA, o->comm, &r);
    int64_t c1 = overlap_compute(o, pt->compute_ns);
    wait(&r);
    MPI_Irecv(o->recv_buf, pt->count, pt->type, pt->first, TAG_DATA, o->comm, &r);
    int64_t c2 = overlap_compute(o, pt->compute_ns);
    wait(&r);
    *seq = ml_clock_ns() - t0;
    /* T_measured is half the sequence, and each half holds one computation */
    *comp = (c1 + c2) / 2;
}

static void follow_bidir(overlap_t *o, const p2p_point_t *pt)
{
    MPI_Request r;
    MPI_Irecv(o->recv_buf, pt->count, pt->type, LEADER, TAG_DATA, o->comm, &r);
    overlap_compute(o, pt->compute_ns);
    wait(&r);
    MPI_Isend(o->send_buf, pt->count, pt->type, LEADER, TAG_DATA, o->comm, &r);
    overlap_compute(o, pt->compute_ns);
    wait(&r);
}

static void lead_cpu(overlap_t *o, const p2p_point_t *pt, int64_t *seq, int64_t *comp)
{
    MPI_Request r;
    int64_t t0 = ml_clock_ns();
    MPI_Isend(o->send_buf, pt->count, pt->type, pt->first, TAG_DATA, o->comm, &r);
    *comp = overlap_compute(o, pt->compute_ns);
    wait(&r);
    *seq = ml_clock_ns() - t0;
}

static void lead_control(overlap_t *o, const p2p_point_t *pt, int64_t *seq, int64_t *comp)
{
    int64_t t0 = ml_clock_ns();
    *comp = overlap_compute(o, pt->compute_ns);
    MPI_Send(o->send_buf, pt->count, pt->type, pt->first, TAG_DATA, o->comm);
    MPI_Recv(NULL, 0, MPI_BYTE, pt->first, TAG_ACK, o->comm, MPI_STATUS_IGNORE);
    *seq = ml_clock_ns() - t0;
}

/* The follower sends as soon as the handshake is over; the leader waits until the message (or,
 * for rendezvous sizes, its request to send) has arrived unmatched, then posts its receive. */
static void lead_late(overlap_t *o, const p2p_point_t *pt, int64_t *seq, int64_t *comp)
{
    MPI_Request r;
    int arrived = 0;
    while (!arrived)
        MPI_Iprobe(pt->first, TAG_DATA, o->comm, &arrived, MPI_STATUS_IGNORE);
    int64_t t0 = ml_clock_ns();
    MPI_Irecv(o->recv_buf, pt->count, pt->type, pt->first, TAG_DATA, o->comm, &r);
    *comp = overlap_compute(o, pt->compute_ns);
    wait(&r);
    *seq = ml_clock_ns() - t0;
}

static void follow_late(overlap_t *o, const p2p_point_t *pt)
{
    MPI_Send(o->send_buf, pt->count, pt->type, LEADER, TAG_DATA, o->comm);
}

/* k requests pending at once, one to each follower; acks come back in any order. */
static void lead_multi(overlap_t *o, const p2p_point_t *pt, int64_t *seq, int64_t *comp)
{
    /* real status arrays: MPICH's MPI_STATUSES_IGNORE sentinel trips gcc's bounds warnings */
    MPI_Request r[MAX_VALUES];
    MPI_Status statuses[MAX_VALUES];
    int k = pt->last - pt->first + 1;
    int64_t t0 = ml_clock_ns();
    for (int i = 0; i < k; i++)
        MPI_Isend(o->send_buf, pt->count, pt->type, pt->first + i, TAG_DATA, o->comm, &r[i]);
    *comp = overlap_compute(o, pt->compute_ns);
    MPI_Waitall(k, r, statuses);
    for (int i = 0; i < k; i++)
        MPI_Irecv(NULL, 0, MPI_BYTE, pt->first + i, TAG_ACK, o->comm, &r[i]);
    MPI_Waitall(k, r, statuses);
    *seq = ml_clock_ns() - t0;
}

/* SAME_REQUESTS messages in flight at once to the same peer (seed 000's future work: "multiple
 * requests bound to the same destination"), one acknowledgement for all. MPI allows several
 * pending sends from one buffer; the follower receives them in order, one after the other. */
static void lead_same(overlap_t *o, const p2p_point_t *pt, int64_t *seq, int64_t *comp)
{
    MPI_Request r[SAME_REQUESTS];
    MPI_Status statuses[SAME_REQUESTS];
    int64_t t0 = ml_clock_ns();
    for (int i = 0; i < SAME_REQUESTS; i++)
        MPI_Isend(o->send_buf, pt->count, pt->type, pt->first, TAG_DATA, o->comm, &r[i]);
    *comp = overlap_compute(o, pt->compute_ns);
    MPI_Waitall(SAME_REQUESTS, r, statuses);
    MPI_Recv(NULL, 0, MPI_BYTE, pt->first, TAG_ACK, o->comm, MPI_STATUS_IGNORE);
    *seq = ml_clock_ns() - t0;
}

static void follow_same(overlap_t *o, const p2p_point_t *pt)
{
    for (int i = 0; i < SAME_REQUESTS; i++)
        MPI_Recv(o->recv_buf, pt->count, pt->type, LEADER, TAG_DATA, o->comm, MPI_STATUS_IGNORE);
    MPI_Send(NULL, 0, MPI_BYTE, LEADER, TAG_ACK, o->comm);
}

/* comm_threads threads of the leader each send their own message to rank 1 on their own tag,
 * compute and wait, all at once (MPI_THREAD_MULTIPLE; seed 000's future work, "multi-threaded
 * communication"); rank 1's threads each receive theirs; one acknowledgement once all are done.
 * The computation is each thread's own busy loop, and T_comp their span. Thread i sends
 * from its own slot of the buffer, filled with THREAD_BYTE(i), so that the receiver can tell a
 * message matched by the wrong thread. */
#define THREAD_BYTE(i) ((char)(0x40 + (i)))

/* The region must have exactly the threads asked for: a follower thread waits for each message. */
static void check_team(const p2p_point_t *pt)
{
    if (omp_get_num_threads() != pt->threads) {
        fprintf(stderr, "mpilens-overlap: threads: OpenMP gave %d threads, not %d (OMP_THREAD_LIMIT?)\n",
                omp_get_num_threads(), pt->threads);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* Thread i's slot of a buffer: slots are as long as the largest size (overlap.c sizes the buffers). */
static size_t slot_len(const overlap_t *o) { return o->n_sizes ? (size_t)o->size_values[o->n_sizes - 1] : 0; }
static char *slot(const overlap_t *o, char *buf, int i) { return buf + (size_t)i * slot_len(o); }

static void lead_threads(overlap_t *o, const p2p_point_t *pt, int64_t *seq, int64_t *comp)
{
    int64_t first = INT64_MAX, last = 0;
    int64_t t0 = ml_clock_ns();
#pragma omp parallel num_threads(pt->threads) reduction(min : first) reduction(max : last)
    {
        check_team(pt);
        int i = omp_get_thread_num();
        MPI_Request r;
        MPI_Isend(slot(o, o->send_buf, i), pt->count, pt->type, pt->first, TAG_THREAD + i, o->comm, &r);
        first = ml_clock_ns();
        ml_compute_time(pt->compute_ns);
        last = ml_clock_ns();
        wait(&r);
    }
    MPI_Recv(NULL, 0, MPI_BYTE, pt->first, TAG_ACK, o->comm, MPI_STATUS_IGNORE);
    *seq = ml_clock_ns() - t0;
    /* the computation's span, from the first thread's start to the last one's end: threads that
     * share a core compute one after the other, and the computation alone then takes that long */
    *comp = pt->compute_ns > 0 ? last - first : 0;
}

static void follow_threads(overlap_t *o, const p2p_point_t *pt)
{
    int wrong = 0;
#pragma omp parallel num_threads(pt->threads) reduction(+ : wrong)
    {
        check_team(pt);
        int i = omp_get_thread_num();
        char *mine = slot(o, o->recv_buf, i);
        MPI_Recv(mine, pt->count, pt->type, LEADER, TAG_THREAD + i, o->comm, MPI_STATUS_IGNORE);
        wrong += pt->size > 0 && (mine[0] != THREAD_BYTE(i) || mine[pt->size - 1] != THREAD_BYTE(i));
    }
    if (wrong) {
        fprintf(stderr, "mpilens-overlap: threads: %d thread(s) received another thread's message\n", wrong);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Send(NULL, 0, MPI_BYTE, LEADER, TAG_ACK, o->comm);
}

static const p2p_bench_t ref_pingpong = {"ref-pingpong", lead_pingpong, follow_pingpong, SEQUENCE};
static const p2p_bench_t ref_noncontig = {"ref-noncontig", lead_pingpong, follow_pingpong, SEQUENCE};
static const p2p_bench_t ref_send = {"ref-send", lead_send, follow_recv, SEQUENCE};
static const p2p_bench_t ref_multi = {"ref-multi", lead_multi, follow_and_ack, MINUS_LAT0};
static const p2p_bench_t ref_same = {"ref-multi-same", lead_same, follow_same, MINUS_LAT0};
static const p2p_bench_t ref_threads = {"ref-threads", lead_threads, follow_threads, MINUS_LAT0};

static const p2p_bench_t maps[] = {
    {"sender", lead_sender, follow_and_ack, MINUS_LAT0},
    {"receiver", lead_receiver, follow_receiver, MINUS_LAT0},
    {"bidir", lead_bidir, follow_bidir, HALF},
    {"noncontig", lead_sender, follow_and_ack, MINUS_LAT0},
    {"cpu", lead_cpu, follow_recv, SEQUENCE},
    {"control", lead_control, follow_and_ack, MINUS_LAT0},
    {"late", lead_late, follow_late, SEQUENCE},
    {"multi", lead_multi, follow_and_ack, MINUS_LAT0},
    {"multi-same", lead_same, follow_same, MINUS_LAT0},
    {"threads", lead_threads, follow_threads, MINUS_LAT0},
};
#define N_MAPS (sizeof maps / sizeof maps[0])

/* ---- the driver ---------------------------------------------------------------------------- */

static void handshake_all(overlap_t *o, const p2p_point_t *pt, int cmd)
{
    for (int f = pt->first; f <= pt->last; f++)
        ml_handshake_lead(o->prog.sync, f, cmd);
}

static double measured(const overlap_t *o, const p2p_bench_t *b, int64_t sequence)
{
    switch (b->measure) {
    case MINUS_LAT0: return (double)sequence - o->lat0_ns;
    case HALF: return (double)sequence / 2.0;
    default: return (double)sequence;
    }
}

/* Leader: one warm-up repetition (first-touch, connection set-up), then repetitions until the
 * stopping rule (`rule`, else the run's) says stop, or, for a map point with a decision, until
 * its class is decided (decide.c); the STOP command releases the followers. */
static ml_stop_t lead_point(overlap_t *o, const p2p_bench_t *b, const p2p_point_t *pt, ml_sample_t *t,
                            ml_sample_t *comp, const overlap_decision_t *decision, const ml_stop_rule_t *rule)
{
    int64_t seq, c;
    ml_stopper_t stopper;
    ml_stop_t reason;
    handshake_all(o, pt, ML_CMD_GO);
    b->lead(o, pt, &seq, &c);
    ml_stopper_start(&stopper, rule ? rule : &o->prog.stop_rule);
    do {
        handshake_all(o, pt, ML_CMD_GO);
        b->lead(o, pt, &seq, &c);
        if (ml_sample_add(t, measured(o, b, seq)) != 0 || ml_sample_add(comp, (double)c) != 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
        reason =
            decision ? overlap_decide(decision, t, comp, o->prog.stop_rule.ci_level) : ml_stopper_check(&stopper, t);
    } while (reason == ML_STOP_CONTINUE);
    handshake_all(o, pt, ML_CMD_STOP);
    return reason;
}

static void follow_point(overlap_t *o, const p2p_bench_t *b, const p2p_point_t *pt)
{
    int cmd;
    for (;;) {
        ml_handshake_follow(o->prog.sync, LEADER, &cmd);
        if (cmd == ML_CMD_STOP)
            return;
        b->follow(o, pt);
    }
}

static int takes_part(const overlap_t *o, const p2p_point_t *pt)
{
    return o->prog.rank == LEADER || (o->prog.rank >= pt->first && o->prog.rank <= pt->last);
}

/* Runs one point on every rank that takes part; on the leader fills t and comp. */
static ml_stop_t run_point(overlap_t *o, const p2p_bench_t *b, const p2p_point_t *pt, ml_sample_t *t, ml_sample_t *comp,
                           const overlap_decision_t *decision, const ml_stop_rule_t *rule)
{
    if (o->prog.rank == LEADER)
        return lead_point(o, b, pt, t, comp, decision, rule);
    if (takes_part(o, pt))
        follow_point(o, b, pt);
    return ML_STOP_CONTINUE;
}

/* ---- points -------------------------------------------------------------------------------- */

static int is_noncontig(const p2p_bench_t *b) { return strcmp(b->name, "noncontig") == 0 || b == &ref_noncontig; }
static int is_multi(const p2p_bench_t *b) { return strcmp(b->name, "multi") == 0 || b == &ref_multi; }
static int is_same(const p2p_bench_t *b) { return strcmp(b->name, "multi-same") == 0 || b == &ref_same; }
static int is_threads(const p2p_bench_t *b) { return strcmp(b->name, "threads") == 0 || b == &ref_threads; }

/* The parameter a benchmark records beside size and computation: multi's peers, multi-same's
 * requests, threads' comm_threads; NULL for the others. */
static const char *extra_param(const p2p_bench_t *b, const p2p_point_t *pt, int *value)
{
    *value = is_multi(b) ? pt->last - pt->first + 1 : is_threads(b) ? pt->threads : SAME_REQUESTS;
    return is_multi(b) ? "peers" : is_same(b) ? "requests" : is_threads(b) ? "comm_threads" : NULL;
}

/* The point's message: contiguous bytes, or size/32 blocks of the seed's vector type. The type
 * is committed here and freed by free_point. */
static p2p_point_t make_point(const overlap_t *o, const p2p_bench_t *b, int64_t size, int64_t compute_ns)
{
    p2p_point_t pt = {.size = size,
                      .count = (int)size,
                      .type = MPI_BYTE,
                      .compute_ns = compute_ns,
                      .first = 1,
                      .last = is_multi(b) ? o->prog.size - 1 : 1,
                      .threads = is_threads(b) ? (int)o->comm_threads : 1};
    if (is_noncontig(b)) {
        MPI_Type_vector((int)(size / NONCONTIG_BLOCK), NONCONTIG_BLOCK, NONCONTIG_STRIDE, MPI_CHAR, &pt.type);
        MPI_Type_commit(&pt.type);
        pt.count = 1;
    }
    return pt;
}

static void free_point(p2p_point_t *pt)
{
    if (pt->type != MPI_BYTE)
        MPI_Type_free(&pt->type);
}

static const int64_t *sizes_of(const overlap_t *o, const p2p_bench_t *b, size_t *n)
{
    *n = is_noncontig(b) ? o->n_noncontig : o->n_sizes;
    return is_noncontig(b) ? o->noncontig_sizes : o->size_values;
}

/* The reference a map's T_comm comes from (docs/overlap.md, "Base references"), and the factor from
 * its median to T_comm (one way of a round trip: half). */
static const p2p_bench_t *reference_of(const p2p_bench_t *b, double *scale)
{
    *scale = 1.0;
    if (strcmp(b->name, "cpu") == 0)
        return &ref_send;
    if (is_multi(b))
        return &ref_multi;
    if (is_same(b))
        return &ref_same;
    if (is_threads(b))
        return &ref_threads;
    *scale = 0.5;
    return is_noncontig(b) ? &ref_noncontig : &ref_pingpong;
}

static int multi_possible(const overlap_t *o) { return o->prog.size >= 3; }
int p2p_threads_possible(const overlap_t *o) { return o->prog.thread_level >= MPI_THREAD_MULTIPLE; }

static const p2p_bench_t *map_named(const char *name)
{
    for (size_t b = 0; b < N_MAPS; b++)
        if (strcmp(maps[b].name, name) == 0)
            return &maps[b];
    return NULL;
}

static int map_runs(const overlap_t *o, const p2p_bench_t *b)
{
    return overlap_selected(o, b->name) && (!is_multi(b) || multi_possible(o)) &&
           (!is_threads(b) || p2p_threads_possible(o));
}

/* ---- references ---------------------------------------------------------------------------- */

/* Measures reference b at point pt (its size, no computation) into t on the ranks taking part,
 * under rule; on rank 0 returns its median times scale (T_comm) and sets rel to the median's
 * interval relative to the median ({1, 1} when unknown). */
static double reference_sample(overlap_t *o, const p2p_bench_t *b, const p2p_point_t *pt, double scale, ml_sample_t *t,
                               const ml_stop_rule_t *rule, ml_stop_t *reason, double rel[2])
{
    ml_sample_t comp = {0};
    double median = 0.0;
    ml_summary_t sum;
    rel[0] = rel[1] = 1.0;
    *reason = ML_STOP_CONTINUE;
    if (takes_part(o, pt))
        *reason = run_point(o, b, pt, t, &comp, NULL, rule);
    if (o->prog.rank == LEADER && ml_summarize(t->values, t->n, o->prog.stop_rule.ci_level, &sum) == 0) {
        median = sum.median * scale;
        if (sum.median > 0) {
            rel[0] = sum.ci_lo / sum.median;
            rel[1] = sum.ci_hi / sum.median;
        }
    }
    ml_sample_free(&comp);
    return median;
}

/* Measures a reference at one size on the ranks taking part; on rank 0 writes its point (unless
 * a resumed file has it) and returns the median of the sample times scale. */
static double measure_reference(overlap_t *o, const p2p_bench_t *b, int64_t size, const char *stat, double scale)
{
    double rel[2];
    char key[96];
    snprintf(key, sizeof key, "%s/size_bytes=%" PRId64, b->name, size);
    ml_sample_t t = {0};
    ml_stop_rule_t rule_storage;
    const ml_stop_rule_t *rule = overlap_reference_rule(o, &rule_storage);
    ml_stop_t reason;
    p2p_point_t pt = make_point(o, b, size, 0);
    double median = reference_sample(o, b, &pt, scale, &t, rule, &reason, rel);
    if (o->prog.rank == LEADER && t.n > 0 && !ml_program_skip(&o->prog, key)) {
        ml_json_t j;
        ml_json_init(&j);
        ml_record_point_begin(&j, FAMILY, b->name, key);
        ml_json_begin_object(&j, "params");
        ml_json_int(&j, "size_bytes", size);
        int extra;
        const char *extra_name = extra_param(b, &pt, &extra);
        if (extra_name)
            ml_json_int(&j, extra_name, extra);
        ml_json_end_object(&j);
        ml_json_begin_object(&j, "stats");
        ml_json_double(&j, stat, median);
        if (b->measure == MINUS_LAT0)
            ml_json_double(&j, "lat0_ns", o->lat0_ns);
        ml_json_sample(&j, "sample", &t, rule, reason);
        ml_program_point_end(&o->prog, &j);
    }
    free_point(&pt);
    ml_sample_free(&t);
    ml_program_progress(&o->prog, key);
    return median;
}

/* Each group of references ends with an idle barrier: ranks without a part in the next group
 * must not wait for it in a polling MPI call while others measure. */
static void measure_references(overlap_t *o)
{
    /* the 0-byte latency first: the other references subtract it */
    o->lat0_ns = measure_reference(o, &ref_pingpong, 0, "one_way_ns", 0.5);
    for (size_t i = 0; i < o->n_sizes; i++)
        o->one_way_ns[i] = o->size_values[i] != 0
                               ? measure_reference(o, &ref_pingpong, o->size_values[i], "one_way_ns", 0.5)
                               : o->lat0_ns;
    if (overlap_selected(o, "noncontig"))
        for (size_t i = 0; i < o->n_noncontig; i++)
            measure_reference(o, &ref_noncontig, o->noncontig_sizes[i], "one_way_ns", 0.5);
    if (overlap_selected(o, "cpu"))
        for (size_t i = 0; i < o->n_sizes; i++)
            measure_reference(o, &ref_send, o->size_values[i], "send_ns", 1.0);
    ml_idle_barrier(o->prog.sync);
    if (map_runs(o, map_named("multi")))
        for (size_t i = 0; i < o->n_sizes; i++)
            measure_reference(o, &ref_multi, o->size_values[i], "t_comm_ns", 1.0);
    ml_idle_barrier(o->prog.sync);
    if (map_runs(o, map_named("multi-same")))
        for (size_t i = 0; i < o->n_sizes; i++)
            measure_reference(o, &ref_same, o->size_values[i], "t_comm_ns", 1.0);
    if (map_runs(o, map_named("threads")))
        for (size_t i = 0; i < o->n_sizes; i++)
            measure_reference(o, &ref_threads, o->size_values[i], "t_comm_ns", 1.0);
}

/* The ping-pong references serve every point-to-point map and nload. */
static int references_needed(const overlap_t *o)
{
    for (size_t b = 0; b < N_MAPS; b++)
        if (map_runs(o, &maps[b]))
            return 1;
    return overlap_selected(o, "nload");
}

static long reference_points(const overlap_t *o)
{
    if (!references_needed(o))
        return 0;
    long n = 1 + (long)o->n_sizes - (o->n_sizes > 0 && o->size_values[0] == 0);
    if (overlap_selected(o, "noncontig"))
        n += (long)o->n_noncontig;
    if (overlap_selected(o, "cpu"))
        n += (long)o->n_sizes;
    if (map_runs(o, map_named("multi")))
        n += (long)o->n_sizes;
    if (map_runs(o, map_named("multi-same")))
        n += (long)o->n_sizes;
    if (map_runs(o, map_named("threads")))
        n += (long)o->n_sizes;
    return n;
}

/* ---- maps ---------------------------------------------------------------------------------- */

/* A map's reference at one size, measured again right before that size's points: the machine a
 * reference met at the start of the run may be in another state by the time a map gets there
 * (on shared virtual cores, a 0-byte one-way time of 110 ns in one run and 135 ns in the next),
 * and every ratio of the column divides by it (docs/overlap.md, "Base references"). */
typedef struct {
    ml_sample_t t;
    ml_stop_rule_t rule_storage;
    const ml_stop_rule_t *rule;
    ml_stop_t reason;
    double t_comm_ns, rel[2];
} column_reference_t;

static void measure_column_reference(overlap_t *o, const p2p_bench_t *b, int64_t size, column_reference_t *c)
{
    double scale, lat0_rel[2];
    const p2p_bench_t *ref = reference_of(b, &scale);
    memset(c, 0, sizeof *c);
    c->rule = overlap_reference_rule(o, &c->rule_storage);
    /* the 0-byte latency that this column's sequences (and a MINUS_LAT0 reference) subtract */
    if (b->measure == MINUS_LAT0 || ref->measure == MINUS_LAT0) {
        ml_sample_t lat0 = {0};
        ml_stop_t lat0_reason;
        p2p_point_t zero = make_point(o, &ref_pingpong, 0, 0);
        double lat0_ns = reference_sample(o, &ref_pingpong, &zero, 0.5, &lat0, c->rule, &lat0_reason, lat0_rel);
        if (o->prog.rank == LEADER)
            o->lat0_ns = lat0_ns;
        free_point(&zero);
        ml_sample_free(&lat0);
    }
    p2p_point_t pt = make_point(o, ref, size, 0);
    c->t_comm_ns = reference_sample(o, ref, &pt, scale, &c->t, c->rule, &c->reason, c->rel);
    free_point(&pt);
}

static void map_key(const p2p_bench_t *b, int64_t size, int64_t compute_ns, char key[128])
{
    snprintf(key, 128, "%s/size_bytes=%" PRId64 "/compute_ns=%" PRId64, b->name, size, compute_ns);
}

/* Whether this rank measures any point of a map's column (a resumed file may have them all). The
 * ranks taking part are the same at every computation time. */
static int column_to_measure(overlap_t *o, const p2p_bench_t *b, int64_t size)
{
    p2p_point_t pt = make_point(o, b, size, 0);
    int part = takes_part(o, &pt);
    free_point(&pt);
    for (size_t c = 0; part && c < o->n_computes; c++) {
        char key[128];
        map_key(b, size, o->compute_values[c], key);
        if (!ml_program_skip(&o->prog, key))
            return 1;
    }
    return 0;
}

static void run_map(overlap_t *o, const p2p_bench_t *b)
{
    size_t n, order[MAX_VALUES];
    const int64_t *sizes = sizes_of(o, b, &n);
    overlap_sweep_order(n, order);
    int *classes = overlap_classes_new(o->n_computes, n); /* leader: per computation time and size */
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        column_reference_t ref;
        int measuring = column_to_measure(o, b, sizes[i]);
        if (measuring)
            measure_column_reference(o, b, sizes[i], &ref);
        for (size_t c = 0; c < o->n_computes; c++) {
            char key[128];
            map_key(b, sizes[i], o->compute_values[c], key);
            p2p_point_t pt = make_point(o, b, sizes[i], o->compute_values[c]);
            if (!ml_program_skip(&o->prog, key) && takes_part(o, &pt)) {
                ml_sample_t t = {0}, comp = {0};
                int extra;
                const char *extra_name = extra_param(b, &pt, &extra);
                overlap_decision_t d;
                int neighbour = overlap_neighbour_class(classes + c * n, n, i);
                const overlap_decision_t *decision = overlap_decision(o, ref.t_comm_ns, ref.rel, neighbour, &d);
                ml_stop_t reason = run_point(o, b, &pt, &t, &comp, decision, NULL);
                if (o->prog.rank == LEADER) {
                    overlap_account(o, decision, t.n);
                    overlap_map_point_t m = {.bench = b->name,
                                             .key = key,
                                             .size = sizes[i],
                                             .compute_ns = o->compute_values[c],
                                             .t = &t,
                                             .comp = &comp,
                                             .reason = reason,
                                             .t_comm_ns = ref.t_comm_ns,
                                             .ref = &ref.t,
                                             .ref_rule = ref.rule,
                                             .ref_reason = ref.reason,
                                             .lat0_ns = b->measure == MINUS_LAT0 ? o->lat0_ns : 0.0,
                                             .extra_name = extra_name,
                                             .extra_value = extra};
                    classes[c * n + i] = overlap_class(overlap_write_map_point(o, &m));
                }
                ml_sample_free(&t);
                ml_sample_free(&comp);
            }
            free_point(&pt);
            ml_program_progress(&o->prog, key);
        }
        if (measuring)
            ml_sample_free(&ref.t);
    }
    free(classes);
}

ml_stop_t p2p_pingpong_half(overlap_t *o, int64_t size, ml_sample_t *t)
{
    static const p2p_bench_t pingpong_half = {"nload", lead_pingpong, follow_pingpong, HALF};
    p2p_point_t pt = make_point(o, &pingpong_half, size, 0);
    ml_sample_t comp = {0};
    ml_stop_t reason = run_point(o, &pingpong_half, &pt, t, &comp, NULL, NULL);
    ml_sample_free(&comp);
    free_point(&pt);
    return reason;
}

long p2p_points(const overlap_t *o)
{
    long n = reference_points(o);
    for (size_t b = 0; b < N_MAPS; b++) {
        size_t sizes;
        sizes_of(o, &maps[b], &sizes);
        if (map_runs(o, &maps[b]))
            n += (long)(sizes * o->n_computes);
    }
    return n;
}

/* threads: each thread's slot of the send buffer holds its own byte (lead_threads). */
static void fill_thread_slots(overlap_t *o)
{
    for (int i = 0; i < (int)o->comm_threads; i++)
        memset(slot(o, o->send_buf, i), THREAD_BYTE(i), slot_len(o));
}

void p2p_run(overlap_t *o)
{
    if (overlap_selected(o, "multi") && !multi_possible(o) && !o->prog.resume)
        ml_program_note(&o->prog, "skip", "multi needs at least 3 ranks (one sender, two or more receivers)", NULL);
    if (overlap_selected(o, "threads") && !p2p_threads_possible(o) && !o->prog.resume) {
        char text[300];
        snprintf(text, sizeof text,
                 "threads needs MPI_THREAD_MULTIPLE; asked for %s, the MPI library provided %s (--bench threads "
                 "asks for it; under --bench all give --thread-level multiple, which every benchmark then runs "
                 "under)",
                 o->prog.thread_level_asked, ml_thread_level_name(o->prog.thread_level));
        ml_program_note(&o->prog, "skip", text, NULL);
    }
    if (!references_needed(o))
        return;
    if (map_runs(o, map_named("threads")))
        fill_thread_slots(o);
    measure_references(o);
    ml_idle_barrier(o->prog.sync);
    for (size_t b = 0; b < N_MAPS; b++) {
        if (!map_runs(o, &maps[b]))
            continue;
        run_map(o, &maps[b]);
        /* ranks without a part in this benchmark sleep here instead of polling */
        ml_idle_barrier(o->prog.sync);
    }
}
