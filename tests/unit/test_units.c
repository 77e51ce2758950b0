/* The value grammar against the vectors shared with the Python parser. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "units.h"

static int run_vector(const char *kind, const char *text, const char *expected)
{
    int want_error = strcmp(expected, "error") == 0;
    int rc;
    char got[64] = "";
    if (strcmp(kind, "size") == 0) {
        uint64_t v;
        rc = ml_parse_size(text, &v);
        snprintf(got, sizeof got, "%" PRIu64, v);
    } else if (strcmp(kind, "time") == 0) {
        int64_t v;
        rc = ml_parse_time(text, &v);
        snprintf(got, sizeof got, "%" PRId64, v);
    } else if (strcmp(kind, "size_range") == 0) {
        uint64_t lo, hi;
        rc = ml_parse_size_range(text, &lo, &hi);
        snprintf(got, sizeof got, "%" PRIu64 ":%" PRIu64, lo, hi);
    } else if (strcmp(kind, "time_range") == 0) {
        int64_t lo, hi;
        rc = ml_parse_time_range(text, &lo, &hi);
        snprintf(got, sizeof got, "%" PRId64 ":%" PRId64, lo, hi);
    } else {
        fprintf(stderr, "unknown kind %s\n", kind);
        return 1;
    }
    if (want_error ? rc == 0 : rc != 0 || strcmp(got, expected) != 0) {
        fprintf(stderr, "%s \"%s\": got %s, expected %s\n", kind, text, rc == 0 ? got : "error", expected);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_units VECTORS_FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    char line[256];
    int vectors = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *kind = line, *text = strchr(kind, '\t'), *expected;
        if (!text || !(expected = strchr(text + 1, '\t'))) {
            fprintf(stderr, "malformed vector line: %s\n", line);
            check_failures++;
            continue;
        }
        *text++ = '\0';
        *expected++ = '\0';
        check_failures += run_vector(kind, text, expected);
        vectors++;
    }
    fclose(f);
    CHECK(vectors > 40);
    CHECK_DONE();
}
