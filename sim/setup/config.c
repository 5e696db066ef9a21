/* config.c — the experiment key table and the built-in default scenario.
 * The default scenario is an ImageNet-shaped ResNet-50-like synthetic job on an A100 box; each
 * of its numbers is explained in docs/default-scenario.md. */
#include "sim/setup/config.h"

#include "models/expand.h"
#include "sim/core/pipeline.h"
#include "sim/core/topo.h"

#include <stddef.h>
#include <string.h>

#define BIG 1e308
#define X sim_experiment
#define F(key, type, member, ...)                                                                  \
    {                                                                                              \
        key, type, offsetof(X, member), 0, __VA_ARGS__, NULL                                       \
    }
#define E(key, member, names, help)                                                                \
    {                                                                                              \
        key, CFG_T_ENUM, offsetof(X, member), 0, CFG_NO_RANGE, help, names                         \
    }
#define S(key, member, help)                                                                       \
    {                                                                                              \
        key, CFG_T_STR, offsetof(X, member), sizeof(((X *)0)->member), CFG_NO_RANGE, help, NULL    \
    }

static const char *const optimizer_names[] = {"sgd", "adam", "adamw", "bertadam", "none", NULL};
static const char *const impl_names[] = {"foreach", "fused", "forloop", NULL};
static const char *const mode_names[] = {"train", "inference", NULL};
static const char *const scaler_names[] = {"auto", "off", "on", NULL};

static const cfg_field fields[] = {
    F("seed", CFG_T_U64, seed, 0, 1.8e19, "random seed (decode-time variation, shuffling)"),
    S("system.name", system.name, "a named system from configs/hardware/systems/"),
    S("system.gpu", system.gpu, "GPU catalog name"),
    /* Bounds: each says what no real job exceeds, so a typo fails here instead of running for
     * hours or allocating gigabytes (docs/limits.md lists them). */
    /* 1024 GPUs: simulated one engine, per-GPU state and events grow with the count */
    F("system.gpu_count", CFG_T_INT, system.gpu_count, 1, 1024, "GPUs, data-parallel"),
    S("system.cpu", system.cpu, "CPU catalog name"),
    /* 1024 cores / 2048 threads: above the largest x86 servers (2 x 192-core EPYC 9965, SMT2) */
    F("system.cpu_cores", CFG_T_INT, system.cpu_cores, 0, 1024,
      "physical cores the job gets (0 = the CPU's)"),
    F("system.cpu_threads", CFG_T_INT, system.cpu_threads, 0, 2048,
      "hardware threads the job gets (0 = the CPU's)"),
    S("system.storage", system.storage, "storage catalog name"),
    /* 64 TB: the largest single-system images (HPE Superdome Flex: 48 TB) */
    F("system.host_memory_gb", CFG_T_DOUBLE, system.host_memory_gb, 0.5, 65536, "host RAM, GB"),
    /* the catalog has links for PCIe 3, 4 and 5 (configs/hardware/links/) */
    F("system.pcie_gen", CFG_T_INT, system.pcie_gen, 0, 5,
      "PCIe generation of the GPU link (0 = lower of GPU and CPU)"),
    E("system.nvlink", system.nvlink, sim_nvlink_names,
      "GPU links besides PCIe: none | bridge (pairs) | nvswitch | mesh"),
    /* 18: NVLink 4/5 per GPU; 64 leaves room without letting a typo through */
    F("system.nvlink_links", CFG_T_INT, system.nvlink_links, 0, 64,
      "NVLink links per GPU (to the switch, or to its bridge partner)"),
    E("system.nvls", system.nvls, sim_nvls_names,
      "NVLink SHARP all-reduce on NVSwitch boxes of Hopper and later: auto (as NCCL 2.18+ picks "
      "it) | off (NCCL_NVLS_ENABLE=0)"),
    F("system.pcie_switch_gpus", CFG_T_INT, system.pcie_switch_gpus, 0, SIM_MAX_GPUS,
      "GPUs behind each PCIe switch, which has one x16 uplink to the CPU (0 = no switches)"),
    F("system.page_cache_gb", CFG_T_DOUBLE, system.page_cache_gb, -1, 65536,
      "RAM the page cache may hold, GB (-1 = estimate)"),
    F("system.mem_copy_efficiency", CFG_T_DOUBLE, system.mem_copy_efficiency, 0.01, 1,
      "share of the host DRAM peak that concurrent memcpy reaches (STREAM copy / peak)"),
    S("system.catalog_overlay", system.catalog_overlay,
      "a catalog overlay (epochsim calibrate -o); relative to the experiment file"),
    E("system.gpu_ecc", system.gpu_ecc, sim_gpu_ecc_names,
      "GPU memory ECC: default (as the card ships: on for data-centre GDDR parts) | on | off; "
      "on a GDDR part its check bits take 1/16 of the memory"),
    E("system.gpu_sharing", system.gpu_sharing, sim_gpu_sharing_names,
      "how the jobs of a `jobs:` list on one whole GPU share it: time_slice | mps"),
    /* NVIDIA documents neither figure (forums.developer.nvidia.com/t/156566: the timeslice
     * levels of `nvidia-smi compute-policy` are not published); 1 s bounds what any scheduler
     * would call a slice */
    F("system.gpu_timeslice_us", CFG_T_DOUBLE, system.gpu_timeslice_us, 10, 1e6,
      "time-slicing: how long one job's context keeps the GPU while another waits, us"),
    F("system.gpu_switch_us", CFG_T_DOUBLE, system.gpu_switch_us, 0, 1e5,
      "time-slicing: one context switch between jobs, us (nothing runs meanwhile)"),
    S("workload.model", workload.model, "\"synthetic\" or a model-zoo name"),
    S("workload.trace", workload.trace,
      "a trace to replay (.trace, or Kineto .json/.json.gz); relative to the experiment file"),
    /* trace replay (sim/setup/replay_workload.h, docs/replay.md) */
    S("workload.trace_gpu", workload.trace_gpu,
      "catalog GPU the trace was recorded on (default: matched from the trace)"),
    S("workload.trace_cpu", workload.trace_cpu,
      "catalog CPU the trace was recorded on (default: a guess from its GPU, see docs/replay.md)"),
    F("workload.trace_batch", CFG_T_INT, workload.trace_batch, 0, 1e8,
      "batch size the trace ran (0 = the trace's own)"),
    F("workload.trace_serialize", CFG_T_BOOL, workload.trace_serialize, CFG_NO_RANGE,
      "replay side-stream GPU work at full length instead of its exposed part"),
    F("workload.precision", CFG_T_PREC, workload.precision, CFG_NO_RANGE,
      "fp32 | tf32 | fp16 | bf16 | amp_fp16 | amp_bf16 (fp16: the model cast to half; with an "
      "optimizer it trains against fp32 master weights, as apex AMP O2)"),
    F("workload.kernels_per_step", CFG_T_INT, workload.kernels_per_step, 1, 10000000,
      "synthetic: kernels per step"),
    F("workload.kernel_us", CFG_T_DOUBLE, workload.kernel_us, 0, 1e9,
      "synthetic: GPU time per kernel, us (any GPU)"),
    F("workload.dispatch_us", CFG_T_DOUBLE, workload.dispatch_us, 0, 1e9,
      "synthetic: CPU dispatch cost per kernel on the reference core, us"),
    F("workload.graph_launch_us", CFG_T_DOUBLE, workload.graph_launch_us, 0, 1e9,
      "CPU cost of one CUDA-graph launch on the reference core, us"),
    F("workload.step_overhead_us", CFG_T_DOUBLE, workload.step_overhead_us, 0, 1e12,
      "main-thread Python work per step outside the ops, us (reference core)"),
    E("workload.optimizer", workload.optimizer, optimizer_names,
      "model zoo: sgd (with momentum) | adam | adamw | bertadam (NVIDIA BERT's per-parameter "
      "loop, clips each gradient) | none (forward and backward only, no step)"),
    E("workload.mode", workload.mode, mode_names,
      "model zoo: train (default) | inference (model.eval() under torch.no_grad(): the forward "
      "alone, no loss, dropout off, batch norm on running statistics)"),
    E("workload.optimizer_impl", workload.optimizer_impl, impl_names,
      "model zoo: torch.optim implementation, foreach (default) | fused | forloop"),
    E("workload.grad_clip", workload.grad_clip, mdl_grad_clip_names,
      "model zoo: gradient clipping before the step, none | global (clip_grad_norm_ over all "
      "parameters) | apex (multi-tensor norm, .item(), scale: NVIDIA BERT's GradientClipper)"),
    E("workload.zero_grad", workload.zero_grad, mdl_zero_grad_names,
      "model zoo: what zero_grad() does before each step, auto (zero under fp32 master weights "
      "(fp16 with an optimizer: apex AMP O2's patched zero_grad) and before PyTorch 2.0 unless "
      "the optimizer is fused, else set_to_none; none without an optimizer) | none | "
      "set_to_none | zero (detach and zero_() each gradient: a fill kernel per tensor)"),
    F("workload.weight_decay", CFG_T_BOOL, workload.weight_decay, CFG_NO_RANGE,
      "model zoo: the optimizer applies weight decay"),
    /* 1024: NVIDIA's BERT pre-training recipes accumulate at most 512 batches, and the expanded
     * step holds every micro-batch's kernels */
    F("workload.accum_steps", CFG_T_INT, workload.accum_steps, 1, 1024,
      "model zoo: loader batches per optimizer step (gradient accumulation)"),
    F("workload.checkpointing", CFG_T_BOOL, workload.checkpointing, CFG_NO_RANGE,
      "model zoo: activation checkpointing over the model's blocks"),
    E("workload.memory_format", workload.memory_format, mdl_memory_format_names,
      "model zoo: activation layout, contiguous (NCHW, PyTorch's default) | channels_last"),
    E("workload.attention", workload.attention, mdl_attention_names,
      "model zoo: default (the model's own; SDPA-based code runs eager before PyTorch 2.0) | "
      "eager (matmul-softmax-matmul) | sdpa (F.scaled_dot_product_attention)"),
    E("workload.fuser", workload.fuser, mdl_fuser_names,
      "model zoo: none (eager, one kernel per op) | nvfuser (torch.jit.script with NVFuser: "
      "attention's scale-mask-softmax-dropout and dropout+residual add fused)"),
    E("workload.pytorch", workload.pytorch, mdl_pytorch_names,
      "model zoo: PyTorch release the job runs, 1.6 .. 2.9 (default 2.9); before 1.12 a linear "
      "on token sequences adds its bias in a kernel of its own; from 2.7 elementwise kernels "
      "load 16-byte vectors of fp16/bf16"),
    E("workload.grad_scaler", workload.grad_scaler, scaler_names,
      "model zoo: GradScaler, auto (on for fp16 and amp_fp16) | off | on"),
    F("workload.image_size", CFG_T_INT, workload.image_size, 0, 65536,
      "model zoo: image height = width, pixels (0 = the model's default)"),
    F("workload.seq_len", CFG_T_INT, workload.seq_len, 0, 1 << 24,
      "model zoo: sequence length, tokens (0 = the model's default)"),
    S("workload.seq_lengths", workload.seq_lengths,
      "model zoo: CSV of the dataset's sequence lengths (columns length, count); each batch is "
      "padded to its longest sequence (docs/sequence-lengths.md); relative to the experiment file"),
    F("workload.seq_bin", CFG_T_INT, workload.seq_bin, 0, 1 << 24,
      "with seq_lengths: batches drawn from length bins of this many tokens, as NVIDIA LDDL's "
      "--bin-size (0 = no bins)"),
    F("workload.seq_align", CFG_T_INT, workload.seq_align, 1, 4096,
      "with seq_lengths: a padded batch length is rounded up to a multiple of this (LDDL: 8)"),
    F("workload.features", CFG_T_INT, workload.features, 0, 1 << 30,
      "model zoo: input features of vector models (0 = the model's default)"),
    /* 2^32 - 1: sample indices are 32-bit; memory is checked against the budget too */
    F("dataset.samples", CFG_T_INT64, dataset.samples, 1, SIM_DATASET_MAX_SAMPLES,
      "samples in the dataset"),
    F("dataset.sample_bytes", CFG_T_DOUBLE, dataset.sample_bytes, 1, 1e12,
      "bytes per sample as stored: read from storage, or held in RAM"),
    E("dataset.location", dataset.location, sim_data_location_names,
      "where the samples are: storage (read per sample, through the page cache) | memory "
      "(already in host RAM, e.g. a TensorDataset: no read, only the per-sample CPU work)"),
    F("dataset.decode_us", CFG_T_DOUBLE, dataset.decode_us, 0, 1e12,
      "CPU decode+augment per sample on the reference core, us"),
    F("dataset.decode_cv", CFG_T_DOUBLE, dataset.decode_cv, 0, 10,
      "coefficient of variation of decode time (lognormal)"),
    F("dataset.input_bytes", CFG_T_DOUBLE, dataset.input_bytes, 1, 1e12,
      "bytes per sample of the tensor sent to the GPU"),
    F("loader.batch_size", CFG_T_INT, loader.batch_size, 1, 1e8, "samples per batch"),
    F("loader.num_workers", CFG_T_INT, loader.num_workers, 0, 4096, "DataLoader worker processes"),
    F("loader.prefetch_factor", CFG_T_INT, loader.prefetch_factor, 1, 1024,
      "batches in flight per worker"),
    F("loader.pin_memory", CFG_T_BOOL, loader.pin_memory, CFG_NO_RANGE, "pin-memory thread"),
    F("loader.non_blocking", CFG_T_BOOL, loader.non_blocking, CFG_NO_RANGE,
      ".to(device, non_blocking=...)"),
    F("loader.persistent_workers", CFG_T_BOOL, loader.persistent_workers, CFG_NO_RANGE,
      "keep workers alive across epochs"),
    F("loader.drop_last", CFG_T_BOOL, loader.drop_last, CFG_NO_RANGE,
      "drop the last partial batch"),
    /* 1e9 us (1000 s), as workload.dispatch_us: no dispatch comes near. A replay uses the
     * recorded copy's unless this key is given. */
    F("loader.copy_dispatch_us", CFG_T_DOUBLE, copy_dispatch_us, 0, 1e9,
      "CPU dispatch of the batch's .to(device) on the reference core, us (a replay: the "
      "recorded one unless given)"),
    F("loader.worker_start_ms", CFG_T_DOUBLE, loader.worker_start_ms, 0, 1e9,
      "start-up CPU time of one worker process, ms (reference core)"),
    /* 10,000 epochs: longer than any published schedule (ImageNet runs use 90-600) */
    F("training.epochs", CFG_T_INT, training.epochs, 1, 10000, "epochs to simulate"),
    F("training.max_steps", CFG_T_INT64, training.max_steps, 0, 1e15,
      "steps per epoch (0 = the whole epoch)"),
    F("training.sync_every_step", CFG_T_BOOL, training.sync_every_step, CFG_NO_RANGE,
      "loss.item() every step"),
    F("training.cuda_graphs", CFG_T_BOOL, training.cuda_graphs, CFG_NO_RANGE,
      "replay each step as one CUDA graph"),
    /* PyTorch takes any positive cap; 64 GiB (MDL_DDP_BUCKET_MB_MAX) is one bucket for any
     * model here */
    F("training.ddp_bucket_mb", CFG_T_DOUBLE, ddp_bucket_mb, 1e-3, MDL_DDP_BUCKET_MB_MAX,
      "DDP's bucket_cap_mb: gradient bucket cap in MiB, each bucket's all-reduce overlaps the "
      "rest of backward (the first bucket is 1 MiB)"),
    S("placement.mig", placement.mig,
      "MIG profile of the instance the job runs on, e.g. 1g.10gb (\"\" = the whole GPU)"),
    /* 16 per job; indices below system.gpu_count are checked when the jobs are built */
    {"placement.gpus", CFG_T_LIST, offsetof(X, placement.gpus), 0, 0, SIM_MAX_GPUS - 1,
     "an item of jobs: the system's GPUs it runs on, e.g. [0] or [0, 1] (default [0])", NULL},
    /* 1 ms .. 1 h (0 = the GPU's own): NVML samples every 1/6 s to 1 s; a window far below that
     * measures nothing nvidia-smi shows and makes the series grow with run time / window */
    F("report.util_window_ns", CFG_T_INT64, report.util_window_ns, 0, 3.6e12,
      "GPU-Util sample window, ns (0 = the GPU's NVML window)"),
    /* 10 %: an interval wider than that says nothing a study could compare; the shipped
     * experiments are checked at the default 0.5 (tests/app/test_sampled.c) */
    F("run.sampled_pct", CFG_T_DOUBLE, run.sampled_pct, 0, 10,
      "sampled mode: cut each epoch once the 95 % interval of its time is this narrow, % of "
      "the epoch, and extrapolate the rest (0 = simulate every step; docs/sampled.md)"),
};

static const cfg_table table = {fields, sizeof fields / sizeof fields[0], NULL};

_Static_assert(sizeof fields / sizeof fields[0] <= 128, "cfg_experiment_set holds 128 flags");

const cfg_table *cfg_experiment_table(void)
{
    return &table;
}

void sim_experiment_defaults(sim_experiment *x)
{
    memset(x, 0, sizeof *x);
    x->seed = 42;
    strcpy(x->system.gpu, "a100-sxm4-80gb");
    x->system.gpu_count = 1;
    strcpy(x->system.cpu, "epyc-7742");
    strcpy(x->system.storage, "nvme-gen4");
    x->system.host_memory_gb = 512;
    x->system.page_cache_gb = -1;
    /* STREAM Copy reaches 77-78 % of the DDR4 wire rate on TI's AM6x boards (SPRAD45A,
     * SPRACV1B) and AMD's tuned binary 250 of 307 GB/s (81 %) on a 2P EPYC 7601 (AnandTech
     * 11544); untuned copies sit a little lower. */
    x->system.mem_copy_efficiency = 0.75;
    x->system.gpu_sharing = SIM_SHARE_TIME_SLICE; /* the driver's default without MPS */
    /* Assumed, not published (see the key table): a slice of 2 ms and a switch of 50 us, the
     * order of the ~1 ms a context lingers after its work ends in Nsight Systems
     * (forums.developer.nvidia.com/t/181203) and of saving an SM's registers and shared memory;
     * the Gavel row of tests/data/published/sharing.csv checks the pair. */
    x->system.gpu_timeslice_us = 2000;
    x->system.gpu_switch_us = 50;
    strcpy(x->workload.model, "synthetic");
    x->workload.precision = SIM_PREC_AMP_BF16;
    x->workload.kernels_per_step = 320;
    x->workload.kernel_us = 300;
    x->workload.dispatch_us = 25;
    x->workload.graph_launch_us = 30;
    x->workload.step_overhead_us = 500;
    x->workload.optimizer = 0;      /* sgd */
    x->workload.optimizer_impl = 0; /* foreach, torch.optim's default on CUDA since 2.0 */
    x->workload.weight_decay = true;
    x->workload.accum_steps = 1;
    x->workload.seq_align = 8;   /* NVIDIA LDDL's sequence_length_alignment */
    x->workload.grad_scaler = 0; /* auto */
    x->workload.pytorch = mdl_name_index(mdl_pytorch_names, "2.9");
    x->dataset.samples = 1281167;
    x->dataset.sample_bytes = 110000;
    x->dataset.decode_us = 4000;
    x->dataset.decode_cv = 0.3;
    x->dataset.input_bytes = 3 * 224 * 224 * 4;
    x->loader.batch_size = 256;
    x->loader.num_workers = 8;
    x->loader.prefetch_factor = 2;
    x->loader.pin_memory = true;
    x->loader.non_blocking = true;
    x->loader.persistent_workers = false;
    x->loader.drop_last = false;
    x->loader.worker_start_ms = 50;
    x->copy_dispatch_us = 25; /* one PyTorch op from Python, as workload.dispatch_us */
    x->training.epochs = 1;
    x->training.max_steps = 0;
    x->training.sync_every_step = true;
    x->training.cuda_graphs = false;
    x->ddp_bucket_mb = MDL_DDP_BUCKET_MB;
}

/* The keys whose values are file paths, in load_resolved's order. */
static const char *const path_keys[] = {"workload.trace", "system.catalog_overlay",
                                        "workload.seq_lengths", NULL};

/* A relative path key (workload.trace, system.catalog_overlay, workload.seq_lengths) given in a
 * file is relative to
 * that file's folder; on the command line, --set KEY=P stays relative to the working directory.
 * `before` is the key's value before the file was read: unchanged means the file did not give it.
 */
static int resolve_path(const char *path, const char *key, char *t, size_t size, const char *before,
                        sim_err *err)
{
    if (!t[0] || t[0] == '/' || !strcmp(t, before)) return SIM_OK;
    const char *slash = strrchr(path, '/');
    if (!slash) return SIM_OK;
    size_t dlen = (size_t)(slash - path) + 1, tlen = strlen(t);
    if (dlen + tlen >= size)
        return sim_err_set(err, SIM_EINVAL, path, 0, 0,
                           "%s: the path is longer than %d bytes once joined to the experiment "
                           "file's folder",
                           key, (int)size - 1);
    memmove(t + dlen, t, tlen + 1);
    memcpy(t, path, dlen);
    return SIM_OK;
}

/* Loads the file at path, or its mapping `map` when not NULL, into x and resolves its relative
 * paths against the file's folder. */
static int load_resolved(const char *path, yaml_document_t *doc, yaml_node_t *map,
                         const char *const *extra_keys, sim_experiment *x, cfg_experiment_set *set,
                         sim_err *err)
{
    char *value[] = {x->workload.trace, x->system.catalog_overlay, x->workload.seq_lengths};
    const size_t size[] = {sizeof x->workload.trace, sizeof x->system.catalog_overlay,
                           sizeof x->workload.seq_lengths};
    enum { N = sizeof value / sizeof value[0] };
    _Static_assert(N == sizeof path_keys / sizeof path_keys[0] - 1, "path_keys");
    char before[N][SIM_PATH_MAX];
    for (int i = 0; i < N; i++)
        snprintf(before[i], sizeof before[i], "%s", value[i]);
    cfg_table t = table;
    t.extra_keys = extra_keys;
    bool *flags = set ? set->flag : NULL;
    cfg_mark *marks = set ? set->mark : NULL;
    int rc = map ? cfg_table_load_node(&t, doc, map, path, x, flags, marks, err)
                 : cfg_table_load_file(&t, path, x, flags, marks, err);
    for (int i = 0; i < N && !rc; i++)
        rc = resolve_path(path, path_keys[i], value[i], size[i], before[i], err);
    return rc;
}

bool cfg_experiment_path_key(const char *key)
{
    for (const char *const *k = path_keys; *k; k++)
        if (!strcmp(*k, key)) return true;
    return false;
}

int cfg_experiment_load_with(const char *path, const char *const *extra_keys, sim_experiment *x,
                             cfg_experiment_set *set, sim_err *err)
{
    return load_resolved(path, NULL, NULL, extra_keys, x, set, err);
}

int cfg_experiment_load_node(const char *path, yaml_document_t *doc, yaml_node_t *map,
                             const char *const *extra_keys, sim_experiment *x,
                             cfg_experiment_set *set, sim_err *err)
{
    return load_resolved(path, doc, map, extra_keys, x, set, err);
}

int cfg_experiment_load(const char *path, sim_experiment *x, cfg_experiment_set *set, sim_err *err)
{
    return cfg_experiment_load_with(path, NULL, x, set, err);
}

int cfg_experiment_apply(const char *assignment, sim_experiment *x, cfg_experiment_set *set,
                         sim_err *err)
{
    return cfg_table_set(&table, assignment, x, set ? set->flag : NULL, set ? set->mark : NULL,
                         err);
}

bool cfg_experiment_was_set(const cfg_experiment_set *set, const char *key)
{
    size_t i;
    return set && cfg_table_find(&table, key, &i) && set->flag[i];
}

int cfg_experiment_locate(const cfg_experiment_set *set, const char *key, int rc, sim_err *err)
{
    size_t i;
    if (rc && set && cfg_table_find(&table, key, &i) && set->flag[i])
        cfg_mark_locate(&set->mark[i], err);
    return rc;
}

int cfg_experiment_check(const sim_experiment *x, const cfg_experiment_set *set, sim_err *err)
{
    /* torch.utils.data.DataLoader raises ValueError for prefetch_factor without workers
     * ("prefetch_factor option could only be specified in multiprocessing"). */
    if (x->loader.num_workers == 0 && cfg_experiment_was_set(set, "loader.prefetch_factor"))
        return cfg_experiment_locate(
            set, "loader.prefetch_factor",
            sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                        "loader.prefetch_factor needs loader.num_workers > 0 (PyTorch's "
                        "DataLoader raises ValueError here: with 0 workers the main process "
                        "loads one batch at a time)"),
            err);
    if (x->report.util_window_ns > 0 && x->report.util_window_ns < 1000000)
        return cfg_experiment_locate(
            set, "report.util_window_ns",
            sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                        "report.util_window_ns must be 0 (the GPU's NVML window) or at least "
                        "1000000 (1 ms; NVML itself samples every 1/6 s to 1 s)"),
            err);
    if (cfg_experiment_was_set(set, "placement.gpus"))
        return cfg_experiment_locate(
            set, "placement.gpus",
            sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                        "placement.gpus places an item of a `jobs:` list; a single experiment "
                        "runs on GPUs 0 .. system.gpu_count-1"),
            err);
    if (x->loader.drop_last && x->dataset.samples < x->loader.batch_size)
        return cfg_experiment_locate(
            set, "loader.drop_last",
            sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                        "loader.drop_last with loader.batch_size %d > dataset.samples %lld "
                        "leaves no batch",
                        x->loader.batch_size, (long long)x->dataset.samples),
            err);
    return SIM_OK;
}
