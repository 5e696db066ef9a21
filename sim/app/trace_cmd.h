/* trace_cmd.h — the trace subcommands of the epochsim command line (rows of sim/app/cli.c's table):
 *   epochsim import kineto IN.json[.gz] -o OUT.trace [--summary-json PATH] ...
 *   epochsim trace show FILE [--json]
 *   epochsim trace dispatch FILE
 * Each takes (argc, argv) from its own name and returns 0 ok, 1 error, 2 usage. */
#ifndef TRC_CMD_H
#define TRC_CMD_H

int sim_import_cmd(int argc, char **argv);
int sim_trace_cmd(int argc, char **argv);

#endif
