/* hw.h — plain, transparent descriptions of the hardware a run simulates.
 * The catalog loader (sim/catalog.c) fills them from configs/hardware/; the engine and the cost
 * models read them and nothing else, so a test can build one by hand. Units live in the names. */
#ifndef SIM_HW_H
#define SIM_HW_H

#include <stdbool.h>

#define SIM_NAME_MAX 64
#define SIM_LABEL_MAX 128
#define SIM_CURVE_MAX 12

/* A piecewise-linear curve y(x), x ascending; evaluated with GSL interpolation in the models.
 * n = 0 means "not given". */
typedef struct sim_curve {
    int n;
    double x[SIM_CURVE_MAX];
    double y[SIM_CURVE_MAX];
} sim_curve;

/* A short list of distinct whole numbers (placement.gpus: the GPUs one job runs on). */
#define SIM_INT_LIST_MAX 16
typedef struct sim_int_list {
    int n;
    int v[SIM_INT_LIST_MAX];
} sim_int_list;

/* Numeric formats a job computes in. AMP runs matmul/conv in half precision and keeps fp32
 * master weights; tf32 runs fp32 matmul/conv on tensor cores. */
typedef enum sim_precision {
    SIM_PREC_FP32,
    SIM_PREC_TF32,
    SIM_PREC_FP16,
    SIM_PREC_BF16,
    SIM_PREC_AMP_FP16,
    SIM_PREC_AMP_BF16,
    SIM_PREC_COUNT
} sim_precision;

/* One GPU model. Tensor rates are dense (no 2:4 sparsity) and, for fp16, with fp32 accumulate
 * (the rate training uses; GeForce parts run it at half the fp16-accumulate rate). 0 = the part
 * has no such unit. */
typedef struct sim_gpu_desc {
    char name[SIM_NAME_MAX];   /* catalog key, e.g. "a100-sxm4-80gb" */
    char label[SIM_LABEL_MAX]; /* e.g. "NVIDIA A100 80GB SXM4" */
    char arch[32];             /* e.g. "ampere" */
    double compute_capability; /* e.g. 8.0 */
    int sms;
    int cuda_cores;
    double boost_mhz;
    double fp32_tflops; /* CUDA-core fp32 peak */
    double fp16_tflops; /* tensor, fp16 in, fp32 accumulate */
    double bf16_tflops; /* tensor, bf16 in, fp32 accumulate */
    double tf32_tflops; /* tensor, tf32 */
    double fp8_tflops;  /* tensor, fp8 */
    /* Dense FP16 tensor rate with FP16 accumulation where it differs from fp16_tflops (FP32
     * accumulation): a GeForce card runs FP32-accumulate tensor math at half its FP16-accumulate
     * rate (0 = not stated: the same rate). */
    double fp16_acc16_tflops;
    double mem_gb;
    double mem_bw_gbps; /* peak DRAM bandwidth */
    double l2_mb;
    int pcie_gen;
    int pcie_lanes;
    double nvlink_gbps; /* total bidirectional per GPU when linked (bridge or NVSwitch); 0 = none */
    bool p2p; /* peer-to-peer over PCIe allowed (GeForce: no, traffic bounces in host RAM) */
    int mig_instances; /* max MIG instances; 0 = no MIG */
    double tdp_w;
    double nvml_window_ms; /* NVML utilization.gpu sample period (1/6 s .. 1 s) */
    /* Achievable fraction of peak as a function of log10(FLOPs or bytes of one kernel). */
    sim_curve eff_tensor;
    sim_curve eff_cuda;
    sim_curve eff_mem;
    double kernel_overhead_us; /* fixed GPU-side time per kernel (launch latency on the GPU) */
    int launch_queue_depth;    /* kernels the driver queues before cudaLaunchKernel blocks */
    int max_blocks_per_sm;     /* resident blocks per SM assumed for wave quantization */
    /* Effective loaded DRAM latency, ns: how long a resident block of a PyTorch elementwise
     * kernel waits for its loads, for Little's law (docs/kernel-cost.md); 0 = not known, and
     * then no bytes-in-flight limit. */
    double mem_latency_ns;
    /* Power-limited clock: the catalog entry of the same chip that holds its boost clock under
     * sustained load ("" = this one does), and the share of the boost clock this card holds,
     * derived from the two when the catalog is read (1 = boost; see docs/kernel-cost.md). */
    char power_ref[SIM_NAME_MAX];
    /* Or the clock measured under sustained GEMM load, MHz (0 = not measured): a card whose
     * board power holds it far below its chip's other cards, where the power law above does
     * not reach (70-72 W inference parts), states what it holds instead. */
    double sustained_mhz;
    /* And the clock measured under tensor-core GEMM load, MHz (0 = the same as sustained_mhz;
     * only beside it): on such a card the two differ, SIMT FP32 at full rate drawing more power
     * per clock than the tensor cores' half-precision math (docs/kernel-cost.md). */
    double sustained_tensor_mhz;
    double clock_factor;
    /* The same while the tensor cores run flat out: a card whose tensor cores do more work per
     * SM clock than the reference's (a workstation part's full-rate FP32 accumulate against a
     * GeForce's half rate) draws that much more power per SM clock there, and holds less. */
    double clock_factor_tensor;
    /* ECC: the share of DRAM its check bits take when ECC is on (GDDR parts store them inline:
     * 1/16; HBM parts carry them aside, 0), and whether the card ships with ECC on. */
    double ecc_reserve;
    bool ecc_default;
} sim_gpu_desc;

/* system.gpu_ecc: the card's own ECC state, or set on or off (nvidia-smi -e). */
enum { SIM_ECC_DEFAULT, SIM_ECC_ON, SIM_ECC_OFF };
extern const char *const sim_gpu_ecc_names[]; /* "default", "on", "off", NULL */

/* One CPU model (all sockets of a system together). single_thread is the speed of one core
 * relative to the reference core documented in docs/reference-core.md (1.0 = reference). */
typedef struct sim_cpu_desc {
    char name[SIM_NAME_MAX];
    char label[SIM_LABEL_MAX];
    char arch[32];
    int sockets;
    int cores;   /* physical cores, all sockets */
    int threads; /* hardware threads, all sockets */
    double base_ghz;
    double boost_ghz;
    double l3_mb;
    double single_thread; /* relative to the reference core */
    double smt_gain;      /* extra throughput of a core's sibling thread, in cores (0.2-0.3) */
    double mem_bw_gbps;   /* theoretical DRAM bandwidth, all channels */
    double memcpy_gbps;   /* one thread's large memcpy rate (pinning, collate, page cache) */
    int pcie_gen;
    int pcie_lanes; /* lanes of one socket that slots can use (not those wired to the chipset) */
} sim_cpu_desc;

/* One storage device: a read of B bytes takes latency_us + B / read_mbps with at most
 * queue_depth requests in service; the device's read_mbps is shared by those in service. */
typedef struct sim_storage_desc {
    char name[SIM_NAME_MAX];
    char label[SIM_LABEL_MAX];
    double read_mbps;  /* sustained sequential read, MB/s (1e6 B/s) */
    double latency_us; /* access latency of one random read */
    int queue_depth;   /* requests served at once (HDD: 1) */
} sim_storage_desc;

/* Host-to-device link of one GPU: measured rates, not the theoretical ones. */
typedef struct sim_link_desc {
    char name[SIM_NAME_MAX]; /* e.g. "pcie-gen4" */
    int gen;
    int lanes;
    double pinned_gbps;      /* H2D from page-locked memory, GB/s (1e9 B/s), at these lanes */
    double pageable_gbps;    /* H2D from pageable memory through the staging buffer */
    double copy_overhead_us; /* fixed cost per copy call */
} sim_link_desc;

/* A named system combining parts: what `system.name: dgx-a100` expands to. Fields left empty
 * or zero are not set by the system and fall back to the experiment's own values. */
typedef struct sim_system_desc {
    char name[SIM_NAME_MAX];
    char label[SIM_LABEL_MAX];
    char gpu[SIM_NAME_MAX];
    int gpu_count;
    char cpu[SIM_NAME_MAX];
    int cpu_cores;   /* override: what this box really gives the job (a VM's vCPUs / 2) */
    int cpu_threads; /* override: a VM's vCPUs */
    char storage[SIM_NAME_MAX];
    double host_memory_gb;
    int pcie_gen;
    int nvlink;           /* sim_nvlink: how the GPUs are linked besides PCIe */
    int nvlink_links;     /* NVLink links per GPU (to the switch, or to its bridge partner) */
    int pcie_switch_gpus; /* GPUs behind each PCIe switch (0-3, 4-7, ...); 0 = none */
} sim_system_desc;

/* How a box's GPUs are linked besides PCIe. A bridge joins GPUs in pairs (0-1, 2-3, ...); an
 * NVSwitch joins all; a mesh (DGX-1's hybrid cube-mesh) links each GPU to several others, and
 * NCCL's rings use every link, so it counts as all-linked. */
typedef enum sim_nvlink {
    SIM_NVLINK_NONE,
    SIM_NVLINK_BRIDGE,
    SIM_NVLINK_NVSWITCH,
    SIM_NVLINK_MESH,
    SIM_NVLINK_COUNT
} sim_nvlink;

/* The most GPUs a run simulates (experiment key system.gpu_count). */
#define SIM_MAX_GPUS 1024

/* The interconnect of one box, resolved: what the collective model and the copies read. */
typedef struct sim_topology {
    sim_nvlink nvlink;
    int nvlink_links;        /* per GPU */
    double nvlink_link_gbps; /* one link, one direction, as NCCL's topology model rates it */
    bool p2p;                /* GPUs may address each other over PCIe */
    int lanes[SIM_MAX_GPUS]; /* PCIe lanes of each GPU's link (to the CPU, or to its switch) */
    int switch_gpus;         /* GPUs behind each PCIe switch (0-3, 4-7, ...); 0 = no switches,
                                each GPU on a CPU root port */
    int uplink_lanes[SIM_MAX_GPUS]; /* CPU lanes of each switch's uplink */
    int p2p_cpu_max_gpus;           /* rings of up to this many GPUs may cross the CPU peer-to-peer
                                       (NCCL's P2P level, sim/core/topo.h) */
    int sockets;                    /* CPU sockets; the GPUs' slots are split evenly, in order */
    double socket_link_gbps; /* the link between sockets as NCCL rates it (0 = not limiting) */
    double nvls_eff;         /* share of the NVLink rate an NVLink SHARP all-reduce reaches
                                through the NVSwitches (0 = no NVLS; sim/core/topo.h) */
    int nvls_channels;       /* the SMs (one per channel) NCCL's NVLS kernels take */
} sim_topology;

/* Name of a precision as the config spells it ("amp_bf16"); NULL for an invalid value. */
const char *sim_precision_name(sim_precision p);
/* Parses a precision name; returns 0 or SIM_EINVAL. */
int sim_precision_parse(const char *s, sim_precision *out);

#endif
