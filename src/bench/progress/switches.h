/* Context switches of a rank's threads (seed 002, §V-B1a: a progress thread woken by every
 * completion can cost many), read from Linux's /proc/self/task/<tid>/status
 * (voluntary_ctxt_switches: the thread blocked or slept; nonvoluntary_ctxt_switches: it was
 * preempted). Three groups: the thread that calls (the rank's MPI and computation thread),
 * libmpilens-progress's thread (found by its name, MPILENS_PROGRESS_THREAD_NAME) and every other
 * thread of the process (the MPI library's own: its asynchronous progress, its transports). */
#ifndef MPILENS_PROGRESS_SWITCHES_H
#define MPILENS_PROGRESS_SWITCHES_H

#include <stdint.h>

typedef struct {
    int64_t voluntary, involuntary;
} ml_switch_count_t;

enum { ML_SWITCH_RANK, ML_SWITCH_PROGRESS, ML_SWITCH_OTHERS, ML_SWITCH_GROUPS };

typedef struct {
    ml_switch_count_t group[ML_SWITCH_GROUPS];
    int has_progress; /* a thread of libmpilens-progress was found */
} ml_switches_t;

/* Each thread's counts at one moment. Differences are taken thread by thread: a sum per group
 * would go down when a thread ends between two snapshots (its switches leave the sum). */
enum { ML_SWITCH_MAX_TASKS = 256 }; /* threads beyond it are not counted */
typedef struct {
    long tid;
    int group;
    ml_switch_count_t count;
} ml_task_switches_t;
typedef struct {
    int n;
    ml_task_switches_t task[ML_SWITCH_MAX_TASKS];
} ml_switch_snapshot_t;

/* The switches of the process's threads so far. Returns 0, or -1 when /proc cannot be read (not
 * Linux): the snapshot is then empty. */
int ml_switches_snapshot(ml_switch_snapshot_t *out);

/* The switches between two snapshots, by group: a thread's count minus its count in before (0
 * for a thread started since); a thread ended since counts nothing. has_progress: a thread of
 * libmpilens-progress is in after. */
ml_switches_t ml_switches_since(const ml_switch_snapshot_t *after, const ml_switch_snapshot_t *before);

/* The counts as 7 int64: voluntary and involuntary of each group, then has_progress (for
 * gathering ranks' counts in one message), and back. */
enum { ML_SWITCH_WORDS = 2 * ML_SWITCH_GROUPS + 1 };
void ml_switches_pack(const ml_switches_t *s, int64_t words[ML_SWITCH_WORDS]);
ml_switches_t ml_switches_unpack(const int64_t words[ML_SWITCH_WORDS]);

#endif
