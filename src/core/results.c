#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meta.h"

struct ml_results {
    FILE *file;
    char *path;
    int failed;
};

/* ---- keyset (linear search: a run holds at most a few thousand points and looks each up once) */

int ml_keyset_add(ml_keyset_t *set, const char *key)
{
    if (set->n == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 64;
        char **grown = realloc(set->keys, cap * sizeof *grown);
        if (!grown)
            return -1;
        set->keys = grown;
        set->cap = cap;
    }
    if (!(set->keys[set->n] = strdup(key)))
        return -1;
    set->n++;
    return 0;
}

int ml_keyset_has(const ml_keyset_t *set, const char *key)
{
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(set->keys[i], key) == 0)
            return 1;
    return 0;
}

void ml_keyset_free(ml_keyset_t *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->keys[i]);
    free(set->keys);
    memset(set, 0, sizeof *set);
}

char *ml_keyset_to_blob(const ml_keyset_t *set, size_t *len)
{
    size_t total = 0;
    for (size_t i = 0; i < set->n; i++)
        total += strlen(set->keys[i]) + 1;
    char *blob = malloc(total + 1);
    if (!blob)
        return NULL;
    char *p = blob;
    for (size_t i = 0; i < set->n; i++)
        p += sprintf(p, "%s\n", set->keys[i]);
    *p = '\0';
    *len = total;
    return blob;
}

int ml_keyset_from_blob(ml_keyset_t *set, const char *blob, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        if (blob[i] != '\n')
            continue;
        char *key = strndup(blob + start, i - start);
        int rc = key ? ml_keyset_add(set, key) : -1;
        free(key);
        if (rc != 0)
            return -1;
        start = i + 1;
    }
    return 0;
}

/* ---- file ------------------------------------------------------------------------------- */

/* Opens path for appending records, under an exclusive lock (flock) held until ml_results_close:
 * a second run writing the same file, such as a --resume started while the first still runs, is
 * refused instead of interleaving its lines with the first's. NULL with err set on failure. */
static ml_results_t *open_locked(const char *path, char *err, size_t errlen)
{
    ml_results_t *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            snprintf(err, errlen,
                     "output \"%s\" is being written by another run (it holds the file's lock); let it end, "
                     "or choose another --output",
                     path);
        else
            snprintf(err, errlen, "cannot lock output \"%s\": %s", path, strerror(errno));
    } else if (fd < 0 || !(r->file = fdopen(fd, "a"))) {
        snprintf(err, errlen, "cannot write output \"%s\": %s", path, strerror(errno));
    }
    if (!r->file) {
        if (fd >= 0)
            close(fd);
        free(r->path);
        free(r);
        return NULL;
    }
    return r;
}

/* Writes the first record of a freshly opened file; on failure closes it and sets err. */
static int check_first_write(ml_results_t *r, int rc, char *err, size_t errlen)
{
    if (rc == 0)
        return 0;
    snprintf(err, errlen, "cannot write output \"%s\": %s", r->path, strerror(errno));
    ml_results_close(r);
    return -1;
}

int ml_results_append(ml_results_t *r, const char *record_json)
{
    if (fputs(record_json, r->file) < 0 || fputc('\n', r->file) == EOF || fflush(r->file) != 0) {
        r->failed = 1;
        return -1;
    }
    return 0;
}

static int write_note(ml_results_t *r, const char *level, const char *text, const char *key, int argc_or_minus,
                      char **argv)
{
    ml_json_t j;
    char date[32];
    ml_json_init(&j);
    ml_utc_now(date, sizeof date);
    ml_json_begin_object(&j, NULL);
    ml_json_string(&j, "type", "note");
    ml_json_string(&j, "level", level);
    ml_json_string(&j, "text", text);
    if (key)
        ml_json_string(&j, "key", key);
    ml_json_string(&j, "date", date);
    if (argc_or_minus >= 0) {
        ml_json_begin_array(&j, "command");
        for (int i = 0; i < argc_or_minus; i++)
            ml_json_string(&j, NULL, argv[i]);
        ml_json_end_array(&j);
    }
    ml_json_end_object(&j);
    int rc = j.failed ? -1 : ml_results_append(r, j.buf);
    ml_json_free(&j);
    return rc;
}

int ml_results_note(ml_results_t *r, const char *level, const char *text, const char *key)
{
    return write_note(r, level, text, key, -1, NULL);
}

int ml_results_close(ml_results_t *r)
{
    if (!r)
        return 0;
    int failed = r->failed;
    if (fclose(r->file) != 0)
        failed = 1;
    free(r->path);
    free(r);
    return failed ? -1 : 0;
}

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* A locked file of no records gets the meta record: the start of a new results file. */
static int start_file(ml_results_t *r, const char *meta_json, ml_results_t **out, char *err, size_t errlen)
{
    if (check_first_write(r, ml_results_append(r, meta_json), err, errlen) != 0)
        return -1;
    *out = r;
    return 0;
}

int ml_results_create(const char *path, const char *meta_json, ml_results_t **out, char *err, size_t errlen)
{
    ml_results_t *r = open_locked(path, err, errlen);
    if (!r)
        return -1;
    if (file_size(path) > 0) {
        snprintf(err, errlen,
                 "output \"%s\" already holds results; use --resume to complete it, or choose another --output", path);
        ml_results_close(r);
        return -1;
    }
    return start_file(r, meta_json, out, err, errlen);
}

/* Reads the whole file; sets *complete_len to the length up to the last '\n'. */
static char *read_all(const char *path, size_t *len, size_t *complete_len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 < cap)
            continue;
        char *grown = realloc(buf, cap *= 2);
        if (!grown)
            free(buf);
        buf = grown;
    }
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = '\0';
    *len = n;
    char *last_newline = memrchr(buf, '\n', n);
    *complete_len = last_newline ? (size_t)(last_newline - buf) + 1 : 0;
    return buf;
}

static int same_value(const char *a_json, const char *b_json, const char *path)
{
    char a[1024], b[1024];
    int ra = ml_json_get_string(a_json, path, a, sizeof a), rb = ml_json_get_string(b_json, path, b, sizeof b);
    if (ra != 0 || rb != 0) {
        int64_t x, y;
        return ml_json_get_int(a_json, path, &x) == 0 && ml_json_get_int(b_json, path, &y) == 0 && x == y;
    }
    return strcmp(a, b) == 0;
}

/* Says which field differs between the file's meta record and this run's, if any. */
static int check_compatible(const char *path, const char *old_meta, const char *new_meta,
                            const char *const *compared_options, char *err, size_t errlen)
{
    static const struct {
        const char *field, *what;
    } fields[] = {
        {"type", "it is not an mpilens results file"},
        {"schema", "it uses another results schema"},
        {"program", "it was written by another program"},
        {"mpi.library", "it was measured with another MPI library"},
        {"ranks", "it was measured with another number of ranks"},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (!same_value(old_meta, new_meta, fields[i].field)) {
            snprintf(err, errlen, "cannot resume \"%s\": %s", path, fields[i].what);
            return -1;
        }
    }
    for (const char *const *opt = compared_options; opt && *opt; opt++) {
        char field[128], was[256];
        snprintf(field, sizeof field, "options.%s", *opt);
        if (!same_value(old_meta, new_meta, field)) {
            if (ml_json_get_string(old_meta, field, was, sizeof was) != 0)
                snprintf(was, sizeof was, "another value");
            snprintf(err, errlen, "cannot resume \"%s\": it was measured with --%s %s; give the same value", path, *opt,
                     was);
            return -1;
        }
    }
    return 0;
}

/* Collects the keys of the point records in buf[0..len). */
static int collect_keys(char *buf, size_t len, ml_keyset_t *done)
{
    char key[1024], type[16];
    char *line = buf, *end = buf + len;
    while (line < end) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        *nl = '\0';
        if (ml_json_get_string(line, "type", type, sizeof type) == 0 && strcmp(type, "point") == 0 &&
            ml_json_get_string(line, "key", key, sizeof key) == 0 && ml_keyset_add(done, key) != 0)
            return -1;
        *nl = '\n';
        line = nl + 1;
    }
    return 0;
}

int ml_results_resume(const char *path, const char *meta_json, const char *const *compared_options, int argc,
                      char **argv, ml_results_t **out, ml_keyset_t *done, char *err, size_t errlen)
{
    ml_results_t *r = open_locked(path, err, errlen); /* before reading: no other run may write meanwhile */
    if (!r)
        return -1;
    if (file_size(path) <= 0)
        return start_file(r, meta_json, out, err, errlen);

    size_t len, complete;
    char *buf = read_all(path, &len, &complete);
    if (!buf) {
        snprintf(err, errlen, "cannot read \"%s\" to resume it: %s", path, strerror(errno));
        ml_results_close(r);
        return -1;
    }
    char *first_nl = memchr(buf, '\n', complete);
    if (!first_nl) {
        snprintf(err, errlen, "cannot resume \"%s\": it has no complete meta record", path);
        free(buf);
        ml_results_close(r);
        return -1;
    }
    *first_nl = '\0';
    int rc = check_compatible(path, buf, meta_json, compared_options, err, errlen);
    *first_nl = '\n';
    if (rc == 0 && collect_keys(first_nl + 1, complete - (size_t)(first_nl + 1 - buf), done) != 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    free(buf);
    if (rc == 0 && complete < len && ftruncate(fileno(r->file), (off_t)complete) != 0) {
        snprintf(err, errlen, "cannot cut the incomplete last record of \"%s\": %s", path, strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        ml_results_close(r);
        return -1;
    }
    if (check_first_write(r, write_note(r, "info", "resumed", NULL, argc, argv), err, errlen) != 0)
        return -1;
    *out = r;
    return 0;
}

void ml_record_point_begin(ml_json_t *j, const char *family, const char *bench, const char *key)
{
    ml_json_begin_object(j, NULL);
    ml_json_string(j, "type", "point");
    ml_json_string(j, "family", family);
    ml_json_string(j, "bench", bench);
    ml_json_string(j, "key", key);
}

void ml_json_sample(ml_json_t *j, const char *key, const ml_sample_t *sample, const ml_stop_rule_t *rule,
                    ml_stop_t reason)
{
    ml_summary_t s;
    ml_json_begin_object(j, key);
    ml_json_string(j, "unit", "ns");
    ml_json_int(j, "n", (int64_t)sample->n);
    if (ml_summarize(sample->values, sample->n, rule->ci_level, &s) == 0) {
        ml_json_double(j, "min", s.min);
        ml_json_double(j, "max", s.max);
        ml_json_double(j, "mean", s.mean);
        ml_json_double(j, "median", s.median);
        ml_json_double(j, "q1", s.q1);
        ml_json_double(j, "q3", s.q3);
        ml_json_double(j, "d1", s.d1);
        ml_json_double(j, "d9", s.d9);
        ml_json_double(j, "ci_level", s.ci_level);
        ml_json_double(j, "ci_lo", s.ci_lo);
        ml_json_double(j, "ci_hi", s.ci_hi);
        ml_json_double(j, "ci_coverage", s.ci_coverage);
    }
    ml_json_string(j, "stop", ml_stop_name(reason));
    if (rule->fixed_reps > 0)
        ml_json_null(j, "precision");
    else
        ml_json_double(j, "precision", rule->precision);
    ml_json_begin_array(j, "values");
    for (size_t i = 0; i < sample->n; i++)
        ml_json_double(j, NULL, sample->values[i]);
    ml_json_end_array(j);
    ml_json_end_object(j);
}
