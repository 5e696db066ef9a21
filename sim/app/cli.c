/* cli.c — subcommand table and top-level options of the epochsim command line. */
#include "sim/app/cli.h"

#include "sim/app/calibrate_cmd.h"
#include "sim/app/demo_cmd.h"
#include "sim/app/model_cmd.h"
#include "sim/app/plot_cmd.h"
#include "sim/app/hw_cmd.h"
#include "sim/base/outfile.h"
#include "sim/app/run_cmd.h"
#include "sim/app/sweep_cmd.h"
#include "sim/app/trace_cmd.h"
#include "sim/app/validate_cmd.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const sim_cli_command commands[] = {
    {"run", sim_run_cmd, "simulate one experiment (default: the built-in scenario)"},
    {"hw", sim_hw_cmd, "list and show the hardware catalog (GPUs, CPUs, storage, links, systems)"},
    {"model", sim_model_cmd, "model zoo: parameters, FLOPs, kernels and memory of a training step"},
    {"import", sim_import_cmd, "convert a PyTorch profiler (Kineto) trace into a native trace"},
    {"trace", sim_trace_cmd, "show a native trace's header and per-step summary"},
    {"sweep", sim_sweep_cmd, "run an experiment over a grid of keys and hardware; CSV/JSONL rows"},
    {"plot", sim_plot_cmd, "plot columns of a sweep CSV with gnuplot (PNG, SVG or text)"},
    {"validate", sim_validate_cmd, "error of the predictions against the published accuracy table"},
    {"calibrate", sim_calibrate_cmd, "fit a GPU's catalog fields to kernels recorded on it"},
    {"demo", sim_demo_cmd, "classroom demos: one lesson each, before and after a change"},
    {0},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: epochsim [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
    for (const sim_cli_command *c = commands; c->name; c++)
        fprintf(out, "  %-10s %s\n", c->name, c->summary);
    fprintf(out, "\nRun `epochsim COMMAND --help` for a command's options and examples.\n"
                 "Exit codes: 0 ok, 1 simulation or config error, 2 usage error.\n");
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return SIM_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("epochsim %s\n", EPOCHSIM_VERSION);
        return SIM_EXIT_OK;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return SIM_EXIT_OK;
    }
    for (const sim_cli_command *c = commands; c->name; c++)
        if (!strcmp(argv[1], c->name)) return c->run(argc - 1, argv + 1);
    fprintf(stderr, "epochsim: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return SIM_EXIT_USAGE;
}

/* SIGINT, SIGTERM, SIGHUP: remove the temporary files of unfinished outputs and exit 128 + the
 * signal's number, as a shell reports a killed command (130 for Ctrl-C), leaving no output file
 * behind. `sweep` installs its own handlers while it runs (a clean stop that --resume continues).
 */
static void on_interrupt(int sig)
{
    sim_outfile_cleanup();
    _exit(128 + sig);
}

static void catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int sim_cli_main(int argc, char **argv)
{
    catch_interrupts();
    int status = dispatch(argc, argv);
    /* Data on stdout that did not arrive (a full disk, a closed pipe) is a failed command. */
    if (sim_outfile_close_stdout() && status == SIM_EXIT_OK) status = SIM_EXIT_ERROR;
    return status;
}
