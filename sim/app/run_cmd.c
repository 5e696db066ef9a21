/* run_cmd.c — `epochsim run [FILE] [--set k=v]... [--json PATH|-] [--util-csv PATH]
 * [--timeline PATH [--timeline-steps N] [--timeline-from S]] [--plot [KIND:]PATH]...
 * [--sampled[=PCT]] [--no-advice]`: one run, then, unless told not to, the advice for its
 * bottleneck, each change checked by simulating it. */
#include "sim/app/run_cmd.h"

#include "plots/plt_run.h"
#include "sim/app/app.h"
#include "sim/app/progress.h"
#include "sim/app/report.h"
#include "sim/app/whatif.h"
#include "sim/setup/jobs.h"
#include "sim/setup/scenario.h"
#include "sim/core/timeline.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: epochsim run [FILE] [--set KEY=VALUE]... [--json PATH|-] [--util-csv PATH]\n"
        "                    [--timeline PATH [--timeline-steps N] [--timeline-from S]]\n"
        "                    [--plot [KIND:]PATH]...\n"
        "                    [--vary KEY=V1,V2,...]... [--sampled[=PCT]] [--catalog DIR]\n"
        "                    [--no-advice] [--quiet]\n\n"
        "Simulates the training job of experiment FILE (YAML), or the built-in default\n"
        "scenario (ResNet-50-like synthetic job, ImageNet-sized, on an A100 box) without one.\n\n"
        "  --set KEY=VALUE   override any experiment key (repeatable), e.g. loader.num_workers=4\n"
        "  --json PATH|-     write the figures as JSON (- = stdout; the summary goes to stderr)\n"
        "  --util-csv PATH   write the GPU-Util series per NVML window (nvidia-smi dmon style)\n"
        "  --timeline PATH   write a Chrome-trace JSON of the first steps (open it in\n"
        "                    https://ui.perfetto.dev or chrome://tracing): DataLoader workers,\n"
        "                    pin-memory thread, main thread, storage, PCIe H2D/D2H, GPU stream\n"
        "  --timeline-steps N  steps recorded for --timeline and --plot timeline (default %d)\n"
        "  --timeline-from S   record from global step S instead of 0 (skip the warm-up)\n"
        "  --plot [KIND:]PATH  draw a plot with gnuplot (repeatable); KIND util (GPU-Util, CPU\n"
        "                    util and loader queue depth over time) or timeline (Gantt chart of\n"
        "                    the first steps); without KIND the file name must start with\n"
        "                    util or timeline; .png or .svg\n"
        "  --vary KEY=V1,V2  what-if study: run the experiment once per value (repeatable: the\n"
        "                    grid product; a FILE with a `sweep:` block does the same), print a\n"
        "                    table of the figures, and with --plot PATH (.png/.svg) draw\n"
        "                    samples/s against the first key, one line per value of the second\n"
        "  --sampled[=PCT]   sampled mode, for large studies: simulate each epoch only until\n"
        "                    the 95 %% interval of its time is +-PCT %% (default %s), then\n"
        "                    extrapolate its steady steps; the report gives the interval, or\n"
        "                    says why an epoch was simulated to its end (docs/sampled.md)\n"
        "  --catalog DIR     hardware catalog (default $EPOCHSIM_CATALOG or the built-in one)\n"
        "  --no-advice       skip the advice: by default the changes that address the\n"
        "                    bottleneck (workers, prefetch, pinned copies, CUDA graphs, batch)\n"
        "                    are each simulated, and those that raise samples/s are listed\n"
        "  --quiet           no terminal summary\n\n"
        "examples:\n"
        "  epochsim run\n"
        "  epochsim run --set loader.num_workers=16 --set training.epochs=2\n"
        "  epochsim run configs/experiments/launch-bound.yaml --json -\n"
        "  epochsim run --timeline run.json --timeline-steps 5\n"
        "  epochsim run --set loader.num_workers=2 --plot util.png --plot timeline.svg\n"
        "  epochsim run configs/experiments/hdd-bound.yaml --plot timeline:hdd-gantt.png\n"
        "  epochsim run --vary loader.batch_size=64,128,256 --set training.max_steps=100 \\\n"
        "      --plot batch.png\n"
        "  epochsim run --sampled --set training.epochs=3\n",
        PLT_TIMELINE_STEPS_DEFAULT, SIM_APP_SAMPLED_PCT);
}

static const struct option run_opts[] = {
    {"set", required_argument, 0, 's'},      {"json", required_argument, 0, 'j'},
    {"util-csv", required_argument, 0, 'u'}, {"catalog", required_argument, 0, 'c'},
    {"quiet", no_argument, 0, 'q'},          {"help", no_argument, 0, 'h'},
    {"timeline", required_argument, 0, 't'}, {"timeline-steps", required_argument, 0, 'n'},
    {"plot", required_argument, 0, 'p'},     {"no-advice", no_argument, 0, 'A'},
    {"vary", required_argument, 0, 'V'},     {"timeline-from", required_argument, 0, 'F'},
    {"sampled", optional_argument, 0, 'S'},  {0, 0, 0, 0},
};

/* The command line. */
typedef struct run_args {
    const char *json, *util_csv, *catalog, *timeline;
    long long tl_steps, tl_from;
    bool quiet;
    bool no_advice;
    bool sampled;            /* --sampled[=PCT] */
    const char *sampled_pct; /* its PCT; NULL = the default */
    char **sets;             /* --set values (argc of room) */
    char **plot_args;        /* --plot values as given (argc of room) */
    char **varies;           /* --vary values (argc of room) */
    plt_run_plot *plots;     /* --plot values of a single run, parsed (argc of room) */
    int n_sets, n_plots, n_varies;
    bool want_tl;     /* a timeline is recorded (--timeline or a timeline plot) */
    bool want_series; /* the run's series are kept (a series plot) */
} run_args;

/* optarg as a whole number in [lo, hi] into *v; 0 or SIM_EXIT_USAGE naming opt. */
static int whole_number(const char *opt, long long lo, long long hi, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(optarg, &end, 10);
    if (errno || end == optarg || *end || *v < lo || *v > hi) {
        fprintf(stderr, "epochsim run: %s wants a whole number from %lld to %lld, not '%s'\n", opt,
                lo, hi, optarg);
        return SIM_EXIT_USAGE;
    }
    return 0;
}

/* Option c of getopt_long (its value in optarg) into a; returns 0, -1 after --help, or
 * SIM_EXIT_USAGE. */
static int run_option(int c, char **argv, run_args *a)
{
    switch (c) {
    case 's':
        a->sets[a->n_sets++] = optarg;
        break;
    case 'j':
        a->json = optarg;
        break;
    case 'u':
        a->util_csv = optarg;
        break;
    case 'c':
        a->catalog = optarg;
        break;
    case 'q':
        a->quiet = true;
        break;
    case 'A':
        a->no_advice = true;
        break;
    case 't':
        a->timeline = optarg;
        a->want_tl = true;
        break;
    case 'n':
        return whole_number("--timeline-steps", 1, 1000000, &a->tl_steps);
    case 'F':
        return whole_number("--timeline-from", 0, 1000000000000LL, &a->tl_from);
    case 'p':
        a->plot_args[a->n_plots++] = optarg;
        break;
    case 'V':
        a->varies[a->n_varies++] = optarg;
        break;
    case 'S':
        a->sampled = true;
        a->sampled_pct = optarg;
        break;
    case 'h':
        usage(stdout);
        return -1;
    default:
        fprintf(stderr, "epochsim run: bad option '%s'\n", argv[optind - 1]);
        usage(stderr);
        return SIM_EXIT_USAGE;
    }
    return 0;
}

/* The --plot values of a single run: KIND:PATH or a PATH naming its kind. Returns 0 or
 * SIM_EXIT_USAGE. */
static int parse_plots(run_args *a)
{
    for (int i = 0; i < a->n_plots; i++) {
        sim_err perr;
        sim_err_clear(&perr);
        if (plt_run_plot_parse(a->plot_args[i], &a->plots[i], &perr)) {
            fprintf(stderr, "epochsim run: --plot: ");
            sim_err_print(&perr, stderr);
            return SIM_EXIT_USAGE;
        }
        if (a->plots[i].kind == PLT_RUN_TIMELINE)
            a->want_tl = true;
        else
            a->want_series = true;
    }
    return 0;
}

/* The options into a; returns as run_option. */
static int parse_run_args(int argc, char **argv, run_args *a)
{
    int c, rc;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "s:j:u:c:qh", run_opts, NULL)) != -1)
        if ((rc = run_option(c, argv, a))) return rc;
    if (argc - optind > 1) {
        fprintf(stderr, "epochsim run: one experiment file at most\n");
        return SIM_EXIT_USAGE;
    }
    return 0;
}

/* Top-level keys of an experiment file besides the experiment's own. */
static const char *const run_extra_keys[] = {"sweep", "jobs", NULL};

/* The experiment file (NULL: none) with --set applied, what it varies (its `sweep:` block and the
 * --vary axes) and its `jobs:` list. */
static int load_experiment(const char *file, const run_args *a, sim_experiment *x,
                           cfg_experiment_set *set, sim_sweep_spec *spec, cfg_jobs *jobs,
                           sim_err *err)
{
    sim_experiment_defaults(x);
    int rc = 0;
    if (file) rc = cfg_experiment_load_with(file, run_extra_keys, x, set, err);
    if (!rc && file) rc = sim_sweep_spec_load(spec, file, err);
    for (int i = 0; !rc && i < a->n_sets; i++)
        rc = cfg_experiment_apply(a->sets[i], x, set, err);
    if (!rc && a->sampled) rc = sim_app_sampled(a->sampled_pct, x, set, err);
    for (int i = 0; !rc && i < a->n_varies; i++)
        if ((rc = sim_sweep_spec_add(spec, a->varies[i], 0, err))) /* named as the user wrote it */
            snprintf(err->where, sizeof err->where, "--vary %s", a->varies[i]);
    if (!rc) rc = sim_sweep_spec_check(spec, err);
    if (!rc && file) rc = cfg_jobs_load(file, x, set, jobs, err);
    if (!rc && jobs->n && spec->n_grid + spec->n_zip + spec->n_hw > 0)
        rc = sim_err_set(err, SIM_EINVAL, file, 0, 0,
                         "a `jobs:` list runs once: --vary and a sweep: block are for one job");
    return rc;
}

/* The jobs of a `jobs:` list at once on the file's system: the per-job table, --json. */
static int jobs_run(const run_args *a, const cfg_jobs *jobs, const sim_experiment *x,
                    const cfg_experiment_set *set)
{
    if (a->util_csv || a->timeline || a->n_plots) {
        fprintf(stderr, "epochsim run: a `jobs:` list takes --json and --quiet; --util-csv, "
                        "--timeline and --plot are for a single job\n");
        return SIM_EXIT_USAGE;
    }
    for (int j = 0; j < jobs->n; j++)
        if (jobs->job[j].x.run.sampled_pct > 0) {
            fprintf(stderr,
                    "epochsim run: --sampled does not support jobs: yet (run.sampled_pct "
                    "%g for job '%s'): a cut epoch would leave the shared hardware early "
                    "and the other jobs' steps would be timed without it\n",
                    jobs->job[j].x.run.sampled_pct, jobs->job[j].name);
            return SIM_EXIT_USAGE;
        }
    sim_err err;
    sim_err_clear(&err);
    sim_jobs_setup js = {0};
    sim_jobs_result res = {0};
    const char **names = calloc((size_t)jobs->n, sizeof *names);
    int rc = names ? sim_jobs_build(jobs, x, set, sim_app_catalog_dir(a->catalog), &js, &err)
                   : sim_err_set(&err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    if (!rc) rc = sim_run_jobs(&js.system, js.slot, js.n, &js.share, &res, &err);
    for (int j = 0; names && j < jobs->n; j++)
        names[j] = jobs->job[j].name;
    sim_report_jobs jr = {&js.system, js.sc, names, (const int(*)[SIM_INT_LIST_MAX])js.gpus,
                          js.share.mode};
    if (!rc && a->json) rc = sim_report_jobs_json(a->json, &jr, &res, &err);
    if (!rc && !a->quiet)
        sim_report_jobs_text(a->json && !strcmp(a->json, "-") ? stderr : stdout, &jr, &res);
    if (rc) {
        fputs("epochsim: ", stderr);
        sim_err_print(&err, stderr);
    }
    sim_jobs_result_free(&res);
    sim_jobs_setup_free(&js);
    free(names);
    return rc ? SIM_EXIT_ERROR : SIM_EXIT_OK;
}

/* The what-if study of spec: outputs of a single run are refused, one plot path is allowed. */
static int what_if(const run_args *a, const sim_sweep_spec *spec, const sim_experiment *x,
                   const cfg_experiment_set *set)
{
    if (a->json || a->util_csv || a->timeline || a->n_plots > 1) {
        fprintf(stderr, "epochsim run: --vary or a sweep: block runs several points: --json, "
                        "--util-csv and --timeline are for one run (use `epochsim sweep -o` for "
                        "every figure), and one --plot PATH draws the curve\n");
        return SIM_EXIT_USAGE;
    }
    sim_whatif_opts o = {.catalog_dir = sim_app_catalog_dir(a->catalog),
                         .plot_path = a->n_plots ? a->plot_args[0] : NULL,
                         .quiet = a->quiet};
    return sim_whatif_run(spec, x, set, &o);
}

/* Runs the scenario (when rc is 0) with the recorders the outputs want, under a progress line. */
static int simulate(int rc, const run_args *a, const cfg_experiment_set *set,
                    const sim_scenario *sc, sim_run_opts *ro, sim_run_series *series,
                    sim_result *res, sim_err *err)
{
    if (!rc && a->want_tl) {
        ro->timeline = sim_timeline_create_from(a->tl_from, a->tl_steps);
        if (!ro->timeline) rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    if (a->want_series) ro->series = series;
    sim_progress progress;
    sim_progress_begin(&progress, "simulating", a->quiet);
    ro->progress = sim_progress_update;
    ro->progress_ctx = &progress;
    if (!rc) {
        rc = sim_run_ex(sc, ro, res, err);
        if (rc == SIM_EBUDGET) /* the window the user chose made the series too long */
            cfg_experiment_locate(set, "report.util_window_ns", rc, err);
        /* A window from a later step opens when its step begins, never at 0. */
        if (!rc && a->tl_from > 0 && sim_timeline_begin_ns(ro->timeline) == 0)
            rc = sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                             "--timeline-from %lld: the run never reaches that step (it has %lld "
                             "steps)",
                             a->tl_from, (long long)res->steps);
    }
    sim_progress_end(&progress);
    return rc;
}

/* The timeline, plots, JSON, utilisation CSV and text report that a asks for. */
static int write_outputs(const run_args *a, const sim_scenario *sc, const sim_result *res,
                         const sim_run_opts *ro, const sim_report_advice *advice, sim_err *err)
{
    int rc = 0;
    if (a->timeline) rc = sim_timeline_write_json(ro->timeline, a->timeline, err);
    for (int i = 0; !rc && i < a->n_plots; i++)
        rc = plt_run_draw(&a->plots[i], sc, res, ro->series, ro->timeline, err);
    if (!rc && a->json) rc = sim_report_json(a->json, sc, res, advice, err);
    if (!rc && a->util_csv) rc = sim_report_util_csv(a->util_csv, res, err);
    if (!rc && !a->quiet)
        sim_report_text(a->json && !strcmp(a->json, "-") ? stderr : stdout, sc, res, advice);
    return rc;
}

/* The memory report of a scenario that does not fit: not simulated, this is the answer. */
static void report_oom(const run_args *a, const sim_scenario *sc)
{
    sim_report_memory_text(stderr, sc);
    if (a->json) {
        sim_err jerr;
        sim_report_advice none = {.n = -1};
        if (sim_report_json(a->json, sc, NULL, &none, &jerr)) sim_err_print(&jerr, stderr);
    }
}

/* One run of x: the simulation, its outputs and the advice. Returns an exit code. */
static int single_run(run_args *a, const sim_experiment *x, const cfg_experiment_set *set)
{
    int status = parse_plots(a);
    if (status) return status;
    if (x->run.sampled_pct > 0 && (a->util_csv || a->want_tl || a->want_series)) {
        fprintf(stderr, "epochsim run: the sampled mode (--sampled, run.sampled_pct) simulates "
                        "part of each epoch: --util-csv, --timeline and --plot show every "
                        "step; run without it for them\n");
        return SIM_EXIT_USAGE;
    }
    sim_err err;
    sim_err_clear(&err);
    sim_scenario sc;
    memset(&sc, 0, sizeof sc);
    int rc = sim_scenario_build(x, set, sim_app_catalog_dir(a->catalog), &sc, &err);
    sim_result res;
    memset(&res, 0, sizeof res);
    sim_run_series series;
    memset(&series, 0, sizeof series);
    sim_run_opts ro = {0};
    rc = simulate(rc, a, set, &sc, &ro, &series, &res, &err);
    sim_advice adv[SIM_ADVICE_MAX];
    sim_report_advice advice = {.adv = adv, .n = -1};
    if (!rc && !a->no_advice)
        advice.n = sim_advice_find(x, set, sim_app_catalog_dir(a->catalog), &sc, &res, adv);
    if (!rc) rc = write_outputs(a, &sc, &res, &ro, &advice, &err);
    if (rc == SIM_EOOM && sc.memory.known) report_oom(a, &sc);
    if (rc) {
        fputs("epochsim: ", stderr);
        sim_err_print(&err, stderr);
    }
    sim_result_free(&res);
    sim_run_series_free(&series);
    sim_timeline_destroy(ro.timeline);
    sim_scenario_free(&sc);
    return rc ? SIM_EXIT_ERROR : SIM_EXIT_OK;
}

int sim_run_cmd(int argc, char **argv)
{
    run_args a = {
        .tl_steps = PLT_TIMELINE_STEPS_DEFAULT,
        .sets = calloc((size_t)argc, sizeof *a.sets),
        .plot_args = calloc((size_t)argc, sizeof *a.plot_args),
        .varies = calloc((size_t)argc, sizeof *a.varies),
        .plots = calloc((size_t)argc, sizeof *a.plots),
    };
    sim_sweep_spec spec;
    sim_sweep_spec_init(&spec);
    int status = SIM_EXIT_ERROR;
    if (!a.sets || !a.plot_args || !a.varies || !a.plots) goto done;
    status = parse_run_args(argc, argv, &a);
    if (status) {
        if (status == -1) status = SIM_EXIT_OK; /* --help */
        goto done;
    }
    cfg_experiment_set set = {0};
    sim_experiment x;
    sim_err err;
    sim_err_clear(&err);
    cfg_jobs jobs = {0};
    if (load_experiment(optind < argc ? argv[optind] : NULL, &a, &x, &set, &spec, &jobs, &err)) {
        fputs("epochsim: ", stderr);
        sim_err_print(&err, stderr);
        status = SIM_EXIT_ERROR;
    } else if (jobs.n) {
        status = jobs_run(&a, &jobs, &x, &set);
    } else if (spec.n_grid + spec.n_zip + spec.n_hw > 0) {
        status = what_if(&a, &spec, &x, &set);
    } else {
        status = single_run(&a, &x, &set);
    }
    cfg_jobs_free(&jobs);
done:
    sim_sweep_spec_free(&spec);
    free(a.sets);
    free(a.plot_args);
    free(a.varies);
    free(a.plots);
    return status;
}
