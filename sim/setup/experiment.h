/* experiment.h — every knob of one experiment, as the YAML file and `--set key.path=value` name
 * them (the names are a user-facing contract).
 * cfg_* in sim/setup/config.h fills it; sim_scenario_build resolves it into the core's runnable
 * scenario (sim/core/run.h) and never writes into it. */
#ifndef SIM_EXPERIMENT_H
#define SIM_EXPERIMENT_H

#include "sim/core/hw.h"
#include "sim/core/job.h"
#include "sim/core/workload.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct sim_experiment {
    uint64_t seed;
    struct {
        char name[SIM_NAME_MAX]; /* a named system (configs/hardware/systems/); "" = inline */
        char gpu[SIM_NAME_MAX];
        int gpu_count;
        char cpu[SIM_NAME_MAX];
        int cpu_cores;   /* 0 = the CPU's own; else what the box gives the job (VMs) */
        int cpu_threads; /* 0 = the CPU's own */
        char storage[SIM_NAME_MAX];
        double host_memory_gb;
        int pcie_gen;         /* 0 = the lower of the GPU's and the CPU's */
        int nvlink;           /* sim_nvlink (sim/core/hw.h); a named system's unless given */
        int nvlink_links;     /* NVLink links per GPU; a named system's unless given */
        int nvls;             /* sim_nvls: NVLink SHARP as NCCL picks it, or off */
        int pcie_switch_gpus; /* GPUs per PCIe switch, 0 = none; a named system's unless given */
        double page_cache_gb; /* RAM the page cache may use; < 0 = estimate from host memory */
        double mem_copy_efficiency;         /* share of the DRAM peak a many-thread copy reaches */
        char catalog_overlay[SIM_PATH_MAX]; /* catalog overlay file (sim/setup/overlay.h); "" =
                                               none */
        int gpu_ecc;                        /* SIM_ECC_*: the card's own ECC state, or on or off */
        int gpu_sharing;         /* sim_gpu_sharing: how jobs on one whole GPU share it */
        double gpu_timeslice_us; /* time-slicing: a context's slice while others wait */
        double gpu_switch_us;    /* time-slicing: one change of context */
    } system;
    struct {
        char model[SIM_NAME_MAX]; /* "synthetic" or a model-zoo name */
        char trace[SIM_PATH_MAX]; /* a native trace to replay instead of a model; "" = none */
        sim_precision precision;
        int kernels_per_step;    /* synthetic */
        double kernel_us;        /* synthetic: GPU time per kernel, any GPU */
        double dispatch_us;      /* synthetic: CPU dispatch cost per kernel on the reference core */
        double graph_launch_us;  /* CPU cost of one CUDA-graph launch on the reference core */
        double step_overhead_us; /* main-thread Python work per step outside the ops */
        /* model zoo (ignored for synthetic and trace workloads) */
        int optimizer;      /* index into "sgd", "adam", "adamw", "bertadam" (adam = adamw) */
        int optimizer_impl; /* index into "foreach", "fused", "forloop" */
        int mode;           /* index into "train", "inference" */
        int grad_clip;      /* index into mdl_grad_clip_names: "none", "global", "apex" */
        int zero_grad;      /* index into mdl_zero_grad_names (MDL_ZG_* order) */
        bool weight_decay;
        int accum_steps;    /* loader batches (micro-batches) per optimizer step */
        bool checkpointing; /* activation checkpointing over the model's blocks */
        int grad_scaler;    /* index into "auto", "off", "on" */
        int memory_format;  /* index into "contiguous", "channels_last" */
        int attention;      /* index into "default", "eager", "sdpa" (MDL_ATTN_* order) */
        int fuser;          /* index into mdl_fuser_names: "none", "nvfuser" (MDL_FUSER_*) */
        int pytorch;        /* index into mdl_pytorch_names (models/expand.h) */
        int image_size;     /* images: height = width; 0 = the model's default */
        int seq_len;        /* tokens; 0 = the model's default */
        char seq_lengths[SIM_PATH_MAX]; /* a CSV histogram of the dataset's sequence lengths:
                                           batches padded to their longest (seqmix.h); "" =
                                           every batch at seq_len */
        int seq_bin;                    /* length bins of that many tokens (LDDL); 0 = none */
        int seq_align;                  /* a padded batch length is a multiple of this */
        int features;                   /* vectors; 0 = the model's default */
        /* trace replay (sim/setup/replay_workload.h) */
        char trace_gpu[SIM_NAME_MAX]; /* catalog GPU the trace was recorded on; "" = match the
                                         trace's GPU name */
        char trace_cpu[SIM_NAME_MAX]; /* catalog CPU it was recorded on; "" = the documented
                                         guess for its GPU, or an error when there is none */
        int trace_batch;              /* batch size it ran; 0 = the trace header's */
        bool trace_serialize;         /* side-stream GPU work at its full recorded length, after
                                         the compute stream's; false = only its exposed part */
    } workload;
    sim_dataset_spec dataset;
    sim_loader_spec loader;
    /* loader.copy_dispatch_us: CPU dispatch of the batch's .to(device) on the reference core,
     * us (a replay: the recorded copy's unless the key is given) */
    double copy_dispatch_us;
    sim_training_spec training;
    /* training.ddp_bucket_mb: DDP's bucket_cap_mb, MiB (models/expand.h); only the model zoo's
     * programs use it (core never sees it) */
    double ddp_bucket_mb;
    struct {
        char mig[24]; /* the MIG profile the job's instance has (sim/setup/mig.h); "" = whole GPU */
        sim_int_list gpus; /* an item of `jobs:`: the system's GPUs it runs on (n = 0: [0]) */
    } placement;
    struct {
        int64_t util_window_ns; /* 0 = the GPU's NVML window */
    } report;
    struct {
        double sampled_pct; /* the sampled mode's target half-width, % (0 = every step) */
    } run;
} sim_experiment;

/* The experiment as the built-in default scenario sets it (see docs/default-scenario.md). */
void sim_experiment_defaults(sim_experiment *x);

#endif
