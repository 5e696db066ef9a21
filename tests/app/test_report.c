/* test_report.c — the run report of a job on a MIG instance, through the real binary
 * (EPOCHSIM_BINARY): NVML has no GPU-Util for a MIG device, so the text says so and the JSON
 * carries null with a note, while SM active is reported as usual. And a data-parallel run's
 * JSON gives each GPU's DataLoader workers, not only GPU 0's; a jobs: run's gives each job its
 * own part of the host and the host's figures beside them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
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

/* A number at `path` (NULL-terminated keys) under v; fails when it is missing. */
static double num(yajl_val v, const char **path)
{
    yajl_val n = yajl_tree_get(v, path, yajl_t_number);
    if (!n) fail_msg("no number at %s", path[0]);
    return YAJL_GET_DOUBLE(n);
}

/* Two jobs on one GPU, one reading from the NVMe drive and one with its dataset in RAM: each
 * job's cpu_util_pct, storage_busy_pct and h2d_busy_pct are its own part; `host` and each
 * `gpus` item carry the whole. */
static void test_report_jobs_json_parts_and_host(void **state)
{
    (void)state;
    char path[] = "/tmp/epochsim-report-jobs-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("workload: {model: resnet18, precision: amp_bf16}\n"
          "dataset: {samples: 20000}\nloader: {batch_size: 128, num_workers: 4}\n"
          "training: {max_steps: 40}\n"
          "jobs:\n  - {name: disk}\n  - {name: ram, dataset: {location: memory}}\n",
          f);
    fclose(f);
    char args[256];
    snprintf(args, sizeof args, "run %s --json -", path);
    int status;
    char *out = run(args, &status);
    remove(path);
    assert_int_equal(status, 0);
    char why[256];
    yajl_val root = yajl_tree_parse(out, why, sizeof why);
    if (!root) fail_msg("JSON: %s", why);
    const char *jobs_key[] = {"jobs", NULL}, *gpus_key[] = {"gpus", NULL};
    const char *cpu[] = {"cpu_util_pct", NULL}, *storage[] = {"storage_busy_pct", NULL},
               *h2d[] = {"h2d_busy_pct", NULL}, *wall[] = {"total_time_s", NULL};
    const char *host_cpu[] = {"host", "cpu_util_pct", NULL},
               *host_storage[] = {"host", "storage_busy_pct", NULL},
               *host_runnable[] = {"host", "cpu_runnable", NULL};
    yajl_val jobs = yajl_tree_get(root, jobs_key, yajl_t_array);
    yajl_val gpus = yajl_tree_get(root, gpus_key, yajl_t_array);
    assert_true(jobs && jobs->u.array.len == 2 && gpus && gpus->u.array.len == 1);
    double t = num(root, wall), cpu_sum = 0, h2d_sum = 0;
    for (size_t j = 0; j < 2; j++) {
        yajl_val job = jobs->u.array.values[j];
        cpu_sum += num(job, cpu) * num(job, wall);
        h2d_sum += num(job, h2d) * num(job, wall);
    }
    /* The parts add up to the host's busy time (share x wall time). 1e-9: the figures are
     * written with 17 significant digits, and the parts differ from the whole by floating-point
     * rounding only (test_gpushare_each_job_has_its_own_part_of_the_host). */
    double host = num(root, host_cpu) * t;
    if (fabs(cpu_sum - host) > 1e-9 * host)
        fail_msg("the jobs' CPU parts %.17g against the host's %.17g", cpu_sum, host);
    double link = num(gpus->u.array.values[0], h2d) * t;
    if (fabs(h2d_sum - link) > 1e-9 * link)
        fail_msg("the jobs' copies %.17g against GPU 0's link %.17g", h2d_sum, link);
    /* the job whose dataset is in RAM reads nothing from the drive */
    assert_true(num(jobs->u.array.values[1], storage) == 0);
    assert_true(num(jobs->u.array.values[0], storage) > 0);
    assert_true(num(root, host_storage) > 0 && num(root, host_runnable) > 0);
    yajl_tree_free(root);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_mig_text_has_no_gpu_util),
        cmocka_unit_test(test_report_mig_json_gpu_util_null),
        cmocka_unit_test(test_report_mig_sweep_gpu_util_cell_empty),
        cmocka_unit_test(test_report_json_workers_by_gpu),
        cmocka_unit_test(test_report_jobs_json_parts_and_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
