/* report.h — what a run prints: the terminal summary, the --json document (a contract for
 * scripts: see README "JSON output") and the nvidia-smi-dmon-style GPU-Util series. */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include "sim/run.h"

#include <stdio.h>
#include <yajl/yajl_gen.h>

void sim_report_text(FILE *out, const sim_scenario *sc, const sim_result *res);
/* Emits the result's figures as JSON object members (no enclosing braces) into g, so other
 * documents (sweep rows) can embed the same keys. */
void sim_report_json_members(yajl_gen g, const sim_result *res);
/* Writes the whole --json document to path ("-" = stdout), whole or not at all. */
int sim_report_json(const char *path, const sim_scenario *sc, const sim_result *res,
                    sim_err *err);
/* Writes the utilization series as CSV: time_s,gpu,sm (sm = utilization.gpu, as dmon names it). */
int sim_report_util_csv(const char *path, const sim_result *res, sim_err *err);

#endif
