/* run_cli.h — the `epochsim run` subcommand. */
#ifndef SIM_RUN_CLI_H
#define SIM_RUN_CLI_H

int sim_run_cli(int argc, char **argv);

#endif
