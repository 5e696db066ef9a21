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
    tmpdir_put("solo.yaml", "system: {gpu: rtx-4090}\nloader: {batch_size: 16}\n");
    const char *path = tmpdir_put("list.yaml", "system: {gpu: a100-sxm4-80gb, gpu_count: 2}\n"
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
        const char *path = tmpdir_put("bad.yaml", cases[i].yaml);
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
    const char *path = tmpdir_put("build.yaml", yaml);
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

/* Each job of a list draws its own random stream: the first keeps the run's seed (a list of one
 * job runs as the experiment alone), the others take splitmix64's outputs of it, and a job that
 * sets `seed` keeps its own. */
static void test_jobs_build_gives_each_job_its_own_seed(void **state)
{
    (void)state;
    sim_jobs_setup js;
    sim_err err;
    int rc = build("seed: 5\njobs:\n  - {name: a}\n  - {name: b}\n  - {name: c, seed: 7}\n"
                   "  - {name: d}\n",
                   &js, &err);
    if (rc) fail_msg("%s", err.msg);
    assert_true(js.sc[0].seed == 5);
    assert_true(js.sc[1].seed == sim_jobs_seed(5, 1));
    assert_true(js.sc[2].seed == 7);
    assert_true(js.sc[3].seed == sim_jobs_seed(5, 3));
    assert_true(js.sc[1].seed != 5 && js.sc[3].seed != js.sc[1].seed);
    /* splitmix64 seeded with 0: its first output, as the reference implementation gives it */
    assert_true(sim_jobs_seed(0, 1) == 0xe220a8397b1dcdafu);
    sim_jobs_setup_free(&js);
}

/* Two identical data-loading jobs on one A100 (each: 8 workers of 64 x 2.1 ms per batch, about
 * 16.8 ms per batch, against a 3.2 ms input copy over PCIe 3 and 6 ms of kernels per step), run
 * with `mode` and `seed_b` as job b's seed ("" = its own stream). Fills each job's samples/s. */
static void colocated(const char *mode, const char *seed_b, double out[2], sim_jobs_result *keep)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "system: {gpu: a100-sxm4-80gb, cpu: epyc-7742, storage: nvme-gen4,"
             " host_memory_gb: 512, pcie_gen: 3, gpu_sharing: %s}\n"
             "workload: {model: synthetic, kernels_per_step: 20, kernel_us: 300}\n"
             "dataset: {samples: 64000, sample_bytes: 110000, decode_us: 2100, decode_cv: 0.5,"
             " input_bytes: 602112}\n"
             "loader: {batch_size: 64, num_workers: 8, pin_memory: true}\n"
             "training: {epochs: 1, max_steps: 200}\n"
             "jobs:\n  - {name: a}\n  - {name: b%s}\n",
             mode, seed_b);
    sim_jobs_setup js;
    sim_err err;
    if (build(yaml, &js, &err)) fail_msg("%s", err.msg);
    sim_jobs_result res;
    if (sim_run_jobs(&js.system, js.slot, js.n, &js.share, &res, &err)) fail_msg("%s", err.msg);
    for (int j = 0; j < 2; j++)
        out[j] = res.job[j].mean.samples_per_s;
    if (keep)
        *keep = res;
    else
        sim_jobs_result_free(&res);
    sim_jobs_setup_free(&js);
}

static void test_jobs_identical_loader_bound_jobs_are_no_slower_under_mps(void **state)
{
    (void)state;
    double ts[2], mps[2], mps_lockstep[2];
    colocated("time_slice", "", ts, NULL);
    colocated("mps", "", mps, NULL);
    /* Both are paced by their loaders, so MPS, which never makes a kernel wait for another
     * job's context, is as fast as time-slicing. 1 %: steps whose copy and kernels meet the other
     * job's run them at once at shared speed under MPS and in turns under time-slicing, which
     * moves a few steps' ends by up to a copy (3 ms of a ~17 ms batch); the lockstep below costs
     * 6 %. */
    for (int j = 0; j < 2; j++)
        if (mps[j] < ts[j] * 0.99)
            fail_msg("job %d: %.1f samples/s under MPS, %.1f time-sliced", j, mps[j], ts[j]);
    /* The same two jobs on one seed (as every job of a list had before each drew its own) run
     * in lockstep: their batches are ready at the same instants, their copies share the link
     * and their kernels the SMs every step, and MPS falls below time-slicing. */
    colocated("mps", ", seed: 42", mps_lockstep, NULL);
    assert_true(mps_lockstep[0] == mps_lockstep[1]);
    assert_true(mps_lockstep[0] < 0.97 * ts[0]);
}

/* A rerun of a jobs: run gives the same figures to the last bit. */
static void test_jobs_reruns_are_byte_identical(void **state)
{
    (void)state;
    double a[2], b[2];
    sim_jobs_result ra, rb;
    colocated("mps", "", a, &ra);
    colocated("mps", "", b, &rb);
    assert_true(ra.events == rb.events && ra.total_time_s == rb.total_time_s);
    for (int j = 0; j < 2; j++) {
        assert_memory_equal(&ra.job[j].mean, &rb.job[j].mean, sizeof ra.job[j].mean);
        assert_memory_equal(ra.job[j].epochs, rb.job[j].epochs,
                            (size_t)ra.job[j].n_epochs * sizeof *ra.job[j].epochs);
    }
    assert_memory_equal(ra.gpu, rb.gpu, (size_t)ra.n_gpus * sizeof *ra.gpu);
    sim_jobs_result_free(&ra);
    sim_jobs_result_free(&rb);
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
        cmocka_unit_test(test_jobs_build_gives_each_job_its_own_seed),
        cmocka_unit_test(test_jobs_identical_loader_bound_jobs_are_no_slower_under_mps),
        cmocka_unit_test(test_jobs_reruns_are_byte_identical),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
