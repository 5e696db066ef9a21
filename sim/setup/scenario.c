/* scenario.c — resolves an experiment into hardware and a step program (see scenario.h). */
#include "sim/setup/scenario.h"

#include "sim/setup/catalog.h"
#include "sim/setup/mig.h"
#include "sim/setup/overlay.h"
#include "sim/setup/zoo_workload.h"
#include "sim/setup/replay_workload.h"
#include "sim/core/topo.h"
#include "models/expand.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sim_synthetic_program(const sim_experiment *x, sim_program *out)
{
    memset(out, 0, sizeof *out);
    sim_op k = {
        .kind = SIM_OP_KERNEL,
        .unit = SIM_UNIT_TENSOR,
        .dispatch_ns = (int64_t)(x->workload.dispatch_us * 1e3),
        .gpu_ns = (int64_t)(x->workload.kernel_us * 1e3),
        .sm_fraction = 1.0f, /* synthetic kernels are assumed to fill the GPU */
    };
    for (int i = 0; i < x->workload.kernels_per_step; i++)
        if (sim_program_push(out, &k)) return SIM_ENOMEM;
    if (x->system.gpu_count > 1) {
        /* Data parallelism ends each backward with a gradient all-reduce: a barrier across GPUs.
         * Synthetic kernels carry no gradients, so it moves no bytes. */
        sim_op ar = {.kind = SIM_OP_ALLREDUCE, .dispatch_ns = k.dispatch_ns};
        if (sim_program_push(out, &ar)) return SIM_ENOMEM;
    }
    out->graph_launch_ns = (int64_t)(x->workload.graph_launch_us * 1e3);
    out->step_overhead_ns = (int64_t)(x->workload.step_overhead_us * 1e3);
    return SIM_OK;
}

static void take_str(char *dst, const char *src, bool user_set)
{
    if (!user_set && src[0]) strcpy(dst, src);
}

/* A named system supplies every field the user did not give. */
static int apply_system(sim_experiment *x, const cfg_experiment_set *set, const char *dir,
                        sim_err *err)
{
    sim_system_desc sys;
    int rc = cfg_catalog_load(dir, CFG_CAT_SYSTEM, x->system.name, &sys, err);
    if (rc) return rc;
    take_str(x->system.gpu, sys.gpu, cfg_experiment_was_set(set, "system.gpu"));
    take_str(x->system.cpu, sys.cpu, cfg_experiment_was_set(set, "system.cpu"));
    take_str(x->system.storage, sys.storage, cfg_experiment_was_set(set, "system.storage"));
    if (sys.gpu_count && !cfg_experiment_was_set(set, "system.gpu_count"))
        x->system.gpu_count = sys.gpu_count;
    if (sys.cpu_cores && !cfg_experiment_was_set(set, "system.cpu_cores"))
        x->system.cpu_cores = sys.cpu_cores;
    if (sys.cpu_threads && !cfg_experiment_was_set(set, "system.cpu_threads"))
        x->system.cpu_threads = sys.cpu_threads;
    if (sys.host_memory_gb > 0 && !cfg_experiment_was_set(set, "system.host_memory_gb"))
        x->system.host_memory_gb = sys.host_memory_gb;
    if (sys.pcie_gen && !cfg_experiment_was_set(set, "system.pcie_gen"))
        x->system.pcie_gen = sys.pcie_gen;
    if (!cfg_experiment_was_set(set, "system.nvlink")) x->system.nvlink = sys.nvlink;
    if (!cfg_experiment_was_set(set, "system.nvlink_links"))
        x->system.nvlink_links = sys.nvlink_links;
    if (!cfg_experiment_was_set(set, "system.pcie_switch_gpus"))
        x->system.pcie_switch_gpus = sys.pcie_switch_gpus;
    return SIM_OK;
}

/* Prefixes the catalog's error with the experiment key that named the entry, and points it at
 * where that key was given. */
static int named(int rc, const char *key, const cfg_experiment_set *set, sim_err *err)
{
    if (rc && err) {
        char msg[SIM_ERR_MSG_MAX];
        size_t klen = strlen(key);
        memcpy(msg, key, klen);
        memcpy(msg + klen, ": ", 2);
        size_t room = sizeof msg - klen - 3;
        size_t mlen = strnlen(err->msg, room);
        memcpy(msg + klen + 2, err->msg, mlen);
        msg[klen + 2 + mlen] = 0;
        memcpy(err->msg, msg, sizeof msg);
    }
    return cfg_experiment_locate(set, key, rc, err);
}

/* For an error whose sentence starts with the experiment key it is about ("workload.trace_gpu:
 * ..."), the place where that key was given. */
static int locate_by_key(int rc, const cfg_experiment_set *set, sim_err *err)
{
    if (!rc || !err) return rc;
    char key[64];
    size_t n = strcspn(err->msg, ": ");
    if (n == 0 || n >= sizeof key || err->msg[n] != ':') return rc;
    memcpy(key, err->msg, n);
    key[n] = 0;
    return cfg_experiment_locate(set, key, rc, err);
}

/* The memory a run may take for state that grows with the input, GiB: EPOCHSIM_MEMORY_BUDGET_GB,
 * else 4 (a sweep runs -j N points at once; 4 GiB each stays safe on a 16-32 GB laptop). */
static double memory_budget_gb(void)
{
    const char *env = getenv("EPOCHSIM_MEMORY_BUDGET_GB");
    char *end = NULL;
    double gb = env ? strtod(env, &end) : 0;
    return env && end != env && !*end && gb > 0 ? gb : 4.0;
}

/* Per-sample state is allocated up front (sim/core/loader.c): each GPU's loader keeps the
 * epoch's permutation, 4 bytes for every sample of the dataset (the sample's state rides in the
 * same word). Refused before allocating when it exceeds the budget. */
static int check_memory_budget(const sim_experiment *x, const cfg_experiment_set *set, sim_err *err)
{
    double samples = (double)x->dataset.samples;
    double bytes = x->system.gpu_count * samples * 4.0;
    double budget = memory_budget_gb();
    if (bytes <= budget * 1073741824.0) return SIM_OK;
    return cfg_experiment_locate(
        set, "dataset.samples",
        sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                    "dataset.samples %lld on %d GPU%s needs %.3g GiB of per-sample state, over "
                    "the %.3g GiB budget (raise it with EPOCHSIM_MEMORY_BUDGET_GB if the machine "
                    "has the memory)",
                    (long long)x->dataset.samples, x->system.gpu_count,
                    x->system.gpu_count == 1 ? "" : "s", bytes / 1073741824.0, budget),
        err);
}

/* A catalog overlay changes the loaded GPU, CPU and storage entries; the GPU's clock factors are
 * derived again, from the clocks or power_ref it may have changed. (The PCIe link is derived
 * from a generation and a lane count, so the overlay does not reach it.) */
static int apply_overlay(const char *dir, const char *path, sim_hardware *hw, sim_err *err)
{
    int rc = cfg_overlay_apply(path, CFG_CAT_GPU, hw->gpu.name, &hw->gpu, err);
    if (!rc) rc = cfg_gpu_resolve_clock(dir, &hw->gpu, path, err);
    if (!rc) rc = cfg_overlay_apply(path, CFG_CAT_CPU, hw->cpu.name, &hw->cpu, err);
    if (!rc) rc = cfg_overlay_apply(path, CFG_CAT_STORAGE, hw->storage.name, &hw->storage, err);
    return rc;
}

/* CPU lanes a box keeps from its GPU slots: one x4 boot NVMe drive. */
#define BOOT_NVME_LANES 4

/* What the topology takes from the GPU: P2P over PCIe, and NCCL's rate of one of its links. */
static void topology_of_gpu(sim_hardware *hw)
{
    hw->topo.p2p = hw->gpu.p2p;
    hw->topo.nvlink_link_gbps = sim_topo_nvlink_link_gbps(hw->gpu.compute_capability);
}

/* The first of the keys that was given (the last one when none was): where an error points. */
static const char *given(const cfg_experiment_set *set, const char *a, const char *b, const char *c)
{
    return cfg_experiment_was_set(set, a) ? a : cfg_experiment_was_set(set, b) ? b : c;
}

static int check_nvlink(const sim_hardware *hw, const cfg_experiment_set *set, sim_err *err)
{
    const sim_topology *t = &hw->topo;
    const char *kind = sim_nvlink_names[t->nvlink];
    if (hw->gpu.nvlink_gbps <= 0 || t->nvlink_link_gbps <= 0)
        return cfg_experiment_locate(
            set, given(set, "system.nvlink", "system.gpu", "system.name"),
            sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                        "system.nvlink is %s but the %s has no NVLink (nvlink_gbps 0 in its "
                        "catalog entry); use none",
                        kind, hw->gpu.name),
            err);
    if (t->nvlink_links < 1 ||
        2 * t->nvlink_links * t->nvlink_link_gbps > hw->gpu.nvlink_gbps * (1 + 1e-9))
        return cfg_experiment_locate(
            set, given(set, "system.nvlink_links", "system.nvlink", "system.name"),
            sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                        "system.nvlink_links %d: with system.nvlink %s give the links per GPU, "
                        "from 1 to what the %s's %.0f GB/s of NVLink holds at %.1f GB/s per link "
                        "and direction",
                        t->nvlink_links, kind, hw->gpu.name, hw->gpu.nvlink_gbps,
                        t->nvlink_link_gbps),
            err);
    return SIM_OK;
}

/* The CPU's lanes (lanes per socket x sockets, less the boot drive's) to the GPUs' slots, or with
 * PCIe switches to the switches' x16 uplinks, each GPU then at its full width to its switch (a
 * switch of the PEX 88096 class has 96 lanes: 16 up, 16 to each of four GPUs, and more). */
static int allocate_lanes(const sim_experiment *x, const cfg_experiment_set *set, int sockets,
                          sim_hardware *hw, sim_err *err)
{
    sim_topology *t = &hw->topo;
    int budget = hw->cpu.pcie_lanes * sockets - BOOT_NVME_LANES;
    t->switch_gpus = x->system.pcie_switch_gpus;
    int slots = hw->gpu_count, want = hw->gpu.pcie_lanes;
    int *lanes = t->lanes;
    if (t->switch_gpus > 0) {
        for (int i = 0; i < hw->gpu_count; i++)
            t->lanes[i] = hw->gpu.pcie_lanes;
        slots = (hw->gpu_count + t->switch_gpus - 1) / t->switch_gpus;
        want = 16;
        lanes = t->uplink_lanes;
    }
    if (sim_topo_lanes(slots, want, budget, lanes))
        return cfg_experiment_locate(
            set, given(set, "system.gpu_count", "system.cpu", "system.name"),
            sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                        "system.gpu_count %d: each %s needs an x%d slot at least, but %d x %s "
                        "give%s %d lanes to slots (%d each, less %d for the boot NVMe drive)",
                        hw->gpu_count, t->switch_gpus ? "PCIe switch" : "GPU", SIM_TOPO_MIN_LANES,
                        sockets, hw->cpu.name, sockets == 1 ? "s" : "", budget, hw->cpu.pcie_lanes,
                        BOOT_NVME_LANES),
            err);
    return SIM_OK;
}

/* The box's interconnect: NVLink as the system or experiment says, P2P and the NVLink rate from
 * the GPU, the PCIe lanes and switches, the sockets, how far NCCL lets P2P cross the CPU and
 * whether its NVSwitches reduce (NVLS). */
static int resolve_topology(const sim_experiment *x, const cfg_experiment_set *set, int sockets,
                            sim_hardware *hw, sim_err *err)
{
    sim_topology *t = &hw->topo;
    t->nvlink = (sim_nvlink)x->system.nvlink;
    t->nvlink_links = t->nvlink == SIM_NVLINK_NONE ? 0 : x->system.nvlink_links;
    topology_of_gpu(hw);
    int pytorch = mdl_pytorch_version(x->workload.pytorch);
    t->p2p_cpu_max_gpus = sim_topo_p2p_cpu_max_gpus(sim_topo_amd_x86(hw->cpu.arch), pytorch);
    t->nvls_eff = x->system.nvls == SIM_NVLS_OFF
                      ? 0
                      : sim_topo_nvls_efficiency(hw->gpu.compute_capability, pytorch);
    t->nvls_channels = sim_topo_nvls_channels(hw->gpu.compute_capability);
    t->sockets = sockets;
    t->socket_link_gbps = sim_topo_socket_link_gbps(hw->cpu.arch);
    if (t->nvlink != SIM_NVLINK_NONE && check_nvlink(hw, set, err)) return SIM_EINVAL;
    return allocate_lanes(x, set, sockets, hw, err);
}

/* placement.mig: the job runs on one instance of that profile, which is the GPU from here on.
 * Instances do not talk to each other (no peer-to-peer), so one job takes one instance. */
static int apply_mig(const sim_experiment *x, const cfg_experiment_set *set, const char *dir,
                     sim_hardware *hw, sim_err *err)
{
    sim_mig_table t;
    int rc = cfg_mig_load(dir, hw->gpu.name, &t, err);
    if (rc) return named(rc, "system.gpu", set, err);
    const sim_mig_profile *p = sim_mig_find(&t, x->placement.mig);
    if (!p)
        return named(sim_mig_unknown(&t, &hw->gpu, x->placement.mig, err), "placement.mig", set,
                     err);
    if (x->system.gpu_count > 1)
        return cfg_experiment_locate(
            set, "placement.mig",
            sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                        "placement.mig runs one job on one instance: system.gpu_count must be 1 "
                        "(MIG instances have no peer-to-peer for data parallelism)"),
            err);
    sim_mig_apply(&t, p, &hw->gpu);
    snprintf(hw->mig, sizeof hw->mig, "%s", p->name);
    return SIM_OK;
}

/* The job's knobs as the core takes them, before the workload settles what it decides. */
static void resolve_job(const sim_experiment *x, sim_scenario *sc)
{
    sc->seed = x->seed;
    sim_workload_desc *w = &sc->workload;
    snprintf(w->model, sizeof w->model, "%s", x->workload.trace[0] ? "trace" : x->workload.model);
    snprintf(w->trace, sizeof w->trace, "%s", x->workload.trace);
    snprintf(w->trace_gpu, sizeof w->trace_gpu, "%s", x->workload.trace_gpu);
    snprintf(w->trace_cpu, sizeof w->trace_cpu, "%s", x->workload.trace_cpu);
    w->trace_batch = x->workload.trace_batch;
    w->precision = x->workload.precision;
    sc->dataset = x->dataset;
    sc->loader = x->loader;
    sc->training = x->training;
    sc->host = (sim_host_spec){x->system.page_cache_gb, x->system.mem_copy_efficiency};
    sc->util_window_ns = x->report.util_window_ns;
    sc->sampled_pct = x->run.sampled_pct;
    sc->copy_dispatch_ns = (int64_t)(x->copy_dispatch_us * 1e3);
}

int sim_scenario_build(const sim_experiment *x_in, const cfg_experiment_set *set, const char *dir,
                       sim_scenario *sc, sim_err *err)
{
    return sim_scenario_build_gpu(x_in, set, dir, NULL, sc, err);
}

/* A dataset in memory must fit in host RAM beside the OS and the job's processes. */
static int check_host_memory(const sim_scenario *sc, const cfg_experiment_set *set, sim_err *err)
{
    sim_job_slot alone = {.sc = sc};
    double left = sim_host_ram_left_gb(sc, &alone, 1), data = sim_dataset_ram_gb(sc);
    if (left >= 0 || data == 0) return SIM_OK; /* on storage, the page cache just gets none */
    return cfg_experiment_locate(
        set, "dataset.location",
        sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                    "dataset.location memory: the dataset takes %.3g GB of host RAM (%lld "
                    "samples x %.0f bytes, a copy in each of %d GPU process%s), and with the OS "
                    "and the processes (%.3g GB) that is over the host's %.3g GB; use storage, "
                    "fewer samples or more RAM (system.host_memory_gb)",
                    data, (long long)sc->dataset.samples, sc->dataset.sample_bytes,
                    sc->hw.gpu_count, sc->hw.gpu_count == 1 ? "" : "es",
                    sc->hw.host_memory_gb + (-left) - data, sc->hw.host_memory_gb),
        err);
}

/* A model-zoo workload: its micro-batches' sequence lengths, then its program. */
static int zoo(const sim_experiment *x, const cfg_experiment_set *set, sim_scenario *sc,
               sim_err *err)
{
    mdl_seq_mix mix;
    int rc = sim_zoo_seq_mix(x, &mix, err);
    if (rc) return named(rc, "workload.seq_lengths", set, err);
    return named(sim_zoo_workload(x, &mix, set, sc, err), "workload.model", set, err);
}

/* sim_scenario_build_gpu up to the workload, which settles the per-sample defaults. */
static int build(const sim_experiment *x_in, const cfg_experiment_set *set, const char *dir,
                 const sim_gpu_desc *gpu, sim_scenario *sc, sim_err *err)
{
    memset(sc, 0, sizeof *sc);
    /* The experiment with its named system's values filled in: a working copy, never the
     * caller's; everything derived from it goes into sc. */
    sim_experiment xs = *x_in;
    sim_experiment *x = &xs;
    sim_hardware *hw = &sc->hw;
    int rc;
    if (x->system.name[0] && (rc = apply_system(x, set, dir, err)))
        return named(rc, "system.name", set, err);
    if ((rc = cfg_experiment_check(x, set, err)) || (rc = check_memory_budget(x, set, err)))
        return rc;
    sc->memory_budget_bytes = (int64_t)(memory_budget_gb() * 1073741824.0);
    if ((rc = cfg_catalog_load(dir, CFG_CAT_GPU, x->system.gpu, &hw->gpu, err)))
        return named(rc, "system.gpu", set, err);
    if ((rc = cfg_catalog_load(dir, CFG_CAT_CPU, x->system.cpu, &hw->cpu, err)))
        return named(rc, "system.cpu", set, err);
    if ((rc = cfg_catalog_load(dir, CFG_CAT_STORAGE, x->system.storage, &hw->storage, err)))
        return named(rc, "system.storage", set, err);
    if (x->system.catalog_overlay[0] &&
        (rc = apply_overlay(dir, x->system.catalog_overlay, hw, err)))
        return named(rc, "system.catalog_overlay", set, err);
    if (gpu) hw->gpu = *gpu;
    cfg_gpu_apply_ecc(&hw->gpu, x->system.gpu_ecc);
    if (x->placement.mig[0] && (rc = apply_mig(x, set, dir, hw, err))) return rc;
    /* Sockets of the box: a catalog CPU is one, a box giving the job more cores has more. */
    int sockets = x->system.cpu_cores > hw->cpu.cores ? x->system.cpu_cores / hw->cpu.cores : 1;
    /* A catalog CPU is one socket; a box that gives the job more cores than that has more
     * sockets, each with its own memory channels (a VM with fewer cores keeps the socket's). */
    if (x->system.cpu_cores > hw->cpu.cores)
        hw->cpu.mem_bw_gbps *= (double)x->system.cpu_cores / hw->cpu.cores;
    if (x->system.cpu_cores) hw->cpu.cores = x->system.cpu_cores;
    if (x->system.cpu_threads) hw->cpu.threads = x->system.cpu_threads;
    if (hw->cpu.threads < hw->cpu.cores)
        return cfg_experiment_locate(
            set, x->system.cpu_threads ? "system.cpu_threads" : "system.cpu_cores",
            sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                        "system.cpu_threads (%d) is below system.cpu_cores (%d): a box with "
                        "more cores than one %s gives each core at least one thread (set "
                        "both)",
                        hw->cpu.threads, hw->cpu.cores, hw->cpu.name),
            err);
    /* The link runs at the lower generation of the two ends unless the user says otherwise. */
    int gen = x->system.pcie_gen;
    if (!gen) gen = hw->gpu.pcie_gen < hw->cpu.pcie_gen ? hw->gpu.pcie_gen : hw->cpu.pcie_gen;
    if ((rc = cfg_catalog_pcie(dir, gen, hw->gpu.pcie_lanes, &hw->link, err)))
        return named(rc, "system.pcie_gen", set, err);
    hw->gpu_count = x->system.gpu_count;
    hw->host_memory_gb = x->system.host_memory_gb;
    if ((rc = resolve_topology(x, set, sockets, hw, err))) return rc;
    resolve_job(x, sc);
    if (x->workload.trace[0]) /* trace replay (replay_workload.c); its errors start with the key */
        return locate_by_key(trc_replay_scenario(x, set, dir, sc, err), set, err);
    if (strcmp(x->workload.model, "synthetic") != 0) return zoo(x, set, sc, err);
    if ((rc = sim_synthetic_program(x, &sc->program)))
        return sim_err_set(err, rc, NULL, 0, 0, "out of memory");
    return SIM_OK;
}

int sim_scenario_build_gpu(const sim_experiment *x_in, const cfg_experiment_set *set,
                           const char *dir, const sim_gpu_desc *gpu, sim_scenario *sc, sim_err *err)
{
    int rc = build(x_in, set, dir, gpu, sc, err);
    if (!rc && (rc = check_host_memory(sc, set, err))) sim_scenario_free(sc);
    return rc;
}

int sim_scenario_reprice(const sim_experiment *x_in, const cfg_experiment_set *set, const char *dir,
                         const sim_gpu_desc *gpu, sim_scenario *sc, sim_err *err)
{
    sim_experiment xs = *x_in;
    int rc;
    /* a MIG instance is cut from *gpu again: rebuilt, as replays and synthetic jobs are */
    if (xs.workload.trace[0] || !strcmp(xs.workload.model, "synthetic") || xs.placement.mig[0]) {
        sim_scenario_free(sc);
        return sim_scenario_build_gpu(x_in, set, dir, gpu, sc, err);
    }
    if (xs.system.name[0] && (rc = apply_system(&xs, set, dir, err)))
        return named(rc, "system.name", set, err);
    sim_program_free(&sc->program);
    sc->hw.gpu = *gpu;
    topology_of_gpu(&sc->hw);
    return zoo(&xs, set, sc, err);
}

void sim_scenario_free(sim_scenario *sc)
{
    sim_program_free(&sc->program);
}

int sim_system_hardware(const char *dir, const char *system, const char *const *sets, int n_sets,
                        sim_hardware *hw, sim_err *err)
{
    sim_experiment x;
    sim_experiment_defaults(&x);
    cfg_experiment_set set = {0};
    char assign[SIM_NAME_MAX + 16];
    snprintf(assign, sizeof assign, "system.name=%s", system);
    int rc = cfg_experiment_apply(assign, &x, &set, err);
    for (int i = 0; !rc && i < n_sets; i++)
        rc = cfg_experiment_apply(sets[i], &x, &set, err);
    if (rc) return rc;
    /* Only the hardware is wanted: the smallest synthetic job builds it. */
    strcpy(x.workload.model, "synthetic");
    x.dataset.samples = 1;
    x.loader.batch_size = 1;
    sim_scenario *sc = malloc(sizeof *sc);
    if (!sc) return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    rc = sim_scenario_build(&x, &set, dir, sc, err);
    if (!rc) *hw = sc->hw;
    sim_scenario_free(sc);
    free(sc);
    return rc;
}
