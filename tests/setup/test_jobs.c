/* test_jobs.c — the `jobs:` list of an experiment file (sim/setup/jobs.c): what each job takes
 * from its item, the file it names and the top level, and the errors that name file and line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "app/tmpdir_testkit.h"
#include "sim/setup/jobs.h"

#define CATALOG EPOCHSIM_SOURCE_DIR "/configs/hardware"

/* Writes text to dir/name and returns the path (static buffer per call site is not needed: the
 * caller copies it). */
static const char *put(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Loads the file's top level and its jobs; returns cfg_jobs_load's code. */
static int load(const char *path, sim_experiment *top, cfg_experiment_set *set, cfg_jobs *jobs,
                sim_err *err)
{
    static const char *const extra[] = {"jobs", NULL};
    sim_experiment_defaults(top);
    memset(set, 0, sizeof *set);
    sim_err_clear(err);
    if (cfg_experiment_load_with(path, extra, top, set, err)) fail_msg("top: %s", err->msg);
    return cfg_jobs_load(path, top, set, jobs, err);
}

static void test_jobs_items_take_the_top_level_their_file_and_their_keys(void **state)
{
    (void)state;
    put("solo.yaml", "system: {gpu: rtx-4090}\nloader: {batch_size: 16}\n");
    const char *path = put("list.yaml", "system: {gpu: a100-sxm4-80gb, gpu_count: 2}\n"
                                        "loader: {batch_size: 64}\n"
                                        "jobs:\n"
                                        "  - name: a\n"
                                        "  - name: b\n"
                                        "    loader: {batch_size: 32}\n"
                                        "    placement: {gpus: [1]}\n"
                                        "  - name: c\n"
                                        "    experiment: solo.yaml\n");
    sim_experiment top;
    cfg_experiment_set set;
    cfg_jobs jobs;
    sim_err err;
    assert_int_equal(load(path, &top, &set, &jobs, &err), 0);
    assert_int_equal(jobs.n, 3);
    assert_string_equal(jobs.job[0].name, "a");
    assert_int_equal(jobs.job[0].x.loader.batch_size, 64); /* the top level's */
    assert_int_equal(jobs.job[0].x.placement.gpus.n, 1);   /* [0] by default */
    assert_int_equal(jobs.job[0].x.placement.gpus.v[0], 0);
    assert_int_equal(jobs.job[1].x.loader.batch_size, 32); /* its own */
    assert_int_equal(jobs.job[1].x.placement.gpus.v[0], 1);
    assert_int_equal(jobs.job[2].x.loader.batch_size, 16);           /* its file's */
    assert_string_equal(jobs.job[2].x.system.gpu, "a100-sxm4-80gb"); /* the shared system */
    cfg_jobs_free(&jobs);
}

static void test_jobs_bad_items_name_file_and_line(void **state)
{
    (void)state;
    static const struct {
        const char *yaml, *says;
        int line;
    } cases[] = {
        {"jobs:\n  - name: a\n    system: {gpu: rtx-4090}\n", "shared by all jobs", 3},
        {"jobs:\n  - name: a\n  - name: a\n", "two jobs are named 'a'", 3},
        {"jobs:\n  - loader: {batch_size: 8}\n", "needs a name", 2},
        {"jobs:\n  - name: a\n    placement: {gpus: [0, 0]}\n", "lists 0 twice", 3},
        {"jobs:\n  - name: a\n    loader: {batch_sise: 8}\n", "did you mean", 3},
        {"jobs: 3\n", "expected a list", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = put("bad.yaml", cases[i].yaml);
        sim_experiment top;
        cfg_experiment_set set;
        cfg_jobs jobs;
        sim_err err;
        assert_int_not_equal(load(path, &top, &set, &jobs, &err), 0);
        if (!strstr(err.msg, cases[i].says) || err.line != cases[i].line)
            fail_msg("case %zu: %s:%d: %s", i, err.where, err.line, err.msg);
        assert_non_null(strstr(err.where, "bad.yaml"));
    }
}

/* Builds the jobs of the file's text; returns sim_jobs_build's code. */
static int build(const char *yaml, sim_jobs_setup *js, sim_err *err)
{
    const char *path = put("build.yaml", yaml);
    sim_experiment top;
    cfg_experiment_set set;
    cfg_jobs jobs;
    assert_int_equal(load(path, &top, &set, &jobs, err), 0);
    int rc = sim_jobs_build(&jobs, &top, &set, CATALOG, js, err);
    cfg_jobs_free(&jobs);
    return rc;
}

static void test_jobs_build_places_each_job_on_its_gpus(void **state)
{
    (void)state;
    sim_jobs_setup js;
    sim_err err;
    int rc = build("system: {gpu_count: 4, gpu_sharing: mps}\n"
                   "jobs:\n  - {name: a, placement: {gpus: [2, 3]}}\n  - {name: b}\n",
                   &js, &err);
    if (rc) fail_msg("%s", err.msg);
    assert_int_equal(js.system.hw.gpu_count, 4);
    assert_int_equal(js.sc[0].hw.gpu_count, 2); /* data-parallel over its own two */
    assert_int_equal(js.slot[0].gpus[1], 3);
    assert_int_equal(js.sc[1].hw.gpu_count, 1);
    assert_int_equal(js.share.mode, SIM_SHARE_MPS);
    sim_jobs_setup_free(&js);
}

static void test_jobs_build_refuses_what_does_not_fit(void **state)
{
    (void)state;
    sim_jobs_setup js;
    sim_err err;
    /* a GPU the system does not have, named with the job and the key's line */
    assert_int_not_equal(build("jobs:\n  - name: far\n    placement: {gpus: [1]}\n", &js, &err), 0);
    assert_non_null(strstr(err.msg, "job 'far': placement.gpus lists GPU 1"));
    assert_int_equal(err.line, 3);
    sim_jobs_setup_free(&js);
    /* two BERT-large jobs of 17.0 GiB each: each fits a 24 GiB RTX 4090, both do not */
    assert_int_equal(build("system: {gpu: rtx-4090}\n"
                           "workload: {model: bert-large, precision: amp_fp16, seq_len: 384,"
                           " optimizer: adamw}\n"
                           "loader: {batch_size: 16}\n"
                           "jobs:\n  - {name: one}\n  - {name: two}\n",
                           &js, &err),
                     SIM_EOOM);
    assert_non_null(strstr(err.msg, "jobs one ("));
    assert_non_null(strstr(err.msg, " + two ("));
    sim_jobs_setup_free(&js);
}

/* MIG on the default A100 80GB: instances take compute slices from their profile's legal
 * starts (catalog `starts:`), memory slices add up to at most 8, and a GPU in MIG mode runs no
 * whole-GPU job. 4g.40gb at 0 and 3g.40gb at 4 fill it; seven 1g.10gb fit; a fourth 2g.20gb
 * finds no start (0, 2, 4 are taken). */
static void test_jobs_build_checks_mig_placements(void **state)
{
    (void)state;
    sim_jobs_setup js;
    sim_err err;
    int rc = build("jobs:\n  - {name: big, placement: {mig: 4g.40gb}}\n"
                   "  - {name: mid, placement: {mig: 3g.40gb}}\n",
                   &js, &err);
    if (rc) fail_msg("%s", err.msg);
    sim_jobs_setup_free(&js);
    char seven[512] = "jobs:\n";
    for (int i = 0; i < 7; i++)
        snprintf(seven + strlen(seven), sizeof seven - strlen(seven),
                 "  - {name: j%d, placement: {mig: 1g.10gb}}\n", i);
    rc = build(seven, &js, &err);
    if (rc) fail_msg("%s", err.msg);
    sim_jobs_setup_free(&js);
    assert_int_equal(build("jobs:\n  - {name: a, placement: {mig: 2g.20gb}}\n"
                           "  - {name: b, placement: {mig: 2g.20gb}}\n"
                           "  - {name: c, placement: {mig: 2g.20gb}}\n"
                           "  - {name: d, placement: {mig: 2g.20gb}}\n",
                           &js, &err),
                     SIM_EINVAL);
    assert_non_null(strstr(err.msg, "have no legal placement"));
    assert_non_null(strstr(err.msg, "d (2g.20gb)"));
    sim_jobs_setup_free(&js);
    assert_int_equal(build("jobs:\n  - {name: slice, placement: {mig: 1g.10gb}}\n"
                           "  - {name: whole}\n",
                           &js, &err),
                     SIM_EINVAL);
    assert_non_null(strstr(err.msg, "job 'whole' cannot have the whole GPU"));
    sim_jobs_setup_free(&js);
}

/* Two DDP jobs on a box whose NVLink bridges join GPUs 0-1 and 2-3: each job's all-reduce rides
 * the links between its own GPUs. On the pairs both jobs reduce over a bridge; across the pairs
 * (0 with 3, 1 with 2) both cross PCIe and spend a larger share of the time reducing. The
 * closed form is the ring's bandwidth (sim/core/topo.h, test_topo): 240 GB/s over the bridge
 * against the slots' 25 GB/s, so only the direction is asserted here, with a margin of 2x that
 * the 10x gap clears whatever the backward time. */
static double comm_pct_of_job0(const char *placement_a, const char *placement_b)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "system: {name: server-4x-a100-pcie, nvlink: bridge, nvlink_links: 12}\n"
             "workload: {model: bert-large, precision: amp_bf16, seq_len: 128}\n"
             "dataset: {samples: 512}\nloader: {batch_size: 32, num_workers: 4}\n"
             "jobs:\n  - {name: a, placement: {gpus: %s}}\n  - {name: b, placement: {gpus: %s}}\n",
             placement_a, placement_b);
    sim_jobs_setup js;
    sim_err err;
    if (build(yaml, &js, &err)) fail_msg("%s", err.msg);
    sim_jobs_result res;
    if (sim_run_jobs(&js.system, js.slot, js.n, &js.share, &res, &err)) fail_msg("%s", err.msg);
    double pct = res.job[0].mean.comm_pct;
    sim_jobs_result_free(&res);
    sim_jobs_setup_free(&js);
    return pct;
}

static void test_jobs_ring_over_the_placed_gpus(void **state)
{
    (void)state;
    double paired = comm_pct_of_job0("[0, 1]", "[2, 3]");
    double across = comm_pct_of_job0("[0, 3]", "[1, 2]");
    assert_true(across > 2 * paired);
    assert_true(comm_pct_of_job0("[2, 3]", "[0, 1]") < across / 2); /* pair 2-3 is bridged too */
}

static int setup(void **state)
{
    (void)state;
    return tmpdir_make("/tmp/epochsim-jobs-XXXXXX");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs_items_take_the_top_level_their_file_and_their_keys),
        cmocka_unit_test(test_jobs_bad_items_name_file_and_line),
        cmocka_unit_test(test_jobs_build_places_each_job_on_its_gpus),
        cmocka_unit_test(test_jobs_build_refuses_what_does_not_fit),
        cmocka_unit_test(test_jobs_build_checks_mig_placements),
        cmocka_unit_test(test_jobs_ring_over_the_placed_gpus),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
