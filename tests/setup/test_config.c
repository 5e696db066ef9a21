/* test_config.c — experiment files and --set: good input loads, bad input is a clear error
 * naming the file, line and column (1-based) or the --set argument, and never a crash; keys that
 * the scenario resolves from others (the batch copy's dispatch) resolve as documented. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/setup/config.h"
#include "sim/setup/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[] = "/tmp/epochsim-test-config-XXXXXX";

static const char *write_yaml(const char *text)
{
    strcpy(path, "/tmp/epochsim-test-config-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static int load(const char *text, sim_experiment *x, sim_err *err)
{
    sim_experiment_defaults(x);
    sim_err_clear(err);
    int rc = cfg_experiment_load(write_yaml(text), x, NULL, err);
    unlink(path);
    return rc;
}

static void test_config_loads_nested_keys(void **state)
{
    (void)state;
    sim_experiment x;
    sim_err err;
    assert_int_equal(load("seed: 7\nloader:\n  batch_size: 64\n  pin_memory: false\n"
                          "workload:\n  precision: amp_fp16\n",
                          &x, &err),
                     0);
    assert_int_equal(x.seed, 7);
    assert_int_equal(x.loader.batch_size, 64);
    assert_false(x.loader.pin_memory);
    assert_int_equal(x.workload.precision, SIM_PREC_AMP_FP16);
}

static void test_config_unknown_key_names_line_and_suggests(void **state)
{
    (void)state;
    sim_experiment x;
    sim_err err;
    assert_int_equal(load("loader:\n  batch_size: 64\n  num_worker: 4\n", &x, &err), SIM_EINVAL);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.col, 3);
    assert_non_null(strstr(err.msg, "unknown key 'loader.num_worker'"));
    assert_non_null(strstr(err.msg, "did you mean 'loader.num_workers'"));
}

static void test_config_malformed_yaml_is_an_error_with_position(void **state)
{
    (void)state;
    sim_experiment x;
    sim_err err;
    assert_int_equal(load("loader:\n  batch_size: [64\n", &x, &err), SIM_EINVAL);
    assert_true(err.line >= 2);
    assert_non_null(strstr(err.msg, "malformed YAML"));
}

static void test_config_wrong_type_and_range_are_errors(void **state)
{
    (void)state;
    sim_experiment x;
    sim_err err;
    assert_int_equal(load("loader:\n  batch_size: many\n", &x, &err), SIM_EINVAL);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.col, 15);
    assert_non_null(strstr(err.msg, "expected an integer"));
    assert_int_equal(load("loader:\n  batch_size: -3\n", &x, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "must be between"));
    assert_int_equal(load("dataset:\n  samples: 0\n", &x, &err), SIM_EINVAL);
    assert_int_equal(load("loader:\n  pin_memory: maybe\n", &x, &err), SIM_EINVAL);
    assert_int_equal(load("workload:\n  precision: fp64\n", &x, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "unknown precision"));
    assert_int_equal(load("loader: 5\n", &x, &err), SIM_EINVAL);
    assert_int_equal(load("- 1\n- 2\n", &x, &err), SIM_EINVAL);
    assert_int_equal(load("", &x, &err), SIM_EINVAL);
}

static void test_config_set_overrides_and_reports_the_argument(void **state)
{
    (void)state;
    sim_experiment x;
    sim_experiment_defaults(&x);
    sim_err err;
    sim_err_clear(&err);
    cfg_experiment_set set = {0};
    assert_int_equal(cfg_experiment_apply("loader.num_workers=3", &x, &set, &err), 0);
    assert_int_equal(x.loader.num_workers, 3);
    assert_true(cfg_experiment_was_set(&set, "loader.num_workers"));
    assert_false(cfg_experiment_was_set(&set, "loader.batch_size"));
    assert_int_equal(cfg_experiment_apply("loader.batch_size=0", &x, &set, &err), SIM_EINVAL);
    assert_string_equal(err.where, "--set loader.batch_size=0");
    assert_int_equal(cfg_experiment_apply("nonsense", &x, &set, &err), SIM_EINVAL);
    assert_int_equal(cfg_experiment_apply("system.gpuu=x", &x, &set, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "did you mean 'system.gpu'"));
}

static void test_config_unknown_catalog_name_is_an_error(void **state)
{
    (void)state;
    sim_experiment x;
    sim_experiment_defaults(&x);
    strcpy(x.system.gpu, "no-such-gpu");
    strcpy(x.system.cpu, "test-cpu-8c");
    strcpy(x.system.storage, "test-nvme");
    sim_scenario sc;
    sim_err err;
    sim_err_clear(&err);
    int rc = sim_scenario_build(&x, NULL, EPOCHSIM_SOURCE_DIR "/tests/data/catalog", &sc, &err);
    assert_int_equal(rc, SIM_ENOENT);
    assert_non_null(strstr(err.msg, "system.gpu: unknown gpus 'no-such-gpu'"));
    assert_non_null(strstr(err.msg, "test-gpu"));
    strcpy(x.system.gpu, "../etc/passwd");
    assert_int_equal(
        sim_scenario_build(&x, NULL, EPOCHSIM_SOURCE_DIR "/tests/data/catalog", &sc, &err),
        SIM_EINVAL);
}

static void test_config_named_system_fills_only_unset_keys(void **state)
{
    (void)state;
    sim_experiment x;
    sim_experiment_defaults(&x);
    cfg_experiment_set set = {0};
    sim_err err;
    sim_err_clear(&err);
    assert_int_equal(cfg_experiment_apply("system.name=test-box", &x, &set, &err), 0);
    assert_int_equal(cfg_experiment_apply("system.storage=test-hdd", &x, &set, &err), 0);
    sim_scenario sc;
    assert_int_equal(
        sim_scenario_build(&x, &set, EPOCHSIM_SOURCE_DIR "/tests/data/catalog", &sc, &err), 0);
    assert_string_equal(sc.hw.gpu.name, "test-gpu");
    assert_string_equal(sc.hw.cpu.name, "test-cpu-8c");
    assert_string_equal(sc.hw.storage.name, "test-hdd");
    assert_true(sc.hw.host_memory_gb == 64);
    sim_scenario_free(&sc);
}

/* Builds the scenario of `file` (NULL: the defaults on the test catalog) with the --set
 * arguments `sets`, and returns the batch copy's CPU dispatch and the first op's. */
static void copy_dispatch_of(const char *file, const char *const *sets, int64_t *copy_ns,
                             int64_t *op_ns)
{
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err err;
    sim_err_clear(&err);
    sim_experiment_defaults(&x);
    const char *catalog = EPOCHSIM_SOURCE_DIR "/tests/data/catalog";
    if (file) {
        assert_int_equal(cfg_experiment_load(file, &x, &set, &err), 0);
        catalog = EPOCHSIM_SOURCE_DIR "/configs/hardware";
    } else {
        strcpy(x.system.gpu, "test-gpu");
        strcpy(x.system.cpu, "test-cpu-8c");
        strcpy(x.system.storage, "test-nvme");
    }
    for (const char *const *s = sets; *s; s++)
        assert_int_equal(cfg_experiment_apply(*s, &x, &set, &err), 0);
    sim_scenario sc;
    if (sim_scenario_build(&x, &set, catalog, &sc, &err)) fail_msg("build: %s", err.msg);
    *copy_ns = sc.copy_dispatch_ns;
    *op_ns = sc.program.ops[0].dispatch_ns;
    sim_scenario_free(&sc);
}

static void test_config_copy_dispatch_is_its_own_key(void **state)
{
    (void)state;
    sim_experiment x;
    sim_err err;
    assert_int_equal(load("loader:\n  copy_dispatch_us: 12.5\n", &x, &err), 0);
    assert_true(x.copy_dispatch_us == 12.5);
    assert_int_equal(load("loader:\n  copy_dispatch_us: -1\n", &x, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "must be between"));
    assert_int_equal(load("loader:\n  copy_dispatch_us: 2e9\n", &x, &err), SIM_EINVAL);

    int64_t copy, op;
    /* defaults: 25 us each; the two keys are independent */
    copy_dispatch_of(NULL, (const char *const[]){NULL}, &copy, &op);
    assert_int_equal(copy, 25000);
    assert_int_equal(op, 25000);
    copy_dispatch_of(NULL, (const char *const[]){"workload.dispatch_us=20", NULL}, &copy, &op);
    assert_int_equal(copy, 25000);
    assert_int_equal(op, 20000);
    /* set: the copy alone changes, the synthetic kernels keep workload.dispatch_us */
    copy_dispatch_of(
        NULL, (const char *const[]){"workload.dispatch_us=20", "loader.copy_dispatch_us=7", NULL},
        &copy, &op);
    assert_int_equal(copy, 7000);
    assert_int_equal(op, 20000);

    /* a replay: the recorded copy's dispatch, which workload.dispatch_us no longer overrides
     * (the trace's ops keep their recorded dispatch too); the key does */
    const char *replay = EPOCHSIM_SOURCE_DIR "/configs/experiments/replay-resnet50-nw0.yaml";
    int64_t recorded, recorded_op;
    copy_dispatch_of(replay, (const char *const[]){NULL}, &recorded, &recorded_op);
    assert_true(recorded > 0 && recorded != 25000);
    copy_dispatch_of(replay, (const char *const[]){"workload.dispatch_us=3", NULL}, &copy, &op);
    assert_int_equal(copy, recorded);
    assert_int_equal(op, recorded_op);
    copy_dispatch_of(replay, (const char *const[]){"loader.copy_dispatch_us=7", NULL}, &copy, &op);
    assert_int_equal(copy, 7000);
    assert_int_equal(op, recorded_op);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_loads_nested_keys),
        cmocka_unit_test(test_config_unknown_key_names_line_and_suggests),
        cmocka_unit_test(test_config_malformed_yaml_is_an_error_with_position),
        cmocka_unit_test(test_config_wrong_type_and_range_are_errors),
        cmocka_unit_test(test_config_set_overrides_and_reports_the_argument),
        cmocka_unit_test(test_config_unknown_catalog_name_is_an_error),
        cmocka_unit_test(test_config_named_system_fills_only_unset_keys),
        cmocka_unit_test(test_config_copy_dispatch_is_its_own_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
