/* allreduce_cmd.h — `epochsim hw allreduce`: what nccl-tests' all_reduce_perf would print for a
 * catalog system, from the collective model the runs use (sim/core/topo.h), so a user can hold
 * it against their own all_reduce_perf run. */
#ifndef SIM_ALLREDUCE_CMD_H
#define SIM_ALLREDUCE_CMD_H

/* argv[0] is "allreduce":
 *   epochsim hw allreduce SYSTEM [--gpus N] [--bytes SIZE | MIN:MAX] [--set KEY=VALUE]...
 *                                [--json PATH|-] [--catalog DIR]
 * SIZE takes K, M, G (powers of 1024, as nccl-tests' -b/-e); MIN:MAX doubles from MIN to MAX
 * (all_reduce_perf -b MIN -e MAX -f 2). The table goes to stdout (or JSON to PATH), messages to
 * stderr. Returns 0 ok, 1 catalog or model error, 2 usage error. */
int sim_allreduce_cmd(int argc, char **argv);

#endif
