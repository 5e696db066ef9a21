/* app.c — what every subcommand shares (see app.h). */
#include "sim/app/app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* PREFIX/share/epochsim/configs/hardware when this binary is PREFIX/bin/epochsim and that folder
 * exists; NULL otherwise. */
static const char *installed_catalog(void)
{
    static char dir[4096];
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    *slash = 0; /* PREFIX/bin */
    if ((size_t)snprintf(dir, sizeof dir, "%s/../share/epochsim/configs/hardware", exe) >=
        sizeof dir)
        return NULL;
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

const char *sim_app_catalog_dir(const char *from_flag)
{
    if (from_flag && from_flag[0]) return from_flag;
    const char *env = getenv("EPOCHSIM_CATALOG");
    if (env && env[0]) return env;
    const char *installed = installed_catalog();
    return installed ? installed : EPOCHSIM_CATALOG_DIR;
}

int sim_app_sampled(const char *pct, sim_experiment *x, cfg_experiment_set *set, sim_err *err)
{
    char assign[128];
    snprintf(assign, sizeof assign, "run.sampled_pct=%.100s", pct ? pct : SIM_APP_SAMPLED_PCT);
    int rc = cfg_experiment_apply(assign, x, set, err);
    if (rc) snprintf(err->where, sizeof err->where, "--sampled=%.100s", pct ? pct : "");
    return rc;
}
