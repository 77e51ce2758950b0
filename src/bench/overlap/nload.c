/* nload (seed 000, "N threads load"): both ranks of the pair run N threads that compute in the
 * background, while the main thread (MPI_THREAD_FUNNELED) does a blocking ping-pong. Measures how
 * computing threads disturb communication: thread scheduling, priorities, progress threads of
 * the library starved of a core. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "meta.h"
#include "overlap.h"
#include "sync.h"

typedef struct {
    pthread_t *threads;
    int n;
    atomic_int stop;
} load_t;

/* Floating-point work, checking the stop flag every few thousand operations. */
static void *spin(void *arg)
{
    load_t *load = arg;
    double r = 1.0;
    while (!atomic_load_explicit(&load->stop, memory_order_relaxed))
        for (int i = 0; i < 4096; i++)
            r = r * 1.0000001 + 1e-9;
    return r == 42.0 ? arg : NULL; /* uses r, so the loop is not optimised away */
}

static int load_start(load_t *load, int n)
{
    load->n = 0;
    atomic_store(&load->stop, 0);
    if (n == 0)
        return 0;
    if (!(load->threads = malloc(sizeof *load->threads * (size_t)n)))
        return -1;
    for (; load->n < n; load->n++)
        if (pthread_create(&load->threads[load->n], NULL, spin, load) != 0)
            return -1;
    return 0;
}

static void load_stop(load_t *load)
{
    atomic_store(&load->stop, 1);
    for (int i = 0; i < load->n; i++)
        pthread_join(load->threads[i], NULL);
    if (load->n)
        free(load->threads);
    load->n = 0;
}

static int can_run(const overlap_t *o) { return o->prog.thread_level >= MPI_THREAD_FUNNELED; }

long nload_points(const overlap_t *o)
{
    return overlap_selected(o, "nload") && can_run(o) ? (long)o->n_sizes * (o->max_threads + 1) : 0;
}

static void write_point(overlap_t *o, const char *key, size_t i, int threads, const ml_sample_t *t, ml_stop_t reason)
{
    ml_summary_t sum;
    ml_summarize(t->values, t->n, o->prog.stop_rule.ci_level, &sum);
    double t_comm = o->one_way_ns[i];
    ml_json_t j;
    ml_json_init(&j);
    ml_record_point_begin(&j, FAMILY, "nload", key);
    ml_json_begin_object(&j, "params");
    ml_json_int(&j, "size_bytes", o->size_values[i]);
    ml_json_int(&j, "threads", threads);
    ml_json_end_object(&j);
    ml_json_begin_object(&j, "stats");
    ml_json_double(&j, "t_measured_ns", sum.median);
    ml_json_double(&j, "t_comm_ns", t_comm);
    /* the seed's nload metric: how much slower than without load (0 = undisturbed) */
    ml_json_double(&j, "ratio", t_comm > 0 ? (sum.median - t_comm) / t_comm : NAN);
    ml_json_double(&j, "slowdown", t_comm > 0 ? sum.median / t_comm : NAN);
    ml_json_sample(&j, "sample", t, &o->prog.stop_rule, reason);
    ml_program_point_end(&o->prog, &j);
}

void nload_run(overlap_t *o)
{
    if (!overlap_selected(o, "nload"))
        return;
    if (!can_run(o)) {
        char text[160];
        snprintf(text, sizeof text, "nload needs MPI_THREAD_FUNNELED; asked for %s, the MPI library provided %s",
                 o->prog.thread_level_asked, ml_thread_level_name(o->prog.thread_level));
        if (!o->prog.resume)
            ml_program_note(&o->prog, "skip", text, NULL);
        return;
    }
    int takes_part = o->prog.rank < 2;
    for (int n = 0; n <= o->max_threads; n++) {
        load_t load;
        if (takes_part && load_start(&load, n) != 0) {
            fprintf(stderr, "mpilens-overlap: cannot start %d computing threads\n", n);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (size_t i = 0; i < o->n_sizes; i++) {
            char key[96];
            snprintf(key, sizeof key, "nload/size_bytes=%" PRId64 "/threads=%d", o->size_values[i], n);
            if (takes_part && !ml_program_skip(&o->prog, key)) {
                ml_sample_t t = {0};
                ml_stop_t reason = p2p_pingpong_half(o, o->size_values[i], &t);
                if (o->prog.rank == 0)
                    write_point(o, key, i, n, &t, reason);
                ml_sample_free(&t);
            }
            ml_program_progress(&o->prog, key);
        }
        if (takes_part)
            load_stop(&load);
    }
    ml_idle_barrier(o->prog.sync);
}
