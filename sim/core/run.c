/* run.c — wires one scenario into an engine, runs it, and turns what the components observed
 * into the figures of sim_result (see run.h). Everything a run owns hangs off one `world`. */
#include "sim/core/run.h"

#include "sim/core/engine.h"
#include "sim/core/metrics.h"
#include "sim/core/pipeline.h"
#include "sim/core/sampler.h"
#include "sim/core/timeline.h"
#include "sim/core/windows.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Host RAM the OS and the job's own processes keep from the page cache: an estimate (kernel and
 * services ~2 GB, the main process with CUDA context ~3 GB, each worker ~0.5 GB of Python and
 * dataset state). system.page_cache_gb overrides it. */
#define OS_RESERVE_GB 2.0
#define MAIN_PROCESS_GB 3.0
#define WORKER_GB 0.5
/* A stall worth naming: below this share of wall time the GPU itself is the limit. */
#define STALL_VERDICT_PCT 10.0
/* GPU-Util at or above this: the GPU is the limit, whatever idles it the rest of the time. */
#define GPU_BOUND_PCT 80.0
/* Workers busy at least this share of the time: they, not a GPU other jobs hold, set the pace. */
#define WORKERS_SATURATED_PCT 90.0

typedef struct snapshot {
    int64_t t_ns;
    sim_gpu_totals *gpu;
    double cpu_busy;
    double cpu_load; /* runnable threads, integrated */
    double storage_busy;
    double h2d_busy;
    double worker_busy; /* GPU 0's workers, summed, ns */
} snapshot;

/* The sampled mode's record of one epoch, made when rank 0 ends it: whether it was cut, and
 * then the estimate and the snapshots that bound its steady windows. */
typedef struct epoch_sample {
    sim_sampled_why why;
    sim_sampler_est est;
    snapshot from, to; /* at the start and the end of the kept windows (owned) */
    int64_t steps_simulated;
} epoch_sample;

/* What the jobs of a run share: the clock, the host's CPU, memory bus and storage, and each
 * physical GPU's PCIe link directions and, with several jobs, the device they share it through. */
typedef struct host {
    sim_engine *e;
    const sim_hardware *hw; /* the system's: every physical GPU's slot and the links between */
    sim_cpu_model cpu_model;
    sim_ps *cpu;
    sim_ps *mem; /* host memory bus */
    sim_storage *storage;
    int n_gpus;
    sim_ps **h2d;
    sim_ps **d2h;
    sim_gpushare **share; /* NULL: one job, which has each GPU to itself */
    int n_jobs; /* with share: the CPU, memory bus, storage and links count each job's part */
} host;

/* One job: its ranks' streams, loaders and main threads on the host's hardware. */
typedef struct world {
    const sim_scenario *sc;
    host *h;
    const int *phys;      /* the physical GPU of each rank */
    int job;              /* its index among the run's jobs: its group on the shared servers */
    int batches_per_step; /* loader batches per optimizer step */
    sim_ring ring;        /* over the job's GPUs */
    sim_collective *coll;
    double comm_sm_share; /* SMs an NCCL kernel of the job's all-reduce holds (gpu.c) */
    sim_metrics *metrics;
    int n;
    sim_gpu **gpu;
    sim_loader **loader;
    sim_trainer **trainer;
    int *epochs_ended;
    int64_t *epoch_reads, *epoch_hits; /* per epoch, summed over the ranks that ended it */
    snapshot last;
    sim_result *res;
    int64_t end_ns;    /* when the job's last epoch ended */
    int64_t per_epoch; /* samples each rank's loader serves per epoch */
    bool invariant_broken;
    /* --- the sampled mode (only with sc->sampled_pct > 0) --- */
    sim_sampler sampler;     /* rank 0's steps of the running epoch */
    snapshot *bounds;        /* at the end of each of its closed windows */
    int cap_bounds;          /* the sampler's n of them are taken */
    bool cut;                /* the running epoch is cut */
    epoch_sample running;    /* its record until rank 0 ends it */
    epoch_sample *samples;   /* per epoch */
    int64_t full_steps;      /* optimizer steps of a whole epoch */
    int64_t extrapolated_ns; /* time added by extrapolation so far */
    /* --- series for plots (only with opts->series) --- */
    sim_run_series *series;
    uint32_t sampler_id;
    int64_t window_ns, tick_ns;
    int64_t ticks;
    double cpu_busy_at_window;
    double queue_sum;
    int queue_samples;
    int64_t cap_cpu, cap_queue; /* capacities of the series' two arrays */
    bool all_done;
} world;

/* Closes one series window: CPU busy since the last boundary over `len_ns`, and the mean of the
 * queue samples taken in it. */
static int series_push(world *w, int64_t len_ns)
{
    sim_run_series *s = w->series;
    /* The metrics hold the GPU-Util windows to the budget; these are as many. */
    int rc = sim_windows_reserve((void **)&s->cpu_util_pct, sizeof *s->cpu_util_pct, &w->cap_cpu,
                                 s->n + 1, 0);
    if (!rc)
        rc = sim_windows_reserve((void **)&s->queue_depth, sizeof *s->queue_depth, &w->cap_queue,
                                 s->n + 1, 0);
    if (rc) return rc;
    double busy = sim_ps_busy_integral(w->h->cpu);
    s->cpu_util_pct[s->n] = len_ns > 0 ? 100.0 * (busy - w->cpu_busy_at_window) /
                                             (w->h->cpu_model.threads * (double)len_ns)
                                       : 0;
    if (w->queue_samples == 0) {
        w->queue_sum = sim_loader_ready_batches(w->loader[0]);
        w->queue_samples = 1;
    }
    s->queue_depth[s->n] = w->queue_sum / w->queue_samples;
    s->n++;
    w->cpu_busy_at_window = busy;
    w->queue_sum = 0;
    w->queue_samples = 0;
    return SIM_OK;
}

/* The sampler: SIM_SERIES_SAMPLES ticks per window while the job runs. */
static void sampler_handle(sim_engine *e, void *self, const sim_event *ev)
{
    (void)ev;
    world *w = self;
    if (w->all_done) return;
    w->ticks++;
    if (w->ticks % SIM_SERIES_SAMPLES == 0 && series_push(w, w->window_ns)) {
        sim_engine_fail(e, SIM_ENOMEM);
        return;
    }
    w->queue_sum += sim_loader_ready_batches(w->loader[0]);
    w->queue_samples++;
    int64_t next = (w->ticks + 1) / SIM_SERIES_SAMPLES * w->window_ns +
                   (w->ticks + 1) % SIM_SERIES_SAMPLES * w->tick_ns;
    sim_engine_at(e, next, w->sampler_id, 0, 0);
}

static const sim_component_ops sampler_ops = {.name = "sampler", .handle = sampler_handle};

double sim_dataset_ram_gb(const sim_scenario *sc)
{
    if (sc->dataset.location != SIM_DATA_MEMORY) return 0;
    return sc->hw.gpu_count * (double)sc->dataset.samples * sc->dataset.sample_bytes / 1e9;
}

double sim_host_ram_left_gb(const sim_scenario *system, const sim_job_slot *jobs, int n_jobs)
{
    double gb = system->hw.host_memory_gb - OS_RESERVE_GB;
    for (int j = 0; j < n_jobs; j++) {
        const sim_scenario *sc = jobs[j].sc;
        gb -= sc->hw.gpu_count * (MAIN_PROCESS_GB + WORKER_GB * sc->loader.num_workers);
        gb -= sim_dataset_ram_gb(sc);
    }
    return gb;
}

/* RAM the jobs' processes leave to the page cache, GB: system.page_cache_gb, else what
 * sim_host_ram_left_gb leaves. */
static double page_cache_gb(const sim_scenario *system, const sim_job_slot *jobs, int n_jobs)
{
    if (system->host.page_cache_gb >= 0) return system->host.page_cache_gb;
    double gb = sim_host_ram_left_gb(system, jobs, n_jobs);
    return gb < 0 ? 0 : gb;
}

/* Samples of sc's dataset that `gb` of page cache holds: none of a dataset in memory, which is
 * never read through it. */
static int64_t cached_samples(const sim_scenario *sc, double gb)
{
    if (sc->dataset.location == SIM_DATA_MEMORY) return 0;
    double samples = floor(gb * 1e9 / sc->dataset.sample_bytes);
    return samples > (double)sc->dataset.samples ? sc->dataset.samples : (int64_t)samples;
}

static int64_t page_cache_samples(const sim_scenario *sc)
{
    sim_job_slot alone = {.sc = sc};
    return cached_samples(sc, page_cache_gb(sc, &alone, 1));
}

static void take_snapshot(world *w, snapshot *s)
{
    s->t_ns = sim_engine_now(w->h->e);
    for (int i = 0; i < w->n; i++)
        s->gpu[i] = sim_metrics_totals(w->metrics, i);
    s->cpu_load = sim_ps_load_integral(w->h->cpu);
    if (w->h->n_jobs) { /* beside other jobs: this job's own part of each */
        s->cpu_busy = sim_ps_group_busy_integral(w->h->cpu, w->job) +
                      sim_ps_group_busy_integral(w->h->mem, w->job);
        s->storage_busy = sim_storage_group_busy_ns(w->h->storage, w->job);
        s->h2d_busy = sim_ps_group_busy_integral(w->h->h2d[w->phys[0]], w->job);
    } else {
        s->cpu_busy = sim_ps_busy_integral(w->h->cpu) + sim_ps_busy_integral(w->h->mem);
        s->storage_busy = sim_storage_busy_ns(w->h->storage);
        s->h2d_busy = sim_ps_busy_time(w->h->h2d[w->phys[0]]);
    }
    s->worker_busy = 0;
    for (int i = 0; i < sim_loader_workers(w->loader[0]); i++)
        s->worker_busy += (double)sim_loader_worker_busy_ns(w->loader[0], i);
}

/* A snapshot of now with its own per-GPU array; SIM_ENOMEM when that cannot be had. */
static int snapshot_new(world *w, snapshot *s)
{
    s->gpu = calloc((size_t)w->n, sizeof *s->gpu);
    if (!s->gpu) return SIM_ENOMEM;
    take_snapshot(w, s);
    return SIM_OK;
}

static void snapshot_free(snapshot *s)
{
    free(s->gpu);
    s->gpu = NULL;
}

/* Moves *s into *to (freeing what *to held). */
static void snapshot_move(snapshot *to, snapshot *s)
{
    free(to->gpu);
    *to = *s;
    s->gpu = NULL;
}

/* Adds to *s the change from a to b scaled to extra_ns of time: the steady windows' rates
 * carried over the steps the sampled mode did not simulate. */
static void snapshot_extend(const world *w, snapshot *s, const snapshot *a, const snapshot *b,
                            int64_t extra_ns)
{
    double f = (double)extra_ns / (double)(b->t_ns - a->t_ns);
    s->t_ns += extra_ns;
    for (int i = 0; i < w->n; i++) {
        sim_gpu_totals *g = &s->gpu[i];
        const sim_gpu_totals *ga = &a->gpu[i], *gb = &b->gpu[i];
        g->kernel_ns += (gb->kernel_ns - ga->kernel_ns) * f;
        g->comm_kernel_ns += (gb->comm_kernel_ns - ga->comm_kernel_ns) * f;
        g->sm_active_ns += (gb->sm_active_ns - ga->sm_active_ns) * f;
        g->main_busy_ns += (gb->main_busy_ns - ga->main_busy_ns) * f;
        for (int k = 0; k < SIM_STALL_COUNT; k++)
            g->stall_ns[k] += (gb->stall_ns[k] - ga->stall_ns[k]) * f;
    }
    s->cpu_busy += (b->cpu_busy - a->cpu_busy) * f;
    s->cpu_load += (b->cpu_load - a->cpu_load) * f;
    s->storage_busy += (b->storage_busy - a->storage_busy) * f;
    s->h2d_busy += (b->h2d_busy - a->h2d_busy) * f;
    s->worker_busy += (b->worker_busy - a->worker_busy) * f;
}

/* The median and 99th percentile of n step times, in ms (0 for no steps); SIM_ENOMEM when the
 * sorted copy cannot be made. */
static int step_quantiles_ms(const int64_t *steps, int64_t n, double *p50, double *p99)
{
    *p50 = *p99 = 0;
    if (n == 0) return SIM_OK;
    double *d = malloc((size_t)n * sizeof *d);
    if (!d) return SIM_ENOMEM;
    for (int64_t i = 0; i < n; i++)
        d[i] = (double)steps[i] / 1e6;
    gsl_sort(d, 1, (size_t)n);
    *p50 = gsl_stats_quantile_from_sorted_data(d, 1, (size_t)n, 0.50);
    *p99 = gsl_stats_quantile_from_sorted_data(d, 1, (size_t)n, 0.99);
    free(d);
    return SIM_OK;
}

/* The figures of one epoch from w->last to *end (the snapshot when every rank ended it, or that
 * snapshot extended over the steps the sampled mode did not simulate). Returns 0 or SIM_ENOMEM. */
static int epoch_figures(world *w, int epoch, const snapshot *end)
{
    sim_epoch_result *r = &w->res->epochs[epoch];
    double dt = (double)(end->t_ns - w->last.t_ns);
    r->time_s = dt / 1e9;
    int bps = w->batches_per_step;
    r->steps = w->full_steps; /* optimizer steps */
    r->steps_simulated = (sim_loader_batches(w->loader[0]) + bps - 1) / bps;
    r->samples = w->epoch_reads[epoch];
    r->samples_per_s = dt > 0 ? r->samples / (dt / 1e9) : 0;
    int64_t n_steps;
    const int64_t *steps = sim_metrics_take_steps(w->metrics, &n_steps);
    if (step_quantiles_ms(steps, n_steps, &r->step_time_ms_p50, &r->step_time_ms_p99))
        return SIM_ENOMEM;
    for (int i = 0; i < w->n; i++) {
        const sim_gpu_totals *a = &w->last.gpu[i], *b = &end->gpu[i];
        /* NVML counts a kernel on either stream */
        r->gpu_util_pct += 100.0 *
                           (b->kernel_ns - a->kernel_ns + b->comm_kernel_ns - a->comm_kernel_ns) /
                           dt / w->n;
        r->comm_kernel_pct += 100.0 * (b->comm_kernel_ns - a->comm_kernel_ns) / dt / w->n;
        r->sm_active_pct += 100.0 * (b->sm_active_ns - a->sm_active_ns) / dt / w->n;
        r->main_busy_pct += 100.0 * (b->main_busy_ns - a->main_busy_ns) / dt / w->n;
        for (int k = 0; k < SIM_STALL_COUNT; k++)
            r->stall_pct[k] += 100.0 * (b->stall_ns[k] - a->stall_ns[k]) / dt / w->n;
    }
    r->cpu_util_pct = 100.0 * (end->cpu_busy - w->last.cpu_busy) / (w->h->cpu_model.threads * dt);
    if (r->cpu_util_pct > 100) /* copying threads are counted beside the CPU server's */
        r->cpu_util_pct = 100;
    r->cpu_runnable = (end->cpu_load - w->last.cpu_load) / dt;
    int workers = sim_loader_workers(w->loader[0]);
    if (workers)
        r->worker_busy_pct = 100.0 * (end->worker_busy - w->last.worker_busy) / dt / workers;
    r->storage_busy_pct = 100.0 * (end->storage_busy - w->last.storage_busy) / dt;
    r->h2d_busy_pct = 100.0 * (end->h2d_busy - w->last.h2d_busy) / dt;
    r->comm_pct = r->stall_pct[SIM_STALL_COMM];
    r->cache_hit_pct = r->samples ? 100.0 * (double)w->epoch_hits[epoch] / (double)r->samples : 0;
    return SIM_OK;
}

/* Rank 0 ended the epoch: its sampled-mode record (cut or why not), and a fresh sampler. */
static void sample_epoch_end(world *w, int epoch)
{
    epoch_sample *rec = &w->samples[epoch];
    int bps = w->batches_per_step;
    rec->steps_simulated = (sim_loader_batches(w->loader[0]) + bps - 1) / bps;
    sim_sampler_est est;
    if (w->cut) {
        rec->why = SIM_SAMPLED_CUT;
        rec->est = w->running.est;
        snapshot_move(&rec->from, &w->running.from);
        snapshot_move(&rec->to, &w->running.to);
    } else if (w->sampler.n < 1 + SIM_SAMPLER_MIN_WINDOWS) {
        rec->why = SIM_SAMPLED_SHORT;
    } else {
        rec->why = sim_sampler_estimate(&w->sampler, &est) ? SIM_SAMPLED_WIDE : SIM_SAMPLED_DRIFT;
    }
    for (int i = 0; i < w->sampler.n; i++)
        snapshot_free(&w->bounds[i]);
    sim_sampler_reset(&w->sampler);
    w->cut = false;
}

/* *end = *now extended over the steps a cut epoch did not simulate, at its steady windows'
 * rates; the epoch's figures then say how it was sampled. Returns 0 or SIM_ENOMEM. */
static int extrapolate(world *w, int epoch, const snapshot *now, snapshot *end)
{
    epoch_sample *rec = &w->samples[epoch];
    int64_t extra_steps = w->full_steps - rec->steps_simulated;
    int64_t extra_ns = llround((double)extra_steps * rec->est.mean_ns);
    *end = *now;
    end->gpu = malloc((size_t)w->n * sizeof *end->gpu);
    if (!end->gpu) return SIM_ENOMEM;
    memcpy(end->gpu, now->gpu, (size_t)w->n * sizeof *end->gpu);
    snapshot_extend(w, end, &rec->from, &rec->to, extra_ns);
    w->extrapolated_ns += extra_ns;
    snapshot_free(&rec->from);
    snapshot_free(&rec->to);
    return SIM_OK;
}

/* A cut epoch's figures that extrapolation changes: the samples of the whole epoch (its reads,
 * as a whole epoch has them), and how sure its time is. */
static void sampled_figures(world *w, int epoch)
{
    const epoch_sample *rec = &w->samples[epoch];
    sim_epoch_result *r = &w->res->epochs[epoch];
    r->samples = w->per_epoch * w->n;
    r->samples_per_s = r->time_s > 0 ? r->samples / r->time_s : 0;
    r->windows = rec->est.kept;
    double half_ns =
        sim_sampler_half_ahead(&w->sampler, &rec->est, w->full_steps - rec->steps_simulated);
    r->time_half_pct = r->time_s > 0 ? 100.0 * half_ns / (r->time_s * 1e9) : 0;
}

static void epoch_ended(void *ctx, int trainer, int epoch)
{
    world *w = ctx;
    /* Each rank's loader is read when its own trainer ends the epoch: the trainer begins its
     * next epoch (and its loader counts afresh) right after this call, while another rank may
     * end this epoch much later. */
    const sim_loader *l = w->loader[trainer];
    if (!sim_loader_each_sample_once(l)) w->invariant_broken = true;
    w->epoch_reads[epoch] += sim_loader_reads(l);
    w->epoch_hits[epoch] += sim_loader_cache_hits(l);
    if (trainer == 0 && w->samples) sample_epoch_end(w, epoch);
    if (++w->epochs_ended[epoch] < w->n) return;
    snapshot now = {0}, end = {0};
    bool cut = w->samples && w->samples[epoch].why == SIM_SAMPLED_CUT;
    if (snapshot_new(w, &now) || (cut && extrapolate(w, epoch, &now, &end)) ||
        epoch_figures(w, epoch, cut ? &end : &now)) {
        snapshot_free(&now);
        snapshot_free(&end);
        sim_engine_fail(w->h->e, SIM_ENOMEM);
        return;
    }
    w->end_ns = now.t_ns;
    if (cut) sampled_figures(w, epoch);
    snapshot_free(&end);
    snapshot_move(&w->last, &now);
    if (w->series && epoch == w->sc->training.epochs - 1) {
        /* Every rank has finished: stop before a pending sampler tick moves the clock on. */
        w->all_done = true;
        sim_engine_stop(w->h->e);
    }
}

/* Keeps a snapshot at the end of the window rank 0's sampler just closed. Returns 0 or
 * SIM_ENOMEM. */
static int bounds_push(world *w)
{
    int n = w->sampler.n;
    if (n > w->cap_bounds) {
        int cap = w->cap_bounds ? 2 * w->cap_bounds : 64;
        snapshot *b = realloc(w->bounds, (size_t)cap * sizeof *b);
        if (!b) return SIM_ENOMEM;
        w->bounds = b;
        w->cap_bounds = cap;
    }
    return snapshot_new(w, &w->bounds[n - 1]);
}

/* After each closed window: cuts the epoch when the interval of its extrapolated time is narrow
 * enough. Every rank's loader ends after the same batches, the last any of them has sent (a
 * whole optimizer step), so no batch a worker holds is lost and the ranks stay in step. */
static void maybe_cut(world *w)
{
    sim_sampler_est est;
    if (!sim_sampler_estimate(&w->sampler, &est)) return;
    int64_t left = w->full_steps - (int64_t)w->sampler.n * w->sampler.window_steps;
    double total =
        (double)(sim_engine_now(w->h->e) - w->last.t_ns) + (double)left * est.mean_ns; /* ns */
    if (left <= 0 ||
        100.0 * sim_sampler_half_ahead(&w->sampler, &est, left) > w->sc->sampled_pct * total)
        return;
    int bps = w->batches_per_step;
    int64_t b = 0;
    for (int i = 0; i < w->n; i++)
        if (sim_loader_sent(w->loader[i]) > b) b = sim_loader_sent(w->loader[i]);
    b = (b + bps - 1) / bps * bps;
    if (b >= sim_loader_batches(w->loader[0])) return;
    for (int i = 0; i < w->n; i++)
        sim_loader_cut(w->loader[i], b);
    w->cut = true;
    w->running.est = est;
    snapshot_move(&w->running.from, &w->bounds[est.warmup - 1]);
    snapshot_move(&w->running.to, &w->bounds[w->sampler.n - 1]);
}

/* Rank 0's main thread ended a step: the sampled mode counts it into its windows. */
static void step_ended(void *ctx, int trainer, int64_t dur_ns)
{
    world *w = ctx;
    if (trainer != 0 || !w->samples || w->cut) return;
    int rc = sim_sampler_add(&w->sampler, dur_ns);
    if (rc == 0) return;
    if (rc < 0 || bounds_push(w)) {
        sim_engine_fail(w->h->e, SIM_ENOMEM);
        return;
    }
    maybe_cut(w);
}

/* The GPU-Util window when the GPU's entry gives none: 1/6 s, the shortest sample period NVML
 * documents for utilization.gpu (nvmlUtilization_t: "between 1 second and 1/6 second"). */
#define NVML_WINDOW_NS 166666667

/* Host memory per GPU-Util window: kernel time (8 bytes), the series' CPU and queue figures (8
 * each) and the reported percentage (1), rounded up. */
#define SERIES_BYTES_PER_WINDOW 32

/* Events between two progress reports: ~0.1 s of simulation on one core (bench_epoch). */
#define PROGRESS_EVENTS (1u << 22)

/* Runs the engine to the end, reporting progress between slices when asked to: epochs rank 0 has
 * finished plus the share of the current epoch's samples it has decoded. */
static int run_engine(world *w, const sim_run_opts *opts, int64_t per_epoch)
{
    if (!opts || !opts->progress) return sim_engine_run(w->h->e);
    int epochs = w->sc->training.epochs;
    bool finished = false;
    int rc = SIM_OK;
    while (!finished && !rc) {
        rc = sim_engine_run_some(w->h->e, PROGRESS_EVENTS, &finished);
        int ended = 0;
        while (ended < epochs && w->epochs_ended[ended] > 0)
            ended++;
        double in_epoch =
            ended < epochs ? (double)sim_loader_decodes(w->loader[0]) / (double)per_epoch : 0;
        double done = (ended + (in_epoch < 1 ? in_epoch : 1)) / epochs;
        opts->progress(opts->progress_ctx, finished ? 1 : done);
    }
    return rc;
}

static void mean_of_epochs(sim_result *res)
{
    sim_epoch_result *m = &res->mean;
    memset(m, 0, sizeof *m);
    int n = res->n_epochs;
    for (int i = 0; i < n; i++) {
        const sim_epoch_result *e = &res->epochs[i];
        m->time_s += e->time_s / n;
        m->steps += e->steps;
        m->samples += e->samples;
        m->step_time_ms_p50 += e->step_time_ms_p50 / n;
        m->step_time_ms_p99 += e->step_time_ms_p99 / n;
        /* Time-weighted, so the means equal whole-run busy time over whole-run wall time. */
        double wgt = e->time_s / (res->total_time_s > 0 ? res->total_time_s : 1);
        m->gpu_util_pct += e->gpu_util_pct * wgt;
        m->sm_active_pct += e->sm_active_pct * wgt;
        m->cpu_util_pct += e->cpu_util_pct * wgt;
        m->main_busy_pct += e->main_busy_pct * wgt;
        m->worker_busy_pct += e->worker_busy_pct * wgt;
        m->storage_busy_pct += e->storage_busy_pct * wgt;
        m->h2d_busy_pct += e->h2d_busy_pct * wgt;
        m->comm_pct += e->comm_pct * wgt;
        m->comm_kernel_pct += e->comm_kernel_pct * wgt;
        m->cpu_runnable += e->cpu_runnable * wgt;
        for (int k = 0; k < SIM_STALL_COUNT; k++)
            m->stall_pct[k] += e->stall_pct[k] * wgt;
    }
    m->samples_per_s = res->total_time_s > 0 ? m->samples / res->total_time_s : 0;
    /* Sample-weighted: hits over all epochs / samples over all epochs. */
    double hits = 0;
    for (int i = 0; i < n; i++)
        hits += res->epochs[i].cache_hit_pct * (double)res->epochs[i].samples;
    m->cache_hit_pct = m->samples ? hits / (double)m->samples : 0;
}

/* The exposed all-reduce (the optimizer step waiting for DDP's last buckets, or a trace's
 * all-reduce holding the compute stream) is the largest stall: the slowest link of the job's
 * ring is what to name. */
static void comm_verdict(const sim_scenario *sc, const sim_ring *ring, sim_result *res)
{
    res->bottleneck = SIM_BN_COMMUNICATION;
    snprintf(res->verdict, sizeof res->verdict,
             "Communication-bound: the GPUs wait %.1f%% of the time for the gradient "
             "all-reduce of %d GPUs that backward could not hide (ring over %s at %.1f GB/s per "
             "direction); NVLink or P2P between the GPUs, wider PCIe slots or fewer larger steps "
             "(gradient accumulation) would help.",
             res->mean.comm_pct, sc->hw.gpu_count,
             ring->path == SIM_PATH_NVLINK ? "NVLink"
             : ring->path == SIM_PATH_PCIE ? "PCIe peer-to-peer"
                                           : "host memory (no P2P)",
             ring->bw_gbps);
}

/* The stall the verdict may name: sync and other are consequences (a sync waits for work already
 * queued) or start-up, not causes to act on. */
static sim_stall largest_stall(const sim_epoch_result *m)
{
    static const sim_stall named[] = {SIM_STALL_STORAGE, SIM_STALL_DECODE,   SIM_STALL_MAIN,
                                      SIM_STALL_H2D,     SIM_STALL_DISPATCH, SIM_STALL_COMM,
                                      SIM_STALL_SHARED};
    sim_stall worst = named[0];
    for (size_t i = 1; i < sizeof named / sizeof named[0]; i++)
        if (m->stall_pct[named[i]] > m->stall_pct[worst]) worst = named[i];
    return worst;
}

/* The verdict on a loader stall: the storage device, the workers' preprocessing, or the main
 * process loading by itself. */
static void loader_verdict(const sim_scenario *sc, sim_result *res, sim_stall worst)
{
    const sim_epoch_result *m = &res->mean;
    char *v = res->verdict;
    size_t vs = sizeof res->verdict;
    int nw = sc->loader.num_workers;
    if (worst == SIM_STALL_STORAGE) {
        res->bottleneck = SIM_BN_STORAGE;
        snprintf(v, vs,
                 "Storage-bound: the GPU waits %.1f%% of the time for batches whose workers are "
                 "reading from the %s (%s busy %.0f%%, page cache hits %.0f%%).",
                 m->stall_pct[worst],
                 sc->hw.storage.label[0] ? sc->hw.storage.label : sc->hw.storage.name,
                 res->shared ? "its reads keep the device" : "device", m->storage_busy_pct,
                 m->cache_hit_pct);
    } else if (worst == SIM_STALL_MAIN) {
        res->bottleneck = SIM_BN_MAIN_THREAD;
        snprintf(v, vs,
                 "Main-thread-bound: with num_workers=0 the main process loads every batch "
                 "itself, and the GPU waits %.1f%% of the time while it reads and decodes (main "
                 "thread busy %.0f%%, %s %.0f%% of %d threads).",
                 m->stall_pct[worst], m->main_busy_pct, res->shared ? "its threads use" : "CPU",
                 m->cpu_util_pct, sc->hw.cpu.threads);
    } else {
        res->bottleneck = SIM_BN_DATA_LOADING;
        snprintf(v, vs,
                 "Loader-bound: the GPU waits %.1f%% of the time for batches that %d DataLoader "
                 "worker%s %s still decoding and collating (workers busy %.0f%%, %s %.0f%% of "
                 "%d cores / %d threads).",
                 m->stall_pct[worst], nw, nw == 1 ? "" : "s", nw == 1 ? "is" : "are",
                 m->worker_busy_pct, res->shared ? "its threads use" : "CPU", m->cpu_util_pct,
                 sc->hw.cpu.cores, sc->hw.cpu.threads);
    }
}

/* Beside other jobs, a loader that waits on the CPU may wait because the jobs together keep more
 * threads runnable than the host has cores: that is the cause to name. */
static bool cpu_oversubscribed(const sim_scenario *sc, const sim_result *res, sim_stall worst)
{
    return res->shared && (worst == SIM_STALL_DECODE || worst == SIM_STALL_MAIN) &&
           res->mean.cpu_runnable > sc->hw.cpu.cores;
}

static void cpu_verdict(const sim_scenario *sc, sim_result *res, sim_stall worst)
{
    const sim_epoch_result *m = &res->mean;
    res->bottleneck = SIM_BN_HOST_CPU;
    snprintf(res->verdict, sizeof res->verdict,
             "CPU-oversubscribed: the jobs on this host keep %.1f threads runnable on %d cores "
             "(%d threads), so this job's loader gets a share of them and its GPU waits %.1f%% "
             "of the time for batches; fewer jobs or workers per host, or a bigger CPU, would "
             "help.",
             m->cpu_runnable, sc->hw.cpu.cores, sc->hw.cpu.threads, m->stall_pct[worst]);
}

/* Names the largest cause of GPU idle time, with its share; advice is not given here: the
 * caller checks each change by simulating it (sim/setup/advice.h). */
static void verdict(const sim_scenario *sc, const sim_ring *ring, sim_result *res)
{
    const sim_epoch_result *m = &res->mean;
    sim_stall worst = largest_stall(m);
    char *v = res->verdict;
    size_t vs = sizeof res->verdict;
    /* before the GPU-bound test: NVML counts the NCCL kernels the GPUs wait for as busy */
    if (worst == SIM_STALL_COMM && m->comm_pct >= STALL_VERDICT_PCT) {
        comm_verdict(sc, ring, res);
        return;
    }
    if (res->gpu_util_na &&
        (m->stall_pct[worst] < STALL_VERDICT_PCT || m->sm_active_pct >= GPU_BOUND_PCT)) {
        res->bottleneck = SIM_BN_GPU_COMPUTE;
        snprintf(v, vs,
                 "GPU-bound: the MIG %s instance's SMs are active %.1f%% of the time (NVML has "
                 "no GPU-Util on MIG); the largest idle cause, %s, takes %.1f%%.",
                 sc->hw.mig, m->sm_active_pct, sim_stall_name(worst), m->stall_pct[worst]);
        return;
    }
    if (m->stall_pct[worst] < STALL_VERDICT_PCT || m->gpu_util_pct >= GPU_BOUND_PCT) {
        res->bottleneck = SIM_BN_GPU_COMPUTE;
        snprintf(v, vs,
                 "GPU-bound: a kernel runs %.1f%% of the time (SM active %.1f%%); the largest "
                 "idle cause, %s, takes %.1f%%.",
                 m->gpu_util_pct, m->sm_active_pct, sim_stall_name(worst), m->stall_pct[worst]);
        return;
    }
    switch (worst) {
    case SIM_STALL_H2D:
        res->bottleneck = SIM_BN_H2D;
        snprintf(v, vs,
                 "Copy-bound: the GPU waits %.1f%% of the time on host-to-device copies (%s "
                 "memory%s; %s busy %.0f%%).",
                 m->stall_pct[worst], sc->loader.pin_memory ? "pinned" : "pageable",
                 sc->loader.non_blocking ? ", non_blocking" : ", blocking",
                 res->shared ? "its copies keep the link" : "link", m->h2d_busy_pct);
        return;
    case SIM_STALL_SHARED:
        if (sc->loader.num_workers > 0 && m->worker_busy_pct >= WORKERS_SATURATED_PCT) {
            /* its kernels wait for the other jobs' while its next batch is not ready anyway */
            res->bottleneck = SIM_BN_DATA_LOADING;
            snprintf(v, vs,
                     "Loader-bound beside other jobs: its %d DataLoader workers are busy %.0f%% "
                     "and set the pace; its kernels wait %.1f%% of the time for other jobs' "
                     "kernels, in time its next batch is not ready anyway.",
                     sc->loader.num_workers, m->worker_busy_pct, m->stall_pct[worst]);
            return;
        }
        res->bottleneck = SIM_BN_SHARED_GPU;
        snprintf(v, vs,
                 "Shared-GPU-bound: this job's next kernel waits %.1f%% of the time while another "
                 "job's context holds the GPU (time-slicing runs one context at a time; its own "
                 "kernels run %.1f%%); fewer jobs per GPU, MPS or MIG would help.",
                 m->stall_pct[worst], m->gpu_util_pct);
        return;
    case SIM_STALL_DISPATCH: {
        res->bottleneck = SIM_BN_CPU_DISPATCH;
        size_t kernels = sim_program_kernels(&sc->program);
        double cpu_us = kernels ? (double)sim_program_dispatch_ns(&sc->program) / kernels / 1e3 /
                                      sc->hw.cpu.single_thread
                                : 0;
        double gpu_us = kernels ? (double)sim_program_gpu_ns(&sc->program) / kernels / 1e3 : 0;
        snprintf(v, vs,
                 "Launch-bound: the GPU idles %.1f%% of the time while the main thread "
                 "dispatches kernels (%.1f us of CPU per kernel vs %.1f us of GPU time; main "
                 "thread busy %.0f%%).",
                 m->stall_pct[worst], cpu_us, gpu_us, m->main_busy_pct);
        return;
    }
    default:
        if (cpu_oversubscribed(sc, res, worst))
            cpu_verdict(sc, res, worst);
        else
            loader_verdict(sc, res, worst);
        return;
    }
}

static void world_free(world *w)
{
    for (int i = 0; i < w->n; i++) {
        if (w->trainer) sim_trainer_destroy(w->trainer[i]);
        if (w->loader) sim_loader_destroy(w->loader[i]);
        if (w->gpu) sim_gpu_destroy(w->gpu[i]);
    }
    free(w->trainer);
    free(w->loader);
    free(w->gpu);
    free(w->epochs_ended);
    free(w->epoch_reads);
    free(w->epoch_hits);
    snapshot_free(&w->last);
    for (int i = 0; w->bounds && i < w->sampler.n; i++)
        snapshot_free(&w->bounds[i]);
    free(w->bounds);
    sim_sampler_free(&w->sampler);
    snapshot_free(&w->running.from);
    snapshot_free(&w->running.to);
    for (int i = 0; w->samples && i < w->sc->training.epochs; i++) {
        snapshot_free(&w->samples[i].from);
        snapshot_free(&w->samples[i].to);
    }
    free(w->samples);
    sim_collective_destroy(w->coll);
    sim_metrics_destroy(w->metrics);
}

/* Whether GPU i owns its host link: it is on a CPU root port, or the first behind its switch. */
static bool first_on_link(const sim_hardware *hw, int i)
{
    return i == 0 || sim_topo_switch_of(hw, i) < 0 ||
           sim_topo_switch_of(hw, i) != sim_topo_switch_of(hw, i - 1);
}

static void host_free(host *h)
{
    for (int i = 0; i < h->n_gpus; i++) {
        bool owns_link = h->hw && first_on_link(h->hw, i); /* shared links are freed once */
        if (h->h2d && owns_link) sim_ps_destroy(h->h2d[i]);
        if (h->d2h && owns_link) sim_ps_destroy(h->d2h[i]);
        if (h->share) sim_gpushare_destroy(h->share[i]);
    }
    free(h->h2d);
    free(h->d2h);
    free(h->share);
    sim_storage_destroy(h->storage);
    sim_ps_destroy(h->cpu);
    sim_ps_destroy(h->mem);
    sim_engine_destroy(h->e);
}

static int validate(const sim_scenario *sc, sim_err *err)
{
    const sim_hardware *hw = &sc->hw;
    if (sc->training.epochs < 1 || sc->loader.batch_size < 1 || sc->dataset.samples < 1)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "epochs, batch size and samples must be "
                           "positive");
    if (hw->cpu.cores < 1 || hw->cpu.threads < hw->cpu.cores || hw->cpu.single_thread <= 0)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "CPU '%s' has no usable cores",
                           hw->cpu.name);
    if (hw->link.pinned_gbps <= 0 || hw->link.pageable_gbps <= 0 || hw->cpu.memcpy_gbps <= 0)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "link or memcpy rates must be positive");
    return SIM_OK;
}

int sim_run(const sim_scenario *sc, sim_result *res, sim_err *err)
{
    return sim_run_ex(sc, NULL, res, err);
}

void sim_run_series_free(sim_run_series *s)
{
    if (!s) return;
    free(s->cpu_util_pct);
    free(s->queue_depth);
    memset(s, 0, sizeof *s);
}

/* The GPU-Util window: the scenario's, else the GPU's NVML window, else NVML's shortest. */
static int64_t util_window_ns(const sim_scenario *sc)
{
    int64_t window_ns =
        sc->util_window_ns ? sc->util_window_ns : (int64_t)llround(sc->hw.gpu.nvml_window_ms * 1e6);
    return window_ns > 0 ? window_ns : NVML_WINDOW_NS;
}

/* Counts each of the n_jobs jobs' part of the CPU, the memory bus, the storage and the GPUs'
 * host-to-device links. Returns 0 or SIM_ENOMEM. */
static int host_count_jobs(host *h, int n_jobs)
{
    h->n_jobs = n_jobs;
    int rc = sim_ps_groups(h->cpu, n_jobs);
    if (!rc) rc = sim_ps_groups(h->mem, n_jobs);
    if (!rc) rc = sim_storage_groups(h->storage, n_jobs);
    for (int i = 0; i < h->n_gpus && !rc; i++)
        if (first_on_link(h->hw, i)) rc = sim_ps_groups(h->h2d[i], n_jobs);
    return rc;
}

/* Creates what the jobs share: the clock, the CPU, the host memory bus, storage and each of the
 * n_gpus GPUs' link directions, and with `share` a sharing device per GPU and each of n_jobs
 * jobs' part of the shared servers counted. Returns 0 or SIM_ENOMEM. */
static int host_create(host *h, const sim_hardware *hw, double mem_copy_efficiency, int n_gpus,
                       const sim_gpushare_config *share, int n_jobs)
{
    h->cpu_model =
        (sim_cpu_model){hw->cpu.cores, hw->cpu.threads, hw->cpu.smt_gain, hw->cpu.single_thread};
    h->hw = hw;
    h->n_gpus = n_gpus;
    h->e = sim_engine_create();
    h->h2d = calloc((size_t)n_gpus, sizeof *h->h2d);
    h->d2h = calloc((size_t)n_gpus, sizeof *h->d2h);
    if (share) h->share = calloc((size_t)n_gpus, sizeof *h->share);
    if (!h->e || !h->h2d || !h->d2h || (share && !h->share)) return SIM_ENOMEM;
    h->cpu = sim_cpu_create(h->e, &h->cpu_model);
    /* Host memory: copies share the DRAM bandwidth (a memcpy moves each byte twice, read and
     * write), each thread at most at its own memcpy rate. The copying thread runs on a core
     * meanwhile, but its speed is the memory's, so it is not on the CPU server; its time counts
     * as CPU busy (see snapshot). */
    sim_ps_config mem = {.name = "host-memory",
                         .rate = hw->cpu.mem_bw_gbps * mem_copy_efficiency / 2,
                         .per_job_max = hw->cpu.memcpy_gbps,
                         .busy_units = hw->cpu.threads};
    h->mem = sim_ps_create(h->e, &mem);
    h->storage = sim_storage_create(h->e, &hw->storage);
    for (int i = 0; i < n_gpus; i++) {
        if (share && !(h->share[i] = sim_gpushare_create(h->e, share))) return SIM_ENOMEM;
        if (!first_on_link(hw, i)) { /* shares the link of the first GPU behind its switch */
            h->h2d[i] = h->h2d[i - 1];
            h->d2h[i] = h->d2h[i - 1];
            continue;
        }
        /* The link's lanes (the CPU's lane budget, sim/core/topo.h) scale the measured x16
         * rate; the GPUs behind a PCIe switch share its uplink, each at most at its own link's
         * rate. PCIe is full duplex: device-to-host has its own lanes, at the measured pinned
         * rate (D2H and H2D figures are within a few % of each other on the catalog's sources). */
        int s = sim_topo_switch_of(hw, i);
        double gpu_gbps = sim_topo_pinned_gbps(hw, i);
        double link_gbps = s < 0 ? gpu_gbps : sim_topo_uplink_gbps(hw, s);
        sim_ps_config link = {
            .name = "h2d", .rate = link_gbps, .per_job_max = gpu_gbps, .busy_units = 1};
        h->h2d[i] = sim_ps_create(h->e, &link);
        link.name = "d2h";
        h->d2h[i] = sim_ps_create(h->e, &link);
        if (!h->h2d[i] || !h->d2h[i]) return SIM_ENOMEM;
    }
    if (!h->cpu || !h->mem || !h->storage) return SIM_ENOMEM;
    return share ? host_count_jobs(h, n_jobs) : SIM_OK;
}

/* Allocates the job's per-GPU arrays and creates what its GPUs share: the metrics and the
 * collective. Returns 0 or SIM_ENOMEM. */
static int world_create(world *w, int64_t window_ns)
{
    const sim_scenario *sc = w->sc;
    w->gpu = calloc((size_t)w->n, sizeof *w->gpu);
    w->loader = calloc((size_t)w->n, sizeof *w->loader);
    w->trainer = calloc((size_t)w->n, sizeof *w->trainer);
    w->epochs_ended = calloc((size_t)sc->training.epochs, sizeof *w->epochs_ended);
    w->epoch_reads = calloc((size_t)sc->training.epochs, sizeof *w->epoch_reads);
    w->epoch_hits = calloc((size_t)sc->training.epochs, sizeof *w->epoch_hits);
    w->last.gpu = calloc((size_t)w->n, sizeof *w->last.gpu);
    if (!w->gpu || !w->loader || !w->trainer || !w->epochs_ended || !w->epoch_reads ||
        !w->epoch_hits || !w->last.gpu)
        return SIM_ENOMEM;
    w->metrics = sim_metrics_create(w->h->e, w->n, window_ns,
                                    sc->memory_budget_bytes / SERIES_BYTES_PER_WINDOW);
    /* The job's own GPUs: a job placed on GPUs 2 and 3 rings over their slots and links. */
    w->ring = sim_topo_ring(w->h->hw, w->phys, w->n);
    w->coll = sim_collective_create(w->h->e, w->n, &w->ring);
    /* one SM per NCCL channel, and never every SM of the GPU */
    int sms = sc->hw.gpu.sms;
    int channels = sim_topo_nccl_channels(&w->ring);
    if (channels > sms - 1) channels = sms - 1;
    w->comm_sm_share = w->n > 1 && channels > 0 ? (double)channels / sms : 0;
    return w->metrics && w->coll ? SIM_OK : SIM_ENOMEM;
}

/* Makes the timeline the engine's observer and starts the GPU-Util series' sampler, when the
 * caller asks for them. Returns 0 or SIM_ENOMEM. */
static int watchers_start(world *w, const sim_run_opts *opts, int64_t window_ns)
{
    const sim_scenario *sc = w->sc;
    if (opts && opts->timeline) {
        if (sim_timeline_attach(opts->timeline, w->n, sc->loader.num_workers,
                                sc->loader.pin_memory && sc->loader.num_workers > 0))
            return SIM_ENOMEM;
        sim_engine_set_observer(w->h->e, &sim_timeline_observer, opts->timeline);
    }
    if (opts && opts->series) {
        w->series = opts->series;
        w->series->window_ns = w->window_ns = window_ns;
        w->tick_ns = window_ns / SIM_SERIES_SAMPLES > 0 ? window_ns / SIM_SERIES_SAMPLES : 1;
        int sid = sim_engine_add(w->h->e, &sampler_ops, w);
        if (sid < 0) return SIM_ENOMEM;
        w->sampler_id = (uint32_t)sid;
    }
    return SIM_OK;
}

/* DistributedSampler gives each GPU ceil(N / G) samples (*shard); max_steps (optimizer steps,
 * each of batches_per_step loader batches) cuts every epoch. Returns the samples each GPU's
 * loader serves per epoch (< 1: not one full batch). */
static int64_t epoch_samples(const world *w, int64_t *shard)
{
    const sim_scenario *sc = w->sc;
    *shard = (sc->dataset.samples + w->n - 1) / w->n;
    int64_t per_epoch = *shard;
    int64_t step_samples = (int64_t)sc->loader.batch_size * w->batches_per_step;
    if (sc->loader.drop_last) per_epoch = *shard / sc->loader.batch_size * sc->loader.batch_size;
    if (sc->training.max_steps > 0 && sc->training.max_steps <= (per_epoch - 1) / step_samples)
        per_epoch = sc->training.max_steps * step_samples;
    return per_epoch;
}

/* Steps in one round of the DataLoader's workers (batch b comes from worker b mod N): N
 * batches, in whole optimizer steps of batches_per_step, so N / gcd(N, batches_per_step). */
static int cycle_steps(const world *w)
{
    int n = w->sc->loader.num_workers > 0 ? w->sc->loader.num_workers : 1;
    int a = n, b = w->batches_per_step;
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return n / a;
}

/* Creates GPU i's link directions, its stream, its DataLoader and its main thread. Returns 0 or
 * SIM_ENOMEM. */
static int rank_create(world *w, int i, int64_t per_epoch, int64_t shard, int64_t cached)
{
    const sim_scenario *sc = w->sc;
    const sim_hardware *hw = &sc->hw;
    int phys = w->phys[i];
    sim_gpu_config gc = {
        .index = i,
        .launch_queue_depth = hw->gpu.launch_queue_depth > 0 ? hw->gpu.launch_queue_depth : 1024,
        .copy_overhead_ns = hw->link.copy_overhead_us * 1e3,
        .pageable_slowdown = hw->link.pinned_gbps / hw->link.pageable_gbps,
        .h2d = w->h->h2d[phys],
        .d2h = w->h->d2h[phys],
        .coll = w->coll,
        .metrics = w->metrics,
        /* a MIG instance is the job's alone: MIG isolates its SMs from other instances' */
        .share = w->h->share && !hw->mig[0] ? w->h->share[phys] : NULL,
        .comm_sm_share = w->comm_sm_share,
        .group = w->job,
    };
    if (gc.share && (gc.share_ctx = sim_gpushare_attach(gc.share, w->metrics, i)) < 0)
        return SIM_ENOMEM;
    w->gpu[i] = sim_gpu_create(w->h->e, &gc);
    sim_loader_config lc = {
        .batch_size = sc->loader.batch_size,
        .num_workers = sc->loader.num_workers,
        .prefetch_factor = sc->loader.prefetch_factor,
        .pin_memory = sc->loader.pin_memory,
        .persistent_workers = sc->loader.persistent_workers,
        .samples = per_epoch,
        .dataset_samples = shard,
        .sample_bytes = sc->dataset.sample_bytes,
        .decode_ref_ns = sc->dataset.decode_us * 1e3,
        .decode_cv = sc->dataset.decode_cv,
        .input_bytes = sc->dataset.input_bytes,
        .in_memory = sc->dataset.location == SIM_DATA_MEMORY,
        .worker_start_ref_ns = sc->loader.worker_start_ms * 1e6,
        .cached_samples = cached,
        .seed = sc->seed * 1000003u + (uint64_t)i,
        .cpu = w->h->cpu,
        .mem = w->h->mem,
        .storage = w->h->storage,
        .metrics = w->metrics,
        .rank = i,
        .group = w->job,
    };
    int lrc;
    w->loader[i] = sim_loader_create(w->h->e, &lc, &lrc);
    sim_trainer_config tc = {
        .index = i,
        .program = &sc->program,
        .epochs = sc->training.epochs,
        .non_blocking = sc->loader.non_blocking,
        .pin_memory = sc->loader.pin_memory,
        .sync_every_step = sc->training.sync_every_step,
        .cuda_graphs = sc->training.cuda_graphs,
        .input_bytes = sc->dataset.input_bytes,
        .copy_dispatch_ref_ns = sc->copy_dispatch_ns,
        .cpu = w->h->cpu,
        .gpu = w->gpu[i],
        .loader = w->loader[i],
        .metrics = w->metrics,
        .group = w->job,
        .on_step_end = step_ended,
        .on_epoch_end = epoch_ended,
        .ctx = w,
    };
    w->trainer[i] = (w->gpu[i] && w->loader[i]) ? sim_trainer_create(w->h->e, &tc) : NULL;
    return w->trainer[i] ? SIM_OK : SIM_ENOMEM;
}

/* Says why the engine stopped with rc. */
static int engine_error(const world *w, int rc, int64_t window_ns, sim_err *err)
{
    const sim_scenario *sc = w->sc;
    if (rc == SIM_EBUDGET)
        return sim_err_set(err, rc, NULL, 0, 0,
                           "report.util_window_ns %lld: the GPU-Util series of this run grows "
                           "past the %.3g GiB memory budget (%lld windows); use a longer window "
                           "(0 = the GPU's own) or raise EPOCHSIM_MEMORY_BUDGET_GB",
                           (long long)window_ns, sc->memory_budget_bytes / 1073741824.0,
                           (long long)(sc->memory_budget_bytes / SERIES_BYTES_PER_WINDOW));
    return sim_err_set(err, rc, NULL, 0, 0, "the simulation failed (out of memory)");
}

/* How the sampled mode went over all epochs. The epochs' intervals combine as independent
 * estimates (each rests on its own epoch's steps): the mean's half-width is the root of their
 * squares' sum over the epoch count. */
static void sampled_summary(const world *w, sim_result *res)
{
    res->sampled_pct = w->sc->sampled_pct;
    res->window_steps = w->sampler.window_steps;
    res->first_full = -1;
    double var = 0;
    for (int i = 0; i < res->n_epochs; i++) {
        const sim_epoch_result *e = &res->epochs[i];
        res->steps_simulated += e->steps_simulated;
        double half_s = e->time_half_pct / 100 * e->time_s;
        var += half_s * half_s;
        if (w->samples[i].why == SIM_SAMPLED_CUT) {
            res->epochs_cut++;
        } else if (res->first_full < 0) {
            res->first_full = i;
            res->why_full = w->samples[i].why;
        }
    }
    double mean_s = res->mean.time_s;
    res->time_half_pct = mean_s > 0 ? 100.0 * sqrt(var) / res->n_epochs / mean_s : 0;
}

/* The job's figures once every rank is done; end_ns is its simulated wall time (a sampled
 * run's total adds the time it extrapolated). Returns 0 or SIM_ENOMEM. */
static int results(world *w, sim_result *res, int64_t window_ns, int64_t end_ns)
{
    for (int i = 0; i < w->n; i++)
        SIM_ASSERT(sim_trainer_done(w->trainer[i]));
    SIM_ASSERT(!w->invariant_broken);
    res->total_time_s = (double)(end_ns + w->extrapolated_ns) / 1e9;
    for (int i = 0; i < res->n_epochs; i++)
        res->steps += res->epochs[i].steps;
    res->events = sim_engine_events(w->h->e);
    res->util_window_ns = window_ns;
    res->util_series = sim_metrics_util_series(w->metrics, &res->n_util);
    if (!res->util_series) return SIM_ENOMEM;
    if (w->series) {
        /* The last, partial window (or the only one of a run shorter than a tick). */
        int64_t end = sim_engine_now(w->h->e);
        while (w->series->n < res->n_util)
            if (series_push(w, sim_windows_len(w->series->n, end, window_ns))) return SIM_ENOMEM;
    }
    int workers = sim_loader_workers(w->loader[0]);
    if (workers) {
        res->worker_busy_pct = calloc((size_t)(workers * w->n), sizeof *res->worker_busy_pct);
        if (!res->worker_busy_pct) return SIM_ENOMEM;
        res->n_workers = workers;
        res->n_worker_gpus = w->n;
        double wall = (double)end_ns;
        for (int g = 0; g < w->n; g++)
            for (int i = 0; i < workers; i++)
                res->worker_busy_pct[g * workers + i] =
                    wall > 0 ? 100.0 * (double)sim_loader_worker_busy_ns(w->loader[g], i) / wall
                             : 0;
    }
    mean_of_epochs(res);
    if (w->samples) sampled_summary(w, res);
    res->gpu_util_na = w->sc->hw.mig[0] != 0;
    verdict(w->sc, &w->ring, res);
    return SIM_OK;
}

/* A whole epoch's optimizer steps and, in the sampled mode (sc->sampled_pct > 0), a record per
 * epoch and rank 0's sampler. Returns 0 or SIM_ENOMEM. */
static int sampling_start(world *w)
{
    const sim_scenario *sc = w->sc;
    int64_t batches = (w->per_epoch + sc->loader.batch_size - 1) / sc->loader.batch_size;
    w->full_steps = (batches + w->batches_per_step - 1) / w->batches_per_step;
    if (sc->sampled_pct <= 0) return SIM_OK;
    w->samples = calloc((size_t)sc->training.epochs, sizeof *w->samples);
    if (!w->samples) return SIM_ENOMEM;
    sim_sampler_init(&w->sampler, sim_sampler_window_steps(w->full_steps, cycle_steps(w)));
    return SIM_OK;
}

/* The job of w->sc on the host: its result's epochs, metrics, collective, the watchers opts
 * asks for (may be NULL) and its ranks, with `cached` samples of its dataset in the page cache.
 * Returns 0 or an error in err. */
static int job_create(world *w, const sim_run_opts *opts, int64_t window_ns, int64_t cached,
                      sim_err *err)
{
    const sim_scenario *sc = w->sc;
    w->n = sc->hw.gpu_count;
    w->res->n_epochs = sc->training.epochs;
    w->res->epochs = calloc((size_t)sc->training.epochs, sizeof *w->res->epochs);
    if (!w->res->epochs || world_create(w, window_ns) || watchers_start(w, opts, window_ns))
        return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    w->batches_per_step = sim_program_batches_per_step(&sc->program);
    int64_t shard;
    w->per_epoch = epoch_samples(w, &shard);
    if (w->per_epoch < 1)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "no full batch per GPU (drop_last)");
    if (sampling_start(w)) return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    for (int i = 0; i < w->n; i++)
        if (rank_create(w, i, w->per_epoch, shard, cached / w->n))
            return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    return SIM_OK;
}

static void job_start(world *w)
{
    for (int i = 0; i < w->n; i++)
        sim_trainer_start(w->trainer[i]);
}

int sim_run_ex(const sim_scenario *sc, const sim_run_opts *opts, sim_result *res, sim_err *err)
{
    memset(res, 0, sizeof *res);
    if (opts && opts->series) memset(opts->series, 0, sizeof *opts->series);
    int rc = validate(sc, err);
    if (rc) return rc;
    const sim_hardware *hw = &sc->hw;
    host h = {0};
    int *phys = malloc((size_t)hw->gpu_count * sizeof *phys);
    world w = {.sc = sc, .res = res, .h = &h, .phys = phys};
    int64_t window_ns = util_window_ns(sc);
    if (!phys || host_create(&h, hw, sc->host.mem_copy_efficiency, hw->gpu_count, NULL, 0)) {
        rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto fail;
    }
    for (int i = 0; i < hw->gpu_count; i++)
        phys[i] = i;
    if ((rc = job_create(&w, opts, window_ns, page_cache_samples(sc), err))) goto fail;
    job_start(&w);
    if (w.series) sim_engine_at(h.e, w.tick_ns, w.sampler_id, 0, 0);
    rc = run_engine(&w, opts, w.per_epoch);
    if (rc) {
        rc = engine_error(&w, rc, window_ns, err);
        goto fail;
    }
    if (results(&w, res, window_ns, sim_engine_now(h.e))) {
        rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        goto fail;
    }
    world_free(&w);
    host_free(&h);
    free(phys);
    return SIM_OK;
fail:
    world_free(&w);
    host_free(&h);
    free(phys);
    if (opts && opts->series) sim_run_series_free(opts->series);
    sim_result_free(res);
    return rc;
}

/* The page cache is one LRU over every job's files: each job keeps a share in proportion to its
 * dataset's bytes, as it would once every job has read its dataset through at the same pace. */
static int64_t job_cached(const sim_scenario *system, const sim_job_slot *jobs, int n_jobs, int j)
{
    double total = 0;
    for (int k = 0; k < n_jobs; k++)
        if (jobs[k].sc->dataset.location != SIM_DATA_MEMORY)
            total += (double)jobs[k].sc->dataset.samples * jobs[k].sc->dataset.sample_bytes;
    const sim_dataset_spec *d = &jobs[j].sc->dataset;
    double share = total > 0 ? (double)d->samples * d->sample_bytes / total : 0;
    return cached_samples(jobs[j].sc, page_cache_gb(system, jobs, n_jobs) * share);
}

/* Each physical GPU's figures and the host's over the whole run. */
static void gpu_figures(const host *h, const sim_job_slot *jobs, int n_jobs, sim_jobs_result *res)
{
    double wall = (double)sim_engine_now(h->e);
    if (wall <= 0) wall = 1; /* nothing ran: every figure is 0 */
    sim_host_figures *hf = &res->host;
    hf->cpu_util_pct = 100.0 * (sim_ps_busy_integral(h->cpu) + sim_ps_busy_integral(h->mem)) /
                       (h->cpu_model.threads * wall);
    if (hf->cpu_util_pct > 100) hf->cpu_util_pct = 100; /* as a job's (epoch_figures) */
    hf->cpu_runnable = sim_ps_load_integral(h->cpu) / wall;
    hf->storage_busy_pct = 100.0 * sim_storage_busy_ns(h->storage) / wall;
    for (int i = 0; i < h->n_gpus; i++) {
        sim_gpu_figures *g = &res->gpu[i];
        g->gpu_util_pct = 100.0 * sim_gpushare_busy_ns(h->share[i]) / wall;
        g->sm_active_pct = 100.0 * sim_gpushare_sm_active_ns(h->share[i]) / wall;
        g->h2d_busy_pct = 100.0 * sim_ps_busy_time(h->h2d[i]) / wall;
        for (int j = 0; j < n_jobs; j++)
            for (int r = 0; r < jobs[j].sc->hw.gpu_count; r++)
                if (jobs[j].gpus[r] == i) {
                    g->jobs++;
                    g->mig = g->mig || jobs[j].sc->hw.mig[0];
                    break;
                }
    }
}

/* Runs the jobs' worlds, built on h, to the end and fills res. Returns 0 or an error in err. */
static int jobs_simulate(host *h, world *w, const sim_scenario *system, const sim_job_slot *jobs,
                         int n_jobs, sim_jobs_result *res, sim_err *err)
{
    for (int j = 0; j < n_jobs; j++) {
        w[j] =
            (world){.sc = jobs[j].sc, .res = &res->job[j], .h = h, .phys = jobs[j].gpus, .job = j};
        int rc = job_create(&w[j], NULL, util_window_ns(jobs[j].sc),
                            job_cached(system, jobs, n_jobs, j), err);
        if (rc) return rc;
    }
    for (int j = 0; j < n_jobs; j++)
        job_start(&w[j]);
    int rc = sim_engine_run(h->e);
    if (rc) return engine_error(&w[0], rc, util_window_ns(jobs[0].sc), err);
    for (int j = 0; j < n_jobs; j++) {
        res->job[j].shared = true;
        if (results(&w[j], &res->job[j], util_window_ns(jobs[j].sc), w[j].end_ns))
            return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    gpu_figures(h, jobs, n_jobs, res);
    res->total_time_s = (double)sim_engine_now(h->e) / 1e9;
    res->events = sim_engine_events(h->e);
    return SIM_OK;
}

int sim_run_jobs(const sim_scenario *system, const sim_job_slot *jobs, int n_jobs,
                 const sim_gpushare_config *share, sim_jobs_result *res, sim_err *err)
{
    memset(res, 0, sizeof *res);
    int n_gpus = system->hw.gpu_count;
    SIM_ASSERT(n_jobs >= 1 && n_gpus >= 1);
    for (int j = 0; j < n_jobs; j++) {
        int rc = validate(jobs[j].sc, err);
        if (rc) return rc;
        /* A cut epoch skips simulated time: the job would leave the shared hardware early and
         * the others' steps would be timed without it. */
        if (jobs[j].sc->sampled_pct > 0)
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                               "the sampled mode (run.sampled_pct) does not support several jobs "
                               "yet: job %d would leave the shared hardware when its epoch is "
                               "cut",
                               j + 1);
    }
    host h = {0};
    world *w = calloc((size_t)n_jobs, sizeof *w);
    res->job = calloc((size_t)n_jobs, sizeof *res->job);
    res->gpu = calloc((size_t)n_gpus, sizeof *res->gpu);
    res->n_jobs = n_jobs;
    res->n_gpus = n_gpus;
    int rc = !w || !res->job || !res->gpu ||
                     host_create(&h, &system->hw, system->host.mem_copy_efficiency, n_gpus, share,
                                 n_jobs)
                 ? sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory")
                 : jobs_simulate(&h, w, system, jobs, n_jobs, res, err);
    for (int j = 0; w && j < n_jobs; j++)
        world_free(&w[j]);
    free(w);
    host_free(&h);
    if (rc) sim_jobs_result_free(res);
    return rc;
}

void sim_jobs_result_free(sim_jobs_result *res)
{
    for (int j = 0; res->job && j < res->n_jobs; j++)
        sim_result_free(&res->job[j]);
    free(res->job);
    free(res->gpu);
    memset(res, 0, sizeof *res);
}

void sim_result_free(sim_result *res)
{
    free(res->epochs);
    free(res->util_series);
    free(res->worker_busy_pct);
    memset(res, 0, sizeof *res);
}

const char *sim_sampled_why_text(sim_sampled_why why)
{
    switch (why) {
    case SIM_SAMPLED_CUT:
        return "it was cut";
    case SIM_SAMPLED_SHORT:
        return "the epoch has too few steps for a warm-up and enough windows to measure";
    case SIM_SAMPLED_DRIFT:
        return "the step time never settled (no steady state before the epoch's end)";
    case SIM_SAMPLED_WIDE:
        return "the step times vary too much (stragglers, heavy-tailed loading) for the "
               "interval to narrow before the epoch's end";
    }
    return "unknown";
}

const char *sim_bottleneck_name(sim_bottleneck b)
{
    static const char *const names[SIM_BN_COUNT] = {
        [SIM_BN_DATA_LOADING] = "data_loading",
        [SIM_BN_STORAGE] = "storage",
        [SIM_BN_H2D] = "h2d",
        [SIM_BN_CPU_DISPATCH] = "cpu_dispatch",
        [SIM_BN_GPU_COMPUTE] = "gpu_compute",
        [SIM_BN_MAIN_THREAD] = "main_thread",
        [SIM_BN_COMMUNICATION] = "communication",
        [SIM_BN_SHARED_GPU] = "shared_gpu",
        [SIM_BN_HOST_CPU] = "cpu_oversubscribed",
    };
    return (unsigned)b < SIM_BN_COUNT ? names[b] : "unknown";
}

const char *sim_stall_name(sim_stall s)
{
    static const char *const names[SIM_STALL_COUNT] = {
        [SIM_STALL_STORAGE] = "storage",    [SIM_STALL_DECODE] = "decode",
        [SIM_STALL_MAIN] = "main_thread",   [SIM_STALL_H2D] = "h2d",
        [SIM_STALL_DISPATCH] = "dispatch",  [SIM_STALL_COMM] = "communication",
        [SIM_STALL_SYNC] = "sync",          [SIM_STALL_OTHER] = "other",
        [SIM_STALL_SHARED] = "another_job",
    };
    return (unsigned)s < SIM_STALL_COUNT ? names[s] : "unknown";
}
