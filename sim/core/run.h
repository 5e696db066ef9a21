/* run.h — one simulation run: a resolved scenario in, figures out.
 * sim_run builds the engine and components for the scenario, runs every epoch and fills a
 * sim_result. It keeps no global state, so several runs may go on in separate threads. */
#ifndef SIM_RUN_H
#define SIM_RUN_H

#include "sim/base/err.h"
#include "sim/core/job.h"
#include "sim/core/metrics.h"
#include "sim/core/pipeline.h"
#include "sim/core/workload.h"

#include <stdbool.h>
#include <stdint.h>

/* What the verdict names: the largest stall (sim_stall) when the GPU idles enough for it to
 * matter, else the GPU itself. */
typedef enum sim_bottleneck {
    SIM_BN_DATA_LOADING, /* workers preprocessing (SIM_STALL_DECODE) */
    SIM_BN_STORAGE,
    SIM_BN_H2D,
    SIM_BN_CPU_DISPATCH,
    SIM_BN_GPU_COMPUTE,
    SIM_BN_MAIN_THREAD,   /* the main process loading batches itself (num_workers = 0) */
    SIM_BN_COMMUNICATION, /* the DDP all-reduce, not hidden behind backward */
    SIM_BN_SHARED_GPU,    /* waiting for the GPU another job holds (SIM_STALL_SHARED) */
    SIM_BN_HOST_CPU,      /* several jobs keep more threads runnable than the host has cores */
    SIM_BN_COUNT
} sim_bottleneck;

/* GPU memory of one training step, for zoo models (the report's `memory` object). GB = GiB. */
#define SIM_MEM_PARTS 12
typedef struct sim_memory_info {
    bool known; /* false for synthetic and trace workloads */
    double peak_gb;
    double capacity_gb;
    bool oom;      /* peak > capacity: sim_scenario_build returned SIM_EOOM */
    int max_batch; /* largest batch that fits; 0 = not even 1 */
    struct {
        const char *name; /* static: "weights", "activations", ... */
        double gb;
    } parts[SIM_MEM_PARTS]; /* what the peak is made of (the parts live at different times,
                               so they may add up to more than the peak) */
    int n_parts;
} sim_memory_info;

/* A resolved scenario: the job, its hardware and one step's program, ready to run. Setup
 * (sim/setup/scenario.h) builds it from an experiment; a test may fill one by hand.
 * When sim_scenario_build fails with SIM_EOOM, `memory` is filled and the rest is not runnable. */
typedef struct sim_scenario {
    uint64_t seed;
    sim_workload_desc workload;
    sim_dataset_spec dataset;
    sim_loader_spec loader;
    sim_training_spec training;
    sim_host_spec host;
    int64_t util_window_ns;   /* GPU-Util sample window; 0 = the GPU's NVML window */
    int64_t copy_dispatch_ns; /* CPU cost of issuing one H2D copy, reference core */
    sim_hardware hw;
    sim_program program; /* owned by the scenario */
    sim_memory_info memory;
    /* Host memory that state growing with the simulated time (the GPU-Util windows) may take,
     * bytes; 0 = no limit. Set by setup (EPOCHSIM_MEMORY_BUDGET_GB). */
    int64_t memory_budget_bytes;
    /* The sampled mode (docs/sampled.md): 0 = every step is simulated; > 0 = each epoch is
     * simulated until the 95 % interval of its extrapolated time is this narrow (% of the
     * epoch), then cut, and its remaining steps are extrapolated from the steady ones. */
    double sampled_pct;
} sim_scenario;

typedef struct sim_epoch_result {
    double time_s;
    int64_t steps;
    int64_t samples;
    double samples_per_s;
    double step_time_ms_p50;
    double step_time_ms_p99;
    double gpu_util_pct; /* time with a kernel on either stream / wall time, NVML
                          * utilization.gpu semantics (NCCL kernels count) */
    double sm_active_pct;
    double cpu_util_pct;    /* busy hardware-thread time / (threads x wall time) */
    double main_busy_pct;   /* main thread working (sim_gpu_totals.main_busy_ns), GPU mean */
    double worker_busy_pct; /* GPU 0's DataLoader workers holding a batch, mean of workers (each
                             * GPU's workers are in sim_result.worker_busy_pct) */
    double stall_pct[SIM_STALL_COUNT]; /* share of wall time the GPU idled, by cause */
    double storage_busy_pct;
    double h2d_busy_pct;
    double comm_pct; /* exposed all-reduce: share of wall time the compute stream was held by an
                      * all-reduce or waited for the communication stream (= the communication
                      * stall) */
    double comm_kernel_pct; /* share of wall time an NCCL kernel ran while the compute stream was
                             * idle: in gpu_util_pct, and its time is in stall_pct as well (so
                             * gpu_util_pct - comm_kernel_pct + the stalls = 100) */
    double cache_hit_pct;   /* samples served from the page cache */
    double cpu_runnable;    /* threads runnable on the host's CPU, time mean (every job's) */
    /* The sampled mode: steps the engine ran (= steps when the epoch was not cut), the steady
     * windows the extrapolation rests on and the 95 % half-width of time_s, % (0 and 0 when
     * the epoch was simulated to its end). The other figures are then the simulated steps'
     * with the steady windows' rates carried over the extrapolated time; p50 and p99 are the
     * simulated steps'. */
    int64_t steps_simulated;
    int windows;
    double time_half_pct;
} sim_epoch_result;

/* Why the sampled mode simulated an epoch to its end instead of cutting it. */
typedef enum sim_sampled_why {
    SIM_SAMPLED_CUT,   /* it did cut */
    SIM_SAMPLED_SHORT, /* too few steps for a warm-up and SIM_SAMPLER_MIN_WINDOWS windows */
    SIM_SAMPLED_DRIFT, /* no steady state: the step time kept drifting (warm-up, a trend) */
    SIM_SAMPLED_WIDE,  /* the interval never got narrow enough: steps vary too much (stragglers,
                        * heavy-tailed decode times) for the steps the epoch has */
} sim_sampled_why;

typedef struct sim_result {
    sim_epoch_result mean; /* mean over epochs (time_s is the mean epoch time) */
    sim_epoch_result *epochs;
    int n_epochs;
    double total_time_s;
    int64_t steps;
    sim_bottleneck bottleneck;
    char verdict[512]; /* one plain sentence with its number */
    /* Each DataLoader worker of each of the job's GPUs: share of the run's wall time it held a
     * batch, GPU-major (GPU g's worker i at [g x n_workers + i]; GPU 0's come first). */
    int n_workers; /* per GPU; 0 with num_workers = 0 */
    int n_worker_gpus;
    double *worker_busy_pct;
    /* The job ran on a MIG instance (sc->hw.mig): NVML reports no GPU-Util there, so reports
     * print none and point at SM active; gpu_util_pct is still the simulated busy share. */
    bool gpu_util_na;
    /* NVML-style utilization series of GPU 0: integer percent per window. */
    int64_t util_window_ns;
    uint8_t *util_series;
    int64_t n_util;
    uint64_t events; /* events the engine processed */
    /* The sampled mode (sc->sampled_pct > 0; all 0 otherwise): the window length in steps, the
     * epochs cut, the first epoch that was not and why, the steps simulated over all epochs,
     * and the 95 % half-width of mean.time_s, % (epochs' intervals combined as independent). */
    double sampled_pct; /* the half-width asked for, % (sc->sampled_pct) */
    int window_steps;
    int epochs_cut;
    int first_full; /* -1 = every epoch was cut */
    sim_sampled_why why_full;
    int64_t steps_simulated;
    double time_half_pct;
    /* The job ran beside others (sim_run_jobs): stall_pct[SIM_STALL_SHARED] is reported; a job
     * alone has none, and its reports leave it out. */
    bool shared;
} sim_result;

/* Runs the scenario. On success fills res (free with sim_result_free) and returns 0. */
int sim_run(const sim_scenario *sc, sim_result *res, sim_err *err);

/* ---- Optional outputs of a run (additions for timelines and plots) ------------------------ */
typedef struct sim_timeline sim_timeline; /* sim/timeline.h */

/* Host-side series of a run in the same windows as sim_result's util_series (the last window
 * may be partial): for `epochsim run --plot util...`. Free with sim_run_series_free. */
typedef struct sim_run_series {
    int64_t window_ns;
    int64_t n;
    double *cpu_util_pct; /* busy hardware threads / all hardware threads, % per window */
    double *queue_depth;  /* batches ready and not yet taken by GPU 0's main thread: the mean
                           * of SIM_SERIES_SAMPLES samples per window */
} sim_run_series;
#define SIM_SERIES_SAMPLES 8

typedef struct sim_run_opts {
    sim_timeline *timeline; /* spans of the first steps go here (borrowed); NULL = none */
    sim_run_series *series; /* filled on success when not NULL */
    /* Called every few million events with the share of the run's samples decoded so far
     * (0..1); NULL = none. It only observes: results are the same with or without it. */
    void (*progress)(void *ctx, double done);
    void *progress_ctx;
} sim_run_opts;

/* sim_run with optional outputs; opts may be NULL (then it is sim_run). Neither option changes
 * the figures of res except `events` (the series adds sampling events). */
int sim_run_ex(const sim_scenario *sc, const sim_run_opts *opts, sim_result *res, sim_err *err);
void sim_run_series_free(sim_run_series *s);
void sim_result_free(sim_result *res);
void sim_scenario_free(sim_scenario *sc);

/* Why an epoch was simulated to its end, as a clause: "the epoch has too few steps ...". */
const char *sim_sampled_why_text(sim_sampled_why why);

/* ---- Several jobs at once on one system (sim_run_jobs) --------------------------------------- */
/* One job and where it runs: its hw.gpu_count is its own number of ranks; a job on a MIG
 * instance (hw.mig) has its instance to itself, other jobs on one GPU share it. */
typedef struct sim_job_slot {
    const sim_scenario *sc;
    const int *gpus; /* the physical GPU of each rank, 0 .. n_gpus-1 (borrowed) */
} sim_job_slot;

/* Host RAM a dataset in memory (dataset.location memory) takes, GB: one copy per GPU, since each
 * rank's process builds its own Dataset (its workers share it, forked); 0 on storage. */
double sim_dataset_ram_gb(const sim_scenario *sc);
/* Host RAM the jobs leave free, GB: system's host memory less the OS (~2 GB), each job's
 * processes per GPU (main ~3 GB, each worker ~0.5 GB: estimates) and its dataset in memory.
 * Negative when they do not fit. The page cache gets what is left (unless
 * system.page_cache_gb says otherwise). */
double sim_host_ram_left_gb(const sim_scenario *system, const sim_job_slot *jobs, int n_jobs);

/* One physical GPU over the whole run, every job's kernels together. */
typedef struct sim_gpu_figures {
    double gpu_util_pct;  /* time with any kernel running / wall time (NVML utilization.gpu) */
    double sm_active_pct; /* that time weighted by the share of SMs in use */
    double h2d_busy_pct;  /* its host-to-device link busy (every job's copies; a link behind a
                             PCIe switch is its uplink, shared by the GPUs behind it) */
    int jobs;             /* jobs with a rank on it */
    bool mig;             /* some are on MIG instances: NVML reports no GPU-Util, and the two
                             figures above count only the jobs on the whole GPU */
} sim_gpu_figures;

/* The host over the whole run, every job's threads and reads together (each job's figures hold
 * its own part: its cpu_util_pct, storage_busy_pct and h2d_busy_pct, over its own wall time). */
typedef struct sim_host_figures {
    double cpu_util_pct;     /* busy hardware-thread time / (threads x wall time) */
    double cpu_runnable;     /* threads runnable, time mean */
    double storage_busy_pct; /* time with a read in service / wall time */
} sim_host_figures;

typedef struct sim_jobs_result {
    sim_result *job; /* each job's figures as a run alone has them, with `shared` set; its
                      * cpu_util_pct, storage_busy_pct and h2d_busy_pct are its own part */
    int n_jobs;
    sim_gpu_figures *gpu;
    int n_gpus;
    sim_host_figures host;
    double total_time_s; /* until the last job ends */
    uint64_t events;
} sim_jobs_result;

/* Runs n_jobs jobs at once in one simulation on `system`: its hardware (system->hw.gpu_count
 * GPUs, the CPU, memory bus, storage) and host (page cache, copy efficiency) are what the jobs
 * share; its program is not run. Jobs on one GPU share it as `share` says. On success fills res
 * (free with sim_jobs_result_free) and returns 0. A job in the sampled mode (sc->sampled_pct > 0)
 * is refused with SIM_EINVAL: its cut epochs would leave the others' steps timed without it. */
int sim_run_jobs(const sim_scenario *system, const sim_job_slot *jobs, int n_jobs,
                 const sim_gpushare_config *share, sim_jobs_result *res, sim_err *err);
void sim_jobs_result_free(sim_jobs_result *res);

/* JSON name of a bottleneck ("data_loading", ...) and of a stall ("storage", ...). */
const char *sim_bottleneck_name(sim_bottleneck b);
const char *sim_stall_name(sim_stall s);

#endif
