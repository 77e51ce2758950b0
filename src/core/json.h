/* A small JSON writer (results records are built with it) and a reader that extracts one value
 * by path from a JSON text (what --resume needs from the records mpilens wrote earlier). */
#ifndef MPILENS_CORE_JSON_H
#define MPILENS_CORE_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *buf;
    size_t len, cap;
    int failed; /* memory ran out: the text is incomplete and must not be used */
} ml_json_t;

void ml_json_init(ml_json_t *j);
void ml_json_free(ml_json_t *j);
void ml_json_clear(ml_json_t *j);

/* Every writer takes the member name `key` when inside an object, NULL inside an array or at the
 * top level. Commas are placed automatically. */
void ml_json_begin_object(ml_json_t *j, const char *key);
void ml_json_end_object(ml_json_t *j);
void ml_json_begin_array(ml_json_t *j, const char *key);
void ml_json_end_array(ml_json_t *j);
void ml_json_string(ml_json_t *j, const char *key, const char *value); /* NULL value -> null */
void ml_json_int(ml_json_t *j, const char *key, int64_t value);
void ml_json_double(ml_json_t *j, const char *key, double value); /* non-finite -> null */
void ml_json_bool(ml_json_t *j, const char *key, int value);
void ml_json_null(ml_json_t *j, const char *key);
/* Inserts already-valid JSON text as a value. */
void ml_json_raw(ml_json_t *j, const char *key, const char *json);

/* Finds the value at a dotted path of object members ("mpi.library") in a JSON text. Returns 0
 * and the span of the raw value text, or -1 if absent or the text is not well-formed there. */
int ml_json_find(const char *json, const char *path, const char **value, size_t *len);
/* The value at `path` as a string (unescaped into out, truncated to outlen; \uXXXX escapes are
 * kept as written, mpilens only writes them for control characters) or as an integer. */
int ml_json_get_string(const char *json, const char *path, char *out, size_t outlen);
int ml_json_get_int(const char *json, const char *path, int64_t *out);

#endif
