/* topo.c — lane budget, ring bottleneck and NCCL's all-reduce time model (see topo.h).
 * The all-reduce follows NCCL's tuning model (src/graph/tuning.cc) rather than a free-hand
 * formula, so the algorithm and protocol it picks by size are the ones NCCL's own model picks. */
#include "sim/core/topo.h"

#include "sim/base/err.h"

#include <math.h>
#include <string.h>

int sim_topo_lanes(int n, int want, int budget, int *lanes)
{
    int width = 16;
    while (width > want || (width > SIM_TOPO_MIN_LANES && n * width > budget))
        width /= 2;
    if (n < 1 || width < 1 || n * width > budget) return SIM_EINVAL;
    int left = budget - n * width;
    for (int i = 0; i < n; i++) {
        lanes[i] = width;
        if (2 * width <= want && left >= width) {
            lanes[i] = 2 * width;
            left -= width;
        }
    }
    return SIM_OK;
}

double sim_topo_nvlink_link_gbps(double cc)
{
    /* NCCL src/graph/topo.h, ncclTopoNVLinkBw: the effective rate of one link with 128-byte
     * payloads (an NVLink 3 link runs 25 GB/s on the wire, ~20 GB/s of payload). */
    if (cc >= 10) return 40.1;
    if (cc >= 9) return 20.6;
    if (fabs(cc - 8.6) < 0.05 || fabs(cc - 8.7) < 0.05) return 12.0;
    if (cc >= 7) return 20.0;
    if (cc >= 6) return 18.0;
    return 0;
}

int sim_topo_gpu_lanes(const sim_hardware *hw, int i)
{
    return hw->topo.lanes[i] > 0 ? hw->topo.lanes[i] : hw->link.lanes;
}

double sim_topo_pinned_gbps(const sim_hardware *hw, int i)
{
    return hw->link.pinned_gbps * sim_topo_gpu_lanes(hw, i) / hw->link.lanes;
}

int sim_topo_switch_of(const sim_hardware *hw, int i)
{
    return hw->topo.switch_gpus > 0 ? i / hw->topo.switch_gpus : -1;
}

double sim_topo_uplink_gbps(const sim_hardware *hw, int s)
{
    return hw->link.pinned_gbps * hw->topo.uplink_lanes[s] / hw->link.lanes;
}

double sim_topo_host_path_gbps(const sim_hardware *hw, int i)
{
    int s = sim_topo_switch_of(hw, i);
    double gpu = sim_topo_pinned_gbps(hw, i);
    return s < 0 ? gpu : fmin(gpu, sim_topo_uplink_gbps(hw, s));
}

int sim_topo_p2p_cpu_max_gpus(bool amd_x86, int pytorch_version)
{
    if (!amd_x86) return 0;
    return pytorch_version >= SIM_TOPO_NCCL_PAIRS_ONLY_PYTORCH ? 2 : SIM_MAX_GPUS;
}

double sim_topo_nvls_efficiency(double cc, int pytorch_version)
{
    if (pytorch_version < SIM_TOPO_NVLS_PYTORCH) return 0;
    return cc >= 10 ? 0.74 : cc >= 9 ? 0.85 : 0;
}

int sim_topo_nvls_channels(double cc)
{
    return cc >= 10 ? 24 : 16;
}

int sim_topo_socket_of(const sim_hardware *hw, int i)
{
    int n = hw->gpu_count > 0 ? hw->gpu_count : 1;
    return hw->topo.sockets > 1 ? i * hw->topo.sockets / n : 0;
}

bool sim_topo_amd_x86(const char *arch)
{
    return strncmp(arch, "zen", 3) == 0;
}

double sim_topo_socket_link_gbps(const char *arch)
{
    if (sim_topo_amd_x86(arch)) return 16;
    static const struct {
        const char *arch;
        double gbps;
    } rates[] = {{"ivybridge", 6},       {"broadwell", 6},    {"skylake", 10},
                 {"cascade-lake", 10},   {"ice-lake-sp", 10}, {"sapphire-rapids", 22},
                 {"emerald-rapids", 40}, {"raptor-lake", 22}}; /* desktop parts: one socket, never
                                                                  limiting */
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
        if (!strncmp(arch, rates[i].arch, strlen(rates[i].arch))) return rates[i].gbps;
    return 0;
}

static int ring_gpu(const int *gpus, int i)
{
    return gpus ? gpus[i] : i;
}

sim_ring sim_topo_ring(const sim_hardware *hw, const int *gpus, int n)
{
    sim_ring r = {.n = n, .bw_gbps = 0, .path = SIM_PATH_NVLINK, .nvls_eff = 0, .nvls_channels = 0};
    if (n < 2) return r;
    const sim_topology *t = &hw->topo;
    double nvlink = t->nvlink_links * t->nvlink_link_gbps;
    bool one_pair = n == 2 && ring_gpu(gpus, 0) / 2 == ring_gpu(gpus, 1) / 2;
    bool all_linked = t->nvlink == SIM_NVLINK_NVSWITCH || t->nvlink == SIM_NVLINK_MESH ||
                      (t->nvlink == SIM_NVLINK_BRIDGE && one_pair);
    if (all_linked && nvlink > 0) {
        r.bw_gbps = nvlink;
        if (t->nvlink == SIM_NVLINK_NVSWITCH) {
            r.nvls_eff = t->nvls_eff;
            r.nvls_channels = t->nvls_channels;
        }
        return r;
    }
    /* Some hop crosses PCIe (with bridged pairs, the hops between pairs), and on a ring every
     * GPU's link carries one of them in at least one direction: the narrowest sets it. Below one
     * switch the hops stay in it; else they cross the CPU, through each switch's uplink. */
    int g0 = ring_gpu(gpus, 0);
    bool one_switch = sim_topo_switch_of(hw, g0) >= 0, sockets_crossed = false;
    double within = INFINITY, across = INFINITY; /* inside one switch, or through the CPU */
    for (int i = 0; i < n; i++) {
        int g = ring_gpu(gpus, i);
        one_switch = one_switch && sim_topo_switch_of(hw, g) == sim_topo_switch_of(hw, g0);
        sockets_crossed =
            sockets_crossed || sim_topo_socket_of(hw, g) != sim_topo_socket_of(hw, g0);
        within = fmin(within, sim_topo_pinned_gbps(hw, g));
        across = fmin(across, sim_topo_host_path_gbps(hw, g));
    }
    r.bw_gbps = one_switch ? within : across;
    r.path = SIM_PATH_PCIE;
    if (!t->p2p || (!one_switch && n > t->p2p_cpu_max_gpus)) {
        r.bw_gbps *= SIM_TOPO_HOST_BOUNCE;
        r.path = SIM_PATH_HOST;
    }
    /* a ring over two sockets crosses the link between them, peer-to-peer or through memory */
    if (sockets_crossed && t->socket_link_gbps > 0)
        r.bw_gbps = fmin(r.bw_gbps, t->socket_link_gbps);
    return r;
}

/* NCCL's latency tables (src/graph/tuning.cc, baseLat and hwLat), us: a fixed cost per
 * collective and a cost per hop, by algorithm and protocol; PCIe rows also serve the host
 * bounce. Single node: NCCL's intra-node tree is a chain, so both take 2 (n - 1) hops. NVLS has
 * no hops: one latency of 25 us (NVLink NVLS Simple, NCCL 2.21 on; 23 in 2.18 to 2.20). */
static const double base_lat_us[SIM_ALGO_NVLS][SIM_PROTO_COUNT] = {
    [SIM_ALGO_TREE] = {6.8, 14.0, 8.4},
    [SIM_ALGO_RING] = {6.6, 14.0, 8.4},
};
#define NVLS_LAT_US 25.0
static const double hop_lat_us[2][SIM_ALGO_NVLS][SIM_PROTO_COUNT] = {
    /* NVLink */ {[SIM_ALGO_TREE] = {0.6, 1.25, 4.0}, [SIM_ALGO_RING] = {0.6, 1.9, 3.4}},
    /* PCIe */ {[SIM_ALGO_TREE] = {1.0, 1.9, 4.0}, [SIM_ALGO_RING] = {1.0, 2.5, 5.7}},
};
/* Share of the link a protocol carries as data (tuning.cc: LL moves 4 data bytes in 16 for an
 * all-reduce, LL128 120 of 128). NCCL enables LL128 by default only over NVLink. */
static const double proto_eff[SIM_PROTO_COUNT] = {0.25, 0.92, 1.0};
/* An intra-node tree all-reduce reaches 0.92 of the link and moves the data twice (up and
 * down): algbw = busbw x 0.5 (tuning.cc). */
#define TREE_EFF 0.92

void sim_topo_allreduce(const sim_ring *r, double bytes, sim_allreduce *out)
{
    memset(out, 0, sizeof *out);
    out->algo = SIM_ALGO_RING;
    out->proto = SIM_PROTO_SIMPLE;
    if (r->n < 2 || bytes <= 0 || r->bw_gbps <= 0) return;
    int hops = 2 * (r->n - 1);
    int hw = r->path == SIM_PATH_NVLINK ? 0 : 1;
    double best = INFINITY;
    for (int a = 0; a < SIM_ALGO_NVLS; a++)
        for (int p = 0; p < SIM_PROTO_COUNT; p++) {
            if (p == SIM_PROTO_LL128 && r->path != SIM_PATH_NVLINK) continue;
            double algbw = a == SIM_ALGO_RING ? r->bw_gbps * proto_eff[p] * r->n / hops
                                              : r->bw_gbps * proto_eff[p] * TREE_EFF * 0.5;
            double t = base_lat_us[a][p] + hops * hop_lat_us[hw][a][p] + bytes / (algbw * 1e3);
            if (t < best) {
                best = t;
                out->algo = (sim_coll_algo)a;
                out->proto = (sim_coll_proto)p;
            }
        }
    if (r->nvls_eff > 0) {
        double algbw = r->bw_gbps * r->nvls_eff * r->n / (r->n + 1);
        double t = NVLS_LAT_US + bytes / (algbw * 1e3);
        if (t < best) {
            best = t;
            out->algo = SIM_ALGO_NVLS;
            out->proto = SIM_PROTO_SIMPLE;
        }
    }
    out->time_us = best;
    out->algbw_gbps = bytes / (best * 1e3);
    out->busbw_gbps = out->algbw_gbps * hops / r->n;
}

/* GB/s one NCCL channel carries (NVIDIA/nccl#689: 2 SMs for 12-24 GB/s, 16 for 190 GB/s) */
#define NCCL_CHANNEL_GBPS 12.0
#define NCCL_MIN_CHANNELS 2
#define NCCL_MAX_CHANNELS 32

int sim_topo_nccl_channels(const sim_ring *r)
{
    if (r->n < 2 || r->bw_gbps <= 0) return 0;
    if (r->nvls_eff > 0 && r->nvls_eff * 2 * (r->n - 1) > r->n + 1) return r->nvls_channels;
    int ch = (int)ceil(r->bw_gbps / NCCL_CHANNEL_GBPS);
    return ch < NCCL_MIN_CHANNELS   ? NCCL_MIN_CHANNELS
           : ch > NCCL_MAX_CHANNELS ? NCCL_MAX_CHANNELS
                                    : ch;
}

const char *const sim_nvlink_names[] = {"none", "bridge", "nvswitch", "mesh", NULL};
const char *const sim_nvls_names[] = {"auto", "off", NULL};

const char *sim_coll_algo_name(sim_coll_algo a)
{
    static const char *const names[SIM_ALGO_COUNT] = {"tree", "ring", "nvls"};
    return (unsigned)a < SIM_ALGO_COUNT ? names[a] : NULL;
}

const char *sim_coll_proto_name(sim_coll_proto p)
{
    static const char *const names[SIM_PROTO_COUNT] = {"LL", "LL128", "Simple"};
    return (unsigned)p < SIM_PROTO_COUNT ? names[p] : NULL;
}

const char *sim_path_name(sim_path p)
{
    static const char *const names[] = {"nvlink", "pcie", "host"};
    return (unsigned)p <= SIM_PATH_HOST ? names[p] : NULL;
}
