/* run_cmd.c — `epochsim run [FILE] [--set k=v]... [--json PATH|-] [--util-csv PATH]
 * [--timeline PATH [--timeline-steps N]] [--plot [KIND:]PATH]...`. */
#include "sim/app/run_cmd.h"

#include "plots/plt_run.h"
#include "sim/app/cli.h"
#include "sim/app/progress.h"
#include "sim/app/report.h"
#include "sim/setup/scenario.h"
#include "sim/core/timeline.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: epochsim run [FILE] [--set KEY=VALUE]... [--json PATH|-] [--util-csv PATH]\n"
            "                    [--timeline PATH [--timeline-steps N]] [--plot [KIND:]PATH]...\n"
            "                    [--catalog DIR] [--quiet]\n\n"
            "Simulates the training job of experiment FILE (YAML), or the built-in default\n"
            "scenario (ResNet-50-like synthetic job, ImageNet-sized, on an A100 box) without one.\n\n"
            "  --set KEY=VALUE   override any experiment key (repeatable), e.g. loader.num_workers=4\n"
            "  --json PATH|-     write the figures as JSON (- = stdout; the summary goes to stderr)\n"
            "  --util-csv PATH   write the GPU-Util series per NVML window (nvidia-smi dmon style)\n"
            "  --timeline PATH   write a Chrome-trace JSON of the first steps (open it in\n"
            "                    https://ui.perfetto.dev or chrome://tracing): DataLoader workers,\n"
            "                    pin-memory thread, main thread, storage, PCIe H2D/D2H, GPU stream\n"
            "  --timeline-steps N  steps recorded for --timeline and --plot timeline (default %d)\n"
            "  --plot [KIND:]PATH  draw a plot with gnuplot (repeatable); KIND util (GPU-Util, CPU\n"
            "                    util and loader queue depth over time) or timeline (Gantt chart of\n"
            "                    the first steps); without KIND the file name must start with\n"
            "                    util or timeline; .png or .svg\n"
            "  --catalog DIR     hardware catalog (default $EPOCHSIM_CATALOG or the built-in one)\n"
            "  --quiet           no terminal summary\n\n"
            "examples:\n"
            "  epochsim run\n"
            "  epochsim run --set loader.num_workers=16 --set training.epochs=2\n"
            "  epochsim run configs/experiments/launch-bound.yaml --json -\n"
            "  epochsim run --timeline run.json --timeline-steps 5\n"
            "  epochsim run --set loader.num_workers=2 --plot util.png --plot timeline.svg\n"
            "  epochsim run configs/experiments/hdd-bound.yaml --plot timeline:hdd-gantt.png\n",
            PLT_TIMELINE_STEPS_DEFAULT);
}

int sim_run_cmd(int argc, char **argv)
{
    static const struct option opts[] = {
        {"set", required_argument, 0, 's'},      {"json", required_argument, 0, 'j'},
        {"util-csv", required_argument, 0, 'u'}, {"catalog", required_argument, 0, 'c'},
        {"quiet", no_argument, 0, 'q'},          {"help", no_argument, 0, 'h'},
        {"timeline", required_argument, 0, 't'}, {"timeline-steps", required_argument, 0, 'n'},
        {"plot", required_argument, 0, 'p'},     {0, 0, 0, 0},
    };
    const char *json = NULL, *util_csv = NULL, *catalog = NULL, *timeline = NULL;
    long long tl_steps = PLT_TIMELINE_STEPS_DEFAULT;
    bool quiet = false;
    char **sets = calloc((size_t)argc, sizeof *sets);
    plt_run_plot *plots = calloc((size_t)argc, sizeof *plots);
    int n_sets = 0, n_plots = 0, c;
    bool want_tl = false, want_series = false;
    if (!sets || !plots) {
        free(sets);
        free(plots);
        return SIM_EXIT_ERROR;
    }
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "s:j:u:c:qh", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            sets[n_sets++] = optarg;
            break;
        case 'j':
            json = optarg;
            break;
        case 'u':
            util_csv = optarg;
            break;
        case 'c':
            catalog = optarg;
            break;
        case 'q':
            quiet = true;
            break;
        case 't':
            timeline = optarg;
            want_tl = true;
            break;
        case 'n': {
            char *end;
            errno = 0;
            tl_steps = strtoll(optarg, &end, 10);
            if (errno || end == optarg || *end || tl_steps < 1 || tl_steps > 1000000) {
                fprintf(stderr, "epochsim run: --timeline-steps wants a whole number from 1 to "
                                "1000000, not '%s'\n", optarg);
                goto usage_error;
            }
            break;
        }
        case 'p': {
            sim_err perr;
            sim_err_clear(&perr);
            if (plt_run_plot_parse(optarg, &plots[n_plots], &perr)) {
                fprintf(stderr, "epochsim run: --plot: ");
                sim_err_print(&perr, stderr);
                goto usage_error;
            }
            if (plots[n_plots].kind == PLT_RUN_TIMELINE)
                want_tl = true;
            else
                want_series = true;
            n_plots++;
            break;
        }
        case 'h':
            usage(stdout);
            free(sets);
            free(plots);
            return SIM_EXIT_OK;
        default:
            fprintf(stderr, "epochsim run: bad option '%s'\n", argv[optind - 1]);
            usage(stderr);
            goto usage_error;
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "epochsim run: one experiment file at most\n");
        goto usage_error;
    }
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err err;
    sim_err_clear(&err);
    sim_experiment_defaults(&x);
    int rc = 0;
    if (optind < argc)
        rc = cfg_experiment_load(argv[optind], &x, &set, &err);
    for (int i = 0; !rc && i < n_sets; i++)
        rc = cfg_experiment_apply(sets[i], &x, &set, &err);
    free(sets);
    sets = NULL;
    sim_scenario sc;
    memset(&sc, 0, sizeof sc);
    if (!rc)
        rc = sim_scenario_build(&x, &set, sim_cli_catalog_dir(catalog), &sc, &err);
    sim_result res;
    memset(&res, 0, sizeof res);
    sim_run_series series;
    memset(&series, 0, sizeof series);
    sim_run_opts ro = {0};
    if (!rc && want_tl) {
        ro.timeline = sim_timeline_create(tl_steps);
        if (!ro.timeline)
            rc = sim_err_set(&err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    if (want_series)
        ro.series = &series;
    sim_progress progress;
    sim_progress_begin(&progress, "simulating", quiet);
    ro.progress = sim_progress_update;
    ro.progress_ctx = &progress;
    if (!rc) {
        rc = sim_run_ex(&sc, &ro, &res, &err);
        if (rc == SIM_EBUDGET) /* the window the user chose made the series too long */
            cfg_experiment_locate(&set, "report.util_window_ns", rc, &err);
    }
    sim_progress_end(&progress);
    if (!rc && timeline)
        rc = sim_timeline_write_json(ro.timeline, timeline, &err);
    for (int i = 0; !rc && i < n_plots; i++)
        rc = plt_run_draw(&plots[i], &sc, &res, ro.series, ro.timeline, &err);
    if (!rc && json)
        rc = sim_report_json(json, &sc, &res, &err);
    if (!rc && util_csv)
        rc = sim_report_util_csv(util_csv, &res, &err);
    if (!rc && !quiet)
        sim_report_text(json && !strcmp(json, "-") ? stderr : stdout, &sc, &res);
    if (rc == SIM_EOOM && sc.memory.known) {
        /* Not simulated: the report of what does not fit is the answer. */
        sim_report_memory_text(stderr, &sc);
        if (json) {
            sim_err jerr;
            if (sim_report_json(json, &sc, NULL, &jerr))
                sim_err_print(&jerr, stderr);
        }
    }
    if (rc) {
        fputs("epochsim: ", stderr);
        sim_err_print(&err, stderr);
    }
    sim_result_free(&res);
    sim_run_series_free(&series);
    sim_timeline_destroy(ro.timeline);
    sim_scenario_free(&sc);
    free(plots);
    return rc ? SIM_EXIT_ERROR : SIM_EXIT_OK;
usage_error:
    free(sets);
    free(plots);
    return SIM_EXIT_USAGE;
}
