/* hw_cmd.h — `epochsim hw`: lists and shows the entries of the hardware catalog
 * (configs/hardware/, or --catalog DIR, or $EPOCHSIM_CATALOG) as tables or JSON. */
#ifndef SIM_HW_CLI_H
#define SIM_HW_CLI_H

/* The `hw` subcommand. argv[0] is "hw"; returns 0 ok, 1 catalog error, 2 usage error.
 *   epochsim hw list [gpus|cpus|storage|links|systems] [--json] [--catalog DIR]
 *   epochsim hw show NAME [--kind KIND] [--json] [--catalog DIR]
 * Tables and JSON go to stdout, messages to stderr. */
int sim_hw_cmd(int argc, char **argv);

#endif
