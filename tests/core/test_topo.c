/* test_topo.c — the interconnect models against closed forms: how a board splits the CPU's lanes,
 * the ring's slowest hop, and the all-reduce time of NCCL's model (latency + bytes / (ring
 * bandwidth x protocol share x n / (2 (n - 1)))), whose bus bandwidth never passes the slowest
 * link of the ring; and the NVLink SHARP all-reduce of NVSwitch boxes that reduce in the switch
 * (25 us + bytes / (link x efficiency x n / (n + 1))). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/base/err.h"
#include "sim/core/topo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void lanes_of(int n, int want, int budget, const int *expect)
{
    int got[8];
    assert_int_equal(sim_topo_lanes(n, want, budget, got), SIM_OK);
    for (int i = 0; i < n; i++)
        assert_int_equal(got[i], expect[i]);
}

static void test_topo_lanes_bifurcate_like_a_board(void **state)
{
    (void)state;
    /* A desktop's 20 GPU lanes: one card x16, two x8/x8, three x8/x8/x4, four x8/x4/x4/x4. */
    lanes_of(1, 16, 20, (const int[]){16});
    lanes_of(2, 16, 20, (const int[]){8, 8});
    lanes_of(3, 16, 20, (const int[]){8, 8, 4});
    lanes_of(4, 16, 20, (const int[]){8, 4, 4, 4});
    /* A 128-lane server CPU gives four cards x16; an x8 card never takes more than x8. */
    lanes_of(4, 16, 124, (const int[]){16, 16, 16, 16});
    lanes_of(2, 8, 124, (const int[]){8, 8});
    /* Never more lanes than the budget. */
    int got[8], sum = 0;
    assert_int_equal(sim_topo_lanes(7, 16, 44, got), SIM_OK);
    for (int i = 0; i < 7; i++)
        sum += got[i];
    assert_true(sum <= 44);
}

static void test_topo_lanes_refuse_below_x4(void **state)
{
    (void)state;
    int got[8];
    /* 6 GPUs need 24 lanes at x4; 20 cannot give them. */
    assert_int_equal(sim_topo_lanes(6, 16, 20, got), SIM_EINVAL);
}

static void test_topo_nvlink_rates_are_nccls(void **state)
{
    (void)state;
    assert_true(sim_topo_nvlink_link_gbps(7.0) == 20.0);  /* SM70 */
    assert_true(sim_topo_nvlink_link_gbps(8.0) == 20.0);  /* SM80 */
    assert_true(sim_topo_nvlink_link_gbps(8.6) == 12.0);  /* SM86 (GA102 bridges) */
    assert_true(sim_topo_nvlink_link_gbps(9.0) == 20.6);  /* SM90 */
    assert_true(sim_topo_nvlink_link_gbps(10.0) == 40.1); /* SM100 */
    assert_true(sim_topo_nvlink_link_gbps(5.2) == 0);
}

/* 4 GPUs at x16 gen4 (25 GB/s pinned), A100s (SM80), the given NVLink and P2P. */
static sim_hardware *box(sim_nvlink nv, int links, bool p2p, int n)
{
    sim_hardware *hw = calloc(1, sizeof *hw);
    assert_non_null(hw);
    hw->gpu_count = n;
    hw->link = (sim_link_desc){.gen = 4, .lanes = 16, .pinned_gbps = 25, .pageable_gbps = 12};
    hw->topo.nvlink = nv;
    hw->topo.nvlink_links = links;
    hw->topo.nvlink_link_gbps = 20;
    hw->topo.p2p = p2p;
    hw->topo.p2p_cpu_max_gpus = SIM_MAX_GPUS; /* an AMD box before NCCL 2.23.4 */
    for (int i = 0; i < n; i++)
        hw->topo.lanes[i] = 16;
    return hw;
}

static void test_topo_ring_slowest_hop(void **state)
{
    (void)state;
    sim_hardware *hw = box(SIM_NVLINK_NVSWITCH, 12, true, 8);
    sim_ring r = sim_topo_ring(hw, NULL, 8);
    assert_int_equal(r.path, SIM_PATH_NVLINK);
    assert_true(r.bw_gbps == 240); /* 12 links x 20 GB/s */
    /* Bridged pairs: 2 GPUs ride the bridge, 4 cross PCIe between the pairs. */
    hw->topo.nvlink = SIM_NVLINK_BRIDGE;
    assert_true(sim_topo_ring(hw, NULL, 2).bw_gbps == 240);
    r = sim_topo_ring(hw, NULL, 4);
    assert_int_equal(r.path, SIM_PATH_PCIE);
    assert_true(r.bw_gbps == 25);
    /* The narrowest slot on the ring sets the PCIe hop: x4 = 25 x 4 / 16. */
    hw->topo.lanes[3] = 4;
    assert_true(sim_topo_ring(hw, NULL, 4).bw_gbps == 6.25);
    /* No P2P: the hop bounces through host memory. */
    hw->topo.p2p = false;
    r = sim_topo_ring(hw, NULL, 4);
    assert_int_equal(r.path, SIM_PATH_HOST);
    assert_true(fabs(r.bw_gbps - 6.25 * SIM_TOPO_HOST_BOUNCE) < 1e-12);
    /* One GPU: no ring. */
    assert_true(sim_topo_ring(hw, NULL, 1).bw_gbps == 0);
    free(hw);
}

/* NCCL's P2P level: across the CPU, peer-to-peer only on AMD x86, and from NCCL 2.23.4 (PyTorch
 * 2.7) only for two GPUs; Intel and ARM never. Below one PCIe switch always (with P2P). */
static void test_topo_p2p_across_the_cpu(void **state)
{
    (void)state;
    assert_int_equal(sim_topo_p2p_cpu_max_gpus(false, 206), 0);
    assert_int_equal(sim_topo_p2p_cpu_max_gpus(false, 209), 0);
    assert_int_equal(sim_topo_p2p_cpu_max_gpus(true, 206), SIM_MAX_GPUS);
    assert_int_equal(sim_topo_p2p_cpu_max_gpus(true, 207), 2);
    sim_hardware *hw = box(SIM_NVLINK_NONE, 0, true, 4);
    hw->topo.p2p_cpu_max_gpus = 2;
    assert_int_equal(sim_topo_ring(hw, NULL, 2).path, SIM_PATH_PCIE);
    sim_ring r = sim_topo_ring(hw, NULL, 4);
    assert_int_equal(r.path, SIM_PATH_HOST); /* NCCL's SHM transport */
    assert_true(fabs(r.bw_gbps - 25 * SIM_TOPO_HOST_BOUNCE) < 1e-12);
    hw->topo.p2p_cpu_max_gpus = 0;
    assert_int_equal(sim_topo_ring(hw, NULL, 2).path, SIM_PATH_HOST);
    /* Four GPUs behind one switch: P2P through the switch at their own x16, whatever the CPU. */
    hw->topo.switch_gpus = 4;
    hw->topo.uplink_lanes[0] = 16;
    r = sim_topo_ring(hw, NULL, 4);
    assert_int_equal(r.path, SIM_PATH_PCIE);
    assert_true(r.bw_gbps == 25);
    free(hw);
}

/* Eight GPUs behind two switches whose x8 uplinks (12.5 GB/s) are narrower than the GPUs' x16:
 * a ring within one switch runs at the GPUs' 25 GB/s, one across the switches at the uplinks'
 * rate, peer-to-peer when NCCL lets P2P cross the CPU, else through host memory. */
static void test_topo_switch_uplinks(void **state)
{
    (void)state;
    sim_hardware *hw = box(SIM_NVLINK_NONE, 0, true, 8);
    hw->topo.switch_gpus = 4;
    hw->topo.uplink_lanes[0] = hw->topo.uplink_lanes[1] = 8;
    assert_int_equal(sim_topo_switch_of(hw, 3), 0);
    assert_int_equal(sim_topo_switch_of(hw, 4), 1);
    assert_true(sim_topo_uplink_gbps(hw, 1) == 12.5);
    assert_true(sim_topo_host_path_gbps(hw, 5) == 12.5);
    static const int low[] = {0, 1, 2, 3}, across[] = {2, 3, 4, 5};
    assert_true(sim_topo_ring(hw, low, 4).bw_gbps == 25);
    sim_ring r = sim_topo_ring(hw, across, 4);
    assert_int_equal(r.path, SIM_PATH_PCIE);
    assert_true(r.bw_gbps == 12.5);
    hw->topo.p2p_cpu_max_gpus = 2;
    r = sim_topo_ring(hw, across, 4);
    assert_int_equal(r.path, SIM_PATH_HOST);
    assert_true(fabs(r.bw_gbps - 12.5 * SIM_TOPO_HOST_BOUNCE) < 1e-12);
    free(hw);
}

/* Two sockets: GPUs 0-3 on socket 0, 4-7 on socket 1. A ring inside one socket runs at its
 * slots' rate; one across them is held to NCCL's inter-socket rate (10 GB/s for a Skylake-SP
 * class Xeon), peer-to-peer or through host memory. NCCL's table by CPU. */
static void test_topo_socket_link(void **state)
{
    (void)state;
    assert_true(sim_topo_socket_link_gbps("zen2") == 16);
    assert_true(sim_topo_socket_link_gbps("broadwell") == 6);
    assert_true(sim_topo_socket_link_gbps("cascade-lake") == 10);
    assert_true(sim_topo_socket_link_gbps("sapphire-rapids") == 22);
    assert_true(sim_topo_socket_link_gbps("unknown-arch") == 0);
    sim_hardware *hw = box(SIM_NVLINK_NONE, 0, true, 8);
    hw->topo.sockets = 2;
    hw->topo.socket_link_gbps = 10;
    assert_int_equal(sim_topo_socket_of(hw, 3), 0);
    assert_int_equal(sim_topo_socket_of(hw, 4), 1);
    static const int low[] = {0, 1, 2, 3}, across[] = {2, 3, 4, 5};
    assert_true(sim_topo_ring(hw, low, 4).bw_gbps == 25);
    assert_true(sim_topo_ring(hw, across, 4).bw_gbps == 10);
    hw->topo.p2p = false; /* through host memory: 25 x 0.33 = 8.25 is below the link */
    assert_true(fabs(sim_topo_ring(hw, across, 4).bw_gbps - 25 * SIM_TOPO_HOST_BOUNCE) < 1e-12);
    free(hw);
}

/* A job placed on some of the system's GPUs rings over those GPUs' links and slots. */
static void test_topo_ring_over_placed_gpus(void **state)
{
    (void)state;
    sim_hardware *hw = box(SIM_NVLINK_BRIDGE, 12, true, 4);
    hw->topo.lanes[0] = 4; /* a narrow slot the job below does not use */
    static const int pair23[] = {2, 3}, across[] = {1, 2};
    sim_ring r = sim_topo_ring(hw, pair23, 2);
    assert_int_equal(r.path, SIM_PATH_NVLINK); /* the bridge of pair 2-3 */
    assert_true(r.bw_gbps == 240);
    r = sim_topo_ring(hw, across, 2); /* GPUs 1 and 2 sit on different bridges */
    assert_int_equal(r.path, SIM_PATH_PCIE);
    assert_true(r.bw_gbps == 25); /* their own x16 slots, not slot 0's x4 */
    assert_true(sim_topo_ring(hw, NULL, 2).bw_gbps == 240); /* the first two: pair 0-1 */
    hw->topo.nvlink = SIM_NVLINK_NONE;
    assert_true(sim_topo_ring(hw, NULL, 2).bw_gbps == 6.25); /* slot 0's x4 */
    free(hw);
}

static void test_topo_allreduce_ring_closed_form(void **state)
{
    (void)state;
    /* 1 GiB on 4 GPUs over PCIe at 25 GB/s: NCCL's model takes the ring with the Simple
     * protocol, time = 8.4 us + 6 hops x 5.7 us + 2^30 B / (25 GB/s x 4 / 6). */
    sim_ring r = {.n = 4, .bw_gbps = 25, .path = SIM_PATH_PCIE};
    double bytes = 1073741824.0;
    sim_allreduce ar;
    sim_topo_allreduce(&r, bytes, &ar);
    assert_int_equal(ar.algo, SIM_ALGO_RING);
    assert_int_equal(ar.proto, SIM_PROTO_SIMPLE);
    double want_us = 8.4 + 6 * 5.7 + bytes / (25e3 * 4 / 6);
    assert_true(fabs(ar.time_us - want_us) < 1e-9 * want_us); /* rounding only */
    assert_true(fabs(ar.algbw_gbps - bytes / (want_us * 1e3)) < 1e-9);
    assert_true(fabs(ar.busbw_gbps - ar.algbw_gbps * 6 / 4) < 1e-9);
}

static void test_topo_busbw_never_exceeds_slowest_link(void **state)
{
    (void)state;
    const sim_path paths[] = {SIM_PATH_NVLINK, SIM_PATH_PCIE, SIM_PATH_HOST};
    for (int n = 2; n <= 16; n *= 2)
        for (int p = 0; p < 3; p++)
            for (double b = 8; b <= 17179869184.0; b *= 4) {
                sim_ring r = {.n = n, .bw_gbps = 100, .path = paths[p]};
                sim_allreduce ar;
                sim_topo_allreduce(&r, b, &ar);
                assert_true(ar.busbw_gbps <= r.bw_gbps);
                assert_true(ar.time_us > 0);
            }
    /* Large sizes approach the link (latency fades): within 1 % at 16 GiB on 8 GPUs. */
    sim_ring r = {.n = 8, .bw_gbps = 100, .path = SIM_PATH_NVLINK};
    sim_allreduce ar;
    sim_topo_allreduce(&r, 17179869184.0, &ar);
    assert_true(ar.busbw_gbps > 99);
}

static void test_topo_small_sizes_pick_low_latency(void **state)
{
    (void)state;
    /* 8 bytes: LL's 6.6 us base + 2 (n - 1) x 0.6 us on NVLink beats every other choice. */
    sim_ring r = {.n = 8, .bw_gbps = 240, .path = SIM_PATH_NVLINK};
    sim_allreduce ar;
    sim_topo_allreduce(&r, 8, &ar);
    assert_int_equal(ar.algo, SIM_ALGO_RING);
    assert_int_equal(ar.proto, SIM_PROTO_LL);
    assert_true(fabs(ar.time_us - (6.6 + 14 * 0.6 + 8 / (240e3 * 0.25 * 8 / 14))) < 1e-9);
    /* No bytes or one GPU: nothing to do. */
    sim_topo_allreduce(&r, 0, &ar);
    assert_true(ar.time_us == 0);
    r.n = 1;
    sim_topo_allreduce(&r, 1e6, &ar);
    assert_true(ar.time_us == 0);
}

static void test_topo_nvls_only_where_nccl_has_it(void **state)
{
    (void)state;
    /* Hopper 0.85 and Blackwell 0.74 (NCCL's nvlsEfficiency) from PyTorch 2.1 (NCCL 2.18.1);
     * nothing on Ampere or under PyTorch 2.0 (NCCL 2.14.3). */
    assert_true(sim_topo_nvls_efficiency(9.0, 201) == 0.85);
    assert_true(sim_topo_nvls_efficiency(10.0, 208) == 0.74);
    assert_true(sim_topo_nvls_efficiency(9.0, 200) == 0);
    assert_true(sim_topo_nvls_efficiency(8.0, 208) == 0);
    /* Only GPUs that meet in NVSwitches get it: not a mesh, a bridge or PCIe. */
    sim_hardware *hw = box(SIM_NVLINK_NVSWITCH, 18, true, 8);
    hw->topo.nvls_eff = 0.85;
    assert_true(sim_topo_ring(hw, NULL, 8).nvls_eff == 0.85);
    hw->topo.nvlink = SIM_NVLINK_MESH;
    assert_true(sim_topo_ring(hw, NULL, 8).nvls_eff == 0);
    hw->topo.nvlink = SIM_NVLINK_NONE;
    assert_true(sim_topo_ring(hw, NULL, 8).nvls_eff == 0);
    free(hw);
}

static void test_topo_nvls_allreduce_closed_form(void **state)
{
    (void)state;
    /* 4 GiB on 8 H100s (18 links x 20.6 GB/s): each GPU moves S (1 + 1/8) each way, so
     * time = 25 us + S / (370.8 GB/s x 0.85 x 8 / 9), and nccl-tests' busbw is algbw x 14 / 8:
     * about 489 GB/s, where NVIDIA/nccl-tests#212 expects ~480 and #272 measured 475 on H200. */
    sim_ring r = {.n = 8, .bw_gbps = 370.8, .path = SIM_PATH_NVLINK, .nvls_eff = 0.85};
    double bytes = 4294967296.0;
    sim_allreduce ar;
    sim_topo_allreduce(&r, bytes, &ar);
    assert_int_equal(ar.algo, SIM_ALGO_NVLS);
    assert_int_equal(ar.proto, SIM_PROTO_SIMPLE);
    double want_us = 25 + bytes / (370.8e3 * 0.85 * 8 / 9);
    assert_true(fabs(ar.time_us - want_us) < 1e-9 * want_us); /* rounding only */
    assert_true(fabs(ar.busbw_gbps - ar.algbw_gbps * 14 / 8) < 1e-9);
    /* Two GPUs: n / (n + 1) x 0.85 = 0.57 of the link against the ring's whole link: ring. */
    r.n = 2;
    sim_topo_allreduce(&r, bytes, &ar);
    assert_int_equal(ar.algo, SIM_ALGO_RING);
    /* Small sizes keep the ring's LL: 25 us is more than its 6.6 + 14 x 0.6 us. */
    r.n = 8;
    sim_topo_allreduce(&r, 8, &ar);
    assert_int_equal(ar.proto, SIM_PROTO_LL);
    assert_string_equal(sim_coll_algo_name(SIM_ALGO_NVLS), "nvls");
}

static void test_topo_nvls_channels(void **state)
{
    (void)state;
    /* NVLS runs 16 channels on Hopper, 24 on Blackwell in one node (NCCL's nvls.cc), where it
     * beats the ring on large messages: 0.85 x 2 (n - 1) > n + 1 from 4 Hopper GPUs, 0.74 x
     * 2 (n - 1) > n + 1 from 8 Blackwell ones; else the ring's one channel per 12 GB/s. */
    assert_int_equal(sim_topo_nvls_channels(9.0), 16);
    assert_int_equal(sim_topo_nvls_channels(10.0), 24);
    sim_ring r = {
        .n = 8, .bw_gbps = 370.8, .path = SIM_PATH_NVLINK, .nvls_eff = 0.85, .nvls_channels = 16};
    assert_int_equal(sim_topo_nccl_channels(&r), 16);
    r.n = 2;
    assert_int_equal(sim_topo_nccl_channels(&r), 31); /* ceil(370.8 / 12) */
    r = (sim_ring){
        .n = 4, .bw_gbps = 721.8, .path = SIM_PATH_NVLINK, .nvls_eff = 0.74, .nvls_channels = 24};
    assert_int_equal(sim_topo_nccl_channels(&r), 32); /* the ring, at NCCL's 32 at most */
    r.n = 8;
    assert_int_equal(sim_topo_nccl_channels(&r), 24);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topo_lanes_bifurcate_like_a_board),
        cmocka_unit_test(test_topo_lanes_refuse_below_x4),
        cmocka_unit_test(test_topo_nvlink_rates_are_nccls),
        cmocka_unit_test(test_topo_ring_slowest_hop),
        cmocka_unit_test(test_topo_ring_over_placed_gpus),
        cmocka_unit_test(test_topo_p2p_across_the_cpu),
        cmocka_unit_test(test_topo_switch_uplinks),
        cmocka_unit_test(test_topo_socket_link),
        cmocka_unit_test(test_topo_allreduce_ring_closed_form),
        cmocka_unit_test(test_topo_busbw_never_exceeds_slowest_link),
        cmocka_unit_test(test_topo_small_sizes_pick_low_latency),
        cmocka_unit_test(test_topo_nvls_only_where_nccl_has_it),
        cmocka_unit_test(test_topo_nvls_allreduce_closed_form),
        cmocka_unit_test(test_topo_nvls_channels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
