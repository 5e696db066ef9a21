/* run_cmd.h — the `epochsim run` subcommand. */
#ifndef SIM_RUN_CLI_H
#define SIM_RUN_CLI_H

int sim_run_cmd(int argc, char **argv);

#endif
