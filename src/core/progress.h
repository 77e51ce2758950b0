/* Progress of a long run on stderr: points done, points total, time left. Printed by rank 0 only,
 * at most once a second; rewrites one line on a terminal, prints plain lines otherwise. When a
 * run is launched by the Python CLI, that side shows progress from the results file instead. */
#ifndef MPILENS_CORE_PROGRESS_H
#define MPILENS_CORE_PROGRESS_H

#include <stdint.h>

typedef struct {
    int enabled;
    int tty;
    long total, done, resumed;
    int64_t start_ns, last_print_ns;
} ml_progress_t;

/* already_done: points skipped because a resumed file holds them (they do not count for the
 * speed estimate). */
void ml_progress_start(ml_progress_t *p, int enabled, long total, long already_done);
/* One more point finished; `what` names it. */
void ml_progress_step(ml_progress_t *p, const char *what);
void ml_progress_end(ml_progress_t *p);

/* Estimated time left in ns, from the pace of the points measured in this run; -1 if unknown. */
int64_t ml_progress_eta_ns(long total, long done, long resumed, int64_t elapsed_ns);

#endif
