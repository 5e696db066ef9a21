/* test_trace_cmd.c — `epochsim import kineto`, `epochsim trace show` and `trace dispatch` as a user
 * runs them: exit codes, the summary JSON (parsed back with yajl), and errors on stderr. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "traces/kineto.h"

#define FIXTURE EPOCHSIM_SOURCE_DIR "/tests/data/kineto/new_schema.json"

static char tmp[3][256];

/* Runs a shell command; returns its exit status and (if out) up to cap-1 bytes of stdout. */
static int run(const char *cmd, char *out, size_t cap)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = 0;
    char sink[4096];
    for (;;) {
        size_t got =
            out && n + 1 < cap ? fread(out + n, 1, cap - 1 - n, p) : fread(sink, 1, sizeof sink, p);
        if (got == 0) break;
        if (out && n + 1 < cap) n += got;
    }
    if (out) out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp[0], sizeof tmp[0], "/tmp/epochsim_test_cmd_%ld.trace", (long)getpid());
    snprintf(tmp[1], sizeof tmp[1], "/tmp/epochsim_test_cmd_%ld.json", (long)getpid());
    snprintf(tmp[2], sizeof tmp[2], "/tmp/epochsim_test_cmd_%ld.err", (long)getpid());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++)
        remove(tmp[i]);
    return 0;
}

static yajl_val get(yajl_val v, const char *key)
{
    const char *path[] = {key, NULL};
    return yajl_tree_get(v, path, yajl_t_any);
}

static void test_cmd_import_and_show(void **state)
{
    (void)state;
    char cmd[2048];
    static char out[1 << 16];
    snprintf(cmd, sizeof cmd, "'%s' import kineto '%s' -o '%s' --summary-json '%s'",
             EPOCHSIM_BINARY, FIXTURE, tmp[0], tmp[1]);
    assert_int_equal(run(cmd, out, sizeof out), 0);
    assert_non_null(strstr(out, "NVIDIA A100-SXM4-40GB"));
    assert_non_null(strstr(out, "median"));
    assert_non_null(strstr(out, "launch CPU time"));

    FILE *f = fopen(tmp[1], "rb");
    assert_non_null(f);
    static char js[1 << 16];
    size_t n = fread(js, 1, sizeof js - 1, f);
    fclose(f);
    js[n] = 0;
    char errbuf[256];
    yajl_val root = yajl_tree_parse(js, errbuf, sizeof errbuf);
    if (!root) fail_msg("summary JSON does not parse: %s", errbuf);
    assert_true(YAJL_IS_INTEGER(get(root, "steps")));
    assert_int_equal(YAJL_GET_INTEGER(get(root, "steps")), 3);
    assert_string_equal(YAJL_GET_STRING(get(root, "gpu_name")), "NVIDIA A100-SXM4-40GB");
    assert_int_equal(YAJL_GET_INTEGER(get(root, "batch_size")), 16);
    yajl_val steps = get(root, "per_step");
    assert_true(YAJL_IS_ARRAY(steps));
    assert_int_equal(YAJL_GET_ARRAY(steps)->len, 3);
    yajl_val s0 = YAJL_GET_ARRAY(steps)->values[0];
    assert_int_equal(YAJL_GET_INTEGER(get(s0, "kernels")), 4);
    assert_true(YAJL_GET_DOUBLE(get(s0, "gpu_busy_ms")) == 0.18);
    assert_true(YAJL_IS_OBJECT(get(root, "launch_cpu")));
    assert_true(YAJL_GET_DOUBLE(get(root, "import_mb_per_s")) > 0);
    assert_string_equal(YAJL_GET_STRING(get(root, "steps_from")), "ProfilerStep#N annotations");
    /* the fixture's events all have a usable dur */
    yajl_val dropped = get(root, "dropped_events");
    assert_true(YAJL_IS_OBJECT(dropped));
    assert_int_equal(YAJL_GET_OBJECT(dropped)->len, TRC_BAD_TIME_COUNT);
    assert_int_equal(YAJL_GET_INTEGER(get(dropped, "negative dur")), 0);
    yajl_tree_free(root);

    /* a trace without ProfilerStep#N: the summary says how its steps were cut */
    snprintf(cmd, sizeof cmd, "'%s' import kineto '%s' -o '%s'", EPOCHSIM_BINARY,
             EPOCHSIM_SOURCE_DIR "/tests/data/kineto/autograd_profiler.json", tmp[2]);
    assert_int_equal(run(cmd, out, sizeof out), 0);
    assert_non_null(strstr(out, "repeating GPU kernel sequence (no ProfilerStep#N): 4 kernels "
                                "per step"));
    remove(tmp[2]);

    snprintf(cmd, sizeof cmd, "'%s' trace show '%s' --json", EPOCHSIM_BINARY, tmp[0]);
    assert_int_equal(run(cmd, out, sizeof out), 0);
    root = yajl_tree_parse(out, errbuf, sizeof errbuf);
    if (!root) fail_msg("trace show --json does not parse: %s", errbuf);
    assert_int_equal(YAJL_GET_INTEGER(get(root, "steps")), 3);
    yajl_tree_free(root);

    snprintf(cmd, sizeof cmd, "'%s' trace show '%s' --records 11 --program", EPOCHSIM_BINARY,
             tmp[0]);
    assert_int_equal(run(cmd, out, sizeof out), 0);
    assert_non_null(strstr(out, "step 11: 18 records"));
    assert_non_null(strstr(out, "replay program of the median step"));
}

static void test_cmd_usage_and_errors(void **state)
{
    (void)state;
    char cmd[2048];
    static char out[1 << 14];
    const char *b = EPOCHSIM_BINARY;
    snprintf(cmd, sizeof cmd, "'%s' import --help", b);
    assert_int_equal(run(cmd, out, sizeof out), 0);
    assert_non_null(strstr(out, "examples:"));
    snprintf(cmd, sizeof cmd, "'%s' trace --help", b);
    assert_int_equal(run(cmd, out, sizeof out), 0);
    assert_non_null(strstr(out, "examples:"));
    snprintf(cmd, sizeof cmd, "'%s' import kineto 2>/dev/null", b);
    assert_int_equal(run(cmd, NULL, 0), 2);
    snprintf(cmd, sizeof cmd, "'%s' import chrome x.json -o y 2>/dev/null", b);
    assert_int_equal(run(cmd, NULL, 0), 2);
    snprintf(cmd, sizeof cmd, "'%s' import kineto x.json -o y --batch-size -3 2>/dev/null", b);
    assert_int_equal(run(cmd, NULL, 0), 2);
    snprintf(cmd, sizeof cmd, "'%s' trace show 2>/dev/null", b);
    assert_int_equal(run(cmd, NULL, 0), 2);
    snprintf(cmd, sizeof cmd, "'%s' import kineto /nonexistent.json -o '%s' 2>'%s'", b, tmp[0],
             tmp[2]);
    assert_int_equal(run(cmd, NULL, 0), 1);
    snprintf(cmd, sizeof cmd, "'%s' trace show /nonexistent.trace 2>/dev/null", b);
    assert_int_equal(run(cmd, NULL, 0), 1);

    /* a damaged native trace: exit 1 and the byte offset on stderr */
    snprintf(cmd, sizeof cmd, "'%s' import kineto '%s' -o '%s' -q", b, FIXTURE, tmp[0]);
    assert_int_equal(run(cmd, NULL, 0), 0);
    FILE *f = fopen(tmp[0], "r+b");
    assert_non_null(f);
    fseek(f, 200, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 200, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' trace show '%s' 2>&1 >/dev/null", b, tmp[0]);
    assert_int_equal(run(cmd, out, sizeof out), 1);
    assert_non_null(strstr(out, "at byte"));
    assert_non_null(strstr(out, "error:"));
}

/* `trace dispatch` straight from a Kineto file: the DDP ResNet-50 trace's 53 convolutions and fc
 * layer per step; a missing file and a missing argument. */
static void test_cmd_dispatch(void **state)
{
    (void)state;
    char cmd[2048];
    static char out[1 << 14];
    const char *b = EPOCHSIM_BINARY;
    snprintf(cmd, sizeof cmd,
             "'%s' trace dispatch '%s/tests/data/validation-traces/hta/ns_resolution_trace/"
             "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz'",
             b, EPOCHSIM_SOURCE_DIR);
    assert_int_equal(run(cmd, out, sizeof out), 0);
    const char *row = strstr(out, "\nfwd_gemm ");
    assert_non_null(row);
    int per_step = 0;
    assert_int_equal(sscanf(row, "\nfwd_gemm %d", &per_step), 1);
    assert_int_equal(per_step, 54);
    assert_non_null(strstr(out, "161 parameter tensors"));
    snprintf(cmd, sizeof cmd, "'%s' trace dispatch /nonexistent.trace 2>/dev/null", b);
    assert_int_equal(run(cmd, NULL, 0), 1);
    snprintf(cmd, sizeof cmd, "'%s' trace dispatch 2>/dev/null", b);
    assert_int_equal(run(cmd, NULL, 0), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cmd_import_and_show, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cmd_usage_and_errors, setup, teardown),
        cmocka_unit_test(test_cmd_dispatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
