/* The JSON writer produces exactly the expected text; the reader finds values by path, also past
 * strings holding quotes, braces and keys of the same name. */
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "json.h"

static void test_writer(void)
{
    ml_json_t j;
    ml_json_init(&j);
    ml_json_begin_object(&j, NULL);
    ml_json_string(&j, "s", "a \"quoted\"\\ line\nnext\ttab\x01");
    ml_json_int(&j, "i", -42);
    ml_json_double(&j, "d", 1012.5);
    ml_json_double(&j, "big", 123456789012.0);
    ml_json_double(&j, "nan", NAN);
    ml_json_double(&j, "inf", INFINITY);
    ml_json_bool(&j, "t", 1);
    ml_json_null(&j, "n");
    ml_json_string(&j, "nullstr", NULL);
    ml_json_begin_array(&j, "a");
    ml_json_int(&j, NULL, 1);
    ml_json_begin_object(&j, NULL);
    ml_json_end_object(&j);
    ml_json_begin_array(&j, NULL);
    ml_json_end_array(&j);
    ml_json_end_array(&j);
    ml_json_raw(&j, "raw", "{\"x\":1}");
    ml_json_end_object(&j);
    CHECK(!j.failed);
    CHECK_STR(j.buf, "{\"s\":\"a \\\"quoted\\\"\\\\ line\\nnext\\ttab\\u0001\",\"i\":-42,\"d\":1012.5,"
                     "\"big\":123456789012,\"nan\":null,\"inf\":null,\"t\":true,\"n\":null,\"nullstr\":null,"
                     "\"a\":[1,{},[]],\"raw\":{\"x\":1}}");
    ml_json_clear(&j);
    ml_json_int(&j, NULL, 7);
    CHECK_STR(j.buf, "7");
    ml_json_free(&j);
}

static void test_reader(void)
{
    const char *doc = "{\"type\":\"meta\",\"command\":[\"prog\",\"\\\"ranks\\\":9 {[\"],"
                      "\"mpi\":{\"library\":\"Open \\\"MPI\\\" v4\",\"flavour\":\"openmpi\"},"
                      "\"nested\":{\"ranks\":99},\"ranks\":4,\"neg\":-3,\"options\":{\"reps\":\"auto\"}}";
    char s[64];
    int64_t v;
    CHECK(ml_json_get_int(doc, "ranks", &v) == 0 && v == 4);
    CHECK(ml_json_get_int(doc, "nested.ranks", &v) == 0 && v == 99);
    CHECK(ml_json_get_int(doc, "neg", &v) == 0 && v == -3);
    CHECK(ml_json_get_string(doc, "mpi.library", s, sizeof s) == 0);
    CHECK_STR(s, "Open \"MPI\" v4");
    CHECK(ml_json_get_string(doc, "options.reps", s, sizeof s) == 0);
    CHECK_STR(s, "auto");
    CHECK(ml_json_get_string(doc, "type", s, 3) == 0);
    CHECK_STR(s, "me"); /* truncated to the buffer */
    CHECK(ml_json_get_string(doc, "missing", s, sizeof s) == -1);
    CHECK(ml_json_get_string(doc, "mpi.missing", s, sizeof s) == -1);
    CHECK(ml_json_get_string(doc, "ranks", s, sizeof s) == -1); /* not a string */
    CHECK(ml_json_get_int(doc, "type", &v) == -1);              /* not an integer */
    CHECK(ml_json_get_int("{\"a\":1", "b", &v) == -1);          /* truncated text */
    CHECK(ml_json_get_int("not json", "a", &v) == -1);
    CHECK(ml_json_get_int("{\"a\":\"unterminated}", "b", &v) == -1);
}

int main(void)
{
    test_writer();
    test_reader();
    CHECK_DONE();
}
