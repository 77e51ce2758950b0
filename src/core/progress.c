#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "clock.h"

#define ML_PROGRESS_PERIOD_NS 1000000000
#define ML_PROGRESS_PLAIN_PERIOD_NS 10000000000LL

int64_t ml_progress_eta_ns(long total, long done, long resumed, int64_t elapsed_ns)
{
    long measured = done - resumed;
    if (total <= done)
        return 0;
    if (measured <= 0)
        return -1;
    return (int64_t)((double)elapsed_ns / (double)measured * (double)(total - done));
}

static void format_duration(char *buf, size_t len, int64_t ns)
{
    if (ns < 0) {
        snprintf(buf, len, "?");
        return;
    }
    long s = (long)(ns / 1000000000);
    snprintf(buf, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

void ml_progress_start(ml_progress_t *p, int enabled, long total, long already_done)
{
    p->enabled = enabled;
    p->tty = isatty(STDERR_FILENO);
    p->total = total;
    p->done = already_done;
    p->resumed = already_done;
    p->start_ns = ml_clock_ns();
    p->last_print_ns = p->start_ns;
}

static void print(ml_progress_t *p, const char *what)
{
    int64_t now = ml_clock_ns();
    char elapsed[32], eta[32];
    format_duration(elapsed, sizeof elapsed, now - p->start_ns);
    format_duration(eta, sizeof eta, ml_progress_eta_ns(p->total, p->done, p->resumed, now - p->start_ns));
    int pct = p->total > 0 ? (int)(100 * p->done / p->total) : 100;
    fprintf(stderr, "%s[%ld/%ld] %3d%%  elapsed %s  left %s  %-40.40s%s", p->tty ? "\r" : "", p->done, p->total, pct,
            elapsed, eta, what ? what : "", p->tty ? "" : "\n");
    fflush(stderr);
    p->last_print_ns = now;
}

void ml_progress_step(ml_progress_t *p, const char *what)
{
    p->done++;
    if (!p->enabled)
        return;
    int64_t period = p->tty ? ML_PROGRESS_PERIOD_NS : ML_PROGRESS_PLAIN_PERIOD_NS;
    if (ml_clock_ns() - p->last_print_ns >= period || p->done == p->total)
        print(p, what);
}

void ml_progress_end(ml_progress_t *p)
{
    if (p->enabled && p->tty)
        fputc('\n', stderr);
}
