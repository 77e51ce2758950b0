#include "units.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Sizes above this are certainly typing mistakes, and products below it cannot overflow. */
#define ML_MAX_SIZE (UINT64_C(1) << 50)
#define ML_MAX_DIGITS 18

/* A number is kept exact as mantissa / 10^decimals so that "1.5K" is exactly 1536 bytes and
 * "0.5" bytes is refused rather than rounded. */
typedef struct {
    uint64_t mantissa;
    int decimals;
    const char *unit; /* rest of the text after the number and spaces, trailing spaces cut */
    size_t unit_len;
} number_t;

static int split_number(const char *text, number_t *num)
{
    const char *p = text;
    int digits = 0;
    while (*p == ' ')
        p++;
    num->mantissa = 0;
    num->decimals = 0;
    while (isdigit((unsigned char)*p)) {
        if (++digits > ML_MAX_DIGITS)
            return -1;
        num->mantissa = num->mantissa * 10 + (uint64_t)(*p++ - '0');
    }
    if (digits == 0)
        return -1;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        while (isdigit((unsigned char)*p)) {
            if (++digits > ML_MAX_DIGITS)
                return -1;
            num->mantissa = num->mantissa * 10 + (uint64_t)(*p++ - '0');
            num->decimals++;
        }
    }
    while (*p == ' ')
        p++;
    size_t len = strlen(p);
    while (len > 0 && p[len - 1] == ' ')
        len--;
    num->unit = p;
    num->unit_len = len;
    return 0;
}

static int unit_is(const number_t *num, const char *unit, int ignore_case)
{
    size_t len = strlen(unit);
    if (num->unit_len != len)
        return 0;
    return ignore_case ? strncasecmp(num->unit, unit, len) == 0 : strncmp(num->unit, unit, len) == 0;
}

/* mantissa * multiplier / 10^decimals, refused unless it is a whole number below `limit`. */
static int scale(const number_t *num, uint64_t multiplier, uint64_t limit, uint64_t *out)
{
    uint64_t divisor = 1;
    for (int i = 0; i < num->decimals; i++)
        divisor *= 10;
    /* At most 18 digits times 2^40 fits easily in 128 bits. */
    unsigned __int128 product = (unsigned __int128)num->mantissa * multiplier;
    if (product % divisor != 0)
        return -1;
    product /= divisor;
    if (product >= limit)
        return -1;
    *out = (uint64_t)product;
    return 0;
}

int ml_parse_size(const char *text, uint64_t *bytes)
{
    /* the units in groups, one line per multiple */
    /* clang-format off */
    static const struct { const char *name; uint64_t factor; } units[] = {
        {"", 1}, {"B", 1},
        {"K", 1ULL << 10}, {"KB", 1ULL << 10}, {"KiB", 1ULL << 10},
        {"M", 1ULL << 20}, {"MB", 1ULL << 20}, {"MiB", 1ULL << 20},
        {"G", 1ULL << 30}, {"GB", 1ULL << 30}, {"GiB", 1ULL << 30},
        {"T", 1ULL << 40}, {"TB", 1ULL << 40}, {"TiB", 1ULL << 40},
    };
    /* clang-format on */
    number_t num;
    if (split_number(text, &num) != 0)
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (unit_is(&num, units[i].name, 1))
            return scale(&num, units[i].factor, ML_MAX_SIZE, bytes);
    return -1;
}

int ml_parse_time(const char *text, int64_t *ns)
{
    /* the units in groups, one line per multiple */
    /* clang-format off */
    static const struct { const char *name; uint64_t factor; } units[] = {
        {"", 1000}, {"ns", 1}, {"us", 1000}, {"\xc2\xb5s", 1000}, {"ms", 1000000}, {"s", 1000000000},
    };
    /* clang-format on */
    number_t num;
    uint64_t value;
    if (split_number(text, &num) != 0)
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (unit_is(&num, units[i].name, 0)) {
            if (scale(&num, units[i].factor, (uint64_t)INT64_MAX, &value) != 0)
                return -1;
            *ns = (int64_t)value;
            return 0;
        }
    return -1;
}

/* Splits "A:B" (or "A") into two strings in buf; -1 for more than one colon or an empty side. */
static int split_range(const char *text, char *buf, size_t buflen, const char **lo, const char **hi)
{
    if (strlen(text) >= buflen)
        return -1;
    strcpy(buf, text);
    char *colon = strchr(buf, ':');
    if (!colon) {
        *lo = *hi = buf;
        return 0;
    }
    if (strchr(colon + 1, ':'))
        return -1;
    *colon = '\0';
    *lo = buf;
    *hi = colon + 1;
    return 0;
}

int ml_parse_size_range(const char *text, uint64_t *lo, uint64_t *hi)
{
    char buf[128];
    const char *a, *b;
    uint64_t x, y;
    if (split_range(text, buf, sizeof buf, &a, &b) != 0 || ml_parse_size(a, &x) != 0 || ml_parse_size(b, &y) != 0 ||
        x > y)
        return -1;
    *lo = x;
    *hi = y;
    return 0;
}

int ml_parse_time_range(const char *text, int64_t *lo, int64_t *hi)
{
    char buf[128];
    const char *a, *b;
    int64_t x, y;
    if (split_range(text, buf, sizeof buf, &a, &b) != 0 || ml_parse_time(a, &x) != 0 || ml_parse_time(b, &y) != 0 ||
        x > y)
        return -1;
    *lo = x;
    *hi = y;
    return 0;
}

void ml_format_bytes(char *buf, size_t len, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, len, "%.1f %s", bytes, units[u]);
}
