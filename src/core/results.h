/* The results file: JSON Lines, meta record first, each record flushed as soon as it is written
 * (docs/results-schema.md). Only the rank that writes (rank 0) uses this module. */
#ifndef MPILENS_CORE_RESULTS_H
#define MPILENS_CORE_RESULTS_H

#include <stddef.h>

#include "json.h"
#include "stats.h"

/* Keys of the points already in a file, so that --resume skips them. */
typedef struct {
    char **keys;
    size_t n, cap;
} ml_keyset_t;

int ml_keyset_add(ml_keyset_t *set, const char *key);
int ml_keyset_has(const ml_keyset_t *set, const char *key);
void ml_keyset_free(ml_keyset_t *set);
/* Keys joined by '\n' (to send them to the other ranks) and back. The blob is malloc'ed. */
char *ml_keyset_to_blob(const ml_keyset_t *set, size_t *len);
int ml_keyset_from_blob(ml_keyset_t *set, const char *blob, size_t len);

typedef struct ml_results ml_results_t;

/* Starts a new file with the meta record. Refuses a file that already holds records: they would
 * be lost. Returns 0, or -1 with one line in err. */
int ml_results_create(const char *path, const char *meta_json, ml_results_t **out, char *err, size_t errlen);

/* Continues an existing file (or starts it, if missing or empty). The file's meta record must
 * come from the same program, MPI library and number of ranks as meta_json, and every option
 * listed in `compared_options` (NULL-terminated) must have the same value. An incomplete last
 * line (the writer was killed in mid-record) is cut off. Keys of the points present are loaded
 * into `done`, and a note records the resumption with the command line argv. Returns 0, or -1 with one line in err. */
int ml_results_resume(const char *path, const char *meta_json, const char *const *compared_options, int argc,
                      char **argv, ml_results_t **out, ml_keyset_t *done, char *err, size_t errlen);

/* Appends one record (a JSON object without newline) and flushes it to the file. */
int ml_results_append(ml_results_t *r, const char *record_json);
/* Appends a note record (level: info, warning or skip; key may be NULL). */
int ml_results_note(ml_results_t *r, const char *level, const char *text, const char *key);
/* Closes the file; returns 0, or -1 if the last writes failed. */
int ml_results_close(ml_results_t *r);

/* Opens a point record: {"type":"point","family":...,"bench":...,"key":... ; the caller adds
 * "params" and "stats" and closes the object. */
void ml_record_point_begin(ml_json_t *j, const char *family, const char *bench, const char *key);

/* Writes the sample summary object of docs/results-schema.md under `key`. */
void ml_json_sample(ml_json_t *j, const char *key, const ml_sample_t *sample, const ml_stop_rule_t *rule,
                    ml_stop_t reason);

#endif
