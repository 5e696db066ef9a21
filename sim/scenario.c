/* scenario.c — resolves an experiment into hardware and a step program (see scenario.h). */
#include "sim/scenario.h"

#include "sim/catalog.h"
#include "sim/zoo_workload.h"

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
        if (sim_program_push(out, &k))
            return SIM_ENOMEM;
    if (x->system.gpu_count > 1) {
        /* Data parallelism ends each backward with a gradient all-reduce: a barrier across GPUs.
         * Synthetic kernels carry no gradients, so it moves no bytes. */
        sim_op ar = {.kind = SIM_OP_ALLREDUCE, .dispatch_ns = k.dispatch_ns};
        if (sim_program_push(out, &ar))
            return SIM_ENOMEM;
    }
    out->graph_launch_ns = (int64_t)(x->workload.graph_launch_us * 1e3);
    out->step_overhead_ns = (int64_t)(x->workload.step_overhead_us * 1e3);
    return SIM_OK;
}

static void take_str(char *dst, const char *src, bool user_set)
{
    if (!user_set && src[0])
        strcpy(dst, src);
}

/* A named system supplies every field the user did not give. */
static int apply_system(sim_experiment *x, const cfg_experiment_set *set, const char *dir,
                        sim_err *err)
{
    sim_system_desc sys;
    int rc = cfg_catalog_load(dir, CFG_CAT_SYSTEM, x->system.name, &sys, err);
    if (rc)
        return rc;
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
    return SIM_OK;
}

/* Prefixes the catalog's error with the experiment key that named the entry. */
static int named(int rc, const char *key, sim_err *err)
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
    return rc;
}

int sim_scenario_build(const sim_experiment *x_in, const cfg_experiment_set *set,
                       const char *dir, sim_scenario *sc, sim_err *err)
{
    memset(sc, 0, sizeof *sc);
    sc->x = *x_in;
    sim_experiment *x = &sc->x;
    sim_hardware *hw = &sc->hw;
    int rc;
    if (x->system.name[0] && (rc = apply_system(x, set, dir, err)))
        return named(rc, "system.name", err);
    if ((rc = cfg_experiment_check(x, err)))
        return rc;
    if ((rc = cfg_catalog_load(dir, CFG_CAT_GPU, x->system.gpu, &hw->gpu, err)))
        return named(rc, "system.gpu", err);
    if ((rc = cfg_catalog_load(dir, CFG_CAT_CPU, x->system.cpu, &hw->cpu, err)))
        return named(rc, "system.cpu", err);
    if ((rc = cfg_catalog_load(dir, CFG_CAT_STORAGE, x->system.storage, &hw->storage, err)))
        return named(rc, "system.storage", err);
    /* A catalog CPU is one socket; a box that gives the job more cores than that has more
     * sockets, each with its own memory channels (a VM with fewer cores keeps the socket's). */
    if (x->system.cpu_cores > hw->cpu.cores)
        hw->cpu.mem_bw_gbps *= (double)x->system.cpu_cores / hw->cpu.cores;
    if (x->system.cpu_cores)
        hw->cpu.cores = x->system.cpu_cores;
    if (x->system.cpu_threads)
        hw->cpu.threads = x->system.cpu_threads;
    if (hw->cpu.threads < hw->cpu.cores)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "system.cpu_threads (%d) is below the core count (%d)",
                           hw->cpu.threads, hw->cpu.cores);
    /* The link runs at the lower generation of the two ends unless the user says otherwise. */
    int gen = x->system.pcie_gen;
    if (!gen)
        gen = hw->gpu.pcie_gen < hw->cpu.pcie_gen ? hw->gpu.pcie_gen : hw->cpu.pcie_gen;
    if ((rc = cfg_catalog_pcie(dir, gen, hw->gpu.pcie_lanes, &hw->link, err)))
        return named(rc, "system.pcie_gen", err);
    hw->gpu_count = x->system.gpu_count;
    hw->host_memory_gb = x->system.host_memory_gb;
    if (x->workload.trace[0])
        return sim_err_set(err, SIM_EINVAL, "workload.trace", 0, 0,
                           "trace replay is not built into this version yet");
    if (strcmp(x->workload.model, "synthetic") != 0)
        return named(sim_zoo_workload(sc, set, err), "workload.model", err);
    if ((rc = sim_synthetic_program(x, &sc->program)))
        return sim_err_set(err, rc, NULL, 0, 0, "out of memory");
    return SIM_OK;
}

void sim_scenario_free(sim_scenario *sc)
{
    sim_program_free(&sc->program);
}
