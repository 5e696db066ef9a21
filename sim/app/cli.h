/* cli.h — the epochsim command line. Subcommands live in a table in cli.c; each takes
 * (argc, argv) starting at its own name and returns the process exit code:
 * 0 ok, 1 simulation or config error, 2 usage error. */
#ifndef SIM_CLI_H
#define SIM_CLI_H

#include <stdio.h>

enum { SIM_EXIT_OK = 0, SIM_EXIT_ERROR = 1, SIM_EXIT_USAGE = 2 };

typedef int (*sim_cli_fn)(int argc, char **argv);

typedef struct sim_cli_command {
    const char *name;
    sim_cli_fn run;
    const char *summary; /* one line for `epochsim --help` */
} sim_cli_command;

int sim_cli_main(int argc, char **argv);

/* The catalog directory: --catalog, else $EPOCHSIM_CATALOG, else the installed catalog beside the
 * binary (PREFIX/share/epochsim/configs/hardware for PREFIX/bin/epochsim, as `cmake --install`
 * lays it out), else the source tree's (the build-time default, for a binary run from its build
 * folder). */
const char *sim_cli_catalog_dir(const char *from_flag);

#endif
