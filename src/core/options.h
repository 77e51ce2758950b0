/* Command-line options of the benchmark programs, declared as a table.
 *
 * Each option is one row (name, kind, default, documentation, destination). Defaults go through
 * the same parser as user values, the usage text is generated from the table, and the values used
 * are recorded in the results' metadata. A bad value gives one line naming the option, the value
 * and what is allowed; the program then exits with status 2. */
#ifndef MPILENS_CORE_OPTIONS_H
#define MPILENS_CORE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"

typedef enum {
    ML_OPT_FLAG,       /* int*: 1 when given */
    ML_OPT_INT,        /* long*, within [min, max] */
    ML_OPT_SIZE,       /* uint64_t* bytes */
    ML_OPT_TIME,       /* int64_t* ns */
    ML_OPT_SIZE_RANGE, /* ml_size_range_t* */
    ML_OPT_TIME_RANGE, /* ml_time_range_t* */
    ML_OPT_CHOICE,     /* const char**: one of `choices` */
    ML_OPT_LIST,       /* ml_list_t*: comma-separated subset of `choices` ("all" = every choice) */
    ML_OPT_STRING,     /* const char** */
    ML_OPT_REPS,       /* ml_reps_t*: a positive count or "auto" */
    ML_OPT_FRACTION,   /* double*: in (0, 1), written 0.02 or 2% */
} ml_opt_kind_t;

typedef struct {
    uint64_t lo, hi;
} ml_size_range_t;
typedef struct {
    int64_t lo, hi;
} ml_time_range_t;
typedef struct {
    size_t count;
    int is_auto;
} ml_reps_t;

#define ML_LIST_MAX 32
typedef struct {
    size_t n;
    char items[ML_LIST_MAX][32];
} ml_list_t;

typedef struct {
    const char *name; /* long name, without the leading "--" */
    ml_opt_kind_t kind;
    const char *metavar; /* placeholder in the usage text; NULL for flags */
    const char *defval;  /* default, in user syntax; NULL for none */
    const char *choices; /* CHOICE and LIST: comma-separated allowed values */
    const char *doc;     /* one line */
    void *dest;
    long min, max;     /* INT only */
    const char *value; /* set by the parser: the text in effect (given or default) */
} ml_option_t;

/* Tables end with a row whose name is NULL. */
#define ML_OPTIONS_END {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL}

enum { ML_OPTIONS_OK = 0, ML_OPTIONS_HELP = 1, ML_OPTIONS_VERSION = 2, ML_OPTIONS_ERROR = -1 };

/* Applies defaults, then argv[1..argc-1]. Accepts "--name value" and "--name=value", plus --help,
 * --options-json and --version. On error writes one line (without the program name) into err.
 *
 * --options-json returns ML_OPTIONS_HELP, and the next ml_options_usage prints the table as JSON
 * instead of text (ml_options_print_json): every program already answers ML_OPTIONS_HELP with
 * ml_options_usage on one rank and exit status 0, so each one answers --options-json that way
 * with no code of its own. The mpilens command reads the choice lists from it. */
int ml_options_parse(ml_option_t *table, int argc, char **argv, char *err, size_t errlen);

/* The usage text, or the JSON of ml_options_print_json after a parse that met --options-json. */
void ml_options_usage(FILE *out, const char *program, const char *summary, const ml_option_t *table);

/* One line of JSON: {"program": program, "options": [row, ...]}, a row being {"name", "kind",
 * "metavar", "default", "help"} (null where the table has none), with "choices" (a list) for
 * CHOICE and LIST options and "min", "max" for INT ones. */
void ml_options_print_json(FILE *out, const char *program, const ml_option_t *table);

/* Writes {"name": value-text, ...} (flags as booleans) under `key` into j. */
void ml_options_json(const ml_option_t *table, ml_json_t *j, const char *key);

int ml_list_contains(const ml_list_t *list, const char *item);

/* The text of the last "--name VALUE" or "--name=VALUE" in argv[1..argc-1], NULL if none: for
 * the options a program needs before MPI_Init_thread, before its table parses them. */
const char *ml_options_scan(int argc, char **argv, const char *name);

/* Whether the comma-separated text names item. */
int ml_list_text_contains(const char *text, const char *item);

/* The row named `name`, or NULL. */
ml_option_t *ml_options_find(ml_option_t *table, const char *name);

/* Gives an option that was not set a default computed after parsing (one that depends on
 * another option, such as a preset), through the same parser; the text is recorded as its value.
 * Returns 0, or -1 if the row is missing or the text invalid. Options already set keep theirs.
 * The option keeps the pointer (the meta record and --resume read it later): text must live as
 * long as the table, a literal or static storage, never a local buffer. */
int ml_options_default_late(ml_option_t *table, const char *name, const char *text);

#endif
