/* app.h — what every subcommand shares: its exit codes and where the hardware catalog is. The
 * command table (cli.h) includes the subcommands; they include this, not the table. */
#ifndef SIM_APP_H
#define SIM_APP_H

/* Exit codes: 0 ok, 1 simulation or config error, 2 usage error. */
enum { SIM_EXIT_OK = 0, SIM_EXIT_ERROR = 1, SIM_EXIT_USAGE = 2 };

/* The catalog directory: --catalog, else $EPOCHSIM_CATALOG, else the installed catalog beside the
 * binary (PREFIX/share/epochsim/configs/hardware for PREFIX/bin/epochsim, as `cmake --install`
 * lays it out), else the source tree's (the build-time default, for a binary run from its build
 * folder). */
const char *sim_app_catalog_dir(const char *from_flag);

#endif
