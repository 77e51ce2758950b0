/* Interrupt and context-switch cost (seed 002, §V-B2): one computing thread per processing unit
 * times a fixed workload (t1); then a thread that sleeps on a timer wakes rate_hz times a second
 * and each wake-up takes a core from a computing thread (t2). The CPU taken per wake-up per core
 * is (t2 - t1) * threads / wakeups (the seed: 3.4 us on its machine at 8192 Hz). Stages alternate
 * round by round, so that a drift of the machine's speed reaches both alike. */
#include "interrupts.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "clock.h"
#include "compute.h"
#include "stats.h"

typedef struct {
    pthread_barrier_t start, end;
    uint64_t units;
    int threads, quit, running;
    int gate; /* 0 while threads are being created, then 1 (go) or -1 (not all started: leave) */
    int *cpus;
    int64_t *times; /* this stage's time per thread */
} crew_t;

typedef struct {
    crew_t *crew;
    int index;
} worker_arg_t;

static void *worker(void *p)
{
    worker_arg_t *a = p;
    crew_t *c = a->crew;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(c->cpus[a->index], &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    int gate;
    while ((gate = __atomic_load_n(&c->gate, __ATOMIC_ACQUIRE)) == 0)
        sched_yield();
    if (gate < 0)
        return NULL;
    for (;;) {
        pthread_barrier_wait(&c->start);
        if (__atomic_load_n(&c->quit, __ATOMIC_ACQUIRE))
            return NULL;
        c->times[a->index] = ml_compute_work(c->units);
        __atomic_sub_fetch(&c->running, 1, __ATOMIC_RELEASE);
        pthread_barrier_wait(&c->end);
    }
}

static double mean_time(const crew_t *c)
{
    double sum = 0;
    for (int i = 0; i < c->threads; i++)
        sum += (double)c->times[i];
    return sum / c->threads;
}

typedef struct {
    double mean_ns; /* the threads' mean workload time */
    double wall_ns; /* with a timer: from its start to the last thread's end */
    long wakeups;
} stage_t;

/* One stage: the crew computes; with a timer (fd >= 0) this thread arms it as the crew starts,
 * wakes at each expiration until the crew is done, and counts its wake-ups. */
static stage_t stage(crew_t *c, int fd, double rate_hz)
{
    stage_t s = {0};
    __atomic_store_n(&c->running, c->threads, __ATOMIC_RELEASE);
    pthread_barrier_wait(&c->start);
    if (fd >= 0) {
        int64_t t0 = ml_clock_ns();
        long period = (long)(1e9 / rate_hz);
        struct itimerspec its = {{period / 1000000000L, period % 1000000000L},
                                 {period / 1000000000L, period % 1000000000L}};
        timerfd_settime(fd, 0, &its, NULL);
        while (__atomic_load_n(&c->running, __ATOMIC_ACQUIRE) > 0) {
            uint64_t expirations;
            if (read(fd, &expirations, sizeof expirations) == (ssize_t)sizeof expirations)
                s.wakeups++;
        }
        struct itimerspec off = {{0, 0}, {0, 0}};
        timerfd_settime(fd, 0, &off, NULL);
        s.wall_ns = (double)(ml_clock_ns() - t0);
    }
    pthread_barrier_wait(&c->end);
    s.mean_ns = mean_time(c);
    return s;
}

static double spread_of(const crew_t *c)
{
    int64_t lo = c->times[0], hi = c->times[0];
    for (int i = 1; i < c->threads; i++) {
        lo = c->times[i] < lo ? c->times[i] : lo;
        hi = c->times[i] > hi ? c->times[i] : hi;
    }
    double m = mean_time(c);
    return m > 0 ? (double)(hi - lo) / m : 0;
}

static double median_of(double *v, int n)
{
    ml_summary_t s;
    return ml_summarize(v, (size_t)n, 0.95, &s) == 0 ? s.median : 0;
}

/* The processing units a thread of this process may run on, whatever the rank is bound to (the
 * seed loads every core of the node): each online unit is tried on the calling thread, whose
 * own binding is put back after. Returns how many (0 on failure); *rank_cpus gets the size of
 * the binding. */
static int cpus_of_machine(int **out, int *rank_cpus)
{
    cpu_set_t mine, one;
    *out = NULL;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        return 0;
    *rank_cpus = CPU_COUNT(&mine);
    long online = sysconf(_SC_NPROCESSORS_CONF);
    int n = 0;
    if (online < 1 || !(*out = malloc((size_t)online * sizeof **out)))
        return 0;
    for (int cpu = 0; cpu < online && cpu < CPU_SETSIZE; cpu++) {
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) == 0)
            (*out)[n++] = cpu;
    }
    sched_setaffinity(0, sizeof mine, &mine);
    return n;
}

/* Per-round values of the two stages; all or nothing. */
typedef struct {
    double *t1, *t2, *woken, *rate, *cost, *spread;
} rounds_t;

static void rounds_free(rounds_t *r)
{
    free(r->t1), free(r->t2), free(r->woken), free(r->rate), free(r->cost), free(r->spread);
}

static int rounds_alloc(rounds_t *r, int n)
{
    size_t len = (size_t)n * sizeof(double);
    *r = (rounds_t){malloc(len), malloc(len), malloc(len), malloc(len), malloc(len), malloc(len)};
    if (r->t1 && r->t2 && r->woken && r->rate && r->cost && r->spread)
        return 0;
    rounds_free(r);
    return -1;
}

/* Starts one thread per processing unit; returns how many started. Threads wait at a gate
 * until all have started, so that a failure leaves none waiting at a barrier that would never
 * fill. */
static int start_crew(crew_t *c, pthread_t *ids, worker_arg_t *args)
{
    int started = 0;
    pthread_barrier_init(&c->start, NULL, (unsigned)c->threads + 1);
    pthread_barrier_init(&c->end, NULL, (unsigned)c->threads + 1);
    for (; started < c->threads; started++) {
        args[started] = (worker_arg_t){c, started};
        if (pthread_create(&ids[started], NULL, worker, &args[started]) != 0)
            break;
    }
    __atomic_store_n(&c->gate, started == c->threads ? 1 : -1, __ATOMIC_RELEASE);
    return started;
}

/* Releases the threads (waiting at the start barrier, or leaving at the gate) and joins them. */
static void stop_crew(crew_t *c, pthread_t *ids, int started)
{
    __atomic_store_n(&c->quit, 1, __ATOMIC_RELEASE);
    if (started == c->threads)
        pthread_barrier_wait(&c->start);
    for (int i = 0; i < started; i++)
        pthread_join(ids[i], NULL);
    pthread_barrier_destroy(&c->start);
    pthread_barrier_destroy(&c->end);
}

static void measure_rounds(crew_t *c, int fd, const interrupt_opts_t *opts, rounds_t *r)
{
    for (int i = 0; i < opts->rounds; i++) {
        r->t1[i] = stage(c, -1, 0).mean_ns;
        r->spread[i] = spread_of(c);
        stage_t two = stage(c, fd, opts->rate_hz);
        r->t2[i] = two.mean_ns;
        r->woken[i] = (double)two.wakeups;
        r->rate[i] = two.wall_ns > 0 ? (double)two.wakeups / (two.wall_ns * 1e-9) : 0;
        r->cost[i] = two.wakeups > 0 ? (r->t2[i] - r->t1[i]) * c->threads / (double)two.wakeups : 0;
    }
}

static void summarize(const crew_t *c, const interrupt_opts_t *opts, const rounds_t *r, interrupt_result_t *out)
{
    out->threads = c->threads; /* rank_cpus is set already */
    out->t1_ns = median_of(r->t1, opts->rounds);
    out->t2_ns = median_of(r->t2, opts->rounds);
    out->wakeups = median_of(r->woken, opts->rounds);
    out->achieved_hz = median_of(r->rate, opts->rounds);
    out->per_interrupt_ns = median_of(r->cost, opts->rounds);
    out->spread = median_of(r->spread, opts->rounds);
}

int progress_interrupt_cost(const interrupt_opts_t *opts, interrupt_result_t *out)
{
    memset(out, 0, sizeof *out);
    if (opts->rate_hz <= 0 || opts->work_ns <= 0 || opts->rounds < 1) {
        errno = EINVAL;
        return -1;
    }
    int fd = timerfd_create(CLOCK_MONOTONIC, 0);
    if (fd < 0)
        return -1;
    crew_t c = {0};
    ml_calibration_t cal;
    ml_work_calibrate(opts->work_ns, 0.05, &cal);
    c.units = cal.units;
    c.threads = cpus_of_machine(&c.cpus, &out->rank_cpus);
    c.times = c.threads ? calloc((size_t)c.threads, sizeof *c.times) : NULL;
    pthread_t *ids = c.threads ? malloc((size_t)c.threads * sizeof *ids) : NULL;
    worker_arg_t *args = c.threads ? malloc((size_t)c.threads * sizeof *args) : NULL;
    rounds_t r = {0};
    int rc = -1;
    if (!c.times || !ids || !args || rounds_alloc(&r, opts->rounds) != 0) {
        errno = ENOMEM;
    } else {
        int started = start_crew(&c, ids, args);
        if (started == c.threads) {
            measure_rounds(&c, fd, opts, &r);
            summarize(&c, opts, &r, out);
            rc = 0;
        } else {
            errno = EAGAIN;
        }
        stop_crew(&c, ids, started);
    }
    rounds_free(&r);
    free(ids), free(args), free(c.times), free(c.cpus);
    close(fd);
    return rc;
}
