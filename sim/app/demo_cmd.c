/* demo_cmd.c — `epochsim demo list | NAME` (see demo_cmd.h). */
#include "sim/app/demo_cmd.h"

#include "plots/plt_demo.h"
#include "sim/app/app.h"
#include "sim/app/demo.h"
#include "sim/base/names.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: epochsim demo list\n"
                 "       epochsim demo NAME [--plot FILE] [--catalog DIR]\n\n"
                 "Classroom demos: each is an experiment file under configs/experiments that you\n"
                 "can copy and edit, and one change that teaches a lesson. `demo NAME` simulates\n"
                 "the experiment before and after the change and prints the figures side by side,\n"
                 "the verdict of each run and why the figures move.\n\n"
                 "options:\n"
                 "  --plot FILE    epoch time and GPU-Util of both runs as bars, or a study's\n"
                 "                 samples/s and GPU-Util curves (.png or .svg)\n"
                 "  --catalog DIR  hardware catalog (default $EPOCHSIM_CATALOG or built-in); the\n"
                 "                 experiments are read from DIR/../experiments\n\n"
                 "examples:\n"
                 "  epochsim demo list\n"
                 "  epochsim demo decode-bound --plot decode.png\n");
}

static void list(void)
{
    size_t n;
    const sim_demo *d = sim_demo_table(&n);
    printf("%-20s %-38s %s\n", "name", "experiment (configs/experiments)", "lesson");
    for (size_t i = 0; i < n; i++)
        printf("%-20s %-38s %s\n", d[i].name, d[i].file, d[i].lesson);
}

/* One row of the side-by-side table. */
static void row(const char *what, const sim_demo_side s[2], double a, double b, const char *fmt,
                bool gpu_util)
{
    char cell[2][32];
    for (int i = 0; i < 2; i++)
        if (s[i].oom)
            snprintf(cell[i], sizeof cell[i], "out of memory");
        else if (gpu_util && s[i].gpu_util_na)
            snprintf(cell[i], sizeof cell[i], "n/a (MIG)");
        else
            snprintf(cell[i], sizeof cell[i], fmt, i ? b : a);
    printf("  %-16s %-18s %-18s\n", what, cell[0], cell[1]);
}

static void print_demo(const sim_demo *d, const sim_demo_side s[2])
{
    printf("demo %s: %s\n", d->name, d->lesson);
    printf("  experiment  configs/experiments/%s%s%s\n", d->file, d->before ? " with " : "",
           d->before ? d->before : "");
    char change[160];
    printf("  change      %s\n\n", sim_demo_change(d, change, sizeof change));
    printf("  %-16s %-18s %-18s\n", "", "before", "after");
    row("time", s, s[0].time_s, s[1].time_s, "%.2f s", false);
    row("samples/s", s, s[0].samples_per_s, s[1].samples_per_s, "%.0f", false);
    row("GPU-Util", s, s[0].gpu_util_pct, s[1].gpu_util_pct, "%.1f %%", true);
    row("SM active", s, s[0].sm_active_pct, s[1].sm_active_pct, "%.1f %%", false);
    row("main thread busy", s, s[0].main_busy_pct, s[1].main_busy_pct, "%.1f %%", false);
    printf("  %-16s %-18s %-18s\n", "bottleneck", s[0].bottleneck, s[1].bottleneck);
    double gain = sim_demo_gain(s);
    if (gain > 0) printf("\n  the change makes the run %.2fx as fast\n", gain);
    printf("\n  before: %s\n  after:  %s\n\n  why: %s\n", s[0].message, s[1].message, d->explain);
}

static int draw(const char *path, const sim_demo *d, const sim_demo_side s[2], sim_err *err)
{
    char after[192], change[160], title[256];
    snprintf(after, sizeof after, "after: %s", sim_demo_change(d, change, sizeof change));
    const char *label[2] = {s[0].oom ? "before (out of memory)" : "before",
                            s[1].oom ? "after (out of memory)" : after};
    snprintf(title, sizeof title, "epochsim demo %s: %s", d->name, d->lesson);
    /* NVML has no GPU-Util on MIG: then both runs are drawn by SM active */
    bool mig = s[0].gpu_util_na || s[1].gpu_util_na;
    double t[2] = {s[0].time_s, s[1].time_s};
    double u[2] = {mig ? s[0].sm_active_pct : s[0].gpu_util_pct,
                   mig ? s[1].sm_active_pct : s[1].gpu_util_pct};
    return plt_demo_draw(path, title, label, t, u, mig ? "SM active [%]" : "GPU-Util [%]", err);
}

/* A study's table: one row per value of its key, then its gain and the verdicts at both ends. */
static void print_study(const sim_demo *d, const sim_demo_side *s, size_t n)
{
    const char *key = strrchr(d->vary, '.');
    int key_len = (int)strcspn(key ? key + 1 : d->vary, "=");
    printf("demo %s: %s\n", d->name, d->lesson);
    printf("  experiment  configs/experiments/%s%s%s\n", d->file, d->before ? " with " : "",
           d->before ? d->before : "");
    printf("  vary        %s\n\n", d->vary);
    printf("  %-12.*s %10s %10s %10s %10s %12s  %s\n", key_len, key ? key + 1 : d->vary, "time",
           "samples/s", "GPU-Util", "SM active", "main busy", "bottleneck");
    size_t last = 0;
    for (size_t i = 0; i < n; i++) {
        char v[64];
        printf("  %-12s ", sim_demo_study_value(d, i, v, sizeof v));
        if (s[i].oom) {
            printf("%10s\n", "out of memory");
            continue;
        }
        last = i;
        printf("%8.2f s %10.0f %8.1f %% %8.1f %% %10.1f %%  %s\n", s[i].time_s, s[i].samples_per_s,
               s[i].gpu_util_pct, s[i].sm_active_pct, s[i].main_busy_pct, s[i].bottleneck);
    }
    double gain = sim_demo_study_gain(s, n);
    if (gain > 0)
        printf("\n  the best value that fits gives %.2fx the samples/s of the first\n", gain);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || i == last || (i > last && s[i].oom)) {
            char v[64];
            printf("%s  %.*s=%s: %s\n", i ? "" : "\n", (int)strcspn(d->vary, "="), d->vary,
                   sim_demo_study_value(d, i, v, sizeof v), s[i].message);
        }
    printf("\n  why: %s\n", d->explain);
}

/* A study's picture: samples/s and GPU-Util against the key's value, the points that fit; the
 * first value that does not fit is named in the title. */
static int draw_study(const char *path, const sim_demo *d, const sim_demo_side *s, size_t n,
                      sim_err *err)
{
    double x[SIM_DEMO_MAX_POINTS], sps[SIM_DEMO_MAX_POINTS], util[SIM_DEMO_MAX_POINTS];
    size_t m = 0;
    bool mig = false;
    char v[64], oom[64] = "";
    for (size_t i = 0; i < n; i++) {
        sim_demo_study_value(d, i, v, sizeof v);
        if (s[i].oom) {
            if (!oom[0]) snprintf(oom, sizeof oom, "%s", v);
            continue;
        }
        x[m] = atof(v);
        sps[m] = s[i].samples_per_s;
        mig |= s[i].gpu_util_na;
        util[m++] = s[i].gpu_util_na ? s[i].sm_active_pct : s[i].gpu_util_pct;
    }
    int key_len = (int)strcspn(d->vary, "=");
    char title[512], xlabel[128];
    snprintf(title, sizeof title, "epochsim demo %s%s%.*s%s%s", d->name,
             oom[0] ? ": out of GPU memory from " : "", oom[0] ? key_len : 0, d->vary,
             oom[0] ? "=" : "", oom);
    snprintf(xlabel, sizeof xlabel, "%.*s", key_len, d->vary);
    return plt_demo_study_draw(path, title, xlabel, m, x, sps, util,
                               mig ? "SM active [%]" : "GPU-Util [%]", err);
}

/* Runs demo `name`; its figures to stdout, the picture to plot when given. */
static int run_demo(const char *name, const char *plot, const char *catalog)
{
    const sim_demo *d = sim_demo_find(name);
    if (!d) {
        size_t n;
        const sim_demo *t = sim_demo_table(&n);
        const char *names[64];
        for (size_t i = 0; i < n && i < 64; i++)
            names[i] = t[i].name;
        const char *near = sim_nearest_name(name, names, n < 64 ? n : 64);
        fprintf(stderr, "epochsim demo: no demo '%s'%s%s%s; `epochsim demo list` names them\n",
                name, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
        return SIM_EXIT_USAGE;
    }
    const char *cat = sim_app_catalog_dir(catalog);
    char dir[4096];
    sim_demo_side s[SIM_DEMO_MAX_POINTS];
    size_t n = 2;
    sim_err err;
    sim_err_clear(&err);
    sim_demo_dir(cat, dir, sizeof dir);
    int rc =
        d->vary ? sim_demo_study(d, dir, cat, s, &n, &err) : sim_demo_run(d, dir, cat, s, &err);
    if (!rc) d->vary ? print_study(d, s, n) : print_demo(d, s);
    if (!rc && plot) rc = d->vary ? draw_study(plot, d, s, n, &err) : draw(plot, d, s, &err);
    if (rc) {
        fputs("epochsim: ", stderr);
        sim_err_print(&err, stderr);
        return SIM_EXIT_ERROR;
    }
    return SIM_EXIT_OK;
}

int sim_demo_cmd(int argc, char **argv)
{
    static const struct option opts[] = {
        {"plot", required_argument, 0, 'p'},
        {"catalog", required_argument, 0, 'c'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *plot = NULL, *catalog = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            plot = optarg;
            break;
        case 'c':
            catalog = optarg;
            break;
        case 'h':
            usage(stdout);
            return SIM_EXIT_OK;
        default:
            fprintf(stderr, "epochsim demo: bad option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return SIM_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return SIM_EXIT_USAGE;
    }
    if (!strcmp(argv[optind], "list")) {
        list();
        return SIM_EXIT_OK;
    }
    return run_demo(argv[optind], plot, catalog);
}
