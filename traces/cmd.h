/* cmd.h — the trace subcommands of the epochsim command line (rows of sim/cli.c's table):
 *   epochsim import kineto IN.json[.gz] -o OUT.trace [--summary-json PATH] ...
 *   epochsim trace show FILE [--json]
 * Each takes (argc, argv) from its own name and returns 0 ok, 1 error, 2 usage. */
#ifndef TRC_CMD_H
#define TRC_CMD_H

int trc_cmd_import(int argc, char **argv);
int trc_cmd_trace(int argc, char **argv);

#endif
