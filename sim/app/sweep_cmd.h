/* sweep_cmd.h — `epochsim sweep`: the command line of sim/app/sweep_run.h. */
#ifndef SIM_SWEEP_CLI_H
#define SIM_SWEEP_CLI_H

/* argv[0] is "sweep". Returns 0 when every row was written, 1 when a point failed (its row has
 * the error; all other rows are written), the run was interrupted, or a config/output error
 * stopped it, and 2 on usage errors. */
int sim_sweep_cmd(int argc, char **argv);

#endif
