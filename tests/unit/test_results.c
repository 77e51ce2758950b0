/* The results file on its own (no MPI): creation refuses to overwrite, resume cuts an incomplete
 * last record, collects the finished keys, refuses files of another run, and the sample summary
 * record holds what the schema says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "json.h"
#include "results.h"

static const char *META = "{\"type\":\"meta\",\"schema\":1,\"program\":\"prog\",\"mpi\":{\"library\":\"L1\"},"
                          "\"ranks\":2,\"options\":{\"reps\":\"50\",\"output\":\"a\"}}";

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    static char buf[8192];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    return buf;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* Every line is one whole record: starts with {"type":", ends with }. */
static int all_lines_complete(const char *text)
{
    while (*text) {
        const char *nl = strchr(text, '\n');
        if (!nl || strncmp(text, "{\"type\":\"", 9) != 0 || nl[-1] != '}')
            return 0;
        const char *brace = strstr(text + 1, "{\"type\"");
        if (brace && brace < nl)
            return 0; /* two records on one line */
        text = nl + 1;
    }
    return 1;
}

static int count_lines(const char *text)
{
    int n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

static void test_create(const char *dir)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/new.jsonl", dir);
    ml_results_t *r = NULL;
    CHECK(ml_results_create(path, META, &r, err, sizeof err) == 0);
    CHECK(ml_results_append(r, "{\"type\":\"point\",\"key\":\"a\"}") == 0);
    CHECK(ml_results_note(r, "skip", "why \"quoted\"", "b") == 0);
    /* flushed at once: readable before close */
    CHECK(count_lines(slurp(path)) == 3);
    CHECK(ml_results_close(r) == 0);
    char *text = slurp(path);
    CHECK(strncmp(text, META, strlen(META)) == 0);
    CHECK(strstr(text, "\"level\":\"skip\",\"text\":\"why \\\"quoted\\\"\",\"key\":\"b\",\"date\":\"") != NULL);

    /* a file with results is never overwritten */
    CHECK(ml_results_create(path, META, &r, err, sizeof err) == -1);
    CHECK(strstr(err, "already holds results; use --resume") != NULL);
    CHECK(count_lines(slurp(path)) == 3);
    CHECK(all_lines_complete(slurp(path)));

    snprintf(path, sizeof path, "%s/no/such/dir/x.jsonl", dir);
    CHECK(ml_results_create(path, META, &r, err, sizeof err) == -1);
    CHECK(strstr(err, "cannot write output") && strstr(err, "No such file or directory"));
}

static void test_resume(const char *dir)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/resume.jsonl", dir);
    char text[2048];
    snprintf(text, sizeof text,
             "%s\n{\"type\":\"point\",\"key\":\"p/1\",\"stats\":{\"key\":\"fake\"}}\n"
             "{\"type\":\"note\",\"key\":\"p/9\"}\n{\"type\":\"point\",\"key\":\"p/2\"}\n{\"type\":\"point\",\"ke",
             META);
    write_file(path, text);

    ml_results_t *r = NULL;
    ml_keyset_t done = {0};
    const char *compared[] = {"reps", NULL};
    char *argv[] = {"prog", "--resume"};
    CHECK(ml_results_resume(path, META, compared, 2, argv, &r, &done, err, sizeof err) == 0);
    CHECK(done.n == 2 && ml_keyset_has(&done, "p/1") && ml_keyset_has(&done, "p/2"));
    CHECK(!ml_keyset_has(&done, "p/9") && !ml_keyset_has(&done, "fake"));
    CHECK(ml_results_append(r, "{\"type\":\"point\",\"key\":\"p/3\"}") == 0);
    CHECK(ml_results_close(r) == 0);
    const char *after = slurp(path);
    /* incomplete record cut, complete ones kept byte for byte, resume note then the new point */
    CHECK(strncmp(after, text, strlen(text) - strlen("{\"type\":\"point\",\"ke")) == 0);
    CHECK(all_lines_complete(after));
    CHECK(strstr(after, "\"text\":\"resumed\"") && strstr(after, "\"command\":[\"prog\",\"--resume\"]"));
    CHECK(count_lines(after) == 6);
    ml_keyset_free(&done);

    /* keysets travel between ranks as a blob */
    ml_keyset_t a = {0}, b = {0};
    ml_keyset_add(&a, "x/1");
    ml_keyset_add(&a, "y/size=4");
    size_t len;
    char *blob = ml_keyset_to_blob(&a, &len);
    CHECK(ml_keyset_from_blob(&b, blob, len) == 0);
    CHECK(b.n == 2 && ml_keyset_has(&b, "y/size=4") && !ml_keyset_has(&b, "x"));
    free(blob);
    ml_keyset_free(&a);
    ml_keyset_free(&b);
}

static void expect_refused(const char *dir, const char *meta_in_file, const char *message)
{
    char path[512], err[512], text[1024];
    snprintf(path, sizeof path, "%s/refuse.jsonl", dir);
    snprintf(text, sizeof text, "%s\n{\"type\":\"point\",\"key\":\"p/1\"}\n", meta_in_file);
    write_file(path, text);
    ml_results_t *r = NULL;
    ml_keyset_t done = {0};
    const char *compared[] = {"reps", NULL};
    char *argv[] = {"prog"};
    CHECK(ml_results_resume(path, META, compared, 1, argv, &r, &done, err, sizeof err) == -1);
    if (!strstr(err, message)) {
        fprintf(stderr, "error \"%s\" lacks \"%s\"\n", err, message);
        check_failures++;
    }
    CHECK(strcmp(slurp(path), text) == 0); /* the file is left as it was */
    ml_keyset_free(&done);
}

static void test_resume_refused(const char *dir)
{
    expect_refused(dir,
                   "{\"type\":\"meta\",\"schema\":1,\"program\":\"other\",\"mpi\":{\"library\":\"L1\"},\"ranks\":2}",
                   "written by another program");
    expect_refused(dir,
                   "{\"type\":\"meta\",\"schema\":1,\"program\":\"prog\",\"mpi\":{\"library\":\"L2\"},\"ranks\":2}",
                   "another MPI library");
    expect_refused(dir,
                   "{\"type\":\"meta\",\"schema\":1,\"program\":\"prog\",\"mpi\":{\"library\":\"L1\"},\"ranks\":4}",
                   "another number of ranks");
    expect_refused(dir,
                   "{\"type\":\"meta\",\"schema\":2,\"program\":\"prog\",\"mpi\":{\"library\":\"L1\"},\"ranks\":2}",
                   "another results schema");
    expect_refused(dir,
                   "{\"type\":\"meta\",\"schema\":1,\"program\":\"prog\",\"mpi\":{\"library\":\"L1\"},\"ranks\":2,"
                   "\"options\":{\"reps\":\"auto\"}}",
                   "it was measured with --reps auto; give the same value");
    expect_refused(dir, "{\"name\":\"some other tool\"}", "not an mpilens results file");
}

static void test_sample_record(void)
{
    ml_sample_t s = {0};
    for (int i = 1; i <= 10; i++)
        ml_sample_add(&s, i * 100.0);
    ml_stop_rule_t rule = ml_stop_rule_fixed(10);
    ml_json_t j;
    ml_json_init(&j);
    ml_record_point_begin(&j, "fam", "b", "b/x=1");
    ml_json_sample(&j, "sample", &s, &rule, ML_STOP_FIXED);
    ml_json_end_object(&j);
    char str[64];
    int64_t n;
    CHECK(ml_json_get_string(j.buf, "type", str, sizeof str) == 0 && strcmp(str, "point") == 0);
    CHECK(ml_json_get_string(j.buf, "key", str, sizeof str) == 0 && strcmp(str, "b/x=1") == 0);
    CHECK(ml_json_get_int(j.buf, "sample.n", &n) == 0 && n == 10);
    CHECK(ml_json_get_string(j.buf, "sample.stop", str, sizeof str) == 0 && strcmp(str, "fixed") == 0);
    CHECK(strstr(j.buf, "\"median\":550,") && strstr(j.buf, "\"q1\":325,") && strstr(j.buf, "\"precision\":null"));
    CHECK(strstr(j.buf, "\"values\":[100,200,300,400,500,600,700,800,900,1000]"));
    ml_json_free(&j);
    ml_sample_free(&s);
}

/* A file being written is locked: a second writer (a --resume started while the first run still
 * goes on, or a new run) is refused with one line, and the first one's lines stay whole. */
static void test_locked(const char *dir)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/locked.jsonl", dir);
    ml_results_t *first = NULL, *second = NULL;
    ml_keyset_t done = {0};
    const char *compared[] = {"reps", NULL};
    char *argv[] = {"prog", "--resume"};
    CHECK(ml_results_create(path, META, &first, err, sizeof err) == 0);
    CHECK(ml_results_append(first, "{\"type\":\"point\",\"key\":\"a\"}") == 0);
    CHECK(ml_results_resume(path, META, compared, 2, argv, &second, &done, err, sizeof err) == -1);
    CHECK(strstr(err, "is being written by another run") != NULL);
    CHECK(ml_results_create(path, META, &second, err, sizeof err) == -1);
    CHECK(strstr(err, "is being written by another run") != NULL);
    CHECK(ml_results_append(first, "{\"type\":\"point\",\"key\":\"b\"}") == 0);
    CHECK(count_lines(slurp(path)) == 3 && all_lines_complete(slurp(path)));
    CHECK(ml_results_close(first) == 0);
    /* once the first has ended, the resume goes ahead */
    CHECK(ml_results_resume(path, META, compared, 2, argv, &second, &done, err, sizeof err) == 0);
    CHECK(done.n == 2 && ml_keyset_has(&done, "a") && ml_keyset_has(&done, "b"));
    CHECK(ml_results_close(second) == 0);
    ml_keyset_free(&done);
}

int main(void)
{
    char dir[] = "/tmp/mpilens-test-results-XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    test_create(dir);
    test_resume(dir);
    test_resume_refused(dir);
    test_locked(dir);
    test_sample_record();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 2;
    CHECK_DONE();
}
