/* report.h — what a run prints: the terminal summary, the --json document (a contract for
 * scripts: see README "JSON output") and the nvidia-smi-dmon-style GPU-Util series. */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include "sim/core/run.h"
#include "sim/setup/advice.h"

#include <stdio.h>
#include <yajl/yajl_gen.h>

/* The advice of a run: adv[0..n), each checked by simulation; n < 0 = none was sought. */
typedef struct sim_report_advice {
    const sim_advice *adv;
    int n;
} sim_report_advice;

void sim_report_text(FILE *out, const sim_scenario *sc, const sim_result *res,
                     const sim_report_advice *advice);
/* Emits the result's figures as JSON object members (no enclosing braces) into g, so other
 * documents (sweep rows) can embed the same keys. */
void sim_report_json_members(yajl_gen g, const sim_result *res);
/* Emits the `memory` member ({peak_gb, capacity_gb, oom, max_batch, parts}) when m->known. */
void sim_report_json_memory(yajl_gen g, const sim_memory_info *m);
/* Writes the whole --json document to path ("-" = stdout), whole or not at all. res = NULL
 * writes the document of a job that was not simulated because it does not fit in GPU memory:
 * "oom": true, "memory" and "scenario". */
int sim_report_json(const char *path, const sim_scenario *sc, const sim_result *res,
                    const sim_report_advice *advice, sim_err *err);
/* The out-of-memory report: each part of the footprint, the peak, the capacity and the largest
 * batch that fits. */
void sim_report_memory_text(FILE *out, const sim_scenario *sc);
/* A run of several jobs (sim_run_jobs): job j is names[j], sc[j], gpus[j] (its placement) and
 * res->job[j]; `system` is the hardware they share. */
typedef struct sim_report_jobs {
    const sim_scenario *system;
    const sim_scenario *sc;
    const char *const *names;
    const int (*gpus)[SIM_INT_LIST_MAX];
    sim_gpu_sharing sharing;
} sim_report_jobs;
/* The terminal summary of several jobs: a table with a row per job, each physical GPU's
 * GPU-Util and SM active, and each job's verdict. */
void sim_report_jobs_text(FILE *out, const sim_report_jobs *j, const sim_jobs_result *res);
/* The --json document of several jobs: `jobs` (each with a single run's members, its `memory`,
 * name, gpus and model), `gpus` (per physical GPU), the run's totals and `scenario`. */
int sim_report_jobs_json(const char *path, const sim_report_jobs *j, const sim_jobs_result *res,
                         sim_err *err);
/* Writes the utilization series as CSV: time_s,gpu,sm (sm = utilization.gpu, as dmon names it). */
int sim_report_util_csv(const char *path, const sim_result *res, sim_err *err);

#endif
