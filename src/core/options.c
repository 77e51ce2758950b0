#include "options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

static int in_choices(const char *choices, const char *value, size_t len)
{
    const char *p = choices;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == len && strncmp(p, value, len) == 0)
            return 1;
        p += n + (comma ? 1 : 0);
    }
    return 0;
}

static int list_add(ml_list_t *list, const char *item, size_t len)
{
    if (list->n >= ML_LIST_MAX || len >= sizeof list->items[0])
        return -1;
    memcpy(list->items[list->n], item, len);
    list->items[list->n][len] = '\0';
    list->n++;
    return 0;
}

const char *ml_options_scan(int argc, char **argv, const char *name)
{
    const char *value = NULL;
    size_t len = strlen(name);
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--", 2) != 0 || strncmp(argv[i] + 2, name, len) != 0)
            continue;
        const char *rest = argv[i] + 2 + len;
        if (*rest == '=')
            value = rest + 1;
        else if (*rest == '\0' && i + 1 < argc)
            value = argv[i + 1];
    }
    return value;
}

int ml_list_text_contains(const char *text, const char *item)
{
    size_t len = strlen(item);
    for (const char *p = text; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, item, len) == 0 && (p[len] == ',' || p[len] == '\0'))
            return 1;
    return 0;
}

static int parse_list(const ml_option_t *opt, const char *text, ml_list_t *out)
{
    ml_list_t list = {0};
    const char *source = strcmp(text, "all") == 0 ? opt->choices : text;
    const char *p = source;
    if (!*p)
        return -1;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 0 || !in_choices(opt->choices, p, n) || list_add(&list, p, n) != 0)
            return -1;
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = list;
    return 0;
}

static int parse_int(const ml_option_t *opt, const char *text, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < opt->min || v > opt->max)
        return -1;
    *out = v;
    return 0;
}

static int parse_reps(const char *text, ml_reps_t *out)
{
    if (strcmp(text, "auto") == 0) {
        out->is_auto = 1;
        out->count = 0;
        return 0;
    }
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < 1 || v > 100000000)
        return -1;
    out->is_auto = 0;
    out->count = (size_t)v;
    return 0;
}

static int parse_fraction(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end != text && *end == '%' && end[1] == '\0') {
        v /= 100.0;
        end++;
    }
    if (errno || end == text || *end != '\0' || !(v > 0.0 && v < 1.0))
        return -1;
    *out = v;
    return 0;
}

static int parse_value(const ml_option_t *opt, const char *text)
{
    switch (opt->kind) {
    case ML_OPT_FLAG: return 0;
    case ML_OPT_INT: return parse_int(opt, text, opt->dest);
    case ML_OPT_SIZE: return ml_parse_size(text, opt->dest);
    case ML_OPT_TIME: return ml_parse_time(text, opt->dest);
    case ML_OPT_SIZE_RANGE: {
        ml_size_range_t *r = opt->dest;
        return ml_parse_size_range(text, &r->lo, &r->hi);
    }
    case ML_OPT_TIME_RANGE: {
        ml_time_range_t *r = opt->dest;
        return ml_parse_time_range(text, &r->lo, &r->hi);
    }
    case ML_OPT_CHOICE:
        if (!in_choices(opt->choices, text, strlen(text)))
            return -1;
        *(const char **)opt->dest = text;
        return 0;
    case ML_OPT_LIST: return parse_list(opt, text, opt->dest);
    case ML_OPT_STRING:
        if (!*text)
            return -1;
        *(const char **)opt->dest = text;
        return 0;
    case ML_OPT_REPS: return parse_reps(text, opt->dest);
    case ML_OPT_FRACTION: return parse_fraction(text, opt->dest);
    }
    return -1;
}

/* What a valid value looks like, for error messages. */
static void describe_allowed(const ml_option_t *opt, char *buf, size_t len)
{
    switch (opt->kind) {
    case ML_OPT_INT: snprintf(buf, len, "an integer from %ld to %ld", opt->min, opt->max); break;
    case ML_OPT_SIZE: snprintf(buf, len, "a size such as 64, 4K or 16MiB"); break;
    case ML_OPT_TIME: snprintf(buf, len, "a time such as 500ns, 10us, 2ms or 1s"); break;
    case ML_OPT_SIZE_RANGE: snprintf(buf, len, "MIN:MAX sizes with MIN <= MAX, such as 1:4M"); break;
    case ML_OPT_TIME_RANGE: snprintf(buf, len, "MIN:MAX times with MIN <= MAX, such as 1us:2ms"); break;
    case ML_OPT_CHOICE: snprintf(buf, len, "one of %s", opt->choices); break;
    case ML_OPT_LIST: snprintf(buf, len, "a comma-separated list of %s, or all", opt->choices); break;
    case ML_OPT_REPS: snprintf(buf, len, "a positive number of repetitions or auto"); break;
    case ML_OPT_FRACTION: snprintf(buf, len, "a fraction between 0 and 1, such as 0.02 or 2%%"); break;
    default: snprintf(buf, len, "a non-empty value"); break;
    }
}

static ml_option_t *find_option(ml_option_t *table, const char *name, size_t len)
{
    for (ml_option_t *opt = table; opt->name; opt++)
        if (strlen(opt->name) == len && strncmp(opt->name, name, len) == 0)
            return opt;
    return NULL;
}

ml_option_t *ml_options_find(ml_option_t *table, const char *name) { return find_option(table, name, strlen(name)); }

static int set_option(ml_option_t *opt, const char *text, char *err, size_t errlen)
{
    if (parse_value(opt, text) != 0) {
        char allowed[160];
        describe_allowed(opt, allowed, sizeof allowed);
        snprintf(err, errlen, "invalid value \"%s\" for --%s: expected %s", text, opt->name, allowed);
        return -1;
    }
    opt->value = text;
    return 0;
}

/* Set by the last parse: its caller's ml_options_usage prints JSON (see options.h). */
static int usage_as_json;

int ml_options_parse(ml_option_t *table, int argc, char **argv, char *err, size_t errlen)
{
    usage_as_json = 0;
    for (ml_option_t *opt = table; opt->name; opt++) {
        opt->value = NULL;
        if (opt->kind == ML_OPT_FLAG)
            *(int *)opt->dest = 0;
        else if (opt->defval && set_option(opt, opt->defval, err, errlen) != 0)
            return ML_OPTIONS_ERROR; /* a programming error, reported like a user one */
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
            return ML_OPTIONS_HELP;
        if (strcmp(arg, "--options-json") == 0) {
            usage_as_json = 1;
            return ML_OPTIONS_HELP;
        }
        if (strcmp(arg, "--version") == 0)
            return ML_OPTIONS_VERSION;
        if (strncmp(arg, "--", 2) != 0) {
            snprintf(err, errlen, "unexpected argument \"%s\" (options start with --; see --help)", arg);
            return ML_OPTIONS_ERROR;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        ml_option_t *opt = find_option(table, name, len);
        if (!opt) {
            snprintf(err, errlen, "unknown option --%.*s (see --help)", (int)len, name);
            return ML_OPTIONS_ERROR;
        }
        if (opt->kind == ML_OPT_FLAG) {
            if (eq) {
                snprintf(err, errlen, "option --%s takes no value", opt->name);
                return ML_OPTIONS_ERROR;
            }
            *(int *)opt->dest = 1;
            opt->value = "true";
            continue;
        }
        const char *text = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!text) {
            snprintf(err, errlen, "option --%s needs a value (%s)", opt->name, opt->metavar ? opt->metavar : "VALUE");
            return ML_OPTIONS_ERROR;
        }
        if (set_option(opt, text, err, errlen) != 0)
            return ML_OPTIONS_ERROR;
    }
    return ML_OPTIONS_OK;
}

static const char *kind_name(ml_opt_kind_t kind)
{
    static const char *const names[] = {
        [ML_OPT_FLAG] = "flag",
        [ML_OPT_INT] = "int",
        [ML_OPT_SIZE] = "size",
        [ML_OPT_TIME] = "time",
        [ML_OPT_SIZE_RANGE] = "size-range",
        [ML_OPT_TIME_RANGE] = "time-range",
        [ML_OPT_CHOICE] = "choice",
        [ML_OPT_LIST] = "list",
        [ML_OPT_STRING] = "string",
        [ML_OPT_REPS] = "reps",
        [ML_OPT_FRACTION] = "fraction",
    };
    return names[kind];
}

static void json_choices(ml_json_t *j, const char *choices)
{
    char item[64]; /* choices are single words; a list item cannot exceed 31 characters anyway */
    ml_json_begin_array(j, "choices");
    for (const char *p = choices; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        snprintf(item, sizeof item, "%.*s", (int)n, p);
        ml_json_string(j, NULL, item);
        p += n + (comma ? 1 : 0);
    }
    ml_json_end_array(j);
}

void ml_options_print_json(FILE *out, const char *program, const ml_option_t *table)
{
    ml_json_t j;
    ml_json_init(&j);
    ml_json_begin_object(&j, NULL);
    ml_json_string(&j, "program", program);
    ml_json_begin_array(&j, "options");
    for (const ml_option_t *opt = table; opt->name; opt++) {
        ml_json_begin_object(&j, NULL);
        ml_json_string(&j, "name", opt->name);
        ml_json_string(&j, "kind", kind_name(opt->kind));
        ml_json_string(&j, "metavar", opt->metavar);
        ml_json_string(&j, "default", opt->defval);
        if ((opt->kind == ML_OPT_CHOICE || opt->kind == ML_OPT_LIST) && opt->choices)
            json_choices(&j, opt->choices);
        if (opt->kind == ML_OPT_INT) {
            ml_json_int(&j, "min", opt->min);
            ml_json_int(&j, "max", opt->max);
        }
        ml_json_string(&j, "help", opt->doc);
        ml_json_end_object(&j);
    }
    ml_json_end_array(&j);
    ml_json_end_object(&j);
    if (j.failed)
        fprintf(stderr, "%s: out of memory for the options' JSON\n", program);
    else
        fprintf(out, "%s\n", j.buf);
    ml_json_free(&j);
}

void ml_options_usage(FILE *out, const char *program, const char *summary, const ml_option_t *table)
{
    if (usage_as_json) {
        ml_options_print_json(out, program, table);
        return;
    }
    fprintf(out, "usage: %s [options]\n\n%s\n\noptions:\n", program, summary);
    for (const ml_option_t *opt = table; opt->name; opt++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", opt->name, opt->metavar ? " " : "", opt->metavar ? opt->metavar : "");
        fprintf(out, "  %-26s %s", left, opt->doc);
        if (opt->defval)
            fprintf(out, " (default: %s)", opt->defval);
        fputc('\n', out);
    }
    fprintf(out, "  %-26s %s\n  %-26s %s\n  %-26s %s\n", "--help", "show this text and exit", "--options-json",
            "print the options as JSON (name, kind, default, choices) and exit", "--version",
            "show the mpilens version and exit");
}

void ml_options_json(const ml_option_t *table, ml_json_t *j, const char *key)
{
    ml_json_begin_object(j, key);
    for (const ml_option_t *opt = table; opt->name; opt++) {
        if (opt->kind == ML_OPT_FLAG)
            ml_json_bool(j, opt->name, *(const int *)opt->dest);
        else
            ml_json_string(j, opt->name, opt->value);
    }
    ml_json_end_object(j);
}

int ml_options_default_late(ml_option_t *table, const char *name, const char *text)
{
    ml_option_t *opt = ml_options_find(table, name);
    char err[256];
    if (!opt)
        return -1;
    return opt->value ? 0 : set_option(opt, text, err, sizeof err);
}

int ml_list_contains(const ml_list_t *list, const char *item)
{
    for (size_t i = 0; i < list->n; i++)
        if (strcmp(list->items[i], item) == 0)
            return 1;
    return 0;
}
