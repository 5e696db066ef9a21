/* sweep_cmd.c — `epochsim sweep [FILE] [--sweep K=V,..].. [--zip K=V,..].. [--set K=V]..` and
 * `epochsim sweep merge -o OUT SHARD_FILE...`. Parses options, loads the experiment and its sweep
 * block, installs SIGINT/SIGTERM handlers that ask the runner to stop cleanly (a second signal
 * kills at once), and turns the outcome into the exit status. The stop flag is the one global here:
 * a signal handler can reach nothing else. */
#include "sim/app/sweep_cmd.h"

#include "sim/app/app.h"
#include "sim/app/sweep_merge.h"
#include "sim/app/sweep_run.h"

#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: epochsim sweep [FILE] [--sweep KEY=V1,V2,...]... [--zip KEY=V1,V2,...]...\n"
        "                      [--set KEY=VALUE]... [-o OUT|-] [--format csv|jsonl] [-j N]\n"
        "                      [--resume | --force] [--replications R] [--catalog DIR] [--quiet]\n"
        "                      [--shard I/N] [--sampled[=PCT]]\n"
        "       epochsim sweep merge [-o OUT|-] SHARD_FILE...\n"
        "\n"
        "Runs the experiment FILE (or the built-in default scenario) once per point of a sweep\n"
        "and writes one row per point: point, every swept key, seed, every figure of\n"
        "`run --json` (nested ones as stall_pct.storage, ...), oom, memory.peak_gb,\n"
        "memory.capacity_gb, memory.max_batch, error.\n"
        "\n"
        "Points are the product grid x zip x hardware (the last varying fastest). FILE may hold\n"
        "a `sweep:` block:\n"
        "  sweep:\n"
        "    grid: {loader.batch_size: [32, 64, 128], system.gpu: [a10, a100-sxm4-80gb]}\n"
        "    zip:  {loader.batch_size: [64, 256], loader.num_workers: [4, 16]}\n"
        "    hardware:\n"
        "      - {name: a10-vm, system.gpu: a10, system.cpu_cores: 30}\n"
        "      - {name: dgx-a100, system.name: dgx-a100}\n"
        "\n"
        "  --sweep KEY=V1,V2  a grid axis (repeatable; replaces the file's axis of that key)\n"
        "  --zip KEY=V1,V2    a zipped axis: all --zip keys vary together (equal lengths)\n"
        "  --set KEY=VALUE    change the base experiment (repeatable), as with `run`\n"
        "  -o, --output OUT   output file (default -, stdout; a file is never overwritten\n"
        "                     unless --force)\n"
        "  --format csv|jsonl CSV with a header (default) or one JSON object per line\n"
        "  -j, --jobs N       run points on N threads; the output is the same as with -j 1\n"
        "  --resume           finish OUT after an interruption: keep its whole rows, run the rest\n"
        "  --force            start OUT over if it exists\n"
        "  --replications R   R runs per point with derived seeds: each numeric figure is the\n"
        "                     mean, FIG_ci95 the 95 %% confidence half-width (Student t)\n"
        "  --catalog DIR      hardware catalog (default $EPOCHSIM_CATALOG or the built-in one)\n"
        "  --quiet            no progress bar (it is shown only when stderr is a terminal)\n"
        "  --shard I/N        run only shard I (0 to N-1) of N disjoint slices of the points, for\n"
        "                     many machines; a point's shard follows from its key=value pairs,\n"
        "                     not its position. The file starts with a `# epochsim sweep shard`\n"
        "                     line; `sweep merge` joins the N files into the file one run writes\n"
        "                     (byte for byte). See docs/cluster.md.\n"
        "  --sampled[=PCT]    sampled mode for every point (as `run --sampled`, default PCT\n"
        "                     " SIM_APP_SAMPLED_PCT
        "): each row gains sampled.* columns, among them\n"
        "                     sampled.epoch_time_half_pct, the 95 %% half-width of epoch_time_s\n"
        "\n"
        "Each point's seed is derived from the base seed and the point's key=value pairs (not its\n"
        "position), so adding values leaves other points' results alone. An invalid point (bad\n"
        "value, unknown GPU) is a row with its `error`; a job that does not fit in GPU memory is "
        "a\n"
        "row with oom=1. Exit status: 0 all rows written without errors; 1 some point failed\n"
        "(all rows are still written), interrupted (rerun with --resume), or a config/output\n"
        "error; 2 usage error.\n"
        "\n"
        "examples:\n"
        "  epochsim sweep --sweep loader.batch_size=32,64,128,256 --set training.max_steps=200\n"
        "  epochsim sweep --sweep loader.num_workers=0,2,4,8,16 --sweep "
        "system.gpu=a10,a100-sxm4-80gb\n"
        "      -o workers.csv -j 2\n"
        "  epochsim sweep configs/sweeps/batch-size.yaml -o bs.csv --resume\n"
        "  epochsim sweep --zip loader.batch_size=64,256 --zip loader.num_workers=4,16 --format "
        "jsonl\n"
        "  epochsim sweep --sweep loader.batch_size=64,256 --replications 5 -o ci.csv\n"
        "  epochsim sweep configs/sweeps/batch-size.yaml --shard 0/2 -o s0.csv  # machine 1\n"
        "  epochsim sweep configs/sweeps/batch-size.yaml --shard 1/2 -o s1.csv  # machine 2\n"
        "  epochsim sweep merge -o bs.csv s0.csv s1.csv\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
    fputs("epochsim sweep: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(see `epochsim sweep --help`)\n", stderr);
    return SIM_EXIT_USAGE;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

enum {
    O_SWEEP = 1000,
    O_ZIP,
    O_SET,
    O_FORMAT,
    O_RESUME,
    O_FORCE,
    O_REPS,
    O_CATALOG,
    O_QUIET,
    O_SHARD,
    O_SAMPLED
};

static const struct option sweep_opts[] = {
    {"sweep", required_argument, 0, O_SWEEP},
    {"zip", required_argument, 0, O_ZIP},
    {"set", required_argument, 0, O_SET},
    {"output", required_argument, 0, 'o'},
    {"format", required_argument, 0, O_FORMAT},
    {"jobs", required_argument, 0, 'j'},
    {"resume", no_argument, 0, O_RESUME},
    {"force", no_argument, 0, O_FORCE},
    {"replications", required_argument, 0, O_REPS},
    {"catalog", required_argument, 0, O_CATALOG},
    {"quiet", no_argument, 0, O_QUIET},
    {"shard", required_argument, 0, O_SHARD},
    {"sampled", optional_argument, 0, O_SAMPLED},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

/* The command line. Arguments are kept in order: --sweep/--zip after the file's axes, --set
 * after the file. */
typedef struct sweep_args {
    const char **axes; /* --sweep and --zip values (argc of room) */
    int *axis_zip;     /* 1 where axes[i] came from --zip */
    const char **sets; /* --set values (argc of room) */
    int n_axes, n_sets;
    sim_sweep_opts o;
    bool quiet;
    const char *catalog;
    bool sampled;            /* --sampled[=PCT] */
    const char *sampled_pct; /* its PCT; NULL = the default */
} sweep_args;

/* Option c of getopt_long (its value in optarg) into a; returns 0, -1 after --help, or an exit
 * code. */
static int sweep_option(int c, char **argv, sweep_args *a)
{
    switch (c) {
    case O_SWEEP:
    case O_ZIP:
        a->axis_zip[a->n_axes] = c == O_ZIP;
        a->axes[a->n_axes++] = optarg;
        return 0;
    case O_SET:
        a->sets[a->n_sets++] = optarg;
        return 0;
    case 'o':
        a->o.out_path = optarg;
        return 0;
    case O_FORMAT:
        if (!strcmp(optarg, "csv"))
            a->o.format = SIM_SWEEP_CSV;
        else if (!strcmp(optarg, "jsonl"))
            a->o.format = SIM_SWEEP_JSONL;
        else
            return bad_usage("--format takes csv or jsonl, not '%s'", optarg);
        return 0;
    case 'j':
        if (parse_int(optarg, 1, 1024, &a->o.threads))
            return bad_usage("-j takes a thread count from 1 to 1024, not '%s'", optarg);
        return 0;
    case O_RESUME:
        a->o.resume = true;
        return 0;
    case O_FORCE:
        a->o.force = true;
        return 0;
    case O_REPS:
        if (parse_int(optarg, 1, 100000, &a->o.replications))
            return bad_usage("--replications takes a count from 1 to 100000, not '%s'", optarg);
        return 0;
    case O_CATALOG:
        a->catalog = optarg;
        return 0;
    case O_QUIET:
        a->quiet = true;
        return 0;
    case O_SHARD: {
        sim_err err;
        if (sim_sweep_shard_parse(optarg, &a->o.shard, &err))
            return bad_usage("--shard %s", err.msg);
        return 0;
    }
    case O_SAMPLED:
        a->sampled = true;
        a->sampled_pct = optarg;
        return 0;
    case 'h':
        usage(stdout);
        return -1;
    case ':':
        return bad_usage("option '%s' needs a value", argv[optind - 1]);
    default:
        return bad_usage("unknown option '%s'", argv[optind - 1]);
    }
}

/* The options into a, then the checks between them; returns as sweep_option. */
static int parse_sweep_args(int argc, char **argv, sweep_args *a)
{
    int c, status = SIM_EXIT_OK;
    optind = 1;
    opterr = 0;
    while (status == SIM_EXIT_OK && (c = getopt_long(argc, argv, ":o:j:h", sweep_opts, NULL)) != -1)
        status = sweep_option(c, argv, a);
    if (status) return status;
    if (argc - optind > 1)
        return bad_usage("one experiment file at most (got '%s' too)", argv[optind + 1]);
    bool to_stdout = !a->o.out_path || !strcmp(a->o.out_path, "-");
    if (a->o.resume && to_stdout) return bad_usage("%s", "--resume needs an output file (-o OUT)");
    if (a->o.resume && a->o.force)
        return bad_usage("%s", "--resume and --force exclude each other");
    return SIM_EXIT_OK;
}

/* The experiment and its sweep: the file (NULL: none), then --set, then --sweep/--zip. */
static int load_sweep(const char *file, const sweep_args *a, sim_sweep_spec *spec,
                      sim_experiment *x, cfg_experiment_set *set, sim_err *err)
{
    int rc = SIM_OK;
    if (file) {
        rc = sim_sweep_load_experiment(file, x, set, err);
        if (!rc) rc = sim_sweep_spec_load(spec, file, err);
    }
    for (int i = 0; !rc && i < a->n_sets; i++)
        rc = cfg_experiment_apply(a->sets[i], x, set, err);
    if (!rc && a->sampled) rc = sim_app_sampled(a->sampled_pct, x, set, err);
    for (int i = 0; !rc && i < a->n_axes; i++)
        rc = sim_sweep_spec_add(spec, a->axes[i], a->axis_zip[i], err);
    if (!rc) rc = sim_sweep_spec_check(spec, err);
    return rc;
}

/* Runs the sweep with SIGINT/SIGTERM asking it to stop. */
static int run_sweep(const sim_sweep_spec *spec, const sim_experiment *x,
                     const cfg_experiment_set *set, sweep_args *a, sim_sweep_stats *st,
                     sim_err *err)
{
    a->o.catalog_dir = sim_app_catalog_dir(a->catalog);
    a->o.progress = !a->quiet && isatty(STDERR_FILENO);
    a->o.stop = &stop_requested;
    stop_requested = 0;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND | SA_RESTART; /* a second signal takes the default action */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int rc = sim_sweep_run(spec, x, set, &a->o, st, err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return rc;
}

/* The exit status of a sweep that returned rc, said on stderr when it is not a success. */
static int sweep_status(int rc, const sim_err *err, const sim_sweep_stats *st,
                        const sim_sweep_opts *o)
{
    if (rc) {
        fputs("epochsim: ", stderr);
        sim_err_print(err, stderr);
        return SIM_EXIT_ERROR;
    }
    if (st->interrupted) {
        fprintf(stderr,
                "epochsim sweep: interrupted; %llu of %llu rows are in %s (rerun with --resume "
                "to finish)\n",
                (unsigned long long)(st->skipped + st->written), (unsigned long long)st->points,
                o->out_path ? o->out_path : "the output");
        return SIM_EXIT_ERROR;
    }
    if (st->failed) {
        fprintf(stderr, "epochsim sweep: %llu of %llu points failed (see their error column)\n",
                (unsigned long long)st->failed, (unsigned long long)st->points);
        return SIM_EXIT_ERROR;
    }
    return SIM_EXIT_OK;
}

static void merge_usage(FILE *out)
{
    fputs("usage: epochsim sweep merge [-o OUT|-] SHARD_FILE...\n"
          "\n"
          "Joins the files of `epochsim sweep --shard I/N` (one per shard, any order) into the\n"
          "file the whole sweep writes in one process, byte for byte. Checks first that the files\n"
          "are shards of one sweep, that each of the N shards is there once and complete, and\n"
          "that every point is in one row; otherwise it names the missing, repeated, cut or\n"
          "foreign file and writes nothing (exit 1).\n"
          "\n"
          "  -o, --output OUT   merged file (default -, stdout); written whole or not at all\n"
          "\n"
          "example:\n"
          "  epochsim sweep merge -o bs.csv shard-0.csv shard-1.csv shard-2.csv shard-3.csv\n",
          out);
}

/* `epochsim sweep merge`; argv[0] is "merge". */
static int merge_cmd(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *out = "-";
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        if (c == 'o') {
            out = optarg;
        } else if (c == 'h') {
            merge_usage(stdout);
            return SIM_EXIT_OK;
        } else if (c == ':') {
            return bad_usage("option '%s' needs a value", argv[optind - 1]);
        } else {
            return bad_usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) return bad_usage("%s", "merge needs the shard files");
    sim_err err;
    sim_err_clear(&err);
    if (sim_sweep_merge(out, (const char *const *)argv + optind, (size_t)(argc - optind), &err)) {
        fputs("epochsim sweep merge: ", stderr);
        sim_err_print(&err, stderr);
        return SIM_EXIT_ERROR;
    }
    return SIM_EXIT_OK;
}

int sim_sweep_cmd(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "merge")) return merge_cmd(argc - 1, argv + 1);
    sweep_args a = {
        .axes = calloc((size_t)argc + 1, sizeof *a.axes),
        .axis_zip = calloc((size_t)argc + 1, sizeof *a.axis_zip),
        .sets = calloc((size_t)argc + 1, sizeof *a.sets),
        .o = {.format = SIM_SWEEP_CSV, .threads = 1, .replications = 1},
    };
    int status = SIM_EXIT_ERROR;
    if (!a.axes || !a.axis_zip || !a.sets) goto done;
    status = parse_sweep_args(argc, argv, &a);
    if (status) {
        if (status == -1) status = SIM_EXIT_OK; /* --help */
        goto done;
    }
    sim_sweep_spec spec;
    sim_sweep_spec_init(&spec);
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err err;
    sim_err_clear(&err);
    sim_experiment_defaults(&x);
    sim_sweep_stats st;
    memset(&st, 0, sizeof st);
    int rc = load_sweep(optind < argc ? argv[optind] : NULL, &a, &spec, &x, &set, &err);
    if (!rc) rc = run_sweep(&spec, &x, &set, &a, &st, &err);
    status = sweep_status(rc, &err, &st, &a.o);
    sim_sweep_spec_free(&spec);
done:
    free(a.axes);
    free(a.axis_zip);
    free(a.sets);
    return status;
}
