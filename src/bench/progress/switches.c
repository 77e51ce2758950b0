#include "switches.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mpilens/progress.h"

/* A thread's two counts from its status file; 0 when the file cannot be read (it ended). */
static int read_task(const char *tid, ml_switch_count_t *out)
{
    char path[300], line[128]; /* a task directory name is at most 255 bytes */
    snprintf(path, sizeof path, "/proc/self/task/%s/status", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long long value;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "voluntary_ctxt_switches: %lld", &value) == 1)
            out->voluntary = value;
        else if (sscanf(line, "nonvoluntary_ctxt_switches: %lld", &value) == 1)
            out->involuntary = value;
    }
    fclose(f);
    return 0;
}

static int is_progress_thread(const char *tid)
{
    char path[300], name[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int found = fgets(name, sizeof name, f) != NULL;
    fclose(f);
    name[strcspn(name, "\n")] = '\0';
    return found && strcmp(name, MPILENS_PROGRESS_THREAD_NAME) == 0;
}

int ml_switches_snapshot(ml_switch_snapshot_t *out)
{
    out->n = 0;
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks)
        return -1;
    long self = (long)syscall(SYS_gettid);
    struct dirent *e;
    while ((e = readdir(tasks)) != NULL && out->n < ML_SWITCH_MAX_TASKS) {
        ml_task_switches_t *t = &out->task[out->n];
        if (e->d_name[0] == '.' || read_task(e->d_name, &t->count) != 0)
            continue;
        t->tid = strtol(e->d_name, NULL, 10);
        t->group = t->tid == self                  ? ML_SWITCH_RANK
                   : is_progress_thread(e->d_name) ? ML_SWITCH_PROGRESS
                                                   : ML_SWITCH_OTHERS;
        out->n++;
    }
    closedir(tasks);
    return 0;
}

static const ml_task_switches_t *find_task(const ml_switch_snapshot_t *s, long tid)
{
    for (int i = 0; i < s->n; i++)
        if (s->task[i].tid == tid)
            return &s->task[i];
    return NULL;
}

ml_switches_t ml_switches_since(const ml_switch_snapshot_t *after, const ml_switch_snapshot_t *before)
{
    ml_switches_t d;
    memset(&d, 0, sizeof d);
    for (int i = 0; i < after->n; i++) {
        const ml_task_switches_t *now = &after->task[i], *then = find_task(before, now->tid);
        ml_switch_count_t *g = &d.group[now->group];
        g->voluntary += now->count.voluntary - (then ? then->count.voluntary : 0);
        g->involuntary += now->count.involuntary - (then ? then->count.involuntary : 0);
        d.has_progress |= now->group == ML_SWITCH_PROGRESS;
    }
    return d;
}

void ml_switches_pack(const ml_switches_t *s, int64_t words[ML_SWITCH_WORDS])
{
    for (int g = 0; g < ML_SWITCH_GROUPS; g++) {
        words[2 * g] = s->group[g].voluntary;
        words[2 * g + 1] = s->group[g].involuntary;
    }
    words[2 * ML_SWITCH_GROUPS] = s->has_progress;
}

ml_switches_t ml_switches_unpack(const int64_t words[ML_SWITCH_WORDS])
{
    ml_switches_t s;
    for (int g = 0; g < ML_SWITCH_GROUPS; g++)
        s.group[g] = (ml_switch_count_t){words[2 * g], words[2 * g + 1]};
    s.has_progress = words[2 * ML_SWITCH_GROUPS] != 0;
    return s;
}
