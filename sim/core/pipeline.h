/* pipeline.h — the components of one training job and the calls between them.
 * Like the shared server, a component takes requests through function calls and answers with
 * events addressed to the requester when the simulated work is done; nobody reads another's
 * state. Event kinds are per component (see each *.c). */
#ifndef SIM_PIPELINE_H
#define SIM_PIPELINE_H

#include "sim/core/engine.h"
#include "sim/core/hw.h"
#include "sim/core/ps.h"
#include "sim/core/topo.h"
#include "sim/core/workload.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct sim_metrics sim_metrics;

/* ---- What the components report to the engine's observer (sim_engine_observe) ------------- */
/* Each component reports what its threads, its stream or its device did, in the terms of
 * timeline.h (the observer run.c sets when asked for a timeline); nothing it reports changes the
 * run. The observer decides what to keep (the timeline: the first steps only). */
typedef enum sim_obs_kind {
    SIM_OBS_STEP,       /* the main thread begins global step a */
    SIM_OBS_SPAN,       /* thread (thread, index) did `what` from start_ns to now; figures a, b */
    SIM_OBS_ITEM,       /* the main thread queued stream item seq for op `index` (-1 = the input
                         * batch copy) of global step a; what = sim_op_kind, unit = sim_unit */
    SIM_OBS_LAUNCH,     /* the main thread began, at start_ns, the launch of kernel item seq */
    SIM_OBS_GPU_DONE,   /* the stream ran item seq from start_ns to now; a copy's bytes left the
                         * link at a */
    SIM_OBS_READ_BEGIN, /* storage request `index` enters a service slot */
    SIM_OBS_READ_END,   /* storage request `index` (a bytes) is done */
} sim_obs_kind;

struct sim_observation {
    sim_obs_kind kind;
    int rank;   /* the GPU whose pipeline it is; -1 = shared (storage) */
    int thread; /* SIM_OBS_SPAN: sim_tl_lane_kind (main, worker, pin) */
    int index;  /* see the kind */
    int what;   /* SIM_OBS_SPAN: sim_tl_what; SIM_OBS_ITEM: sim_op_kind */
    int unit;   /* SIM_OBS_ITEM: sim_unit of a kernel */
    uint64_t seq;
    int64_t start_ns;
    int64_t a, b;
};

/* ---- CPU: all threads of the host share its cores by processor sharing (cpu.c) ---------- */
/* Work unit: ns of one reference core. Capacity with n runnable threads on c cores and t hardware
 * threads: min(n, c) + smt_gain * clamp(n - c, 0, t - c) cores, each at single_thread speed. */
typedef struct sim_cpu_model {
    int cores;
    int threads;
    double smt_gain;
    double single_thread;
} sim_cpu_model;

sim_ps *sim_cpu_create(sim_engine *e, const sim_cpu_model *m);
/* Cores' worth of throughput with n runnable threads (exposed for tests). */
double sim_cpu_capacity(const sim_cpu_model *m, int n);

/* ---- Storage device (storage.c) ------------------------------------------------------------ */
typedef struct sim_storage sim_storage;
sim_storage *sim_storage_create(sim_engine *e, const sim_storage_desc *d);
void sim_storage_destroy(sim_storage *s);
/* Reads `bytes`; `reply_to` gets `kind` with payload `a` when the data is in memory. */
void sim_storage_read(sim_storage *s, double bytes, uint32_t reply_to, uint32_t kind, uint64_t a);
/* Time with at least one request in service, ns. */
double sim_storage_busy_ns(sim_storage *s);
/* Counts the busy time per group 0 .. n-1 (several jobs reading from one device), before any
 * read. Returns 0 or SIM_ENOMEM. */
int sim_storage_groups(sim_storage *s, int n);
/* sim_storage_read for a read of `group`; sim_storage_read is group 0. */
void sim_storage_read_as(sim_storage *s, int group, double bytes, uint32_t reply_to, uint32_t kind,
                         uint64_t a);
/* The busy time the group's reads caused, ns: while k reads are in service (latency or
 * transfer), each holds 1 / k of the time. The groups' add up to sim_storage_busy_ns. Needs
 * sim_storage_groups. */
double sim_storage_group_busy_ns(sim_storage *s, int group);

/* ---- Collective: all GPUs of the job meet at each all-reduce (collective.c) ---------------- */
typedef struct sim_collective sim_collective;
/* ring: the GPUs' ring (sim/core/topo.h), copied; each all-reduce takes NCCL's time on it. */
sim_collective *sim_collective_create(sim_engine *e, int n_gpus, const sim_ring *ring);
void sim_collective_destroy(sim_collective *c);
/* GPU `gpu` is ready to run its next all-reduce of `bytes`; it gets `kind` when all GPUs have
 * joined and the reduction is done. */
void sim_collective_join(sim_collective *c, int gpu, double bytes, uint32_t reply_to,
                         uint32_t kind);
/* Time spent reducing (from the last join to the answer, summed over all-reduces), ns. */
double sim_collective_busy_ns(const sim_collective *c);

/* ---- A physical GPU shared by several jobs' streams (gpushare.c) ------------------------- */
/* How jobs on one whole GPU share it: time-slicing (the driver's default: one context at a
 * time, switched) or MPS (kernels of different jobs run at once up to the SMs). */
typedef enum sim_gpu_sharing { SIM_SHARE_TIME_SLICE, SIM_SHARE_MPS } sim_gpu_sharing;
extern const char *const sim_gpu_sharing_names[]; /* "time_slice", "mps", NULL */

typedef struct sim_gpushare sim_gpushare;
typedef struct sim_gpushare_config {
    sim_gpu_sharing mode;
    int64_t slice_ns;  /* time-slicing: how long a context may hold the GPU while others wait */
    int64_t switch_ns; /* time-slicing: one change of context, nothing runs meanwhile */
} sim_gpushare_config;

sim_gpushare *sim_gpushare_create(sim_engine *e, const sim_gpushare_config *cfg);
void sim_gpushare_destroy(sim_gpushare *s);
/* Adds a job's stream (its metrics and rank, which the device tells when the stream's kernel
 * runs or waits); returns the stream's context number (>= 0) or SIM_ENOMEM. */
int sim_gpushare_attach(sim_gpushare *s, sim_metrics *metrics, int rank);
/* Context ctx has a kernel of dur_ns (at full speed on the whole GPU) ready; `reply_to` gets
 * `reply_kind` when it is done. One kernel per context at a time (a stream is in order). */
void sim_gpushare_kernel(sim_gpushare *s, int ctx, int64_t dur_ns, float sm_fraction,
                         uint32_t reply_to, uint32_t reply_kind);
/* The physical GPU up to now: time with any kernel running (NVML GPU-Util's numerator) and
 * that time weighted by the share of SMs in use (SM active), ns. */
double sim_gpushare_busy_ns(sim_gpushare *s);
double sim_gpushare_sm_active_ns(sim_gpushare *s);

/* ---- GPU: an in-order compute stream of kernels, copies and collectives, and a communication
 * stream for DDP's bucket all-reduces (gpu.c) ------------------------------------------------ */
typedef struct sim_gpu sim_gpu;
typedef struct sim_gpu_config {
    int index; /* GPU number within the job */
    int launch_queue_depth;
    double copy_overhead_ns;
    double pageable_slowdown; /* pinned rate / pageable rate */
    sim_ps *h2d; /* the host-to-device link of this GPU (work unit: bytes at pinned rate) */
    sim_ps *d2h; /* the device-to-host direction (PCIe is full duplex); NULL = h2d */
    sim_collective *coll;
    sim_metrics *metrics;
    sim_gpushare *share;  /* the GPU other jobs share; NULL = this stream has it alone */
    int share_ctx;        /* this stream's context on share */
    double comm_sm_share; /* share of the SMs an NCCL kernel holds while it runs, [0, 1) (see
                             sim_topo_nccl_channels); compute kernels beside it get the rest */
    int group;            /* the job it belongs to, on the shared links */
} sim_gpu_config;

sim_gpu *sim_gpu_create(sim_engine *e, const sim_gpu_config *cfg);
void sim_gpu_destroy(sim_gpu *g);
/* Queues work on the stream; returns the item's sequence number (1, 2, ...). The caller must
 * respect the launch queue: see sim_gpu_queued / sim_gpu_notify. */
uint64_t sim_gpu_kernel(sim_gpu *g, int64_t dur_ns, float sm_fraction);
uint64_t sim_gpu_copy(sim_gpu *g, double bytes, bool pinned);
/* A device-to-host copy into page-locked memory, on the d2h direction. */
uint64_t sim_gpu_copy_d2h(sim_gpu *g, double bytes);
uint64_t sim_gpu_allreduce(sim_gpu *g, double bytes);
/* A DDP bucket's all-reduce: when the compute stream reaches it (every item before it done) the
 * communication stream takes it and the compute stream goes on; the communication stream runs
 * its all-reduces in order, each through the collective, beside later compute items. For
 * sim_gpu_queued and sim_gpu_notify it is finished once handed over (a launch waits for room in
 * the compute stream's queue only): what must follow the reduction is queued after a
 * sim_gpu_kernel_after_comm. */
uint64_t sim_gpu_allreduce_overlapped(sim_gpu *g, double bytes);
/* A kernel that starts only once the communication stream has drained (DDP's optimizer step
 * waits for every bucket); the compute stream's idle time meanwhile is exposed communication. */
uint64_t sim_gpu_kernel_after_comm(sim_gpu *g, int64_t dur_ns, float sm_fraction);
/* Items queued and not finished (an overlapped all-reduce counts as finished once handed over). */
uint64_t sim_gpu_queued(const sim_gpu *g);
int sim_gpu_queue_depth(const sim_gpu *g);
/* One waiter: `target` gets `kind` once items 1..seq have finished (at once if they have). */
void sim_gpu_notify(sim_gpu *g, uint64_t seq, uint32_t target, uint32_t kind);
/* Items enqueued so far (the seq of the last one). */
uint64_t sim_gpu_enqueued(const sim_gpu *g);

/* ---- DataLoader: workers, prefetch, in-order delivery, pin-memory thread (loader.c) -------- */
typedef struct sim_loader sim_loader;
typedef struct sim_loader_config {
    int batch_size;
    int num_workers;
    int prefetch_factor;
    bool pin_memory;
    bool persistent_workers;
    int64_t samples;         /* samples this loader serves per epoch (after max_steps cut) */
    int64_t dataset_samples; /* samples of the dataset shard (for shuffling and the cache) */
    double sample_bytes;
    double decode_ref_ns; /* mean decode cost per sample, reference core */
    double decode_cv;
    double input_bytes;
    bool in_memory; /* the samples are in host RAM already: no read, no page cache */

    double worker_start_ref_ns;
    int64_t cached_samples; /* samples the page cache holds from the second epoch on */
    uint64_t seed;
    sim_ps *cpu;
    sim_ps *mem; /* host memory bus: memcpy of collate, pinning and page-cache reads (bytes) */
    sim_storage *storage;
    sim_metrics *metrics; /* told what the awaited batch waits on; NULL = nobody */
    int rank;             /* the GPU this loader feeds (what it reports is of this rank) */
    int group;            /* the job it belongs to, on the shared cpu, mem and storage */
} sim_loader_config;

sim_loader *sim_loader_create(sim_engine *e, const sim_loader_config *cfg, int *rc);
void sim_loader_destroy(sim_loader *l);
/* Starts epoch `epoch` (0-based): shuffles, spawns workers unless persistent, prefetches. */
int sim_loader_begin_epoch(sim_loader *l, int epoch);
/* Batches this epoch yields: an epoch's, or fewer after sim_loader_cut. */
int64_t sim_loader_batches(const sim_loader *l);
/* Ends this epoch after its first `batches` batches (from sim_loader_sent to the epoch's): the
 * sampled mode's cut (sim/core/sampler.h). The page cache takes the samples the rest of the
 * epoch would have read, as they would have filled it, so the next epoch starts as it would
 * after a whole one. The next sim_loader_begin_epoch restores the full count. */
void sim_loader_cut(sim_loader *l, int64_t batches);
/* Batches handed to workers (or loaded by the main thread) so far this epoch. */
int64_t sim_loader_sent(const sim_loader *l);
/* Samples in batch b of this epoch. */
int sim_loader_batch_samples(const sim_loader *l, int64_t b);
/* Asks for the next batch in order; `target` gets `kind` (payload = batch index) when it is ready
 * for the main thread. With num_workers = 0 the loading happens now, on the main thread. */
void sim_loader_next(sim_loader *l, uint32_t target, uint32_t kind);
/* Per-epoch counters (reset by begin_epoch): samples fetched (from the device, the page cache
 * or, in memory, from RAM with no read), of those from the page cache, and decoded. */
int64_t sim_loader_reads(const sim_loader *l);
int64_t sim_loader_cache_hits(const sim_loader *l);
int64_t sim_loader_decodes(const sim_loader *l);
/* Worker processes (0 with num_workers = 0) and the time worker wi has held a batch (reading,
 * decoding, collating it) since the loader was created, ns; a batch counts when it is done. */
int sim_loader_workers(const sim_loader *l);
int64_t sim_loader_worker_busy_ns(const sim_loader *l, int wi);
/* Every sample of the epoch's batches (those before its cut, if any) was read exactly once (an
 * invariant the tests check). */
bool sim_loader_each_sample_once(const sim_loader *l);
/* Batches the main thread could take now without waiting: ready ones in order from the next
 * to yield (a batch done out of order waits in the reorder buffer and is not counted). */
int sim_loader_ready_batches(const sim_loader *l);

/* ---- Main thread: the training loop (trainer.c) -------------------------------------------- */
typedef struct sim_trainer sim_trainer;
typedef struct sim_trainer_config {
    int index;
    const sim_program *program;
    int epochs;
    bool non_blocking;
    bool pin_memory;
    bool sync_every_step;
    bool cuda_graphs;
    double input_bytes;
    int64_t copy_dispatch_ref_ns;
    sim_ps *cpu;
    sim_gpu *gpu;
    sim_loader *loader;
    sim_metrics *metrics;
    int group; /* the job it belongs to, on the shared cpu */
    /* Called when the main thread ends a step (before the epoch's last step waits for the GPU)
     * with the step's time from its start, ns; it may cut the epoch (sim_loader_cut). NULL =
     * nobody. */
    void (*on_step_end)(void *ctx, int trainer, int64_t dur_ns);
    /* Called at each epoch end so the run can snapshot figures; may be NULL. */
    void (*on_epoch_end)(void *ctx, int trainer, int epoch);
    void *ctx;
} sim_trainer_config;

sim_trainer *sim_trainer_create(sim_engine *e, const sim_trainer_config *cfg);
void sim_trainer_destroy(sim_trainer *t);
/* Schedules the start of the first epoch at the current time. */
void sim_trainer_start(sim_trainer *t);
bool sim_trainer_done(const sim_trainer *t);

#endif
