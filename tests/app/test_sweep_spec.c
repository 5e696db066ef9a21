/* test_sweep_spec.c — the `sweep:` block and --sweep/--zip: expansion counts and order,
 * file:line:col errors, and point seeds that depend on a point's values, not its position. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/app/sweep_spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes text to a fresh temporary file named in path. */
static void write_tmp(char *path, size_t size, const char *text)
{
    snprintf(path, size, "/tmp/epochsim-sweep-spec-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static const char *value_at(const sim_sweep_spec *s, uint64_t i, size_t col)
{
    static const char *v[16];
    sim_sweep_point p;
    sim_sweep_spec_point(s, i, &p, v);
    return v[col];
}

static void test_sweep_spec_grid_zip_hardware_order(void **state)
{
    (void)state;
    char path[64];
    write_tmp(path, sizeof path,
              "loader: {num_workers: 8}\n"
              "sweep:\n"
              "  grid: {loader.batch_size: [32, 64], system: {gpu: [ga, gb, gc]}}\n"
              "  zip:\n"
              "    loader.prefetch_factor: [2, 4]\n"
              "    dataset.decode_cv: [0, 0.5]\n"
              "  hardware:\n"
              "    - {name: vm, system.cpu_cores: 30}\n"
              "    - name: box\n"
              "      system: {name: test-box}\n");
    sim_sweep_spec s;
    sim_sweep_spec_init(&s);
    sim_err err;
    sim_err_clear(&err);
    assert_int_equal(sim_sweep_spec_load(&s, path, &err), 0);
    assert_int_equal(sim_sweep_spec_check(&s, &err), 0);
    /* 2 batch sizes x 3 GPUs x 2 zipped pairs x 2 hardware sets. */
    assert_int_equal(sim_sweep_spec_points(&s), 24);
    assert_int_equal(sim_sweep_spec_columns(&s), 5);
    assert_string_equal(sim_sweep_spec_column(&s, 0), "loader.batch_size");
    assert_string_equal(sim_sweep_spec_column(&s, 1), "system.gpu"); /* nested section */
    assert_string_equal(sim_sweep_spec_column(&s, 2), "loader.prefetch_factor");
    assert_string_equal(sim_sweep_spec_column(&s, 3), "dataset.decode_cv");
    assert_string_equal(sim_sweep_spec_column(&s, 4), "hardware");
    /* itertools.product order: hardware fastest, then the zip tuple, then the grid from the
     * last key to the first. */
    assert_string_equal(value_at(&s, 0, 0), "32");
    assert_string_equal(value_at(&s, 0, 1), "ga");
    assert_string_equal(value_at(&s, 0, 4), "vm");
    assert_string_equal(value_at(&s, 1, 4), "box");
    assert_string_equal(value_at(&s, 1, 2), "2");
    assert_string_equal(value_at(&s, 2, 2), "4");
    assert_string_equal(value_at(&s, 2, 3), "0.5"); /* zipped keys move together */
    assert_string_equal(value_at(&s, 2, 4), "vm");
    assert_string_equal(value_at(&s, 4, 1), "gb");
    assert_string_equal(value_at(&s, 11, 1), "gc");
    assert_string_equal(value_at(&s, 11, 0), "32");
    assert_string_equal(value_at(&s, 12, 0), "64");
    assert_string_equal(value_at(&s, 23, 0), "64");
    assert_string_equal(value_at(&s, 23, 1), "gc");
    assert_string_equal(value_at(&s, 23, 3), "0.5");
    assert_string_equal(value_at(&s, 23, 4), "box");
    /* The hardware set's assignments, nested section flattened. */
    assert_int_equal(s.n_hw, 2);
    assert_int_equal(s.hw[1].n, 1);
    assert_string_equal(s.hw[1].assign[0], "system.name=test-box");

    /* The experiment part loads with the sweep block skipped. */
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_experiment_defaults(&x);
    assert_int_equal(sim_sweep_load_experiment(path, &x, &set, &err), 0);
    assert_int_equal(x.loader.num_workers, 8);

    /* A point applies its values on top of the base. */
    const char *v[8];
    sim_sweep_point p;
    sim_sweep_spec_point(&s, 23, &p, v);
    uint64_t seed = 0;
    assert_int_equal(sim_sweep_point_apply(&s, &p, &x, &set, &seed, &err), 0);
    assert_int_equal(x.loader.batch_size, 64);
    assert_string_equal(x.system.gpu, "gc");
    assert_int_equal(x.loader.prefetch_factor, 4);
    assert_string_equal(x.system.name, "test-box");
    assert_true(cfg_experiment_was_set(&set, "system.name"));
    assert_true(seed == x.seed && seed < (1ULL << 53));
    sim_sweep_spec_free(&s);
    unlink(path);
}

static void test_sweep_spec_command_line(void **state)
{
    (void)state;
    sim_sweep_spec s;
    sim_sweep_spec_init(&s);
    sim_err err;
    sim_err_clear(&err);
    assert_int_equal(sim_sweep_spec_add(&s, "loader.batch_size=32,64,128", 0, &err), 0);
    assert_int_equal(sim_sweep_spec_add(&s, "system.gpu=a10,a100-sxm4-80gb", 0, &err), 0);
    assert_int_equal(sim_sweep_spec_points(&s), 6);
    /* A second --sweep of the same key replaces the first (the file's axis, usually). */
    assert_int_equal(sim_sweep_spec_add(&s, "loader.batch_size=16", 0, &err), 0);
    assert_int_equal(sim_sweep_spec_points(&s), 2);
    assert_string_equal(value_at(&s, 1, 1), "a100-sxm4-80gb");
    assert_int_equal(sim_sweep_spec_add(&s, "loader.num_workers=1,2,3", 1, &err), 0);
    assert_int_equal(sim_sweep_spec_add(&s, "loader.prefetch_factor=2,4", 1, &err), 0);
    assert_int_equal(sim_sweep_spec_check(&s, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "zip: 'loader.prefetch_factor' has 2 values"));
    /* Unknown keys and missing values name the argument. */
    assert_int_equal(sim_sweep_spec_add(&s, "loader.batch_sise=1", 0, &err), SIM_EINVAL);
    assert_string_equal(err.where, "--sweep loader.batch_sise=1");
    assert_non_null(strstr(err.msg, "did you mean 'loader.batch_size'"));
    assert_int_equal(sim_sweep_spec_add(&s, "loader.batch_size", 0, &err), SIM_EINVAL);
    assert_int_equal(sim_sweep_spec_add(&s, "loader.batch_size=", 0, &err), SIM_EINVAL);
    sim_sweep_spec_free(&s);

    /* A key both gridded and zipped is refused. */
    sim_sweep_spec_init(&s);
    assert_int_equal(sim_sweep_spec_add(&s, "loader.batch_size=32,64", 0, &err), 0);
    assert_int_equal(sim_sweep_spec_add(&s, "loader.batch_size=32,64", 1, &err), 0);
    assert_int_equal(sim_sweep_spec_check(&s, &err), SIM_EINVAL);
    sim_sweep_spec_free(&s);

    /* No axes: one point, the base experiment. */
    sim_sweep_spec_init(&s);
    assert_int_equal(sim_sweep_spec_points(&s), 1);
    assert_int_equal(sim_sweep_spec_columns(&s), 0);
    sim_sweep_spec_free(&s);
}

/* Loads text as a sweep file and expects an error at line:col containing `what`. */
static void expect_error(const char *text, int line, int col, const char *what)
{
    char path[64];
    write_tmp(path, sizeof path, text);
    sim_sweep_spec s;
    sim_sweep_spec_init(&s);
    sim_err err;
    sim_err_clear(&err);
    int rc = sim_sweep_spec_load(&s, path, &err);
    if (!rc) rc = sim_sweep_spec_check(&s, &err);
    assert_int_equal(rc, SIM_EINVAL);
    if (!strstr(err.msg, what) || err.line != line || err.col != col)
        fail_msg("expected %d:%d '%s', got %d:%d '%s'", line, col, what, err.line, err.col,
                 err.msg);
    if (line) /* cross checks after loading have no single position */
        assert_string_equal(err.where, path);
    sim_sweep_spec_free(&s);
    unlink(path);
}

static void test_sweep_spec_errors_name_line_and_column(void **state)
{
    (void)state;
    expect_error("sweep:\n"
                 "  zip:\n"
                 "    loader.batch_size: [32, 64]\n"
                 "    loader.num_workers: [1, 2, 3]\n",
                 4, 25, "zip: 'loader.num_workers' has 3 values but 'loader.batch_size' has 2");
    expect_error("sweep:\n"
                 "  grid:\n"
                 "    loader.batch_sise: [32]\n",
                 3, 5, "unknown key 'loader.batch_sise' (did you mean 'loader.batch_size'?)");
    expect_error("sweep:\n  gird: {loader.batch_size: [1]}\n", 2, 3, "unknown key 'sweep.gird'");
    expect_error("sweep:\n  grid: {loader.batch_size: 32}\n", 2, 29, "expected a non-empty list");
    expect_error("sweep:\n  hardware:\n    - {system.gpu: a10}\n", 3, 7,
                 "a hardware set needs a 'name'");
    expect_error("sweep:\n  hardware:\n    - {name: x, system.gpuu: a10}\n", 3, 17,
                 "unknown key 'system.gpuu'");
    expect_error("sweep:\n"
                 "  grid: {system.gpu: [a10]}\n"
                 "  hardware: [{name: x, system.gpu: a10}]\n",
                 0, 0, "'system.gpu' is both swept and set by hardware set 'x'");
    /* A broken file is a YAML error with its position, not a crash. */
    expect_error("sweep:\n  grid: {loader.batch_size: [32, 64\n", 3, 1, "malformed YAML");
}

/* Seed of the point whose batch size is `bs` in a one-axis sweep over `values`. */
static uint64_t seed_of(const char *axis, const char *bs)
{
    sim_sweep_spec s;
    sim_sweep_spec_init(&s);
    sim_err err;
    assert_int_equal(sim_sweep_spec_add(&s, axis, 0, &err), 0);
    uint64_t seed = 0;
    bool found = false;
    for (uint64_t i = 0; i < sim_sweep_spec_points(&s); i++) {
        const char *v[2];
        sim_sweep_point p;
        sim_sweep_spec_point(&s, i, &p, v);
        if (strcmp(v[0], bs)) continue;
        sim_experiment x;
        cfg_experiment_set set = {0};
        sim_experiment_defaults(&x);
        sim_sweep_point_apply(&s, &p, &x, &set, &seed, NULL);
        found = true;
    }
    assert_true(found);
    sim_sweep_spec_free(&s);
    return seed;
}

static void test_sweep_spec_seed_follows_values_not_index(void **state)
{
    (void)state;
    uint64_t a = seed_of("loader.batch_size=32,64", "64");
    /* The same point at another index, in a longer sweep. */
    assert_true(a == seed_of("loader.batch_size=16,32,48,64", "64"));
    /* The value is hashed as parsed: 6.4e1 is 64. */
    assert_true(a == seed_of("loader.batch_size=6.4e1,32", "6.4e1"));
    assert_true(a != seed_of("loader.batch_size=32,64", "32"));
    assert_true(a != seed_of("loader.num_workers=32,64", "64")); /* the key counts too */
    assert_true(sim_sweep_replication_seed(a, 0) == a);
    assert_true(sim_sweep_replication_seed(a, 1) != a);
    assert_true(sim_sweep_replication_seed(a, 1) != sim_sweep_replication_seed(a, 2));
    /* splitmix64 reference value: the first output for state 0 (java.util.SplittableRandom). */
    assert_true(sim_sweep_mix(0) == 0xe220a8397b1dcdafULL);
}

/* A relative workload.trace in a sweep file is relative to the file's folder, as in `run`. */
static void test_sweep_spec_trace_relative_to_file(void **state)
{
    (void)state;
    char path[64];
    write_tmp(path, sizeof path,
              "workload:\n  trace: data/step.json.gz\nsweep:\n  grid:\n"
              "    loader.batch_size: [32, 64]\n");
    sim_experiment x;
    sim_experiment_defaults(&x);
    cfg_experiment_set set = {0};
    sim_err err;
    assert_int_equal(sim_sweep_load_experiment(path, &x, &set, &err), 0);
    char want[128];
    snprintf(want, sizeof want, "%.*s/data/step.json.gz", (int)(strrchr(path, '/') - path), path);
    assert_string_equal(x.workload.trace, want);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_spec_grid_zip_hardware_order),
        cmocka_unit_test(test_sweep_spec_command_line),
        cmocka_unit_test(test_sweep_spec_errors_name_line_and_column),
        cmocka_unit_test(test_sweep_spec_seed_follows_values_not_index),
        cmocka_unit_test(test_sweep_spec_trace_relative_to_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
