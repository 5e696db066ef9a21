/* topo.h — the interconnect as cost models: how many PCIe lanes each GPU's slot gets, the
 * slowest link of the ring NCCL builds, and the time of one all-reduce on that ring with NCCL's
 * own latency/bandwidth model (algorithm and protocol chosen per size, as NCCL does).
 * Pure functions of plain values; docs/DESIGN.md "Interconnect" explains the choices. */
#ifndef SIM_TOPO_H
#define SIM_TOPO_H

#include "sim/core/job.h"

/* The narrowest slot a board bifurcates to: a GPU never gets fewer lanes from the CPU. */
#define SIM_TOPO_MIN_LANES 4

/* Splits `budget` CPU lanes among n GPUs that each use at most `want` lanes, as a board
 * bifurcates its slots: every GPU gets the widest power of two <= want that all n fit in (at
 * least SIM_TOPO_MIN_LANES), then the lanes left over widen the first GPUs one step each while
 * they last (20 lanes, 4 GPUs: x8 x4 x4 x4). Fills lanes[0..n-1]; returns 0, or SIM_EINVAL when
 * the budget cannot give every GPU SIM_TOPO_MIN_LANES. */
int sim_topo_lanes(int n, int want, int budget, int *lanes);

/* The lanes GPU i's slot has: topo.lanes[i], or the link's own width where that is 0 (a
 * hand-built sim_hardware), and its measured pinned host-to-device rate at that width, GB/s. */
int sim_topo_gpu_lanes(const sim_hardware *hw, int i);
double sim_topo_pinned_gbps(const sim_hardware *hw, int i);

/* PCIe switches: GPUs 0..k-1 sit behind switch 0, k..2k-1 behind switch 1 (k =
 * topo.switch_gpus), each GPU at its own width to the switch and each switch on one uplink of
 * topo.uplink_lanes[s] CPU lanes. The switch GPU i sits behind, or -1 (on a CPU root port). */
int sim_topo_switch_of(const sim_hardware *hw, int i);
/* Measured pinned host-to-device rate of switch s's uplink, GB/s (hw->link scaled by lanes). */
double sim_topo_uplink_gbps(const sim_hardware *hw, int s);
/* GPU i's rate to the CPU: its own link's, and no more than its switch's uplink's. */
double sim_topo_host_path_gbps(const sim_hardware *hw, int i);

/* The socket GPU i's slot hangs off: with several sockets the slots are split evenly among
 * them in order (GPUs 0-3 on socket 0 and 4-7 on socket 1 of a two-socket 8-GPU box). */
int sim_topo_socket_of(const sim_hardware *hw, int i);
/* NCCL's rate of the link between two CPU sockets, GB/s (src/graph/topo.h and topo.cc,
 * ncclTopoGetInterCpuBw): AMD x86 16 (AMD_BW); Intel by CPUID model: Broadwell and older 6
 * (BDW_QPI_BW), Skylake-SP to Ice Lake-SP 10 (SKL_QPI_BW), Sapphire Rapids and later desktop
 * models 22 (SRP_QPI_BW), Emerald Rapids 40 (ERP_QPI_BW). arch is the catalog CPU's (zen2,
 * broadwell, ...); an arch the table does not know gets 0 (not limiting). */
double sim_topo_socket_link_gbps(const char *arch);
/* Whether a catalog CPU arch is AMD x86 (the catalog's AMD CPUs are the Zen ones). */
bool sim_topo_amd_x86(const char *arch);

/* NCCL's P2P level (src/graph/paths.cc, ncclTopoCheckP2p) decides whether two GPUs whose path
 * crosses the CPU (no common PCIe switch) talk peer-to-peer or through host memory (SHM). Before
 * NCCL 2.23.4 P2P crossed the CPU except on Intel and ARM CPUs (PATH_PXB there); from 2.23.4
 * (commit 68b54236) it stays below PCIe switches except on AMD x86 systems of at most two GPUs.
 * PyTorch's wheels bundle NCCL 2.21.5 up to 2.6 and 2.25 from 2.7 (pytorch/pytorch#150049), so
 * the PyTorch release picks the rule. */
#define SIM_TOPO_NCCL_PAIRS_ONLY_PYTORCH 207
/* The largest ring whose hops may cross the CPU peer-to-peer: 0 (Intel, ARM), 2 (AMD x86 from
 * PyTorch 2.7), or SIM_MAX_GPUS (AMD x86 before). pytorch_version: 100 x major + minor. */
int sim_topo_p2p_cpu_max_gpus(bool amd_x86, int pytorch_version);

/* NVLink bandwidth of one link, one direction, GB/s, by compute capability: NCCL's constants
 * (src/graph/topo.h: SM60 18, SM70/SM80 20, SM86 12, SM90 20.6, SM100 40.1); 0 below SM60. */
double sim_topo_nvlink_link_gbps(double compute_capability);

/* NVLink SHARP (NVLS): on third-generation NVSwitch systems (Hopper HGX and later) NCCL reduces
 * inside the switches, from NCCL 2.17.1 and by default where the driver supports it. Each GPU
 * sends its whole buffer into the switch (multimem.ld_reduce of every slice) and gets its reduced
 * slice back, then sends that slice once (multimem.st) and receives every slice: S (1 + 1/n)
 * bytes each way for S bytes, so the all-reduce moves at n / (n + 1) of the link rate, times the
 * efficiency NCCL's tuning model gives NVLS (src/graph/tuning.cc, nvlsEfficiency: Hopper 0.85,
 * Blackwell 0.74; 0 before Hopper). PyTorch's wheels bundle NCCL 2.18.1 from PyTorch 2.1 (2.14.3 in
 * 2.0), so the release picks whether NVLS exists. docs/DESIGN.md "Interconnect" has the checks. */
#define SIM_TOPO_NVLS_PYTORCH 201
/* system.nvls: auto as NCCL does it (NCCL_NVLS_ENABLE's default), off as NCCL_NVLS_ENABLE=0. */
typedef enum sim_nvls { SIM_NVLS_AUTO, SIM_NVLS_OFF } sim_nvls;
extern const char *const sim_nvls_names[]; /* "auto", "off", NULL */
/* The NVLS efficiency for a GPU of this compute capability under this PyTorch release (100 x
 * major + minor); 0 where NCCL has no NVLS. Only an NVSwitch box uses it (sim_topo_ring). */
double sim_topo_nvls_efficiency(double compute_capability, int pytorch_version);
/* The channels NCCL runs NVLS with in one node (src/transport/nvls.cc, NVLS_NCHANNELS_SM90 16,
 * NVLS_NCHANNELS_SM100_NVL 24; NCCL 2.18's NCCL_NVLS_NCHANNELS default was 16 too). */
int sim_topo_nvls_channels(double compute_capability);

/* The kind of the slowest hop of the ring, which sets the per-hop latency. */
typedef enum sim_path {
    SIM_PATH_NVLINK, /* every hop is NVLink */
    SIM_PATH_PCIE,   /* some hop is PCIe peer-to-peer */
    SIM_PATH_HOST,   /* some hop bounces through host memory (no P2P) */
} sim_path;

/* A ring over the job's GPUs: n GPUs, the bandwidth of its slowest hop (one direction, GB/s),
 * and the NVLS efficiency where the GPUs meet in NVSwitches that reduce (0 otherwise). */
typedef struct sim_ring {
    int n;
    double bw_gbps;
    sim_path path;
    double nvls_eff;
    int nvls_channels;
} sim_ring;

/* Share of the slower GPU's pinned H2D rate that a hop through host memory reaches (NCCL's SHM
 * transport when the GPUs cannot address each other: each byte is written to and read from host
 * memory over PCIe). Set from one figure quoted in the project's issue 15: 2x RTX 2080 Ti without
 * P2P on PCIe 3.0 x16 reach 4.0 GB/s of nccl-tests bus bandwidth against ~12 GB/s pinned. Its
 * log was not found and the catalog has no RTX 2080 Ti, so no row checks it (docs/accuracy.md). */
#define SIM_TOPO_HOST_BOUNCE 0.33

/* The ring over the GPUs gpus[0..n-1] of hw (their indices in the system; NULL: the first n):
 * NVLink hops where the topology links every two neighbours (NVSwitch or a mesh; a bridge only
 * joins the two GPUs of one pair, 0-1, 2-3, ...), else PCIe peer-to-peer at the narrowest link's
 * measured pinned rate (hw->link, scaled by lanes; across switches their uplinks count too) when
 * the GPUs have P2P and all sit below one switch or NCCL lets P2P cross the CPU for n GPUs
 * (topo.p2p_cpu_max_gpus), else a bounce through host memory. n < 2 gives a ring with no hop
 * (bw 0). */
sim_ring sim_topo_ring(const sim_hardware *hw, const int *gpus, int n);

typedef enum sim_coll_algo {
    SIM_ALGO_TREE,
    SIM_ALGO_RING,
    SIM_ALGO_NVLS,
    SIM_ALGO_COUNT
} sim_coll_algo;
typedef enum sim_coll_proto {
    SIM_PROTO_LL,
    SIM_PROTO_LL128,
    SIM_PROTO_SIMPLE,
    SIM_PROTO_COUNT
} sim_coll_proto;

/* One all-reduce as nccl-tests reports it. */
typedef struct sim_allreduce {
    double time_us;
    double algbw_gbps; /* bytes / time */
    double busbw_gbps; /* algbw x 2 (n - 1) / n: what each link carried, per second */
    sim_coll_algo algo;
    sim_coll_proto proto;
} sim_allreduce;

/* The all-reduce of `bytes` per GPU on the ring: for each algorithm and protocol NCCL's time
 * model (base latency + hops x per-hop latency + bytes / (ring bandwidth x protocol efficiency x
 * algorithm ratio)), and on a ring with NVLS its NVLS time (NCCL's 25 us latency + bytes at
 * n / (n + 1) of the link rate x efficiency, Simple protocol only), the fastest kept, as NCCL
 * picks. One GPU or no bytes: all zero. */
void sim_topo_allreduce(const sim_ring *r, double bytes, sim_allreduce *out);

/* Channels (CUDA blocks, one SM each) NCCL runs an all-reduce of the ring with: NCCL uses the
 * fewest SMs that reach the platform's bandwidth, "2 SMs" on a PCIe system moving 12-24 GB/s and
 * "16 SMs" for 190 GB/s on a DGX (NVIDIA/nccl#689), about one per 12 GB/s; at least 2, at most
 * NCCL's MAXCHANNELS of 32 (NVIDIA/nccl#455). Where NVLS moves large messages faster than the
 * ring (efficiency x n / (n + 1) above the ring's n / (2 (n - 1)): 4 GPUs and up on Hopper, 8
 * on Blackwell), NVLS's own channel count. 0 for a ring with no hop. */
int sim_topo_nccl_channels(const sim_ring *r);

/* Names for reports: "none", "bridge", "nvswitch", "mesh"; "tree", "ring", "nvls"; "LL", "LL128",
 * "Simple"; "nvlink", "pcie", "host". NULL for an invalid value (names: the NULL-terminated list
 * the config tables take). */
extern const char *const sim_nvlink_names[];
const char *sim_coll_algo_name(sim_coll_algo a);
const char *sim_coll_proto_name(sim_coll_proto p);
const char *sim_path_name(sim_path p);

#endif
