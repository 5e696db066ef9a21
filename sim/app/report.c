/* report.c — terminal summary, JSON (yajl_gen) and utilization CSV of one run. */
#include "sim/app/report.h"

#include "sim/base/json.h"
#include "sim/base/outfile.h"
#include "sim/core/topo.h"

#include <math.h>
#include <string.h>

/* NVML has no utilization.gpu for a MIG device: null where a value would be (the reason is one
 * top-level note, so that sweep rows keep the same columns). */
static void gpu_util_member(yajl_gen g, const sim_epoch_result *e, bool na)
{
    sim_json_num(g, "gpu_util_pct", na ? NAN : e->gpu_util_pct); /* NaN is written as null */
}

/* Whether the stall breakdown names stall k: waiting for another job only in a run of several. */
static bool stall_shown(const sim_result *res, int k)
{
    return k != SIM_STALL_SHARED || res->shared;
}

static void epoch_members(yajl_gen g, const sim_result *res, const sim_epoch_result *e, bool mean)
{
    bool mig = res->gpu_util_na;
    sim_json_num(g, mean ? "epoch_time_s" : "time_s", e->time_s);
    if (!mean) { /* the run's totals are top-level members */
        sim_json_key(g, "steps");
        yajl_gen_integer(g, e->steps);
    }
    sim_json_key(g, "samples");
    yajl_gen_integer(g, e->samples);
    sim_json_num(g, "samples_per_s", e->samples_per_s);
    sim_json_num(g, "step_time_ms_p50", e->step_time_ms_p50);
    sim_json_num(g, "step_time_ms_p99", e->step_time_ms_p99);
    gpu_util_member(g, e, mig);
    sim_json_num(g, "sm_active_pct", e->sm_active_pct);
    sim_json_num(g, "cpu_util_pct", e->cpu_util_pct);
    sim_json_num(g, "main_thread_busy_pct", e->main_busy_pct);
    sim_json_num(g, "worker_busy_pct", e->worker_busy_pct);
    sim_json_key(g, "stall_pct");
    yajl_gen_map_open(g);
    for (int k = 0; k < SIM_STALL_COUNT; k++)
        if (stall_shown(res, k)) sim_json_num(g, sim_stall_name((sim_stall)k), e->stall_pct[k]);
    yajl_gen_map_close(g);
    sim_json_num(g, "storage_busy_pct", e->storage_busy_pct);
    sim_json_num(g, "h2d_busy_pct", e->h2d_busy_pct);
    sim_json_num(g, "comm_pct", e->comm_pct);
    sim_json_num(g, "cache_hit_pct", e->cache_hit_pct);
}

/* A sampled epoch: what was simulated, and how sure its time is. */
static void epoch_sampled_members(yajl_gen g, const sim_epoch_result *e)
{
    sim_json_key(g, "steps_simulated");
    yajl_gen_integer(g, e->steps_simulated);
    sim_json_key(g, "windows");
    yajl_gen_integer(g, e->windows);
    sim_json_num(g, "time_half_pct", e->time_half_pct);
}

/* The `sampled` member of a sampled run (none otherwise, so that full runs keep their keys); the
 * same keys whatever happened, so that sweep rows keep the same columns. */
static void json_sampled(yajl_gen g, const sim_result *res)
{
    if (res->window_steps == 0) return;
    sim_json_key(g, "sampled");
    yajl_gen_map_open(g);
    sim_json_num(g, "target_pct", res->sampled_pct);
    sim_json_num(g, "epoch_time_half_pct", res->time_half_pct);
    sim_json_num(g, "confidence_pct", 95);
    sim_json_key(g, "window_steps");
    yajl_gen_integer(g, res->window_steps);
    sim_json_key(g, "epochs_cut");
    yajl_gen_integer(g, res->epochs_cut);
    sim_json_key(g, "steps_simulated");
    yajl_gen_integer(g, res->steps_simulated);
    sim_json_key(g, "first_full_epoch"); /* 1-based; null when every epoch was cut */
    if (res->first_full < 0)
        yajl_gen_null(g);
    else
        yajl_gen_integer(g, res->first_full + 1);
    sim_json_str(g, "full_reason", res->first_full >= 0 ? sim_sampled_why_text(res->why_full) : "");
    yajl_gen_map_close(g);
}

static void json_doubles(yajl_gen g, const double *v, int n)
{
    yajl_gen_array_open(g);
    for (int i = 0; i < n; i++)
        yajl_gen_double(g, v[i]);
    yajl_gen_array_close(g);
}

void sim_report_json_members(yajl_gen g, const sim_result *res)
{
    epoch_members(g, res, &res->mean, true);
    sim_json_num(g, "total_time_s", res->total_time_s);
    sim_json_key(g, "steps");
    yajl_gen_integer(g, res->steps);
    sim_json_str(g, "bottleneck", sim_bottleneck_name(res->bottleneck));
    sim_json_str(g, "verdict", res->verdict);
    sim_json_key(g, "workers_busy_pct"); /* each of GPU 0's workers over the run */
    json_doubles(g, res->worker_busy_pct, res->n_workers);
    if (res->n_worker_gpus > 1) { /* data parallel: each GPU's loader has its own workers */
        sim_json_key(g, "workers_busy_pct_by_gpu");
        yajl_gen_array_open(g);
        for (int r = 0; r < res->n_worker_gpus; r++)
            json_doubles(g, res->worker_busy_pct + r * res->n_workers, res->n_workers);
        yajl_gen_array_close(g);
    }
    sim_json_key(g, "epochs");
    yajl_gen_array_open(g);
    for (int i = 0; i < res->n_epochs; i++) {
        yajl_gen_map_open(g);
        epoch_members(g, res, &res->epochs[i], false);
        if (res->window_steps) epoch_sampled_members(g, &res->epochs[i]);
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    sim_json_num(g, "util_window_s", (double)res->util_window_ns / 1e9);
    sim_json_key(g, "events");
    yajl_gen_integer(g, (long long)res->events);
    json_sampled(g, res);
}

void sim_report_json_memory(yajl_gen g, const sim_memory_info *m)
{
    if (!m->known) return;
    sim_json_key(g, "memory");
    yajl_gen_map_open(g);
    sim_json_num(g, "peak_gb", m->peak_gb);
    sim_json_num(g, "capacity_gb", m->capacity_gb);
    sim_json_key(g, "oom");
    yajl_gen_bool(g, m->oom);
    sim_json_key(g, "max_batch");
    yajl_gen_integer(g, m->max_batch);
    sim_json_key(g, "parts_gb");
    yajl_gen_map_open(g);
    for (int i = 0; i < m->n_parts; i++)
        sim_json_num(g, m->parts[i].name, m->parts[i].gb);
    yajl_gen_map_close(g);
    yajl_gen_map_close(g);
}

/* The interconnect: each GPU's slot width (the CPU's lane budget), NVLink, P2P. */
static void scenario_topology(yajl_gen g, const sim_hardware *hw)
{
    sim_json_key(g, "pcie_lanes");
    yajl_gen_array_open(g);
    for (int i = 0; i < hw->gpu_count; i++)
        yajl_gen_integer(g, sim_topo_gpu_lanes(hw, i));
    yajl_gen_array_close(g);
    sim_json_str(g, "nvlink", sim_nvlink_names[hw->topo.nvlink]);
    sim_json_key(g, "nvlink_links");
    yajl_gen_integer(g, hw->topo.nvlink_links);
    sim_json_key(g, "p2p");
    yajl_gen_bool(g, hw->topo.p2p);
}

/* The `advice` member: each change with the samples/s it gave and its gain. */
static void json_advice(yajl_gen g, const sim_report_advice *advice)
{
    if (advice->n < 0) return;
    sim_json_key(g, "advice");
    yajl_gen_array_open(g);
    for (int i = 0; i < advice->n; i++) {
        yajl_gen_map_open(g);
        sim_json_str(g, "change", advice->adv[i].change);
        sim_json_num(g, "samples_per_s", advice->adv[i].samples_per_s);
        sim_json_num(g, "gain_pct", advice->adv[i].gain_pct);
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
}

int sim_report_json(const char *path, const sim_scenario *sc, const sim_result *res,
                    const sim_report_advice *advice, sim_err *err)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g) return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    yajl_gen_config(g, yajl_gen_beautify, 1);
    yajl_gen_map_open(g);
    if (res) {
        sim_report_json_members(g, res);
        json_advice(g, advice);
        if (res->gpu_util_na)
            sim_json_str(g, "gpu_util_note",
                         "not available on MIG (NVML reports none); see sm_active_pct");
    } else {
        sim_json_key(g, "oom");
        yajl_gen_bool(g, 1);
    }
    sim_report_json_memory(g, &sc->memory);
    sim_json_key(g, "scenario");
    yajl_gen_map_open(g);
    sim_json_str(g, "gpu", sc->hw.gpu.name);
    if (sc->hw.mig[0]) sim_json_str(g, "mig", sc->hw.mig);
    sim_json_key(g, "gpu_count");
    yajl_gen_integer(g, sc->hw.gpu_count);
    sim_json_str(g, "cpu", sc->hw.cpu.name);
    sim_json_key(g, "cpu_cores");
    yajl_gen_integer(g, sc->hw.cpu.cores);
    sim_json_key(g, "cpu_threads");
    yajl_gen_integer(g, sc->hw.cpu.threads);
    sim_json_str(g, "storage", sc->hw.storage.name);
    sim_json_str(g, "link", sc->hw.link.name);
    scenario_topology(g, &sc->hw);
    sim_json_str(g, "model", sc->workload.model);
    if (sc->workload.trace[0]) { /* trace replay: what was replayed, recorded where */
        sim_json_str(g, "trace", sc->workload.trace);
        sim_json_str(g, "trace_gpu", sc->workload.trace_gpu);
        sim_json_str(g, "trace_cpu", sc->workload.trace_cpu);
        sim_json_key(g, "trace_batch");
        yajl_gen_integer(g, sc->workload.trace_batch);
    }
    if (sc->workload.seq_lengths) { /* batches padded to their longest sequence */
        sim_json_int(g, "seq_lengths", sc->workload.seq_lengths);
        sim_json_int(g, "seq_min", sc->workload.seq_min);
        sim_json_int(g, "seq_max", sc->workload.seq_max);
        sim_json_num(g, "seq_mean", sc->workload.seq_mean);
        sim_json_bool(g, "seq_averaged", sc->workload.seq_averaged);
    }
    sim_json_key(g, "batch_size");
    yajl_gen_integer(g, sc->loader.batch_size);
    sim_json_key(g, "num_workers");
    yajl_gen_integer(g, sc->loader.num_workers);
    sim_json_key(g, "seed");
    yajl_gen_integer(g, (long long)sc->seed);
    yajl_gen_map_close(g);
    yajl_gen_map_close(g);
    int rc = sim_json_write(g, path, err);
    yajl_gen_free(g);
    return rc;
}

int sim_report_util_csv(const char *path, const sim_result *res, sim_err *err)
{
    sim_outfile o;
    int rc = sim_outfile_open(&o, path, err);
    if (rc) return rc;
    fprintf(o.fp, "time_s,gpu,sm\n");
    for (int64_t w = 0; w < res->n_util; w++)
        fprintf(o.fp, "%.3f,0,%u\n", (double)((w + 1) * res->util_window_ns) / 1e9,
                res->util_series[w]);
    return sim_outfile_commit(&o, err);
}

static void bar(FILE *out, const char *label, double pct)
{
    int n = (int)(pct / 100.0 * 40 + 0.5);
    fprintf(out, "  %-22s %6.1f %%  ", label, pct);
    for (int i = 0; i < n && i < 40; i++)
        fputc('#', out);
    fputc('\n', out);
}

static void text_advice(FILE *out, const sim_result *res, const sim_report_advice *advice)
{
    if (advice->n < 0 || res->bottleneck == SIM_BN_GPU_COMPUTE) return;
    if (advice->n == 0) {
        fprintf(out, "  no change tried in simulation (workers, prefetch, pinned copies, CUDA "
                     "graphs, batch) raises the throughput\n");
        return;
    }
    fprintf(out, "\nadvice (each change simulated; now %.0f samples/s):\n",
            res->mean.samples_per_s);
    for (int i = 0; i < advice->n; i++)
        fprintf(out, "  %-50s %9.0f samples/s  (+%.1f %%)\n", advice->adv[i].change,
                advice->adv[i].samples_per_s, advice->adv[i].gain_pct);
}

/* The padded lengths of the micro-batches, when batches are padded to their longest sequence. */
static void text_seq_lengths(FILE *out, const sim_workload_desc *w)
{
    if (!w->seq_lengths) return;
    fprintf(out, "sequences: padded to %.1f tokens a sample on average", w->seq_mean);
    if (w->seq_lengths > 1)
        fprintf(out, " (%d lengths, %d to %d)", w->seq_lengths, w->seq_min, w->seq_max);
    if (w->seq_averaged) fprintf(out, ", one mean length: fewer micro-batches a step than bins");
    fprintf(out, "\n");
}

/* Closes the epoch-time line: how a sampled run got it. */
static void text_sampled(FILE *out, const sim_result *res)
{
    if (res->window_steps == 0) {
        fprintf(out, ")\n");
        return;
    }
    int windows = 0;
    for (int i = 0; i < res->n_epochs; i++)
        windows += res->epochs[i].windows;
    if (res->epochs_cut > 0)
        fprintf(out, "; +- %.2f %% (95 %%), sampled %d window%s of %d steps)\n", res->time_half_pct,
                windows, windows == 1 ? "" : "s", res->window_steps);
    else
        fprintf(out, "; sampled mode simulated every step)\n");
    if (res->first_full >= 0)
        fprintf(out, "  %-22s epoch %d%s simulated to its end: %s\n", "", res->first_full + 1,
                res->epochs_cut ? " (and maybe others)" : "", sim_sampled_why_text(res->why_full));
    fprintf(out, "  %-22s %9lld of %lld steps%s\n", "steps simulated",
            (long long)res->steps_simulated, (long long)res->steps,
            res->steps_simulated < res->steps ? " (the rest extrapolated)" : "");
}

void sim_report_text(FILE *out, const sim_scenario *sc, const sim_result *res,
                     const sim_report_advice *advice)
{
    const sim_epoch_result *m = &res->mean;
    const sim_hardware *hw = &sc->hw;
    fprintf(out, "epochsim: %s x%d, %s (%d cores / %d threads), %s, %s x%d\n",
            hw->gpu.label[0] ? hw->gpu.label : hw->gpu.name, hw->gpu_count,
            hw->cpu.label[0] ? hw->cpu.label : hw->cpu.name, hw->cpu.cores, hw->cpu.threads,
            hw->storage.label[0] ? hw->storage.label : hw->storage.name, hw->link.name,
            hw->link.lanes);
    if (hw->gpu_count > 1) {
        bool nvls = hw->topo.nvlink == SIM_NVLINK_NVSWITCH && hw->topo.nvls_eff > 0;
        fprintf(out, "links:    NVLink %s%s, P2P %s, PCIe slots", sim_nvlink_names[hw->topo.nvlink],
                nvls ? " (the switches reduce: NVLS)" : "",
                hw->topo.p2p ? "yes" : "no (through host memory)");
        for (int i = 0; i < hw->gpu_count && i < 16; i++)
            fprintf(out, " x%d", sim_topo_gpu_lanes(hw, i));
        fprintf(out, "%s\n", hw->gpu_count > 16 ? " ..." : "");
    }
    if (sc->workload.trace[0])
        fprintf(out, "trace:    %s (recorded on %s, %s, batch %d)\n", sc->workload.trace,
                sc->workload.trace_gpu, sc->workload.trace_cpu, sc->workload.trace_batch);
    fprintf(out, "workload: %s, batch %d, %d workers, %s%s, %d epoch%s, %lld steps\n",
            sc->workload.model, sc->loader.batch_size, sc->loader.num_workers,
            sc->loader.pin_memory ? "pinned" : "pageable",
            sc->loader.non_blocking ? " non_blocking" : "", res->n_epochs,
            res->n_epochs == 1 ? "" : "s", (long long)res->steps);
    text_seq_lengths(out, &sc->workload);
    fprintf(out, "\n");
    fprintf(out, "  epoch time             %9.2f s   (mean of %d", m->time_s, res->n_epochs);
    text_sampled(out, res);
    fprintf(out, "  throughput             %9.0f samples/s\n", m->samples_per_s);
    fprintf(out, "  step time p50 / p99    %9.2f / %.2f ms\n", m->step_time_ms_p50,
            m->step_time_ms_p99);
    if (res->gpu_util_na)
        fprintf(out, "  %-22s    n/a     MIG %s: NVML reports no GPU-Util; read SM active\n",
                "GPU-Util (nvidia-smi)", hw->mig);
    else
        bar(out, "GPU-Util (nvidia-smi)", m->gpu_util_pct);
    bar(out, "SM active", m->sm_active_pct);
    bar(out, "CPU util (all threads)", m->cpu_util_pct);
    bar(out, "main thread busy", m->main_busy_pct);
    if (res->n_workers > 0) {
        double lo = 100, hi = 0;
        int n = res->n_workers * res->n_worker_gpus;
        for (int i = 0; i < n; i++) {
            lo = res->worker_busy_pct[i] < lo ? res->worker_busy_pct[i] : lo;
            hi = res->worker_busy_pct[i] > hi ? res->worker_busy_pct[i] : hi;
        }
        bar(out, res->n_worker_gpus > 1 ? "GPU 0 workers busy" : "workers busy (mean)",
            m->worker_busy_pct);
        fprintf(out, "  %-22s %6.1f / %.1f %% over %d worker%s%s\n", "  least / most busy", lo, hi,
                n, n == 1 ? "" : "s", res->n_worker_gpus > 1 ? " of all GPUs" : "");
    }
    bar(out, "storage busy", m->storage_busy_pct);
    if (hw->gpu_count > 1) bar(out, "all-reduce (exposed)", m->comm_pct);
    if (sc->memory.known)
        fprintf(out, "  GPU memory             %9.1f of %.1f GiB (largest batch that fits: %d)\n",
                sc->memory.peak_gb, sc->memory.capacity_gb, sc->memory.max_batch);
    fprintf(out, "\n  GPU idle, by cause:\n");
    for (int k = 0; k < SIM_STALL_COUNT; k++)
        if (stall_shown(res, k)) bar(out, sim_stall_name((sim_stall)k), m->stall_pct[k]);
    if (res->n_epochs > 1) {
        /* on MIG the column is SM active: NVML has no GPU-Util there */
        fprintf(out, "\n  per epoch:   time_s  %s  cache-hit\n",
                res->gpu_util_na ? "SMactive" : "GPU-Util");
        for (int i = 0; i < res->n_epochs; i++)
            fprintf(out, "    %4d  %10.2f  %7.1f %%  %7.1f %%\n", i + 1, res->epochs[i].time_s,
                    res->gpu_util_na ? res->epochs[i].sm_active_pct : res->epochs[i].gpu_util_pct,
                    res->epochs[i].cache_hit_pct);
    }
    fprintf(out, "\nbottleneck: %s\n  %s\n", sim_bottleneck_name(res->bottleneck), res->verdict);
    text_advice(out, res, advice);
}

void sim_report_memory_text(FILE *out, const sim_scenario *sc)
{
    const sim_memory_info *m = &sc->memory;
    fprintf(out, "GPU memory of %s at batch %d (%s) on %s: does not fit\n", sc->workload.model,
            sc->loader.batch_size, sim_precision_name(sc->workload.precision), sc->hw.gpu.name);
    for (int i = 0; i < m->n_parts; i++)
        if (m->parts[i].gb > 0)
            fprintf(out, "  %-24s %9.2f GiB\n", m->parts[i].name, m->parts[i].gb);
    fprintf(out, "  %-24s %9.2f GiB (the parts do not all live at once)\n", "peak", m->peak_gb);
    fprintf(out, "  %-24s %9.2f GiB\n", "capacity", m->capacity_gb);
    if (m->max_batch > 0)
        fprintf(out, "largest batch that fits: %d\n", m->max_batch);
    else
        fprintf(out, "not even batch 1 fits: try activation checkpointing (workload.checkpointing),"
                     " SGD instead of Adam, a lower precision or a bigger GPU\n");
}

/* Job j of a run of several: its placement, then what a single run reports. */
static void json_job(yajl_gen g, const sim_report_jobs *jr, const sim_jobs_result *res, int j)
{
    const sim_scenario *sc = &jr->sc[j];
    yajl_gen_map_open(g);
    sim_json_str(g, "name", jr->names[j]);
    sim_json_key(g, "gpus");
    yajl_gen_array_open(g);
    for (int r = 0; r < sc->hw.gpu_count; r++)
        yajl_gen_integer(g, jr->gpus[j][r]);
    yajl_gen_array_close(g);
    if (sc->hw.mig[0]) sim_json_str(g, "mig", sc->hw.mig);
    sim_json_str(g, "model", sc->workload.model);
    sim_json_key(g, "batch_size");
    yajl_gen_integer(g, sc->loader.batch_size);
    sim_json_key(g, "num_workers");
    yajl_gen_integer(g, sc->loader.num_workers);
    sim_report_json_members(g, &res->job[j]);
    sim_report_json_memory(g, &sc->memory);
    yajl_gen_map_close(g);
}

static void json_gpus(yajl_gen g, const sim_jobs_result *res)
{
    sim_json_key(g, "gpus");
    yajl_gen_array_open(g);
    for (int i = 0; i < res->n_gpus; i++) {
        yajl_gen_map_open(g);
        sim_json_key(g, "gpu");
        yajl_gen_integer(g, i);
        sim_json_key(g, "jobs");
        yajl_gen_integer(g, res->gpu[i].jobs);
        /* NaN is written as null: NVML has no GPU-Util on a MIG GPU */
        sim_json_num(g, "gpu_util_pct", res->gpu[i].mig ? NAN : res->gpu[i].gpu_util_pct);
        sim_json_num(g, "sm_active_pct", res->gpu[i].mig ? NAN : res->gpu[i].sm_active_pct);
        sim_json_num(g, "h2d_busy_pct", res->gpu[i].h2d_busy_pct);
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
}

/* The host's figures, every job's threads and reads together (each job has its own part). */
static void json_host(yajl_gen g, const sim_jobs_result *res)
{
    sim_json_key(g, "host");
    yajl_gen_map_open(g);
    sim_json_num(g, "cpu_util_pct", res->host.cpu_util_pct);
    sim_json_num(g, "cpu_runnable", res->host.cpu_runnable);
    sim_json_num(g, "storage_busy_pct", res->host.storage_busy_pct);
    yajl_gen_map_close(g);
}

int sim_report_jobs_json(const char *path, const sim_report_jobs *jr, const sim_jobs_result *res,
                         sim_err *err)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g) return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    yajl_gen_config(g, yajl_gen_beautify, 1);
    yajl_gen_map_open(g);
    sim_json_key(g, "jobs");
    yajl_gen_array_open(g);
    for (int j = 0; j < res->n_jobs; j++)
        json_job(g, jr, res, j);
    yajl_gen_array_close(g);
    json_gpus(g, res);
    json_host(g, res);
    sim_json_num(g, "total_time_s", res->total_time_s);
    sim_json_key(g, "events");
    yajl_gen_integer(g, (long long)res->events);
    const sim_hardware *hw = &jr->system->hw;
    sim_json_key(g, "scenario");
    yajl_gen_map_open(g);
    sim_json_str(g, "gpu", hw->gpu.name);
    sim_json_key(g, "gpu_count");
    yajl_gen_integer(g, hw->gpu_count);
    sim_json_str(g, "gpu_sharing", sim_gpu_sharing_names[jr->sharing]);
    sim_json_str(g, "cpu", hw->cpu.name);
    sim_json_key(g, "cpu_cores");
    yajl_gen_integer(g, hw->cpu.cores);
    sim_json_key(g, "cpu_threads");
    yajl_gen_integer(g, hw->cpu.threads);
    sim_json_str(g, "storage", hw->storage.name);
    sim_json_str(g, "link", hw->link.name);
    yajl_gen_map_close(g);
    yajl_gen_map_close(g);
    int rc = sim_json_write(g, path, err);
    yajl_gen_free(g);
    return rc;
}

void sim_report_jobs_text(FILE *out, const sim_report_jobs *jr, const sim_jobs_result *res)
{
    const sim_hardware *hw = &jr->system->hw;
    fprintf(out, "epochsim: %d jobs on %s x%d (%s), %s (%d cores / %d threads), %s\n\n",
            res->n_jobs, hw->gpu.label[0] ? hw->gpu.label : hw->gpu.name, hw->gpu_count,
            sim_gpu_sharing_names[jr->sharing], hw->cpu.label[0] ? hw->cpu.label : hw->cpu.name,
            hw->cpu.cores, hw->cpu.threads,
            hw->storage.label[0] ? hw->storage.label : hw->storage.name);
    fprintf(out, "  %-16s %-8s %11s %9s %9s %9s %9s %9s\n", "job", "GPUs", "samples/s", "epoch s",
            "step p50", "GPU-Util", "waits", "GPU mem");
    fprintf(out, "  %-16s %-8s %11s %9s %9s %9s %9s %9s\n", "", "", "", "", "ms", "%", "other %",
            "GiB");
    for (int j = 0; j < res->n_jobs; j++) {
        const sim_epoch_result *m = &res->job[j].mean;
        const sim_scenario *sc = &jr->sc[j];
        char gpus[32];
        size_t used = 0;
        for (int r = 0; r < sc->hw.gpu_count && used < sizeof gpus; r++)
            used += (size_t)snprintf(gpus + used, sizeof gpus - used, "%s%d", r ? "," : "",
                                     jr->gpus[j][r]);
        fprintf(out, "  %-16.16s %-8.8s %11.0f %9.2f %9.2f ", jr->names[j], gpus, m->samples_per_s,
                m->time_s, m->step_time_ms_p50);
        if (res->job[j].gpu_util_na)
            fprintf(out, "%9s %9.1f ", "n/a", m->stall_pct[SIM_STALL_SHARED]);
        else
            fprintf(out, "%9.1f %9.1f ", m->gpu_util_pct, m->stall_pct[SIM_STALL_SHARED]);
        if (sc->memory.known)
            fprintf(out, "%9.1f\n", sc->memory.peak_gb);
        else
            fprintf(out, "%9s\n", "-");
    }
    fprintf(out, "\n  physical GPU   jobs  GPU-Util (nvidia-smi)  SM active  H2D busy\n");
    for (int i = 0; i < res->n_gpus; i++)
        if (res->gpu[i].mig)
            fprintf(out,
                    "  %12d %6d %21s %10s %7.1f %%  MIG: NVML has no GPU-Util; read each job's "
                    "SM active (--json)\n",
                    i, res->gpu[i].jobs, "n/a", "n/a", res->gpu[i].h2d_busy_pct);
        else
            fprintf(out, "  %12d %6d %19.1f %% %8.1f %% %7.1f %%\n", i, res->gpu[i].jobs,
                    res->gpu[i].gpu_util_pct, res->gpu[i].sm_active_pct, res->gpu[i].h2d_busy_pct);
    fprintf(
        out,
        "\n  host: CPU %.1f %% of %d threads (%.1f runnable on average), storage busy %.1f %%\n",
        res->host.cpu_util_pct, hw->cpu.threads, res->host.cpu_runnable,
        res->host.storage_busy_pct);
    fprintf(out, "  all jobs done after %.2f s\n", res->total_time_s);
    for (int j = 0; j < res->n_jobs; j++)
        fprintf(out, "\n%s: %s\n  %s\n", jr->names[j], sim_bottleneck_name(res->job[j].bottleneck),
                res->job[j].verdict);
}
