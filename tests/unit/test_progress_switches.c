/* mpilens-progress's context switch counts (src/bench/progress/switches.c) against known truths:
 * a thread that sleeps N times blocks N times, a voluntary switch each. Three threads sleep 20
 * (the caller), 50 (one named as libmpilens-progress names its thread) and 30 times (an unnamed
 * one, as the MPI library's would be); each must land in its own group. A sleep may add a
 * switch or two (a wake-up that finds the core taken), never fewer. A thread that sleeps and
 * ends between two snapshots takes its switches with it: no group may then count fewer than 0
 * (a sum per group went down by that thread's count). */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "check.h"
#include "mpilens/progress.h"
#include "switches.h"

enum { RANK_SLEEPS = 20, PROGRESS_SLEEPS = 50, OTHER_SLEEPS = 30 };

static void sleep_times(int n)
{
    for (int i = 0; i < n; i++) {
        struct timespec t = {0, 200000}; /* 0.2 ms */
        nanosleep(&t, NULL);
    }
}

static pthread_barrier_t both_read; /* the threads live until the caller has read the counts */
static int slept;                   /* threads done sleeping */

static void *sleeper(void *arg)
{
    const char *name = arg;
    if (name)
        pthread_setname_np(pthread_self(), name);
    sleep_times(name ? PROGRESS_SLEEPS : OTHER_SLEEPS);
    __atomic_add_fetch(&slept, 1, __ATOMIC_RELEASE);
    pthread_barrier_wait(&both_read);
    return NULL;
}

static void check_within(const char *group, int64_t got, int at_least)
{
    if (got < at_least || got > 2 * at_least + 10) {
        fprintf(stderr, "%s: %lld voluntary switches for %d sleeps\n", group, (long long)got, at_least);
        CHECK(0);
    }
}

static pthread_barrier_t alive, may_end; /* the ending thread: slept, then ends when told */

static void *sleep_and_end(void *arg)
{
    (void)arg;
    sleep_times(OTHER_SLEEPS);
    pthread_barrier_wait(&alive);
    pthread_barrier_wait(&may_end);
    return NULL;
}

/* A thread that has slept is in the first snapshot and gone from the second: the groups other
 * than the caller's count 0 between them (nothing else ran), not minus its count. */
static void check_ended_thread(void)
{
    pthread_barrier_init(&alive, NULL, 2);
    pthread_barrier_init(&may_end, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, sleep_and_end, NULL);
    pthread_barrier_wait(&alive);
    ml_switch_snapshot_t before, after;
    CHECK(ml_switches_snapshot(&before) == 0);
    CHECK(before.n == 2);
    pthread_barrier_wait(&may_end);
    pthread_join(t, NULL);
    CHECK(ml_switches_snapshot(&after) == 0);
    CHECK(after.n == 1);
    ml_switches_t d = ml_switches_since(&after, &before);
    CHECK(d.group[ML_SWITCH_OTHERS].voluntary == 0 && d.group[ML_SWITCH_OTHERS].involuntary == 0);
    CHECK(d.group[ML_SWITCH_PROGRESS].voluntary == 0 && !d.has_progress);
    CHECK(d.group[ML_SWITCH_RANK].voluntary >= 0 && d.group[ML_SWITCH_RANK].involuntary >= 0);
    pthread_barrier_destroy(&alive);
    pthread_barrier_destroy(&may_end);
}

int main(void)
{
    check_ended_thread();
    ml_switch_snapshot_t before, after;
    CHECK(ml_switches_snapshot(&before) == 0);
    pthread_barrier_init(&both_read, NULL, 3);
    pthread_t progress, other;
    /* started before the first read's counts are taken as zero: a new thread starts at 0 */
    pthread_create(&progress, NULL, sleeper, MPILENS_PROGRESS_THREAD_NAME);
    pthread_create(&other, NULL, sleeper, NULL);
    sleep_times(RANK_SLEEPS);
    /* wait for both threads' sleeps without blocking: a yield that switches is involuntary */
    while (__atomic_load_n(&slept, __ATOMIC_ACQUIRE) < 2)
        sched_yield();
    CHECK(ml_switches_snapshot(&after) == 0);
    ml_switches_t d = ml_switches_since(&after, &before);
    CHECK(d.has_progress);
    check_within("rank", d.group[ML_SWITCH_RANK].voluntary, RANK_SLEEPS);
    check_within("progress thread", d.group[ML_SWITCH_PROGRESS].voluntary, PROGRESS_SLEEPS);
    check_within("other threads", d.group[ML_SWITCH_OTHERS].voluntary, OTHER_SLEEPS);
    pthread_barrier_wait(&both_read);
    pthread_join(progress, NULL);
    pthread_join(other, NULL);

    /* packing for a gather keeps every count */
    int64_t words[ML_SWITCH_WORDS];
    ml_switches_pack(&d, words);
    ml_switches_t back = ml_switches_unpack(words);
    for (int g = 0; g < ML_SWITCH_GROUPS; g++)
        CHECK(back.group[g].voluntary == d.group[g].voluntary && back.group[g].involuntary == d.group[g].involuntary);
    CHECK(back.has_progress == d.has_progress);
    CHECK_DONE();
}
