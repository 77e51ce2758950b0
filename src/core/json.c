#include "json.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ml_json_init(ml_json_t *j) { memset(j, 0, sizeof *j); }

void ml_json_free(ml_json_t *j)
{
    free(j->buf);
    ml_json_init(j);
}

void ml_json_clear(ml_json_t *j)
{
    j->len = 0;
    j->failed = 0;
    if (j->buf)
        j->buf[0] = '\0';
}

static void append(ml_json_t *j, const char *text, size_t n)
{
    if (j->failed)
        return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (j->len + n + 1 > cap)
            cap *= 2;
        char *grown = realloc(j->buf, cap);
        if (!grown) {
            j->failed = 1;
            return;
        }
        j->buf = grown;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, text, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void append_str(ml_json_t *j, const char *text) { append(j, text, strlen(text)); }

static void append_quoted(ml_json_t *j, const char *s)
{
    append(j, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            append(j, esc, 2);
        } else if (c == '\n') {
            append(j, "\\n", 2);
        } else if (c == '\t') {
            append(j, "\\t", 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            append_str(j, esc);
        } else {
            append(j, (const char *)&c, 1);
        }
    }
    append(j, "\"", 1);
}

/* A comma is needed unless this is the first member or element of its container. */
static void begin_value(ml_json_t *j, const char *key)
{
    if (j->len > 0) {
        char last = j->buf[j->len - 1];
        if (last != '{' && last != '[')
            append(j, ",", 1);
    }
    if (key) {
        append_quoted(j, key);
        append(j, ":", 1);
    }
}

void ml_json_begin_object(ml_json_t *j, const char *key)
{
    begin_value(j, key);
    append(j, "{", 1);
}
void ml_json_end_object(ml_json_t *j) { append(j, "}", 1); }
void ml_json_begin_array(ml_json_t *j, const char *key)
{
    begin_value(j, key);
    append(j, "[", 1);
}
void ml_json_end_array(ml_json_t *j) { append(j, "]", 1); }

void ml_json_string(ml_json_t *j, const char *key, const char *value)
{
    begin_value(j, key);
    if (value)
        append_quoted(j, value);
    else
        append_str(j, "null");
}

void ml_json_int(ml_json_t *j, const char *key, int64_t value)
{
    char num[32];
    snprintf(num, sizeof num, "%" PRId64, value);
    begin_value(j, key);
    append_str(j, num);
}

void ml_json_double(ml_json_t *j, const char *key, double value)
{
    char num[40];
    begin_value(j, key);
    if (!isfinite(value)) {
        append_str(j, "null");
        return;
    }
    /* 15 significant digits: exact for every integer nanosecond count below 10^15 (11 days). */
    snprintf(num, sizeof num, "%.15g", value);
    append_str(j, num);
}

void ml_json_bool(ml_json_t *j, const char *key, int value)
{
    begin_value(j, key);
    append_str(j, value ? "true" : "false");
}

void ml_json_null(ml_json_t *j, const char *key)
{
    begin_value(j, key);
    append_str(j, "null");
}

void ml_json_raw(ml_json_t *j, const char *key, const char *json)
{
    begin_value(j, key);
    append_str(j, json);
}

/* ---- reading ---------------------------------------------------------------------------- */

static const char *skip_ws(const char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    return p;
}

/* Returns the character after the string starting at p (which is '"'), or NULL. */
static const char *skip_string(const char *p)
{
    for (p++; *p; p++) {
        if (*p == '\\') {
            if (!*++p)
                return NULL;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* Returns the character after the value starting at p, or NULL. */
static const char *skip_value(const char *p)
{
    if (*p == '"')
        return skip_string(p);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (*p) {
            if (*p == '"') {
                p = skip_string(p);
                if (!p)
                    return NULL;
                continue;
            }
            if (*p == '{' || *p == '[')
                depth++;
            else if (*p == '}' || *p == ']') {
                if (--depth == 0)
                    return p + 1;
            }
            p++;
        }
        return NULL;
    }
    const char *start = p;
    while (*p && (isalnum((unsigned char)*p) || *p == '-' || *p == '+' || *p == '.'))
        p++;
    return p > start ? p : NULL;
}

/* Finds member `name` (length n) in the object starting at p; returns its value or NULL. */
static const char *find_member(const char *p, const char *name, size_t n)
{
    p = skip_ws(p);
    if (*p != '{')
        return NULL;
    p = skip_ws(p + 1);
    while (*p == '"') {
        const char *key = p + 1;
        const char *after = skip_string(p);
        if (!after)
            return NULL;
        size_t keylen = (size_t)(after - 1 - key);
        p = skip_ws(after);
        if (*p != ':')
            return NULL;
        p = skip_ws(p + 1);
        if (keylen == n && strncmp(key, name, n) == 0)
            return p;
        p = skip_value(p);
        if (!p)
            return NULL;
        p = skip_ws(p);
        if (*p != ',')
            return NULL;
        p = skip_ws(p + 1);
    }
    return NULL;
}

int ml_json_find(const char *json, const char *path, const char **value, size_t *len)
{
    const char *p = json;
    while (*path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        p = find_member(p, path, n);
        if (!p)
            return -1;
        path += n + (dot ? 1 : 0);
    }
    const char *end = skip_value(p);
    if (!end)
        return -1;
    *value = p;
    *len = (size_t)(end - p);
    return 0;
}

int ml_json_get_string(const char *json, const char *path, char *out, size_t outlen)
{
    const char *v;
    size_t len, o = 0;
    if (ml_json_find(json, path, &v, &len) != 0 || *v != '"' || outlen == 0)
        return -1;
    for (size_t i = 1; i + 1 < len && o + 1 < outlen; i++) {
        char c = v[i];
        if (c == '\\') {
            c = v[++i];
            c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
        }
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

int ml_json_get_int(const char *json, const char *path, int64_t *out)
{
    const char *v;
    size_t len;
    char buf[32], *end;
    if (ml_json_find(json, path, &v, &len) != 0 || len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, v, len);
    buf[len] = '\0';
    long long x = strtoll(buf, &end, 10);
    if (*end != '\0')
        return -1;
    *out = x;
    return 0;
}
