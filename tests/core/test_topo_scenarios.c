/* test_topo_scenarios.c — the interconnect demos of configs/experiments/ (S5: NVLink bridges on a
 * 4x A100 PCIe server; S9: four RTX 4090s on a 24-lane vs a 128-lane CPU) run whole on the real
 * catalog, checked against what the ring's closed form says each lesson must show. DDP's bucket
 * all-reduces overlap backward (models/expand.c), so comm_pct x wall time is the exposed part:
 * between the last bucket's all-reduce and all of them, per step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/core/topo.h"
#include "sim/setup/config.h"
#include "sim/setup/scenario.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/configs/hardware"
#define DEMOS EPOCHSIM_SOURCE_DIR "/configs/experiments/"

typedef struct outcome {
    sim_scenario sc;
    sim_result res;
    double comm_s; /* all-reduce time of the run */
} outcome;

/* Runs demo FILE with the --set assignments `sets` (NULL-terminated, may be NULL). */
static outcome *run_demo(const char *file, const char *const *sets)
{
    outcome *o = calloc(1, sizeof *o);
    assert_non_null(o);
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err err;
    sim_err_clear(&err);
    sim_experiment_defaults(&x);
    if (cfg_experiment_load(file, &x, &set, &err)) fail_msg("%s: %s", file, err.msg);
    for (const char *const *s = sets; s && *s; s++)
        if (cfg_experiment_apply(*s, &x, &set, &err)) fail_msg("%s: %s", *s, err.msg);
    if (sim_scenario_build(&x, &set, CATALOG, &o->sc, &err)) fail_msg("build: %s", err.msg);
    if (sim_run(&o->sc, &o->res, &err)) fail_msg("run: %s", err.msg);
    o->comm_s = o->res.mean.comm_pct / 100 * o->res.total_time_s;
    return o;
}

static void done(outcome *o)
{
    sim_result_free(&o->res);
    sim_scenario_free(&o->sc);
    free(o);
}

static void test_s5_bridges_do_not_help_four_gpus(void **state)
{
    (void)state;
    outcome *pcie = run_demo(DEMOS "s5-nvlink-vs-pcie.yaml", NULL);
    outcome *bridged = run_demo(DEMOS "s5-nvlink-vs-pcie-bridged.yaml", NULL);
    assert_int_equal(pcie->res.bottleneck, SIM_BN_COMMUNICATION);
    /* Exact: a 4-GPU ring over two bridged pairs has the same slowest hop (PCIe, 25 GB/s) and
     * the same per-hop latency as the unbridged one, so the runs are the same event for event. */
    assert_true(pcie->res.total_time_s == bridged->res.total_time_s);
    assert_true(pcie->comm_s == bridged->comm_s);
    done(pcie);
    done(bridged);
}

/* The exposed all-reduce of a DDP run, per step, against its closed bounds: at least the last
 * bucket's all-reduce (the optimizer waits for it, and backward is over when it starts), at most
 * every bucket's (nothing hidden). Each all-reduce's time is NCCL's model on the run's ring. */
static void exposed_within_bounds(const outcome *o)
{
    sim_ring ring = sim_topo_ring(&o->sc.hw, NULL, o->sc.hw.gpu_count);
    double last_s = 0, all_s = 0;
    for (size_t i = 0; i < o->sc.program.n_ops; i++) {
        const sim_op *op = &o->sc.program.ops[i];
        if (op->kind != SIM_OP_ALLREDUCE) continue;
        assert_int_equal(op->comm, 1); /* DDP's buckets, on the communication stream */
        sim_allreduce ar;
        sim_topo_allreduce(&ring, op->bytes, &ar);
        last_s = ar.time_us / 1e6;
        all_s += last_s;
    }
    double per_step = o->comm_s / (double)o->res.steps;
    /* 0.1 %: the epoch mean of the two GPUs, and the ns rounding of each all-reduce */
    if (per_step < 0.999 * last_s || per_step > 1.001 * all_s)
        fail_msg("exposed %.3f ms per step, bounds %.3f..%.3f ms", per_step * 1e3, last_s * 1e3,
                 all_s * 1e3);
}

static void test_s5_bridge_carries_two_gpus_ten_times_faster(void **state)
{
    (void)state;
    const char *const two[] = {"system.gpu_count=2", NULL};
    outcome *pcie = run_demo(DEMOS "s5-nvlink-vs-pcie.yaml", two);
    outcome *bridged = run_demo(DEMOS "s5-nvlink-vs-pcie-bridged.yaml", two);
    /* Closed form: the ring of two is the bridge (12 links x 20 GB/s = 240) or PCIe (25). */
    assert_true(sim_topo_ring(&pcie->sc.hw, NULL, 2).bw_gbps == 25.0);
    assert_true(sim_topo_ring(&bridged->sc.hw, NULL, 2).bw_gbps == 240.0);
    exposed_within_bounds(pcie);
    exposed_within_bounds(bridged);
    /* DDP hides most of the PCIe all-reduce behind backward; what the bridge saves is what was
     * exposed, never more (its 20 NCCL channels slow the kernels beside them more than PCIe's
     * 3 do). */
    assert_true(bridged->comm_s < pcie->comm_s);
    assert_int_equal(bridged->res.bottleneck, SIM_BN_GPU_COMPUTE);
    double delta = pcie->res.total_time_s - bridged->res.total_time_s;
    assert_true(delta > 0 && delta <= pcie->comm_s);
    done(pcie);
    done(bridged);
}

static void test_s9_lane_budget(void **state)
{
    (void)state;
    const char *const server[] = {"system.name=workstation-4x4090", NULL};
    outcome *desk = run_demo(DEMOS "s9-lane-budget.yaml", NULL);
    outcome *ws = run_demo(DEMOS "s9-lane-budget.yaml", server);
    /* 24 lanes less 4 for the boot drive leave 20: x8 x4 x4 x4; 128 lanes give x16 each. */
    const int desk_lanes[] = {8, 4, 4, 4};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(desk->sc.hw.topo.lanes[i], desk_lanes[i]);
        assert_int_equal(ws->sc.hw.topo.lanes[i], 16);
    }
    /* Closed form: both rings bounce through host memory (GeForce, no P2P) at a share of the
     * narrowest slot, x4 vs x16: 4x the bandwidth, exactly. */
    double ratio =
        sim_topo_ring(&ws->sc.hw, NULL, 4).bw_gbps / sim_topo_ring(&desk->sc.hw, NULL, 4).bw_gbps;
    assert_true(ratio == 4.0);
    exposed_within_bounds(desk);
    exposed_within_bounds(ws);
    assert_int_equal(desk->res.bottleneck, SIM_BN_COMMUNICATION);
    assert_int_equal(ws->res.bottleneck, SIM_BN_GPU_COMPUTE);
    /* The lesson's size: the desktop's epoch is well over 1.5x the workstation's (8.49 vs 5.04 s
     * when DDP's buckets began to overlap backward; the bound leaves room for loader and copy
     * changes). */
    assert_true(desk->res.total_time_s > 1.5 * ws->res.total_time_s);
    done(desk);
    done(ws);
}

/* Four RTX 4090s behind one PCIe switch on the workstation's 128-lane CPU: each GPU keeps its
 * x16 link but the four share the switch's x16 uplink. A copy-heavy synthetic job (64 samples
 * of 4 MiB per step and GPU, almost no compute) then cannot beat the closed form "all GPUs'
 * bytes over one uplink's pinned rate", which the same box without the switch (four x16 links
 * in parallel) beats. */
static void test_switch_uplink_shared(void **state)
{
    (void)state;
    static const char *const base[] = {
        "system.name=workstation-4x4090", "workload.model=synthetic", "workload.kernels_per_step=4",
        "workload.kernel_us=10",          "workload.dispatch_us=5",   "dataset.samples=8192",
        "dataset.sample_bytes=1000",      "dataset.decode_us=1",      "dataset.input_bytes=4194304",
        "loader.batch_size=64",           "loader.num_workers=8",     NULL};
    const char *sets[16];
    int n = 0;
    while (base[n])
        sets[n] = base[n], n++;
    sets[n] = NULL;
    outcome *direct = run_demo(DEMOS "s9-lane-budget.yaml", sets);
    sets[n] = "system.pcie_switch_gpus=4";
    sets[n + 1] = NULL;
    outcome *sw = run_demo(DEMOS "s9-lane-budget.yaml", sets);
    assert_int_equal(sw->sc.hw.topo.uplink_lanes[0], 16);
    for (int i = 0; i < 4; i++)
        assert_int_equal(sw->sc.hw.topo.lanes[i], 16);
    double bytes = 8192.0 * 4194304; /* the epoch's inputs, all four GPUs' shards */
    double floor_s = bytes / (sim_topo_uplink_gbps(&sw->sc.hw, 0) * 1e9);
    assert_true(sw->res.total_time_s >= floor_s);
    assert_true(direct->res.total_time_s < floor_s);
    done(direct);
    done(sw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_s5_bridges_do_not_help_four_gpus),
        cmocka_unit_test(test_s5_bridge_carries_two_gpus_ten_times_faster),
        cmocka_unit_test(test_s9_lane_budget),
        cmocka_unit_test(test_switch_uplink_shared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
