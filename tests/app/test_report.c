/* test_report.c — the run report of a job on a MIG instance, through the real binary
 * (EPOCHSIM_BINARY): NVML has no GPU-Util for a MIG device, so the text says so and the JSON
 * carries null with a note, while SM active is reported as usual. And a data-parallel run's
 * JSON gives each GPU's DataLoader workers, not only GPU 0's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <yajl/yajl_tree.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/configs/hardware"
#define MIG_RUN                                                                                    \
    "run --set system.gpu=a100-sxm4-80gb --set workload.model=resnet50 "                           \
    "--set workload.precision=amp_fp16 --set dataset.sample_bytes=1 --set dataset.decode_us=0 "    \
    "--set dataset.input_bytes=1 --set training.max_steps=5 --set training.epochs=2 "              \
    "--set loader.batch_size=64 --set placement.mig=1g.10gb"

/* Runs `epochsim ARGS`; returns its stdout (malloc'd) and exit code. */
static char *run(const char *args, int *status)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "EPOCHSIM_CATALOG='%s' '%s' %s 2>/dev/null", CATALOG, EPOCHSIM_BINARY,
             args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 20, len = 0, got;
    char *buf = malloc(cap);
    assert_non_null(buf);
    while ((got = fread(buf + len, 1, cap - len - 1, p)) > 0)
        len += got;
    buf[len] = 0;
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return buf;
}

static void test_report_mig_text_has_no_gpu_util(void **state)
{
    (void)state;
    int status;
    char *out = run(MIG_RUN, &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "MIG 1g.10gb: NVML reports no GPU-Util; read SM active"));
    assert_non_null(strstr(out, "SM active"));
    assert_non_null(strstr(out, "SMactive")); /* the per-epoch column */
    free(out);
}

static void test_report_mig_json_gpu_util_null(void **state)
{
    (void)state;
    int status;
    char *out = run(MIG_RUN " --json -", &status);
    assert_int_equal(status, 0);
    char why[256];
    yajl_val root = yajl_tree_parse(out, why, sizeof why);
    if (!root) fail_msg("JSON: %s", why);
    const char *util[] = {"gpu_util_pct", NULL}, *note[] = {"gpu_util_note", NULL},
               *sm[] = {"sm_active_pct", NULL}, *mig[] = {"scenario", "mig", NULL};
    yajl_val u = yajl_tree_get(root, util, yajl_t_any);
    assert_non_null(u);
    assert_true(YAJL_IS_NULL(u));
    assert_non_null(yajl_tree_get(root, note, yajl_t_string));
    yajl_val s = yajl_tree_get(root, sm, yajl_t_number);
    assert_non_null(s);
    assert_true(YAJL_GET_DOUBLE(s) > 0);
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(root, mig, yajl_t_string)), "1g.10gb");
    yajl_tree_free(root);
    free(out);
}

/* Two GPUs with 3 workers each: workers_busy_pct stays GPU 0's 3, workers_busy_pct_by_gpu has
 * one array of 3 per GPU (its first is GPU 0's), and every worker of both loaders did work. */
static void test_report_json_workers_by_gpu(void **state)
{
    (void)state;
    int status;
    char *out = run("run --set system.gpu_count=2 --set loader.num_workers=3 "
                    "--set training.max_steps=20 --json -",
                    &status);
    assert_int_equal(status, 0);
    char why[256];
    yajl_val root = yajl_tree_parse(out, why, sizeof why);
    if (!root) fail_msg("JSON: %s", why);
    const char *gpu0[] = {"workers_busy_pct", NULL}, *by[] = {"workers_busy_pct_by_gpu", NULL};
    yajl_val w0 = yajl_tree_get(root, gpu0, yajl_t_array),
             b = yajl_tree_get(root, by, yajl_t_array);
    assert_non_null(w0);
    assert_non_null(b);
    assert_int_equal(w0->u.array.len, 3);
    assert_int_equal(b->u.array.len, 2);
    for (size_t g = 0; g < 2; g++) {
        yajl_val ws = b->u.array.values[g];
        assert_true(YAJL_IS_ARRAY(ws) && ws->u.array.len == 3);
        for (size_t i = 0; i < 3; i++) {
            assert_true(YAJL_GET_DOUBLE(ws->u.array.values[i]) > 0);
            if (g == 0)
                assert_true(YAJL_GET_DOUBLE(ws->u.array.values[i]) ==
                            YAJL_GET_DOUBLE(w0->u.array.values[i]));
        }
    }
    yajl_tree_free(root);
    free(out);
}

/* A sweep mixing MIG and whole-GPU points keeps one set of columns: GPU-Util is an empty cell on
 * the instance (sim/app/sweep_row.c writes a null figure so) and a number on the whole GPU. */
static void test_report_mig_sweep_gpu_util_cell_empty(void **state)
{
    (void)state;
    int status;
    char *out = run("sweep --set system.gpu=a100-sxm4-80gb --set workload.model=resnet50 "
                    "--set loader.batch_size=64 --set training.max_steps=5 "
                    "--sweep placement.mig=1g.10gb, -o -",
                    &status);
    assert_int_equal(status, 0);
    char *mig = strstr(out, "\n0,1g.10gb,"), *whole = strstr(out, "\n1,,");
    assert_non_null(mig);
    assert_non_null(whole);
    /* gpu_util_pct is the 9th column: point, placement.mig, seed, epoch_time_s, samples,
     * samples_per_s, step_time_ms_p50, step_time_ms_p99, gpu_util_pct */
    const char *cell[2] = {mig + 1, whole + 1};
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 8; c++)
            cell[k] = strchr(cell[k], ',') + 1;
    assert_int_equal(cell[0][0], ',');
    assert_true(cell[1][0] >= '0' && cell[1][0] <= '9');
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_mig_text_has_no_gpu_util),
        cmocka_unit_test(test_report_mig_json_gpu_util_null),
        cmocka_unit_test(test_report_mig_sweep_gpu_util_cell_empty),
        cmocka_unit_test(test_report_json_workers_by_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
