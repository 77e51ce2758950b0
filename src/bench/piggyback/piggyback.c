/* mpilens-piggyback: what does attaching piggyback data to every message cost? (seed 001, section 4)
 *
 * Ranks 0 and 1 measure ping-pong latency and windowed bandwidth over a range of message sizes,
 * with receives that name their source and tag or that use MPI_ANY_SOURCE and MPI_ANY_TAG. The
 * program is plain MPI: run as it is, it measures the baseline; run with libmpilens-piggyback
 * preloaded, it measures the layer's method. It finds the layer without linking it and records
 * the method and pb size in the metadata and in every point. Points are described in
 * docs/results-schema.md ("piggyback"), the program in docs/programs/mpilens-piggyback.md. */
#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpilens/piggyback.h>

#include "clock.h"
#include "program.h"
#include "series.h"
#include "stats.h"
#include "sync.h"

#define FAMILY "piggyback"
#define PROGRAM "mpilens-piggyback"
#define MAX_SIZES 64
#define MAX_WINDOW 4096
enum { LEADER = 0, FOLLOWER = 1 };
enum { TAG_DATA = 1, TAG_ACK = 2 };

/* The leader's handshake command CMD_RUN + n tells the follower to take part in n iterations. */
#define CMD_RUN 16
#define MAX_ITERATIONS (1L << 20)
/* Iterations before any timing: connections, first touch, protocol set-up. A bandwidth window
 * already holds --window messages, so one window is enough. */
#define WARMUP_PINGPONGS 4
#define WARMUP_WINDOWS 1
/* The iterations of a repetition are chosen so that it lasts about TARGET_NS (long enough for
 * the clock and the scheduler not to matter, short enough for the default sweep to take
 * seconds), from a run of at least CALIBRATE_NS. */
#define TARGET_NS 2000000
#define CALIBRATE_NS 250000

static const char *const bench_names[] = {"latency", "bandwidth"};
static const char *const recv_names[] = {"specific", "wildcard"};

typedef struct {
    ml_program_t prog;
    MPI_Comm comm; /* the measured messages; the handshake goes on prog.sync */

    /* options */
    ml_size_range_t sizes;
    const char *recv;
    ml_list_t benches;
    long window;
    int64_t budget_ns;

    /* the layer as found in this process: "none" and 0 without it */
    const char *method;
    int64_t pb_size;

    int64_t size_values[MAX_SIZES];
    size_t n_sizes;

    /* ranks 0 and 1: one send buffer (sends may share it), and a receive buffer with room for a
     * whole window on rank 1 (pending receives must not overlap) */
    char *send_buf, *recv_buf;
    MPI_Request *requests;
    MPI_Status *statuses;
} pb_bench_t;

typedef struct {
    int bandwidth; /* 0: latency */
    int wildcard;  /* receives with MPI_ANY_SOURCE and MPI_ANY_TAG */
    int size;
} point_t;

/* ---- the layer ----------------------------------------------------------------------------- */

/* Looked up, not linked: the program must run without the layer, and report it when preloaded. */
static void find_layer(pb_bench_t *b)
{
    __typeof__(&mpilens_pb_get_method) get_method =
        (__typeof__(&mpilens_pb_get_method))dlsym(RTLD_DEFAULT, "mpilens_pb_get_method");
    __typeof__(&mpilens_pb_get_size) get_size =
        (__typeof__(&mpilens_pb_get_size))dlsym(RTLD_DEFAULT, "mpilens_pb_get_size");
    const char *method;
    size_t size;
    b->method = "none";
    b->pb_size = 0;
    if (get_method && get_size && get_method(&method) == MPILENS_PB_OK && get_size(&size) == MPILENS_PB_OK) {
        b->method = method;
        b->pb_size = (int64_t)size;
    }
}

static void warn_if_layer_missing(pb_bench_t *b)
{
    const char *asked = getenv("MPILENS_PB_METHOD");
    if (strcmp(b->method, "none") != 0 || !asked || !*asked)
        return;
    char text[256];
    snprintf(text, sizeof text,
             "MPILENS_PB_METHOD is %s but libmpilens-piggyback is not loaded: these points are without piggyback "
             "(preload the library)",
             asked);
    if (b->prog.rank == 0)
        fprintf(stderr, "%s: warning: %s\n", PROGRAM, text);
    ml_program_note(&b->prog, "warning", text, NULL);
}

/* ---- opening the results: the layer is the run's context ------------------------------------ */

static void begin(pb_bench_t *b, long points_total)
{
    ml_json_t layer;
    ml_json_init(&layer);
    ml_json_begin_object(&layer, NULL);
    ml_json_string(&layer, "method", b->method);
    ml_json_int(&layer, "pb_size", b->pb_size);
    ml_json_end_object(&layer);
    if (layer.failed || ml_program_set_context(&b->prog, "piggyback", layer.buf,
                                               "run it in the same configuration (LD_PRELOAD, MPILENS_PB_METHOD, "
                                               "MPILENS_PB_SIZE)") != 0)
        ml_program_exit_usage(&b->prog, "out of memory");
    ml_json_free(&layer);
    ml_program_begin(&b->prog, points_total);
    b->prog.stop_rule.time_budget_ns = b->budget_ns;
}

/* ---- plan and memory ----------------------------------------------------------------------- */

static int bench_selected(const pb_bench_t *b, int bench) { return ml_list_contains(&b->benches, bench_names[bench]); }

static int recv_selected(const pb_bench_t *b, int wildcard)
{
    return strcmp(b->recv, "both") == 0 || strcmp(b->recv, recv_names[wildcard]) == 0;
}

static long points_total(const pb_bench_t *b)
{
    long benches = bench_selected(b, 0) + bench_selected(b, 1);
    long recvs = recv_selected(b, 0) + recv_selected(b, 1);
    return benches * recvs * (long)b->n_sizes;
}

static void plan(pb_bench_t *b)
{
    ml_program_t *p = &b->prog;
    if (p->size < 2)
        ml_program_exit_usage(p, "needs at least 2 ranks (ranks 0 and 1 exchange the messages); got %d", p->size);
    if (b->sizes.hi > INT_MAX)
        ml_program_exit_usage(p, "invalid value for --sizes: at most %d bytes (MPI counts are int); got %s", INT_MAX,
                              ml_options_find(p->options, "sizes")->value);
    b->n_sizes = ml_geometric_series((int64_t)b->sizes.lo, (int64_t)b->sizes.hi, 2.0, b->size_values, MAX_SIZES);
}

/* Rank 1 needs the most: a send buffer and, for bandwidth, --window receive slots of the largest
 * size. Refused on every rank when that exceeds half of a rank's share of its node's memory;
 * buffers are touched so that first-touch costs are not measured. */
static void allocate_buffers(pb_bench_t *b)
{
    ml_program_t *p = &b->prog;
    size_t largest = b->n_sizes ? (size_t)b->size_values[b->n_sizes - 1] : 0;
    size_t slots = bench_selected(b, 1) ? (size_t)b->window : 1;
    char what[96];
    snprintf(what, sizeof what, "--sizes up to %s with --window %ld", ml_options_find(p->options, "sizes")->value,
             b->window);
    ml_program_check_memory(p, (double)largest * (double)(1 + slots), what, "lower the maximum of --sizes or --window");
    int failed = 0;
    if (p->rank == LEADER || p->rank == FOLLOWER) {
        size_t recv_len = (p->rank == FOLLOWER ? slots : 1) * largest;
        b->send_buf = malloc(largest ? largest : 1);
        b->recv_buf = malloc(recv_len ? recv_len : 1);
        b->requests = malloc(sizeof *b->requests * (size_t)b->window);
        b->statuses = malloc(sizeof *b->statuses * (size_t)b->window);
        failed = !b->send_buf || !b->recv_buf || !b->requests || !b->statuses;
        if (!failed) {
            memset(b->send_buf, 1, largest);
            memset(b->recv_buf, 0, recv_len);
        }
    }
    int any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any)
        ml_program_exit_usage(p, "cannot allocate message buffers for --sizes up to %s",
                              ml_options_find(p->options, "sizes")->value);
}

/* ---- one iteration of each benchmark, n times ---------------------------------------------- */

static int source_of(const point_t *pt, int peer) { return pt->wildcard ? MPI_ANY_SOURCE : peer; }
static int tag_of(const point_t *pt, int tag) { return pt->wildcard ? MPI_ANY_TAG : tag; }

static void lead_latency(pb_bench_t *b, const point_t *pt, long n)
{
    for (long i = 0; i < n; i++) {
        MPI_Send(b->send_buf, pt->size, MPI_BYTE, FOLLOWER, TAG_DATA, b->comm);
        MPI_Recv(b->recv_buf, pt->size, MPI_BYTE, source_of(pt, FOLLOWER), tag_of(pt, TAG_DATA), b->comm,
                 MPI_STATUS_IGNORE);
    }
}

static void follow_latency(pb_bench_t *b, const point_t *pt, long n)
{
    for (long i = 0; i < n; i++) {
        MPI_Recv(b->recv_buf, pt->size, MPI_BYTE, source_of(pt, LEADER), tag_of(pt, TAG_DATA), b->comm,
                 MPI_STATUS_IGNORE);
        MPI_Send(b->send_buf, pt->size, MPI_BYTE, LEADER, TAG_DATA, b->comm);
    }
}

/* A window of back-to-back sends, then the receiver's empty acknowledgement: the window has
 * arrived when the leader gets it. */
static void lead_bandwidth(pb_bench_t *b, const point_t *pt, long n)
{
    int w = (int)b->window;
    for (long i = 0; i < n; i++) {
        for (int k = 0; k < w; k++)
            MPI_Isend(b->send_buf, pt->size, MPI_BYTE, FOLLOWER, TAG_DATA, b->comm, &b->requests[k]);
        MPI_Waitall(w, b->requests, b->statuses);
        MPI_Recv(NULL, 0, MPI_BYTE, source_of(pt, FOLLOWER), tag_of(pt, TAG_ACK), b->comm, MPI_STATUS_IGNORE);
    }
}

static void follow_bandwidth(pb_bench_t *b, const point_t *pt, long n)
{
    int w = (int)b->window;
    for (long i = 0; i < n; i++) {
        for (int k = 0; k < w; k++)
            MPI_Irecv(b->recv_buf + (size_t)k * (size_t)pt->size, pt->size, MPI_BYTE, source_of(pt, LEADER),
                      tag_of(pt, TAG_DATA), b->comm, &b->requests[k]);
        MPI_Waitall(w, b->requests, b->statuses);
        MPI_Send(NULL, 0, MPI_BYTE, LEADER, TAG_ACK, b->comm);
    }
}

/* ---- a point: warm-up, calibration, repetitions ------------------------------------------- */

/* Leader: n iterations once the follower is ready; their duration in ns. */
static int64_t lead(pb_bench_t *b, const point_t *pt, long n)
{
    ml_handshake_lead(b->prog.sync, FOLLOWER, CMD_RUN + (int)n);
    int64_t t0 = ml_clock_ns();
    if (pt->bandwidth)
        lead_bandwidth(b, pt, n);
    else
        lead_latency(b, pt, n);
    return ml_clock_ns() - t0;
}

static void follow(pb_bench_t *b, const point_t *pt)
{
    int cmd;
    for (;;) {
        ml_handshake_follow(b->prog.sync, LEADER, &cmd);
        if (cmd == ML_CMD_STOP)
            return;
        if (pt->bandwidth)
            follow_bandwidth(b, pt, cmd - CMD_RUN);
        else
            follow_latency(b, pt, cmd - CMD_RUN);
    }
}

/* Doubles the iterations until a run lasts CALIBRATE_NS, then scales them to TARGET_NS. The run
 * that reached it is repeated, and the shorter of the two kept: a rank that lost its core for a
 * moment would otherwise make every repetition of the point too short. */
static long calibrate(pb_bench_t *b, const point_t *pt)
{
    long n = 1;
    int64_t t, again;
    while ((t = lead(b, pt, n)) < CALIBRATE_NS && n < MAX_ITERATIONS)
        n *= 2;
    if ((again = lead(b, pt, n)) < t)
        t = again;
    double scaled = (double)n * TARGET_NS / (double)(t > 0 ? t : 1);
    return scaled < 1 ? 1 : scaled > MAX_ITERATIONS ? MAX_ITERATIONS : (long)(scaled + 0.5);
}

/* Leader: fills the sample (one value per repetition: the one-way time of a message for latency,
 * the time of a window for bandwidth) and returns why repetition stopped. */
static ml_stop_t lead_point(pb_bench_t *b, const point_t *pt, ml_sample_t *sample, long *iterations)
{
    lead(b, pt, pt->bandwidth ? WARMUP_WINDOWS : WARMUP_PINGPONGS);
    long n = *iterations = calibrate(b, pt);
    double per_value = pt->bandwidth ? (double)n : 2.0 * (double)n;
    ml_stopper_t stopper;
    ml_stop_t reason;
    ml_stopper_start(&stopper, &b->prog.stop_rule);
    do {
        if (ml_sample_add(sample, (double)lead(b, pt, n) / per_value) != 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
    } while ((reason = ml_stopper_check(&stopper, sample)) == ML_STOP_CONTINUE);
    ml_handshake_lead(b->prog.sync, FOLLOWER, ML_CMD_STOP);
    return reason;
}

static void write_point(pb_bench_t *b, const point_t *pt, const char *key, const ml_sample_t *sample, long iterations,
                        ml_stop_t reason)
{
    const ml_stop_rule_t *rule = &b->prog.stop_rule;
    ml_summary_t sum;
    if (ml_summarize(sample->values, sample->n, rule->ci_level, &sum) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    const char *bench = bench_names[pt->bandwidth];
    ml_json_t j;
    ml_json_init(&j);
    ml_record_point_begin(&j, FAMILY, bench, key);
    ml_json_begin_object(&j, "params");
    ml_json_string(&j, "bench", bench);
    ml_json_string(&j, "recv", recv_names[pt->wildcard]);
    ml_json_int(&j, "size_bytes", pt->size);
    ml_json_string(&j, "method", b->method);
    ml_json_int(&j, "pb_size", b->pb_size);
    ml_json_int(&j, "iterations", iterations);
    if (pt->bandwidth)
        ml_json_int(&j, "window", b->window);
    ml_json_end_object(&j);
    ml_json_begin_object(&j, "stats");
    if (pt->bandwidth) {
        ml_json_double(&j, "bandwidth_Bps", (double)b->window * pt->size * 1e9 / sum.median);
        ml_json_double(&j, "window_ns", sum.median);
    } else {
        ml_json_double(&j, "latency_ns", sum.median);
    }
    ml_json_sample(&j, "sample", sample, rule, reason);
    ml_program_point_end(&b->prog, &j);
}

static void run_point(pb_bench_t *b, const point_t *pt)
{
    ml_program_t *p = &b->prog;
    char key[96];
    snprintf(key, sizeof key, "%s/recv=%s/size=%d", bench_names[pt->bandwidth], recv_names[pt->wildcard], pt->size);
    if (!ml_program_skip(p, key)) {
        if (p->rank == LEADER) {
            ml_sample_t sample = {0};
            long iterations;
            ml_stop_t reason = lead_point(b, pt, &sample, &iterations);
            write_point(b, pt, key, &sample, iterations, reason);
            ml_sample_free(&sample);
        } else if (p->rank == FOLLOWER) {
            follow(b, pt);
        }
    }
    ml_program_progress(p, key);
}

/* ---- main ---------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    static const ml_program_spec_t spec = {
        .family = FAMILY,
        .program = PROGRAM,
        .summary = "What does piggybacking data on every message cost? Ranks 0 and 1 measure ping-pong latency\n"
                   "and windowed bandwidth over message sizes, with specific and with wildcard receives\n"
                   "(seed 001, section 4). Run it as it is for the baseline, and with libmpilens-piggyback\n"
                   "preloaded (LD_PRELOAD, MPILENS_PB_METHOD, MPILENS_PB_SIZE) for a method's cost; the layer's\n"
                   "method and pb size are recorded with every point. Needs at least 2 ranks.",
        .thread_level = MPI_THREAD_SINGLE,
        .thread_level_required = MPI_THREAD_SINGLE,
        .default_reps = "auto",
    };
    pb_bench_t b;
    memset(&b, 0, sizeof b);
    ml_option_t options[] = {
        {"sizes", ML_OPT_SIZE_RANGE, "MIN:MAX", "1:4M", NULL, "message sizes: every power of 2 from MIN to MAX",
         &b.sizes, 0, 0, NULL},
        {"recv", ML_OPT_CHOICE, "KIND", "both", "specific,wildcard,both",
         "receives: specific (source and tag named), wildcard (MPI_ANY_SOURCE, MPI_ANY_TAG) or both", &b.recv, 0, 0,
         NULL},
        {"bench", ML_OPT_LIST, "LIST", "all", "latency,bandwidth", "benchmarks to run: latency,bandwidth", &b.benches,
         0, 0, NULL},
        {"window", ML_OPT_INT, "N", "64", NULL, "bandwidth: messages sent back to back before the acknowledgement",
         &b.window, 1, MAX_WINDOW, NULL},
        {"budget", ML_OPT_TIME, "TIME", "250ms", NULL,
         "with --reps auto: measure each point at most this long (0: no limit)", &b.budget_ns, 0, 0, NULL},
        ML_OPTIONS_END,
    };
    ml_program_init(&b.prog, &spec, options, argc, argv);
    plan(&b);
    find_layer(&b);
    allocate_buffers(&b);
    MPI_Comm_dup(MPI_COMM_WORLD, &b.comm);

    begin(&b, points_total(&b));
    warn_if_layer_missing(&b);
    for (int bench = 0; bench < 2; bench++) {
        if (!bench_selected(&b, bench))
            continue;
        /* both kinds of receive at each size before the next: drift in the machine's speed then
         * touches both alike */
        for (size_t i = 0; i < b.n_sizes; i++)
            for (int wildcard = 0; wildcard < 2; wildcard++)
                if (recv_selected(&b, wildcard)) {
                    point_t pt = {bench, wildcard, (int)b.size_values[i]};
                    run_point(&b, &pt);
                }
    }
    /* ranks other than 0 and 1 have waited here from the start, asleep, leaving the cores free */
    ml_idle_barrier(b.prog.sync);

    MPI_Comm_free(&b.comm);
    free(b.send_buf);
    free(b.recv_buf);
    free(b.requests);
    free(b.statuses);
    return ml_program_finish(&b.prog);
}
