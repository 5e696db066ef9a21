/* whatif.c — the one-command what-if study (see whatif.h). The sweep driver writes its CSV to a
 * private temporary file, which is read back with the plot reader: the table, the plot and a
 * `sweep -o` file are the same figures of the same seeds. */
#include "sim/app/whatif.h"

#include "plots/plt_csv.h"
#include "sim/app/app.h"
#include "sim/app/plot_cmd.h"
#include "sim/app/sweep_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The figures the table shows after the swept keys. */
static const char *const shown[] = {"epoch_time_s", "samples_per_s", "gpu_util_pct",
                                    "main_thread_busy_pct", "bottleneck"};
#define N_SHOWN (sizeof shown / sizeof shown[0])

static void print_table(const plt_csv *t, const sim_sweep_spec *spec)
{
    size_t nk = sim_sweep_spec_columns(spec);
    int c_err = plt_csv_col(t, "error"), c_oom = plt_csv_col(t, "oom");
    for (size_t k = 0; k < nk; k++)
        printf("%-22s ", sim_sweep_spec_column(spec, k));
    for (size_t f = 0; f + 1 < N_SHOWN; f++)
        printf("%21s", shown[f]);
    printf("  %s\n", shown[N_SHOWN - 1]);
    for (size_t r = 0; r < t->n_rows; r++) {
        for (size_t k = 0; k < nk; k++)
            printf("%-22s ", plt_csv_cell(t, r, plt_csv_col(t, sim_sweep_spec_column(spec, k))));
        const char *err = c_err >= 0 ? plt_csv_cell(t, r, c_err) : "";
        if (err[0] || (c_oom >= 0 && !strcmp(plt_csv_cell(t, r, c_oom), "1"))) {
            printf("  %s\n", err[0] ? err : "does not fit in GPU memory");
            continue;
        }
        for (size_t f = 0; f + 1 < N_SHOWN; f++)
            printf("%21.4g", atof(plt_csv_cell(t, r, plt_csv_col(t, shown[f]))));
        printf("  %s\n", plt_csv_cell(t, r, plt_csv_col(t, shown[N_SHOWN - 1])));
    }
}

/* A private temporary file for the driver's CSV; returns 0 or -1 with errno. */
static int temp_path(char *buf, size_t n)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/epochsim-whatif-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(buf);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

int sim_whatif_run(const sim_sweep_spec *spec, const sim_experiment *x,
                   const cfg_experiment_set *set, const sim_whatif_opts *o)
{
    char path[4096];
    if (temp_path(path, sizeof path)) {
        perror("epochsim run: a temporary file for the --vary table");
        return SIM_EXIT_ERROR;
    }
    sim_sweep_opts so = {.out_path = path,
                         .format = SIM_SWEEP_CSV,
                         .threads = 1,
                         .replications = 1,
                         .force = true,
                         .progress = !o->quiet && isatty(STDERR_FILENO),
                         .catalog_dir = o->catalog_dir};
    sim_sweep_stats st;
    sim_err err;
    sim_err_clear(&err);
    plt_csv t = {0};
    int status = SIM_EXIT_ERROR;
    if (sim_sweep_run(spec, x, set, &so, &st, &err) || plt_csv_read(path, &t, &err)) {
        fputs("epochsim run: ", stderr);
        sim_err_print(&err, stderr);
        goto done;
    }
    print_table(&t, spec);
    status = st.failed ? SIM_EXIT_ERROR : SIM_EXIT_OK;
    if (o->plot_path) {
        const char *by = sim_sweep_spec_columns(spec) > 1 ? sim_sweep_spec_column(spec, 1) : NULL;
        int prc =
            sim_plot_csv(path, sim_sweep_spec_column(spec, 0), "samples_per_s", by, o->plot_path);
        if (prc) status = prc;
    }
done:
    plt_csv_free(&t);
    unlink(path);
    return status;
}
