/* model_cmd.h — `epochsim model list|show`: the model zoo from the command line.
 * Prints parameters, FLOPs per sample, kernels per step, CPU dispatch and the memory footprint
 * of a training step; with --gpu, also the step's GPU time and the OOM verdict on that GPU. */
#ifndef MDL_CLI_MODEL_H
#define MDL_CLI_MODEL_H

/* Subcommand entry (sim/cli.c table): argv[0] = "model". Returns 0 ok, 1 error, 2 usage. */
int sim_model_cmd(int argc, char **argv);

#endif
