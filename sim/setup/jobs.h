/* jobs.h — an experiment's `jobs:` list: several jobs at once on its system.
 * Each item is a mapping with `name:`, optionally `experiment: FILE` (an experiment file, relative
 * to the list's file, whose keys the job takes) and any experiment keys of its own (workload,
 * dataset, loader, training, placement.gpus, placement.mig); what an item does not give comes
 * from the list file's top level. The system is the top level's, shared: an item sets no
 * `system.` key (a FILE's system keys are replaced by it). */
#ifndef SIM_JOBS_H
#define SIM_JOBS_H

#include "sim/core/run.h"
#include "sim/setup/config.h"

/* The most jobs one run holds: each adds its processes to the host and its ranks to the run. */
#define SIM_JOBS_MAX 64

typedef struct cfg_job {
    char name[SIM_NAME_MAX];
    sim_experiment x;
    cfg_experiment_set set;
    bool own_seed; /* the item or its experiment FILE sets `seed`: x.seed is kept as it is */
} cfg_job;

typedef struct cfg_jobs {
    int n; /* 0: the file has no `jobs:` list */
    cfg_job *job;
} cfg_jobs;

/* Reads the `jobs:` list of the experiment file at path on top of `top` (the file's top level
 * with --set applied) and `top_set`. Errors name the file, line and column. */
int cfg_jobs_load(const char *path, const sim_experiment *top, const cfg_experiment_set *top_set,
                  cfg_jobs *out, sim_err *err);
void cfg_jobs_free(cfg_jobs *jobs);

/* The seed of the job at `index` (0-based) of a `jobs:` list whose file has `seed`: the first
 * job keeps the seed (a list of one job runs as the experiment alone), job k > 0 takes the k-th
 * output of splitmix64 seeded with it (Steele, Lea and Flood, "Fast splittable pseudorandom
 * number generators", OOPSLA 2014). Jobs that inherit the run's seed thus draw different decode
 * times, as separate processes do, and the same file always gives the same seeds. A job with a
 * seed of its own keeps it (sim_jobs_build). */
uint64_t sim_jobs_seed(uint64_t seed, int index);

/* The jobs resolved for sim_run_jobs: the system (all its GPUs) and each job's scenario on its
 * own GPUs. */
typedef struct sim_jobs_setup {
    sim_scenario system;
    int n;
    sim_scenario *sc;
    sim_job_slot *slot;
    int (*gpus)[SIM_INT_LIST_MAX]; /* each job's placement.gpus, what slot[j].gpus points at */
    sim_gpushare_config share;
} sim_jobs_setup;

/* Builds the system and each job's scenario. A job that does not fit its GPU alone fails as
 * sim_scenario_build does (SIM_EOOM), named; jobs whose memory adds up past a GPU's fail with
 * SIM_EOOM naming the GPU and the jobs. */
int sim_jobs_build(const cfg_jobs *jobs, const sim_experiment *top, const cfg_experiment_set *set,
                   const char *catalog_dir, sim_jobs_setup *out, sim_err *err);
void sim_jobs_setup_free(sim_jobs_setup *s);

#endif
