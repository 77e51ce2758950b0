/* mpilens-progress's context switch counts (src/bench/progress/switches.c) against known truths:
 * a thread that sleeps N times blocks N times, a voluntary switch each. Three threads sleep 20
 * (the caller), 50 (one named as libmpilens-progress names its thread) and 30 times (an unnamed
 * one, as the MPI library's would be); each must land in its own group. A sleep may add a
 * switch or two (a wake-up that finds the core taken), never fewer. */
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

int main(void)
{
    ml_switches_t before, after;
    CHECK(ml_switches_read(&before) == 0);
    CHECK(!before.has_progress);
    pthread_barrier_init(&both_read, NULL, 3);
    pthread_t progress, other;
    /* started before the first read's counts are taken as zero: a new thread starts at 0 */
    pthread_create(&progress, NULL, sleeper, MPILENS_PROGRESS_THREAD_NAME);
    pthread_create(&other, NULL, sleeper, NULL);
    sleep_times(RANK_SLEEPS);
    /* wait for both threads' sleeps without blocking: a yield that switches is involuntary */
    while (__atomic_load_n(&slept, __ATOMIC_ACQUIRE) < 2)
        sched_yield();
    CHECK(ml_switches_read(&after) == 0);
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
