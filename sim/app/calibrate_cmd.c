/* calibrate_cmd.c — `epochsim calibrate --trace T.trace ... [-o OVERLAY]` (see calibrate_cmd.h
 * and sim/setup/calibrate.h) and `epochsim calibrate --runs RUNS.csv ...` (measured training
 * runs, sim/app/calibrate_runs.h). stdout = the report (text, or JSON with --json -); stderr =
 * errors. */
#include "sim/app/calibrate_cmd.h"

#include "sim/app/calibrate_runs.h"
#include "sim/app/app.h"
#include "sim/base/json.h"
#include "sim/base/outfile.h"
#include "sim/setup/calibrate.h"
#include "sim/setup/catalog.h"
#include "sim/setup/replay_workload.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

/* Fitted when no --param is given: the cost model's fixed cost per kernel and the achieved
 * ceilings it scales (docs/kernel-cost.md names what each one means). Those no recorded kernel
 * depends on (e.g. tensor rates in an FP32 trace on a V100) are left out with a note. */
static const char *const default_params[] = {
    "kernel_overhead_us", "mem_bw_gbps", "fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops",
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: epochsim calibrate --trace FILE [--trace FILE]... [--gpu NAME]\n"
            "                          [--param FIELD]... [--check FILE]... [-o OVERLAY]\n"
            "                          [--json PATH|-] [--catalog DIR]\n"
            "       epochsim calibrate --runs FILE.csv [--runs FILE.csv]... [--gpu NAME]\n"
            "                          [--param FIELD]... [--check-runs FILE.csv]... [-o OVERLAY]\n"
            "                          [--json PATH|-] [--catalog DIR]\n\n"
            "Fits number fields of a GPU's catalog entry to the kernels recorded on that GPU\n"
            "(PyTorch-profiler .json[.gz] or native traces, recorded with record_shapes so that\n"
            "kernels' work is known), by GSL nonlinear least squares on the log ratio of\n"
            "predicted to measured kernel time, each kernel weighted by its share of the time,\n"
            "with the kernels' total held to about a percent.\n"
            "Prints each field's start, fitted value and standard error, the residuals, and the\n"
            "error of the traces' kernel time before and after; --check traces are left out of\n"
            "the fit and only measured.\n\n"
            "With --runs, fits them to whole runs measured on the GPU instead: CSV files in\n"
            "the format `epochsim validate` reads (tests/data/published), columns\n"
            "  " SIM_VAL_COLUMNS "\n"
            "with metric samples_per_s, step_ms (training) or inference_ms, all on one GPU.\n"
            "Each row is predicted as validate predicts it, on the trial values; the fit\n"
            "minimises the sum of ln(predicted / measured)^2 over the rows, each weighted\n"
            "equally.\n\n"
            "  --trace FILE    a trace recorded on the GPU (repeatable)\n"
            "  --gpu NAME      the GPU's catalog name (default: matched from the first trace)\n"
            "  --param FIELD   a number field of the GPU entry to fit (repeatable; default:\n"
            "                  kernel_overhead_us and the peak rates and bandwidth the traces\n"
            "                  or the runs' precisions use)\n"
            "  --check FILE    a held-out trace on the same GPU: reported, not fitted\n"
            "  --runs FILE     measured training runs on the GPU, CSV (repeatable)\n"
            "  --check-runs FILE  held-out runs on the same GPU: reported, not fitted\n"
            "  -o OVERLAY      write the fitted fields as a catalog overlay (YAML)\n"
            "  --json PATH|-   the report as JSON\n"
            "  --catalog DIR   hardware catalog (default $EPOCHSIM_CATALOG or the built-in one)\n\n"
            "examples:\n"
            "  epochsim calibrate --trace worker0.pt.trace.json.gz -o my-gpu.yaml\n"
            "  epochsim run exp.yaml --set system.catalog_overlay=my-gpu.yaml\n"
            "  epochsim calibrate --trace a.trace --check b.trace --param kernel_overhead_us\n"
            "  epochsim calibrate --runs my-runs.csv --check-runs held-out.csv -o my-gpu.yaml\n");
}

typedef struct cal_args {
    const char *traces[64], *checks[64], *params[MDL_FIT_MAX_PARAMS];
    int n_traces, n_checks, n_params;
    sim_cal_runs_args runs; /* --runs, --check-runs */
    const char *gpu, *overlay, *json, *catalog;
} cal_args;

/* One mode, traces or runs, with its own held-out option; returns 0 or SIM_EXIT_USAGE. */
static int check_modes(int argc, const cal_args *a)
{
    const char *why = optind < argc ? "unexpected argument (traces go after --trace)"
                      : a->n_traces && a->runs.n_runs
                          ? "--trace and --runs do not mix: calibrate from kernels or from runs"
                      : a->n_traces && a->runs.n_checks ? "--check-runs goes with --runs"
                      : a->runs.n_runs && a->n_checks   ? "--check goes with --trace"
                      : !a->n_traces && !a->runs.n_runs ? "give at least one --trace or --runs"
                                                        : NULL;
    if (!why) return 0;
    fprintf(stderr, "epochsim calibrate: %s\n", why);
    usage(stderr);
    return SIM_EXIT_USAGE;
}

/* Parses the options into a; returns 0, SIM_EXIT_USAGE (message printed) or -1 for --help. */
static int parse(int argc, char **argv, cal_args *a)
{
    static const struct option opts[] = {
        {"trace", required_argument, 0, 't'},
        {"check", required_argument, 0, 'k'},
        {"param", required_argument, 0, 'p'},
        {"gpu", required_argument, 0, 'g'},
        {"output", required_argument, 0, 'o'},
        {"json", required_argument, 0, 'j'},
        {"catalog", required_argument, 0, 'c'},
        {"help", no_argument, 0, 'h'},
        {"runs", required_argument, 0, 'r'},
        {"check-runs", required_argument, 0, 'R'},
        {0, 0, 0, 0},
    };
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        const char **slot = NULL;
        int *n = NULL, cap = 0;
        switch (c) {
        case 't':
            slot = a->traces;
            n = &a->n_traces;
            cap = 64;
            break;
        case 'k':
            slot = a->checks;
            n = &a->n_checks;
            cap = 64;
            break;
        case 'p':
            slot = a->params;
            n = &a->n_params;
            cap = MDL_FIT_MAX_PARAMS;
            break;
        case 'r':
            slot = a->runs.runs;
            n = &a->runs.n_runs;
            cap = 64;
            break;
        case 'R':
            slot = a->runs.checks;
            n = &a->runs.n_checks;
            cap = 64;
            break;
        case 'g':
            a->gpu = optarg;
            break;
        case 'o':
            a->overlay = optarg;
            break;
        case 'j':
            a->json = optarg;
            break;
        case 'c':
            a->catalog = optarg;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            fprintf(stderr, "epochsim calibrate: bad option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return SIM_EXIT_USAGE;
        }
        if (slot) {
            if (*n == cap) {
                fprintf(stderr, "epochsim calibrate: at most %d of '%s'\n", cap, argv[optind - 2]);
                return SIM_EXIT_USAGE;
            }
            slot[(*n)++] = optarg;
        }
    }
    return check_modes(argc, a);
}

/* The GPU's catalog name: --gpu, else the first trace's recorded GPU matched to the catalog. */
static void find_gpu(const cal_args *a, const cal_set *data, char *name)
{
    if (a->gpu)
        snprintf(name, SIM_NAME_MAX, "%s", a->gpu);
    else
        trc_replay_gpu_candidate(data->gpu_name, name);
}

static int load_traces(const char *const *paths, int n, cal_set *out, sim_err *err)
{
    for (int i = 0; i < n; i++) {
        int rc = cal_add_trace(paths[i], out, err);
        if (rc) return rc;
    }
    return SIM_OK;
}

/* The fitted fields: --param's, or the defaults the data depends on (others noted). */
static int choose_params(const cal_args *a, cal_problem *pr, sim_err *err)
{
    for (int i = 0; i < a->n_params; i++) {
        int rc = cal_add_param(pr, a->params[i], err);
        if (rc) return rc;
    }
    for (size_t i = 0; a->n_params == 0 && i < sizeof default_params / sizeof *default_params;
         i++) {
        sim_err skip;
        if (cal_add_param(pr, default_params[i], &skip))
            fprintf(stderr, "epochsim calibrate: not fitted: %s\n", skip.msg);
    }
    if (pr->p == 0) return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "nothing to fit");
    return SIM_OK;
}

typedef struct cal_report {
    const cal_args *a;
    const cal_problem *pr;
    const mdl_fit_result *fit;
    const cal_set *checks; /* one set per --check */
} cal_report;

static void print_text(FILE *out, const cal_report *r)
{
    const cal_problem *pr = r->pr;
    fprintf(out,
            "calibrate %s on %d trace(s): %zu kernels fitted (%zu without known work left "
            "out)\n\n",
            pr->gpu.name, r->a->n_traces, pr->data->n, pr->data->skipped);
    cal_print_fit(out, pr, r->fit, "weighted log residual");
    fprintf(out, "kernel time of the fitted traces: %+.1f %% -> %+.1f %%\n",
            100 * cal_total_error(pr, pr->data, NULL),
            100 * cal_total_error(pr, pr->data, r->fit->theta));
    for (int i = 0; i < r->a->n_checks; i++) {
        if (r->checks[i].n == 0)
            fprintf(out, "held out %s: no kernel with known work (recorded without shapes?)\n",
                    r->a->checks[i]);
        else
            fprintf(out, "held out %s (%zu kernels): %+.1f %% -> %+.1f %%\n", r->a->checks[i],
                    r->checks[i].n, 100 * cal_total_error(pr, &r->checks[i], NULL),
                    100 * cal_total_error(pr, &r->checks[i], r->fit->theta));
    }
    if (r->a->overlay)
        fprintf(out, "\noverlay: %s (use it: --set system.catalog_overlay=%s)\n", r->a->overlay,
                r->a->overlay);
}

static void json_error_pair(yajl_gen g, const char *key, const cal_problem *pr, const cal_set *data,
                            const double *theta)
{
    sim_json_key(g, key);
    yajl_gen_map_open(g);
    sim_json_num(g, "before_pct", 100 * cal_total_error(pr, data, NULL));
    sim_json_num(g, "after_pct", 100 * cal_total_error(pr, data, theta));
    yajl_gen_map_close(g);
}

static int write_json(const char *path, const cal_report *r, sim_err *err)
{
    yajl_gen g = sim_json_doc_open(err);
    if (!g) return SIM_ENOMEM;
    const cal_problem *pr = r->pr;
    sim_json_str(g, "gpu", pr->gpu.name);
    sim_json_int(g, "kernels", (long long)pr->data->n);
    sim_json_int(g, "kernels_left_out", (long long)pr->data->skipped);
    cal_json_fit(g, pr, r->fit);
    json_error_pair(g, "kernel_time_error", pr, pr->data, r->fit->theta);
    sim_json_key(g, "held_out");
    yajl_gen_array_open(g);
    for (int i = 0; i < r->a->n_checks; i++) {
        yajl_gen_map_open(g);
        sim_json_str(g, "trace", r->a->checks[i]);
        json_error_pair(g, "kernel_time_error", pr, &r->checks[i], r->fit->theta);
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    yajl_gen_map_close(g);
    int rc = sim_json_write(g, path, err);
    yajl_gen_free(g);
    return rc;
}

/* Loads, fits and reports; the sets are freed by the caller. */
static int calibrate(const cal_args *a, cal_set *data, cal_set *checks, sim_err *err)
{
    cal_problem pr = {.data = data};
    char gpu[SIM_NAME_MAX];
    int rc = load_traces(a->traces, a->n_traces, data, err);
    if (!rc) {
        find_gpu(a, data, gpu);
        rc = cfg_catalog_load(sim_app_catalog_dir(a->catalog), CFG_CAT_GPU, gpu, &pr.gpu, err);
    }
    for (int i = 0; !rc && i < a->n_checks; i++)
        rc = cal_add_trace(a->checks[i], &checks[i], err);
    if (!rc) rc = choose_params(a, &pr, err);
    mdl_fit_result fit;
    if (!rc) rc = cal_fit(&pr, &fit, err);
    if (rc) return rc;
    cal_report r = {.a = a, .pr = &pr, .fit = &fit, .checks = checks};
    if (a->overlay) {
        char header[256];
        snprintf(header, sizeof header,
                 "catalog overlay written by `epochsim calibrate` for %s from %d trace(s)",
                 pr.gpu.name, a->n_traces);
        if ((rc = cal_write_overlay(a->overlay, &pr, &fit, header, err))) return rc;
    }
    if (a->json) return write_json(a->json, &r, err);
    print_text(stdout, &r);
    return SIM_OK;
}

int sim_calibrate_cmd(int argc, char **argv)
{
    cal_args a = {0};
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? SIM_EXIT_OK : rc;
    cal_set data = {0}, checks[64];
    memset(checks, 0, sizeof checks);
    sim_err err;
    sim_err_clear(&err);
    if (a.runs.n_runs) {
        a.runs.params = a.params, a.runs.n_params = a.n_params, a.runs.gpu = a.gpu;
        a.runs.catalog = sim_app_catalog_dir(a.catalog);
        a.runs.overlay = a.overlay, a.runs.json = a.json;
        rc = sim_cal_runs_main(&a.runs, &err);
    } else
        rc = calibrate(&a, &data, checks, &err);
    cal_set_free(&data);
    for (int i = 0; i < a.n_checks; i++)
        cal_set_free(&checks[i]);
    if (rc) {
        fprintf(stderr, "epochsim: ");
        sim_err_print(&err, stderr);
        return SIM_EXIT_ERROR;
    }
    return SIM_EXIT_OK;
}
