/* sweep_cmd.h — `epochsim sweep`: the command line of sim/app/sweep_run.h, and `epochsim sweep
 * merge` (sim/app/sweep_merge.h). */
#ifndef SIM_SWEEP_CLI_H
#define SIM_SWEEP_CLI_H

/* argv[0] is "sweep"; argv[1] "merge" runs the merge (exit 0, 1 on a merge error, 2 on usage
 * errors). Otherwise returns 0 when every row was written, 1 when a point failed (its row has
 * the error; all other rows are written), the run was interrupted, or a config/output error
 * stopped it, and 2 on usage errors. */
int sim_sweep_cmd(int argc, char **argv);

#endif
