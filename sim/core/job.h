/* job.h — what the core needs to know of a training job beyond its hardware and its step
 * program: the dataset, the DataLoader, the training loop, and what the program was made from
 * (for reports). Setup (sim/setup/scenario.c) resolves an experiment into these; the user-facing
 * experiment (sim/setup/experiment.h) embeds the same spec types so that no field list is
 * written twice. Plain data: no functions. */
#ifndef SIM_JOB_H
#define SIM_JOB_H

#include "sim/core/hw.h"

#include <stdbool.h>
#include <stdint.h>

#define SIM_PATH_MAX 512

/* The most samples a dataset may have: the loader keeps 4 bytes per sample, a sample's id and
 * 2 bits of its state (sim/core/loader.c). */
#define SIM_DATASET_MAX_SAMPLES 1073741824

/* Where the samples are before a worker fetches one: on the storage device (read per sample,
 * through the page cache) or already in host RAM (a TensorDataset, or a Dataset that loads
 * everything in __init__): no read, only the per-sample CPU work. */
typedef enum sim_data_location { SIM_DATA_STORAGE, SIM_DATA_MEMORY } sim_data_location;
extern const char *const sim_data_location_names[]; /* "storage", "memory", NULL (loader.c) */

typedef struct sim_dataset_spec {
    int64_t samples;
    double sample_bytes; /* bytes per sample as stored: read from storage, or held in RAM */
    double decode_us;    /* CPU decode+augment per sample on the reference core */
    double decode_cv;    /* coefficient of variation of decode time (lognormal) */
    double input_bytes;  /* bytes per sample of the tensor sent to the GPU */
    int location;        /* sim_data_location */
} sim_dataset_spec;

typedef struct sim_loader_spec {
    int batch_size;
    int num_workers;
    int prefetch_factor;
    bool pin_memory;
    bool non_blocking;
    bool persistent_workers;
    bool drop_last;
    double worker_start_ms; /* start-up of one worker process, each epoch unless persistent */
} sim_loader_spec;

typedef struct sim_training_spec {
    int epochs;
    int64_t max_steps; /* per epoch; 0 = the whole epoch */
    bool sync_every_step;
    bool cuda_graphs;
} sim_training_spec;

/* The host beyond its CPU: what the page cache may hold and how well copies use DRAM. */
typedef struct sim_host_spec {
    double page_cache_gb;       /* RAM the page cache may use; < 0 = estimate from host memory */
    double mem_copy_efficiency; /* share of the DRAM peak a many-thread copy reaches */
} sim_host_spec;

/* What the step program was made from, as reports name it. */
typedef struct sim_workload_desc {
    char model[SIM_NAME_MAX];     /* "synthetic" or a model-zoo name ("trace" when replayed) */
    char trace[SIM_PATH_MAX];     /* the replayed trace; "" = none */
    char trace_gpu[SIM_NAME_MAX]; /* catalog GPU and CPU it was recorded on, batch it ran */
    char trace_cpu[SIM_NAME_MAX];
    int trace_batch;
    sim_precision precision;
    /* batches padded to their longest sequence (workload.seq_lengths): the lengths a step's
     * micro-batches run at; seq_lengths = 0 when every batch has the model's length */
    int seq_lengths;      /* distinct padded lengths in a step */
    int seq_min, seq_max; /* the shortest and longest of them, tokens */
    double seq_mean;      /* tokens per sample, padding included, over the step */
    bool seq_averaged;    /* fewer micro-batches than bins: all at the mean length */
} sim_workload_desc;

/* The hardware of a run, after catalog look-ups and overrides. */
typedef struct sim_hardware {
    sim_gpu_desc gpu;
    sim_cpu_desc cpu;
    sim_storage_desc storage;
    sim_link_desc link;
    int gpu_count;
    double host_memory_gb;
    sim_topology topo;
    char mig[24]; /* MIG profile gpu is one instance of ("" = the whole GPU); NVML then has no
                     GPU-Util for it */
} sim_hardware;

#endif
