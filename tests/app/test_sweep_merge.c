/* test_sweep_merge.c — shards of a small sweep (with an invalid point, on 2 threads, CSV and JSON
 * lines) merged in any order give the single-process file byte for byte; a shard cut by an
 * interruption and finished with --resume merges the same; a missing, repeated, cut or foreign
 * shard is named and nothing is written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/app/sweep_merge.h"
#include "sim/app/sweep_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/tests/data/catalog"
#define SHARDS 3

/* 16 points on the test devices; "abc" makes four error rows. */
static const char *const grid[] = {"loader.batch_size=16,32,abc,64", "loader.num_workers=0,2",
                                   "dataset.decode_us=300,500", NULL};
static const char *const other_grid[] = {"loader.batch_size=16,32", NULL};

/* Runs the sweep of axes (shard sh; count 0 = whole) into path. */
static void sweep(const char *const *axes, sim_sweep_format f, sim_sweep_shard sh, bool resume,
                  const char *path)
{
    static const char *const sets[] = {
        "system.gpu=test-gpu",      "system.cpu=test-cpu-8c",   "system.storage=test-nvme",
        "system.host_memory_gb=64", "dataset.samples=100000",   "dataset.sample_bytes=1000",
        "dataset.input_bytes=1000", "loader.worker_start_ms=0", "workload.kernels_per_step=10",
        "workload.kernel_us=1000",  "training.max_steps=10",    NULL,
    };
    sim_err err;
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_experiment_defaults(&x);
    for (const char *const *s = sets; *s; s++)
        assert_int_equal(cfg_experiment_apply(*s, &x, &set, &err), 0);
    sim_sweep_spec s;
    sim_sweep_spec_init(&s);
    for (const char *const *a = axes; *a; a++)
        assert_int_equal(sim_sweep_spec_add(&s, *a, 0, &err), 0);
    sim_sweep_opts o = {.out_path = path,
                        .format = f,
                        .threads = 2,
                        .replications = 1,
                        .resume = resume,
                        .force = !resume,
                        .catalog_dir = CATALOG,
                        .shard = sh};
    sim_sweep_stats st;
    if (sim_sweep_run(&s, &x, &set, &o, &st, &err)) fail_msg("%s", err.msg);
    assert_false(st.interrupted);
    if (!sh.count && axes == grid) assert_int_equal(st.failed, 4); /* the "abc" points */
    sim_sweep_spec_free(&s);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    char *buf = malloc(1 << 20);
    assert_non_null(buf);
    *len = fread(buf, 1, 1 << 20, fp);
    assert_true(*len < 1 << 20);
    fclose(fp);
    return buf;
}

static void assert_same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *da = slurp(a, &la), *db = slurp(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(da, db, la);
    free(da);
    free(db);
}

/* /tmp/epochsim-merge-PID-NAME */
static const char *tmp(const char *name)
{
    static char buf[8][128];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "/tmp/epochsim-merge-%d-%s", (int)getpid(), name);
    return p;
}

static void shard_files(sim_sweep_format f, const char *paths[SHARDS])
{
    static char names[SHARDS][128];
    for (int i = 0; i < SHARDS; i++) {
        snprintf(names[i], sizeof names[i], "%s", tmp(i == 0 ? "s0" : i == 1 ? "s1" : "s2"));
        sweep(grid, f, (sim_sweep_shard){(uint64_t)i, SHARDS}, false, names[i]);
        paths[i] = names[i];
    }
}

/* Merges paths into merged, checks it equals full byte for byte, and removes them all. */
static void merge_equals_then_remove(const char **paths, const char *merged, const char *full)
{
    sim_err err;
    if (sim_sweep_merge(merged, paths, SHARDS, &err)) fail_msg("%s", err.msg);
    assert_same_file(merged, full);
    for (int i = 0; i < SHARDS; i++)
        unlink(paths[i]);
    unlink(full);
    unlink(merged);
}

static void test_sweep_merge_equals_single_run(void **state)
{
    (void)state;
    for (int f = 0; f < 2; f++) {
        sim_sweep_format format = f ? SIM_SWEEP_JSONL : SIM_SWEEP_CSV;
        const char *full = tmp("full"), *merged = tmp("merged"), *paths[SHARDS];
        sweep(grid, format, (sim_sweep_shard){0, 0}, false, full);
        shard_files(format, paths);
        const char *order[SHARDS] = {paths[2], paths[0], paths[1]}; /* any order */
        merge_equals_then_remove(order, merged, full);
    }
}

static void test_sweep_merge_resumed_shard(void **state)
{
    (void)state;
    const char *full = tmp("full"), *merged = tmp("merged"), *paths[SHARDS];
    sweep(grid, SIM_SWEEP_CSV, (sim_sweep_shard){0, 0}, false, full);
    shard_files(SIM_SWEEP_CSV, paths);
    /* Cut shard 1 in the middle of its last row, as kill -9 leaves it, and finish it. */
    size_t len;
    char *data = slurp(paths[1], &len);
    FILE *fp = fopen(paths[1], "wb");
    fwrite(data, 1, len - 20, fp);
    fclose(fp);
    free(data);
    sim_err err;
    assert_int_equal(sim_sweep_merge(merged, paths, SHARDS, &err), SIM_EINVAL);
    assert_non_null(strstr(err.where, paths[1]));
    assert_non_null(strstr(err.msg, "is incomplete"));
    assert_int_equal(access(merged, F_OK), -1); /* nothing written */
    sweep(grid, SIM_SWEEP_CSV, (sim_sweep_shard){1, SHARDS}, true, paths[1]);
    merge_equals_then_remove(paths, merged, full);
}

static void test_sweep_merge_errors(void **state)
{
    (void)state;
    const char *merged = tmp("merged"), *paths[SHARDS], *foreign = tmp("foreign");
    shard_files(SIM_SWEEP_CSV, paths);
    sweep(other_grid, SIM_SWEEP_CSV, (sim_sweep_shard){1, SHARDS}, false, foreign);
    sim_err err;
    /* A missing shard is named, with the count. */
    assert_int_equal(sim_sweep_merge(merged, (const char *[]){paths[0], paths[2]}, 2, &err),
                     SIM_EINVAL);
    assert_non_null(strstr(err.msg, "shard 1/3 is missing"));
    /* The same shard twice. */
    assert_int_equal(
        sim_sweep_merge(merged, (const char *[]){paths[0], paths[1], paths[2], paths[1]}, 4, &err),
        SIM_EINVAL);
    assert_non_null(strstr(err.msg, "shard 1/3 is given twice"));
    /* A shard of another sweep, even with the right index and count. */
    assert_int_equal(
        sim_sweep_merge(merged, (const char *[]){paths[0], foreign, paths[2]}, 3, &err),
        SIM_EINVAL);
    assert_string_equal(err.where, foreign);
    assert_non_null(strstr(err.msg, "a shard of another sweep"));
    /* A plain sweep file is not a shard. */
    sweep(grid, SIM_SWEEP_CSV, (sim_sweep_shard){0, 0}, false, foreign);
    assert_int_equal(sim_sweep_merge(merged, (const char *[]){foreign}, 1, &err), SIM_EFORMAT);
    assert_non_null(strstr(err.msg, "not a sweep shard"));
    assert_int_equal(access(merged, F_OK), -1);
    for (int i = 0; i < SHARDS; i++)
        unlink(paths[i]);
    unlink(foreign);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_merge_equals_single_run),
        cmocka_unit_test(test_sweep_merge_resumed_shard),
        cmocka_unit_test(test_sweep_merge_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
