/* cli.h — the epochsim command line. Subcommands live in a table in cli.c; each takes
 * (argc, argv) starting at its own name and returns the process exit code (app.h). */
#ifndef SIM_CLI_H
#define SIM_CLI_H

#include "sim/app/app.h"

#include <stdio.h>

typedef int (*sim_cli_fn)(int argc, char **argv);

typedef struct sim_cli_command {
    const char *name;
    sim_cli_fn run;
    const char *summary; /* one line for `epochsim --help` */
} sim_cli_command;

int sim_cli_main(int argc, char **argv);

#endif
