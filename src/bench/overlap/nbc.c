/* Non-blocking collectives (seed 000's future work; seed 002's NBCBench start): every rank
 * starts the operation at one global time, computes, waits; T_measured, T_comm and T_comp are
 * per rank, and so is the ratio. The point reports the worst rank and keeps every rank's values.
 * A repetition in which some rank reached the common start time late is not kept, and the lead
 * grows until ranks really start together (core's ml_lead_t). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "compute.h"
#include "overlap.h"
#include "sync.h"

typedef struct {
    const char *name, *ref_name;
    void (*start)(overlap_t *o, int64_t size, MPI_Request *r);
} nbc_op_t;

static void start_ibcast(overlap_t *o, int64_t size, MPI_Request *r)
{
    MPI_Ibcast(o->send_buf, (int)size, MPI_BYTE, 0, o->comm, r);
}

static void start_iallreduce(overlap_t *o, int64_t size, MPI_Request *r)
{
    MPI_Iallreduce(o->send_buf, o->recv_buf, (int)size, MPI_BYTE, MPI_BOR, o->comm, r);
}

static void start_ialltoall(overlap_t *o, int64_t size, MPI_Request *r)
{
    MPI_Ialltoall(o->send_buf, (int)size, MPI_BYTE, o->recv_buf, (int)size, MPI_BYTE, o->comm, r);
}

static const nbc_op_t ops[] = {
    {"ibcast", "ref-ibcast", start_ibcast},
    {"iallreduce", "ref-iallreduce", start_iallreduce},
    {"ialltoall", "ref-ialltoall", start_ialltoall},
};
#define N_OPS (sizeof ops / sizeof ops[0])

/* What one rank measured at one point. */
typedef struct {
    ml_sample_t t, comp; /* this rank's repetitions */
    ml_sample_t worst;   /* rank 0: per repetition, the slowest rank's T_measured */
    long late_reps;
    ml_stop_t reason;
} nbc_sample_t;

typedef struct {
    ml_offset_t offset;
    ml_lead_t lead;  /* rank 0's: how far ahead it sets the common start */
    double *comm_ns; /* rank 0: T_comm of each rank, indexed [size index * ranks + rank] */
    /* rank 0: per size, the reference's slowest-rank interval relative to its median */
    double (*comm_rel)[2];
} nbc_state_t;

static void add(ml_sample_t *s, double v)
{
    if (ml_sample_add(s, v) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
}

/* One repetition on every rank, started together unless rank 0 says stop (returns -1). Returns
 * 1 if it counts, 0 if some rank started late (then the lead doubles). A single allreduce of
 * {late, T} serves both the late check on every rank and rank 0's slowest time: each collective
 * outside the timed region costs milliseconds when ranks share cores. */
static int repetition(overlap_t *o, nbc_state_t *st, const nbc_op_t *op, int64_t size, int64_t compute_ns,
                      nbc_sample_t *s, int go, int keep)
{
    ml_start_t start;
    MPI_Request r;
    ml_start_together(o->prog.sync, &st->offset, st->lead.lead_ns, go, &start);
    if (!start.go)
        return -1;
    int64_t t0 = ml_clock_ns();
    op->start(o, size, &r);
    int64_t c = overlap_compute(o, compute_ns);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    int64_t t = ml_clock_ns() - t0;

    int64_t mine[2] = {start.late, t}, max[2];
    MPI_Allreduce(mine, max, 2, MPI_INT64_T, MPI_MAX, o->prog.sync);
    if (!ml_lead_update(&st->lead, max[0])) {
        s->late_reps++;
        return 0;
    }
    if (keep) {
        add(&s->t, (double)t);
        add(&s->comp, (double)c);
        if (o->prog.rank == 0)
            add(&s->worst, (double)max[1]);
    }
    return 1;
}

/* Repeats until rank 0's stopping rule (`rule`, else the run's), on the slowest rank's times,
 * says stop; for a map point with a decision (rank 0), until the class of the ratio of the
 * slowest rank's times is decided, T_comp taken from rank 0 (decide.c). */
static void measure(overlap_t *o, nbc_state_t *st, const nbc_op_t *op, int64_t size, int64_t compute_ns,
                    nbc_sample_t *s, const overlap_decision_t *decision, const ml_stop_rule_t *rule)
{
    memset(s, 0, sizeof *s);
    while (repetition(o, st, op, size, compute_ns, s, 1, 0) == 0) /* a warm-up that started together */
        ;
    s->late_reps = 0;
    ml_stopper_t stopper;
    ml_stopper_start(&stopper, rule ? rule : &o->prog.stop_rule);
    s->reason = ML_STOP_CONTINUE;
    while (repetition(o, st, op, size, compute_ns, s, s->reason == ML_STOP_CONTINUE, 1) >= 0)
        if (o->prog.rank == 0)
            s->reason = decision ? overlap_decide(decision, &s->worst, &s->comp, o->prog.stop_rule.ci_level)
                                 : ml_stopper_check(&stopper, &s->worst);
}

static void free_sample(nbc_sample_t *s)
{
    ml_sample_free(&s->t);
    ml_sample_free(&s->comp);
    ml_sample_free(&s->worst);
}

static double median(const overlap_t *o, const ml_sample_t *s)
{
    ml_summary_t sum;
    return ml_summarize(s->values, s->n, o->prog.stop_rule.ci_level, &sum) == 0 ? sum.median : NAN;
}

/* Every rank's median T and T_comp, gathered on rank 0 (arrays of o->prog.size, rank 0 only). */
static void gather_medians(overlap_t *o, const nbc_sample_t *s, double *t, double *comp)
{
    double mine[2] = {median(o, &s->t), median(o, &s->comp)};
    double *all = o->prog.rank == 0 ? malloc(sizeof mine * (size_t)o->prog.size) : NULL;
    if (o->prog.rank == 0 && !all)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, o->prog.sync);
    if (o->prog.rank == 0)
        for (int r = 0; r < o->prog.size; r++) {
            t[r] = all[2 * r];
            if (comp)
                comp[r] = all[2 * r + 1];
        }
    free(all);
}

static void json_doubles(ml_json_t *j, const char *key, const double *v, int n)
{
    ml_json_begin_array(j, key);
    for (int i = 0; i < n; i++)
        ml_json_double(j, NULL, v[i]);
    ml_json_end_array(j);
}

static void begin_point(ml_json_t *j, const char *bench, const char *key, int64_t size, const int64_t *compute,
                        int ranks)
{
    ml_record_point_begin(j, FAMILY, bench, key);
    ml_json_begin_object(j, "params");
    ml_json_int(j, "size_bytes", size);
    if (compute)
        ml_json_int(j, "compute_ns", *compute);
    ml_json_int(j, "ranks", ranks);
    ml_json_end_object(j);
    ml_json_begin_object(j, "stats");
}

static void end_point(overlap_t *o, ml_json_t *j, const nbc_sample_t *s, const ml_stop_rule_t *rule)
{
    ml_json_int(j, "late_reps", s->late_reps);
    ml_json_sample(j, "sample", &s->worst, rule, s->reason);
    ml_json_end_object(j);
    ml_json_end_object(j);
    ml_program_point(&o->prog, j);
}

static void reference(overlap_t *o, nbc_state_t *st, const nbc_op_t *op, size_t i)
{
    int ranks = o->prog.size;
    int64_t size = o->size_values[i];
    char key[96];
    snprintf(key, sizeof key, "%s/size_bytes=%" PRId64, op->ref_name, size);
    nbc_sample_t s;
    ml_stop_rule_t rule;
    measure(o, st, op, size, 0, &s, NULL, overlap_reference_rule(o, &rule));
    double *comm = o->prog.rank == 0 ? st->comm_ns + i * (size_t)ranks : NULL;
    ml_summary_t sum;
    if (o->prog.rank == 0) {
        st->comm_rel[i][0] = st->comm_rel[i][1] = 1.0;
        if (ml_summarize(s.worst.values, s.worst.n, o->prog.stop_rule.ci_level, &sum) == 0 && sum.median > 0) {
            st->comm_rel[i][0] = sum.ci_lo / sum.median;
            st->comm_rel[i][1] = sum.ci_hi / sum.median;
        }
    }
    gather_medians(o, &s, comm, NULL);
    if (o->prog.rank == 0 && !ml_program_skip(&o->prog, key)) {
        double worst = 0;
        for (int r = 0; r < ranks; r++)
            worst = comm[r] > worst ? comm[r] : worst;
        ml_json_t j;
        ml_json_init(&j);
        begin_point(&j, op->ref_name, key, size, NULL, ranks);
        ml_json_double(&j, "t_comm_ns", worst);
        json_doubles(&j, "per_rank_ns", comm, ranks);
        end_point(o, &j, &s, &rule);
        ml_json_free(&j);
    }
    free_sample(&s);
    ml_program_progress(&o->prog, key);
}

/* Rank 0: per-rank ratios, and the rank with the largest one (the worst). */
static int worst_rank(const double *t, const double *comm, const double *comp, int ranks, double *ratios)
{
    int worst = 0;
    for (int r = 0; r < ranks; r++) {
        ratios[r] = ml_overlap_ratio(t[r], comm[r], comp[r]);
        if (isnan(ratios[worst]) || (!isnan(ratios[r]) && ratios[r] > ratios[worst]))
            worst = r;
    }
    return worst;
}

/* One point of a collective's map; on rank 0 returns the class of its worst rank's ratio (-1 when
 * not measured here), for its neighbours' decisions. */
static int map_point(overlap_t *o, nbc_state_t *st, const nbc_op_t *op, size_t i, size_t c, int neighbour_class)
{
    int ranks = o->prog.size;
    int64_t size = o->size_values[i], compute_ns = o->compute_values[c];
    char key[128];
    snprintf(key, sizeof key, "%s/size_bytes=%" PRId64 "/compute_ns=%" PRId64, op->name, size, compute_ns);
    if (ml_program_skip(&o->prog, key)) {
        ml_program_progress(&o->prog, key);
        return -1;
    }
    nbc_sample_t s;
    overlap_decision_t d;
    const overlap_decision_t *decision = NULL;
    if (o->prog.rank == 0) {
        double slowest = 0;
        for (int r = 0; r < ranks; r++)
            slowest = fmax(slowest, st->comm_ns[i * (size_t)ranks + (size_t)r]);
        decision = overlap_decision(o, slowest, st->comm_rel[i], neighbour_class, &d);
    }
    measure(o, st, op, size, compute_ns, &s, decision, NULL);
    if (o->prog.rank == 0)
        overlap_account(o, decision, s.worst.n);
    double *t = NULL, *comp = NULL, *ratios = NULL;
    if (o->prog.rank == 0 &&
        (!(t = malloc(sizeof *t * (size_t)ranks)) || !(comp = malloc(sizeof *comp * (size_t)ranks)) ||
         !(ratios = malloc(sizeof *ratios * (size_t)ranks))))
        MPI_Abort(MPI_COMM_WORLD, 2);
    gather_medians(o, &s, t, comp);
    int measured_class = -1;
    if (o->prog.rank == 0) {
        const double *comm = st->comm_ns + i * (size_t)ranks;
        int w = worst_rank(t, comm, comp, ranks, ratios);
        measured_class = overlap_class(ratios[w]);
        ml_json_t j;
        ml_json_init(&j);
        begin_point(&j, op->name, key, size, &compute_ns, ranks);
        ml_json_double(&j, "t_measured_ns", t[w]);
        ml_json_double(&j, "t_comm_ns", comm[w]);
        ml_json_double(&j, "t_comp_ns", comp[w]);
        ml_json_double(&j, "ratio", ratios[w]);
        ml_json_int(&j, "worst_rank", w);
        ml_json_begin_object(&j, "per_rank");
        json_doubles(&j, "t_measured_ns", t, ranks);
        json_doubles(&j, "t_comm_ns", comm, ranks);
        json_doubles(&j, "t_comp_ns", comp, ranks);
        json_doubles(&j, "ratio", ratios, ranks);
        ml_json_end_object(&j);
        end_point(o, &j, &s, &o->prog.stop_rule);
        ml_json_free(&j);
    }
    free(t);
    free(comp);
    free(ratios);
    free_sample(&s);
    ml_program_progress(&o->prog, key);
    return measured_class;
}

long nbc_points(const overlap_t *o)
{
    long n = 0;
    for (size_t k = 0; k < N_OPS; k++)
        if (overlap_selected(o, ops[k].name))
            n += (long)o->n_sizes * (1 + (long)o->n_computes);
    return n;
}

void nbc_run(overlap_t *o)
{
    if (nbc_points(o) == 0)
        return;
    nbc_state_t st = {0};
    ml_lead_init(&st.lead);
    if (o->prog.rank == 0 && (!(st.comm_ns = calloc(o->n_sizes * (size_t)o->prog.size, sizeof *st.comm_ns)) ||
                              !(st.comm_rel = calloc(o->n_sizes, sizeof *st.comm_rel))))
        MPI_Abort(MPI_COMM_WORLD, 2);
    /* Offsets once for all collectives: the run is minutes long at most, and the sanity family
     * measures how far clocks drift over such a run. */
    ml_offset_estimate(o->prog.sync, 2000, 100, &st.offset);
    for (size_t k = 0; k < N_OPS; k++) {
        if (!overlap_selected(o, ops[k].name))
            continue;
        /* references first: every point of the map needs T_comm of every rank */
        for (size_t i = 0; i < o->n_sizes; i++)
            reference(o, &st, &ops[k], i);
        size_t n = o->n_sizes, order[MAX_VALUES];
        overlap_sweep_order(n, order);
        int *classes = overlap_classes_new(o->n_computes, n); /* rank 0: per computation time and size */
        for (size_t j = 0; j < n; j++) {
            size_t i = order[j];
            for (size_t c = 0; c < o->n_computes; c++)
                classes[c * n + i] = map_point(o, &st, &ops[k], i, c, overlap_neighbour_class(classes + c * n, n, i));
        }
        free(classes);
    }
    free(st.comm_ns);
    free(st.comm_rel);
}
