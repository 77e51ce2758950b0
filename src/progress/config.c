/* The layer's configuration: MPILENS_PROGRESS or mpilens_progress_configure, MODE[,cpu=N|spare],
 * and the tool API's queries. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer.h"
#include "layer_say.h"

#define MODES "off, poll, yield, sleep:US, rt[:US], event[:US]"
/* rt polls after each pause: SCHED_FIFO without pauses would take the core from the computation */
#define RT_DEFAULT_US 100
/* event wakes on the library's descriptors, and at the latest after this (what shared memory
 * messages, which have none, wait for) */
#define EVENT_DEFAULT_US 1000
/* a pause beyond a second is not progress any more */
#define MAX_INTERVAL_US 1000000L

static const char *const mode_names[] = {"off", "poll", "yield", "sleep", "rt", "event"};

static char configured[128];
static int has_configured, frozen;

const char *ml_progress_mode_name(ml_progress_mode_t mode) { return mode_names[mode]; }

void ml_progress_freeze(void) { frozen = 1; }

long ml_progress_event_fallback_us(long interval_us) { return interval_us > 0 ? interval_us : EVENT_DEFAULT_US; }

void ml_progress_say(int once, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ml_layer_vsay("libmpilens-progress", once, fmt, ap);
    va_end(ap);
}

/* A whole number in [lo, hi] from the start of `text` to `end` (exclusive). */
static int whole_number(const char *text, const char *end, long lo, long hi, long *out)
{
    if (text == end || !isdigit((unsigned char)*text))
        return -1;
    errno = 0;
    char *stop;
    long v = strtol(text, &stop, 10);
    if (errno || stop != end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_mode(const char *text, const char *end, ml_progress_spec_t *spec, char *why, size_t why_size)
{
    size_t n = (size_t)(end - text);
    const char *colon = memchr(text, ':', n);
    size_t name = colon ? (size_t)(colon - text) : n;
    int m = -1;
    for (int k = 0; k < (int)(sizeof mode_names / sizeof mode_names[0]); k++)
        if (strlen(mode_names[k]) == name && strncmp(text, mode_names[k], name) == 0)
            m = k;
    if (m < 0) {
        snprintf(why, why_size, "unknown mode \"%.*s\" (modes: " MODES ")", (int)n, text);
        return -1;
    }
    spec->mode = (ml_progress_mode_t)m;
    spec->interval_us = spec->mode == MODE_RT ? RT_DEFAULT_US : spec->mode == MODE_EVENT ? EVENT_DEFAULT_US : 0;
    int timed = spec->mode == MODE_SLEEP || spec->mode == MODE_RT || spec->mode == MODE_EVENT;
    if (spec->mode == MODE_SLEEP && !colon) {
        snprintf(why, why_size, "sleep needs its pause in microseconds, as in sleep:50");
        return -1;
    }
    /* event:0 waits for descriptors only, with no timer */
    long least = spec->mode == MODE_EVENT ? 0 : 1;
    if (colon && (!timed || whole_number(colon + 1, end, least, MAX_INTERVAL_US, &spec->interval_us) != 0)) {
        snprintf(why, why_size, "\"%.*s\": %s", (int)n, text,
                 !timed                     ? "only sleep, rt and event take a pause"
                 : spec->mode == MODE_EVENT ? "the longest wait must be a whole number of microseconds, 0 to 1000000"
                                            : "the pause must be a whole number of microseconds, 1 to 1000000");
        return -1;
    }
    return 0;
}

static int parse_placement(const char *text, ml_progress_spec_t *spec, char *why, size_t why_size)
{
    if (strcmp(text, "cpu=spare") == 0) {
        spec->cpu = CPU_SPARE;
        return 0;
    }
    long cpu;
    if (strncmp(text, "cpu=", 4) == 0 && whole_number(text + 4, text + strlen(text), 0, 1 << 20, &cpu) == 0) {
        spec->cpu = (int)cpu;
        return 0;
    }
    snprintf(why, why_size, "\"%s\": the placement is cpu=N (a processing unit's number) or cpu=spare", text);
    return -1;
}

int ml_progress_parse(const char *text, ml_progress_spec_t *spec, char *why, size_t why_size)
{
    *spec = (ml_progress_spec_t){MODE_OFF, 0, CPU_ANY};
    const char *comma = strchr(text, ',');
    const char *end = comma ? comma : text + strlen(text);
    if (parse_mode(text, end, spec, why, why_size) != 0)
        return -1;
    return comma ? parse_placement(comma + 1, spec, why, why_size) : 0;
}

ml_progress_spec_t ml_progress_wanted(char *why, size_t why_size)
{
    ml_progress_spec_t spec = {MODE_POLL, 0, CPU_ANY}; /* preloaded without a setting: poll */
    const char *text = has_configured ? configured : getenv("MPILENS_PROGRESS");
    why[0] = '\0';
    if (!text || !*text)
        return spec;
    char reason[200];
    if (ml_progress_parse(text, &spec, reason, sizeof reason) != 0) {
        snprintf(why, why_size, "%s %s: no progress thread",
                 has_configured ? "mpilens_progress_configure:" : "MPILENS_PROGRESS:", reason);
        spec = (ml_progress_spec_t){MODE_OFF, 0, CPU_ANY};
    }
    return spec;
}

/* ---- the tool API ---------------------------------------------------------------------------------- */

mpilens_progress_status_t mpilens_progress_configure(const char *spec)
{
    if (!spec)
        return MPILENS_PROGRESS_ERR_ARG;
    if (frozen)
        return MPILENS_PROGRESS_ERR_STARTED;
    ml_progress_spec_t parsed;
    char why[200];
    if (strlen(spec) >= sizeof configured || ml_progress_parse(spec, &parsed, why, sizeof why) != 0)
        return MPILENS_PROGRESS_ERR_SPEC;
    strcpy(configured, spec);
    has_configured = 1;
    return MPILENS_PROGRESS_OK;
}

mpilens_progress_status_t mpilens_progress_info(mpilens_progress_info_t *info)
{
    if (!info)
        return MPILENS_PROGRESS_ERR_ARG;
    ml_progress_state(info);
    return MPILENS_PROGRESS_OK;
}

const char *mpilens_progress_status_string(mpilens_progress_status_t status)
{
    switch (status) {
    case MPILENS_PROGRESS_OK: return "success";
    case MPILENS_PROGRESS_ERR_SPEC: return "not a progress setting: MODE[,cpu=N|cpu=spare] with MODE one of " MODES;
    case MPILENS_PROGRESS_ERR_STARTED: return "MPI_Init already ran: configure the progress thread before it";
    case MPILENS_PROGRESS_ERR_ARG: return "a null pointer";
    }
    return "unknown status";
}
