/* run_cli.c — `epochsim run [FILE] [--set k=v]... [--json PATH|-] [--util-csv PATH]`. */
#include "sim/run_cli.h"

#include "sim/cli.h"
#include "sim/report.h"
#include "sim/scenario.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: epochsim run [FILE] [--set KEY=VALUE]... [--json PATH|-] [--util-csv PATH]\n"
            "                    [--catalog DIR] [--quiet]\n\n"
            "Simulates the training job of experiment FILE (YAML), or the built-in default\n"
            "scenario (ResNet-50-like synthetic job, ImageNet-sized, on an A100 box) without one.\n\n"
            "  --set KEY=VALUE   override any experiment key (repeatable), e.g. loader.num_workers=4\n"
            "  --json PATH|-     write the figures as JSON (- = stdout; the summary goes to stderr)\n"
            "  --util-csv PATH   write the GPU-Util series per NVML window (nvidia-smi dmon style)\n"
            "  --catalog DIR     hardware catalog (default $EPOCHSIM_CATALOG or the built-in one)\n"
            "  --quiet           no terminal summary\n\n"
            "examples:\n"
            "  epochsim run\n"
            "  epochsim run --set loader.num_workers=16 --set training.epochs=2\n"
            "  epochsim run configs/experiments/launch-bound.yaml --json -\n");
}

int sim_run_cli(int argc, char **argv)
{
    static const struct option opts[] = {
        {"set", required_argument, 0, 's'},      {"json", required_argument, 0, 'j'},
        {"util-csv", required_argument, 0, 'u'}, {"catalog", required_argument, 0, 'c'},
        {"quiet", no_argument, 0, 'q'},          {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *json = NULL, *util_csv = NULL, *catalog = NULL;
    bool quiet = false;
    char **sets = calloc((size_t)argc, sizeof *sets);
    int n_sets = 0, c;
    if (!sets)
        return SIM_EXIT_ERROR;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+s:j:u:c:qh", opts, NULL)) != -1) {
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
        case 'h':
            usage(stdout);
            free(sets);
            return SIM_EXIT_OK;
        default:
            fprintf(stderr, "epochsim run: bad option '%s'\n", argv[optind - 1]);
            usage(stderr);
            free(sets);
            return SIM_EXIT_USAGE;
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "epochsim run: one experiment file at most\n");
        free(sets);
        return SIM_EXIT_USAGE;
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
    sim_scenario sc;
    memset(&sc, 0, sizeof sc);
    if (!rc)
        rc = sim_scenario_build(&x, &set, sim_cli_catalog_dir(catalog), &sc, &err);
    sim_result res;
    memset(&res, 0, sizeof res);
    if (!rc)
        rc = sim_run(&sc, &res, &err);
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
    sim_scenario_free(&sc);
    return rc ? SIM_EXIT_ERROR : SIM_EXIT_OK;
}
