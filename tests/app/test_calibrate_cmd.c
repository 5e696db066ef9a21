/* test_calibrate_cmd.c — `epochsim calibrate` end to end: usage errors exit 2 with nothing on
 * stdout; a file that is no trace is an error naming it; a fit on a real Kineto trace writes an
 * overlay that `run` takes, and --json carries the same figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/app/calibrate_testkit.h"

#define TRACE                                                                                      \
    EPOCHSIM_SOURCE_DIR "/tests/data/validation-traces/kineto/resnet50_num_workers_0/"             \
                        "worker0.1623143089861.pt.trace.json.gz"

/* fmt with one %s (the binary) run in the temp folder. */
static int sh(const char *fmt, const char *arg)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, arg);
    return cal_dir_sh(cmd);
}

#define slurp cal_dir_slurp

static void test_calibrate_cmd_usage_errors(void **state)
{
    (void)state;
    assert_int_equal(sh("%s calibrate >out.txt 2>err.txt", EPOCHSIM_BINARY), 2);
    assert_string_equal(slurp("out.txt"), "");
    assert_non_null(strstr(slurp("err.txt"), "give at least one --trace"));
    assert_int_equal(sh("%s calibrate --trace x.trace extra >out.txt 2>err.txt", EPOCHSIM_BINARY),
                     2);
    assert_string_equal(slurp("out.txt"), "");
}

static void test_calibrate_cmd_refuses_what_is_no_trace(void **state)
{
    (void)state;
    assert_int_equal(sh("echo hello >x.trace && %s calibrate --trace x.trace >out.txt 2>err.txt",
                        EPOCHSIM_BINARY),
                     1);
    assert_string_equal(slurp("out.txt"), "");
    assert_non_null(strstr(slurp("err.txt"), "x.trace"));
    assert_int_equal(sh("%s calibrate --trace missing.json >out.txt 2>err.txt", EPOCHSIM_BINARY),
                     1);
    assert_non_null(strstr(slurp("err.txt"), "cannot read 'missing.json'"));
}

static void test_calibrate_cmd_fits_writes_overlay_and_json(void **state)
{
    (void)state;
    assert_int_equal(sh("%s import kineto " TRACE " -o v100.trace >/dev/null", EPOCHSIM_BINARY), 0);
    /* a native trace and the Kineto JSON it came from give the same fit */
    assert_int_equal(sh("%s calibrate --trace " TRACE " --param kernel_overhead_us --param "
                        "mem_bw_gbps >json-out.txt",
                        EPOCHSIM_BINARY),
                     0);
    char *from_json = strdup(slurp("json-out.txt"));
    assert_int_equal(sh("%s calibrate --trace v100.trace --param kernel_overhead_us --param "
                        "mem_bw_gbps >native-out.txt",
                        EPOCHSIM_BINARY),
                     0);
    assert_string_equal(from_json, slurp("native-out.txt"));
    free(from_json);
    assert_int_equal(sh("%s calibrate --trace v100.trace --param kernel_overhead_us "
                        "--param mem_bw_gbps -o fit.yaml >out.txt 2>err.txt",
                        EPOCHSIM_BINARY),
                     0);
    const char *out = slurp("out.txt");
    assert_non_null(strstr(out, "calibrate v100-sxm2-32gb"));
    assert_non_null(strstr(out, "kernel_overhead_us"));
    const char *ov = slurp("fit.yaml");
    assert_non_null(strstr(ov, "gpus:"));
    assert_non_null(strstr(ov, "v100-sxm2-32gb:"));
    assert_non_null(strstr(ov, "mem_bw_gbps:"));
    /* run takes the overlay (the fitted V100 replaces the catalog's) */
    assert_int_equal(sh("%s run --set system.gpu=v100-sxm2-32gb --set workload.model=resnet18 "
                        "--set training.max_steps=3 --set system.catalog_overlay=fit.yaml "
                        "--quiet",
                        EPOCHSIM_BINARY),
                     0);
    assert_int_equal(sh("%s calibrate --trace v100.trace --param kernel_overhead_us --json - "
                        ">out.json",
                        EPOCHSIM_BINARY),
                     0);
    const char *js = slurp("out.json");
    assert_non_null(strstr(js, "\"gpu\": \"v100-sxm2-32gb\""));
    assert_non_null(strstr(js, "\"std_error\""));
    assert_non_null(strstr(js, "\"converged\": true"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_calibrate_cmd_usage_errors, cal_dir_make,
                                        cal_dir_remove),
        cmocka_unit_test_setup_teardown(test_calibrate_cmd_refuses_what_is_no_trace, cal_dir_make,
                                        cal_dir_remove),
        cmocka_unit_test_setup_teardown(test_calibrate_cmd_fits_writes_overlay_and_json,
                                        cal_dir_make, cal_dir_remove),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
