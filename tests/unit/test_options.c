/* Option tables: defaults, both spellings, every kind, and the one-line errors. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "options.h"

typedef struct {
    int flag;
    long count;
    uint64_t size;
    int64_t time;
    ml_size_range_t sizes;
    ml_time_range_t times;
    const char *mode;
    ml_list_t benches;
    const char *out;
    ml_reps_t reps;
    double fraction;
} values_t;

static values_t v;
static ml_option_t table[] = {
    {"flag", ML_OPT_FLAG, NULL, NULL, NULL, "a flag", &v.flag, 0, 0, NULL},
    {"count", ML_OPT_INT, "N", "4", NULL, "a count", &v.count, 1, 64, NULL},
    {"size", ML_OPT_SIZE, "BYTES", "1K", NULL, "a size", &v.size, 0, 0, NULL},
    {"time", ML_OPT_TIME, "T", "10us", NULL, "a time", &v.time, 0, 0, NULL},
    {"sizes", ML_OPT_SIZE_RANGE, "MIN:MAX", "1:16M", NULL, "sizes", &v.sizes, 0, 0, NULL},
    {"compute", ML_OPT_TIME_RANGE, "MIN:MAX", "1us:10ms", NULL, "times", &v.times, 0, 0, NULL},
    {"mode", ML_OPT_CHOICE, "a|b", "a", "a,b", "a choice", &v.mode, 0, 0, NULL},
    {"bench", ML_OPT_LIST, "LIST", "all", "sender,receiver,bidir", "a list", &v.benches, 0, 0, NULL},
    {"out", ML_OPT_STRING, "FILE", "x.jsonl", NULL, "a string", &v.out, 0, 0, NULL},
    {"reps", ML_OPT_REPS, "N|auto", "auto", NULL, "reps", &v.reps, 0, 0, NULL},
    {"precision", ML_OPT_FRACTION, "P", "2%", NULL, "a fraction", &v.fraction, 0, 0, NULL},
    ML_OPTIONS_END,
};

static int parse(char *err, size_t errlen, int argc, char **argv)
{
    return ml_options_parse(table, argc, argv, err, errlen);
}

#define ARGS(...)                                                                                                      \
    (sizeof((char *[]){"prog", __VA_ARGS__}) / sizeof(char *)), (char *[]) { "prog", __VA_ARGS__ }

static void test_defaults_and_values(void)
{
    char err[256] = "";
    char *none[] = {"prog"};
    CHECK(parse(err, sizeof err, 1, none) == ML_OPTIONS_OK);
    CHECK(v.flag == 0 && v.count == 4 && v.size == 1024 && v.time == 10000);
    CHECK(v.sizes.lo == 1 && v.sizes.hi == 16777216 && v.times.lo == 1000 && v.times.hi == 10000000);
    CHECK_STR(v.mode, "a");
    CHECK(v.benches.n == 3 && ml_list_contains(&v.benches, "bidir"));
    CHECK(v.reps.is_auto);
    CHECK_NEAR(v.fraction, 0.02, 1e-15);
    CHECK_STR(table[1].value, "4");

    CHECK(parse(err, sizeof err,
                ARGS("--flag", "--count=9", "--size", "4M", "--mode", "b", "--bench", "receiver,sender", "--reps", "50",
                     "--out=y.jsonl", "--precision", "0.05")) == ML_OPTIONS_OK);
    CHECK_NEAR(v.fraction, 0.05, 1e-15);
    CHECK(v.flag == 1 && v.count == 9 && v.size == 4194304);
    CHECK_STR(v.mode, "b");
    CHECK(v.benches.n == 2 && ml_list_contains(&v.benches, "receiver") && !ml_list_contains(&v.benches, "bidir"));
    CHECK(!v.reps.is_auto && v.reps.count == 50);
    CHECK_STR(v.out, "y.jsonl");
    CHECK_STR(table[1].value, "9");

    ml_json_t j;
    ml_json_init(&j);
    ml_options_json(table, &j, NULL);
    CHECK(strstr(j.buf, "\"flag\":true") && strstr(j.buf, "\"count\":\"9\"") && strstr(j.buf, "\"reps\":\"50\""));
    ml_json_free(&j);

    CHECK(parse(err, sizeof err, ARGS("--count", "2", "--help")) == ML_OPTIONS_HELP);
    CHECK(parse(err, sizeof err, ARGS("--version")) == ML_OPTIONS_VERSION);
}

static void expect_error(const char *message, int argc, char **argv)
{
    char err[256] = "";
    CHECK(ml_options_parse(table, argc, argv, err, sizeof err) == ML_OPTIONS_ERROR);
    CHECK_STR(err, message);
    CHECK(strchr(err, '\n') == NULL);
}

static void test_errors(void)
{
    expect_error("invalid value \"4Q\" for --size: expected a size such as 64, 4K or 16MiB", ARGS("--size", "4Q"));
    expect_error("invalid value \"-1\" for --size: expected a size such as 64, 4K or 16MiB", ARGS("--size=-1"));
    expect_error("invalid value \"1:0\" for --sizes: expected MIN:MAX sizes with MIN <= MAX, such as 1:4M",
                 ARGS("--sizes", "1:0"));
    expect_error("invalid value \"2ms:1us\" for --compute: expected MIN:MAX times with MIN <= MAX, such as 1us:2ms",
                 ARGS("--compute", "2ms:1us"));
    expect_error("invalid value \"65\" for --count: expected an integer from 1 to 64", ARGS("--count", "65"));
    expect_error("invalid value \"c\" for --mode: expected one of a,b", ARGS("--mode", "c"));
    expect_error(
        "invalid value \"sender,nload\" for --bench: expected a comma-separated list of sender,receiver,bidir, "
        "or all",
        ARGS("--bench", "sender,nload"));
    expect_error("invalid value \"0\" for --reps: expected a positive number of repetitions or auto",
                 ARGS("--reps", "0"));
    expect_error("invalid value \"1.5\" for --precision: expected a fraction between 0 and 1, such as 0.02 or 2%",
                 ARGS("--precision", "1.5"));
    expect_error("invalid value \"0%\" for --precision: expected a fraction between 0 and 1, such as 0.02 or 2%",
                 ARGS("--precision", "0%"));
    expect_error("unknown option --frobnicate (see --help)", ARGS("--frobnicate"));
    expect_error("unexpected argument \"extra\" (options start with --; see --help)", ARGS("extra"));
    expect_error("option --size needs a value (BYTES)", ARGS("--size"));
    expect_error("option --flag takes no value", ARGS("--flag=yes"));
    expect_error("invalid value \"\" for --out: expected a non-empty value", ARGS("--out="));
}

static void test_late_default(void)
{
    static uint64_t size_value;
    ml_time_range_t range = {0, 0};
    ml_option_t late[] = {
        {"compute", ML_OPT_TIME_RANGE, "MIN:MAX", NULL, NULL, "no static default", &range, 0, 0, NULL},
        {"size", ML_OPT_SIZE, "BYTES", NULL, NULL, "", &size_value, 0, 0, NULL},
        ML_OPTIONS_END,
    };
    char err[128];
    char *given[] = {"prog", "--size", "8"};
    CHECK(ml_options_parse(late, 3, given, err, sizeof err) == ML_OPTIONS_OK);
    CHECK(late[0].value == NULL);
    CHECK(ml_options_default_late(late, "compute", "1us:1ms") == 0);
    CHECK(range.lo == 1000 && range.hi == 1000000);
    CHECK_STR(late[0].value, "1us:1ms"); /* recorded like a user value */
    CHECK(ml_options_default_late(late, "size", "99") == 0);
    CHECK(size_value == 8); /* a given value wins */
    CHECK(ml_options_default_late(late, "nope", "1") == -1);
    CHECK(ml_options_find(late, "size") == &late[1]);
}

/* What ml_options_usage wrote into a temporary file. */
static void usage_text(char *buf, size_t len)
{
    FILE *out = tmpfile();
    CHECK(out != NULL);
    if (!out)
        return;
    ml_options_usage(out, "prog", "a summary", table);
    rewind(out);
    size_t n = fread(buf, 1, len - 1, out);
    buf[n] = '\0';
    fclose(out);
}

static void test_options_json(void)
{
    char err[256] = "";
    static char text[8192];
    CHECK(parse(err, sizeof err, ARGS("--count", "9", "--options-json")) == ML_OPTIONS_HELP);
    usage_text(text, sizeof text);
    CHECK_STR(
        text,
        "{\"program\":\"prog\",\"options\":["
        "{\"name\":\"flag\",\"kind\":\"flag\",\"metavar\":null,\"default\":null,\"help\":\"a flag\"},"
        "{\"name\":\"count\",\"kind\":\"int\",\"metavar\":\"N\",\"default\":\"4\",\"min\":1,\"max\":64,"
        "\"help\":\"a count\"},"
        "{\"name\":\"size\",\"kind\":\"size\",\"metavar\":\"BYTES\",\"default\":\"1K\",\"help\":\"a size\"},"
        "{\"name\":\"time\",\"kind\":\"time\",\"metavar\":\"T\",\"default\":\"10us\",\"help\":\"a time\"},"
        "{\"name\":\"sizes\",\"kind\":\"size-range\",\"metavar\":\"MIN:MAX\",\"default\":\"1:16M\","
        "\"help\":\"sizes\"},"
        "{\"name\":\"compute\",\"kind\":\"time-range\",\"metavar\":\"MIN:MAX\",\"default\":\"1us:10ms\","
        "\"help\":\"times\"},"
        "{\"name\":\"mode\",\"kind\":\"choice\",\"metavar\":\"a|b\",\"default\":\"a\",\"choices\":[\"a\",\"b\"],"
        "\"help\":\"a choice\"},"
        "{\"name\":\"bench\",\"kind\":\"list\",\"metavar\":\"LIST\",\"default\":\"all\","
        "\"choices\":[\"sender\",\"receiver\",\"bidir\"],\"help\":\"a list\"},"
        "{\"name\":\"out\",\"kind\":\"string\",\"metavar\":\"FILE\",\"default\":\"x.jsonl\",\"help\":\"a string\"},"
        "{\"name\":\"reps\",\"kind\":\"reps\",\"metavar\":\"N|auto\",\"default\":\"auto\",\"help\":\"reps\"},"
        "{\"name\":\"precision\",\"kind\":\"fraction\",\"metavar\":\"P\",\"default\":\"2%\","
        "\"help\":\"a fraction\"}]}\n");

    /* The next parse without it gets the usage text again. */
    CHECK(parse(err, sizeof err, ARGS("--help")) == ML_OPTIONS_HELP);
    usage_text(text, sizeof text);
    const char *head = "usage: prog [options]\n\na summary\n";
    CHECK(strncmp(text, head, strlen(head)) == 0);
    CHECK(strstr(text, "  --options-json") != NULL);
}

/* Options read before MPI_Init_thread: the last of either spelling; names that only begin
 * alike, and a name without its value at the end, are not it. */
static void test_scan(void)
{
    CHECK(ml_options_scan(ARGS("--bench", "sender,threads", "--reps", "3"), "bench") != NULL);
    CHECK_STR(ml_options_scan(ARGS("--bench", "a", "--bench=b,c"), "bench"), "b,c");
    CHECK(ml_options_scan(ARGS("--benches", "x", "--bench"), "bench") == NULL);
    CHECK_STR(ml_options_scan(ARGS("--thread-level=multiple"), "thread-level"), "multiple");
    CHECK(ml_list_text_contains("sender,threads", "threads") && ml_list_text_contains("threads", "threads"));
    CHECK(!ml_list_text_contains("sender,threadsx", "threads") && !ml_list_text_contains("nthreads", "threads"));
    CHECK(!ml_list_text_contains("all", "threads"));
}

int main(void)
{
    test_scan();
    test_defaults_and_values();
    test_options_json();
    test_late_default();
    test_errors();
    CHECK_DONE();
}
