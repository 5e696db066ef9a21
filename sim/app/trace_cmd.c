/* trace_cmd.c — `epochsim import kineto`, `epochsim trace show` and `trace dispatch` (see
 * trace_cmd.h).
 * Both print the same per-step table, computed by traces/stats.c from the native records, so an
 * imported trace and its later `trace show` agree to the nanosecond. stdout = data, stderr =
 * messages; --summary-json / --json give the same figures with stable keys for scripts. */
#include "sim/app/trace_cmd.h"

#include "sim/app/app.h"
#include "sim/base/err.h"
#include "sim/base/json.h"
#include "sim/base/outfile.h"
#include "traces/dispatch.h"
#include "traces/kineto.h"
#include "traces/program.h"
#include "traces/stats.h"
#include "traces/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

static void import_usage(FILE *out)
{
    fprintf(
        out,
        "usage: epochsim import kineto IN.json[.gz] -o OUT.trace [options]\n"
        "\n"
        "Converts a PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzip-compressed,\n"
        "into epochsim's native trace (traces/FORMAT.md) and prints a summary per step:\n"
        "kernels, GPU busy time, step time, data wait, launch-time distribution.\n"
        "\n"
        "options:\n"
        "  -o, --output PATH       native trace to write (required; written whole or not at all)\n"
        "  --summary-json PATH     also write the summary as JSON\n"
        "  --keep-warmup           keep steps the warm-up rules would drop\n"
        "  --batch-size N          record this batch size instead of inferring it from shapes\n"
        "  -q, --quiet             print nothing on success\n"
        "  -h, --help              this help\n"
        "\n"
        "examples:\n"
        "  epochsim import kineto worker0.pt.trace.json.gz -o resnet50.trace\n"
        "  epochsim import kineto rank-0.json -o r0.trace --summary-json r0-summary.json\n"
        "  epochsim trace show resnet50.trace\n");
}

static void trace_usage(FILE *out)
{
    fprintf(out,
            "usage: epochsim trace show FILE [--json] [--records STEP] [--program]\n"
            "       epochsim trace dispatch FILE\n"
            "\n"
            "show prints a native trace's header (source GPU, precision, batch size, what was\n"
            "recorded, dropped warm-up steps) and a summary per step. dispatch prints the CPU\n"
            "time per op class (forward module and Python ops, backward nodes, optimizer\n"
            "calls, cudaLaunchKernel) as recorded, start to start on each thread; FILE may\n"
            "also be a Kineto .json[.gz] (docs/accuracy.md, CPU dispatch).\n"
            "\n"
            "options:\n"
            "  --json           print the same as JSON with stable keys\n"
            "  --records STEP   also list every record of step STEP (its ProfilerStep number)\n"
            "  --program        also show the replay program of the median step (its dispatch,\n"
            "                   GPU time and what was left out for the engine to simulate)\n"
            "  -h, --help       this help\n"
            "\n"
            "examples:\n"
            "  epochsim trace show resnet50.trace\n"
            "  epochsim trace show resnet50.trace --json | python3 -m json.tool\n"
            "  epochsim trace show resnet50.trace --records 7 | less\n"
            "  epochsim trace dispatch worker0.pt.trace.json.gz\n");
}

static double ms(int64_t ns)
{
    return (double)ns / 1e6;
}

/* Median of one field over the steps. */
static double median_of(const trc_step_stat *st, int n, size_t off)
{
    trc_sample s = {0};
    for (int i = 0; i < n; i++)
        if (trc_sample_add(&s, (double)*(const int64_t *)((const char *)&st[i] + off))) break;
    trc_dist d;
    trc_sample_dist(&s, &d);
    trc_sample_free(&s);
    return d.p50;
}

#define MED(field) median_of(st, n, offsetof(trc_step_stat, field))

static void print_step_row(FILE *out, const char *label, double step, double busy, double kernels,
                           double kernel_ns, double wait, double h2d, double syncs, double colls,
                           double coll_ns, double ops)
{
    fprintf(out, "%-8s %9.2f %9.2f %6.1f %8.0f %9.2f %9.2f %8.2f %6.0f %6.0f %8.2f %7.0f\n", label,
            step / 1e6, busy / 1e6, step > 0 ? 100.0 * busy / step : 0.0, kernels, kernel_ns / 1e6,
            wait / 1e6, h2d / 1e6, syncs, colls, coll_ns / 1e6, ops);
}

static void print_steps(FILE *out, const trc_step_stat *st, int n)
{
    fprintf(out, "%-8s %9s %9s %6s %8s %9s %9s %8s %6s %6s %8s %7s\n", "step", "step_ms",
            "gpu_busy", "busy%", "kernels", "kernel_ms", "data_wait", "h2d_MB", "syncs", "colls",
            "coll_ms", "ops");
    for (int i = 0; i < n; i++) {
        char label[32];
        snprintf(label, sizeof label, "%lld", (long long)st[i].index);
        print_step_row(out, label, (double)st[i].step_ns, (double)st[i].gpu_busy_ns,
                       (double)st[i].kernels, (double)st[i].kernel_ns, (double)st[i].data_wait_ns,
                       (double)st[i].h2d_bytes, (double)st[i].syncs, (double)st[i].collectives,
                       (double)st[i].collective_gpu_ns, (double)st[i].ops);
    }
    if (n > 1)
        print_step_row(out, "median", MED(step_ns), MED(gpu_busy_ns), MED(kernels), MED(kernel_ns),
                       MED(data_wait_ns), MED(h2d_bytes), MED(syncs), MED(collectives),
                       MED(collective_gpu_ns), MED(ops));
}

static void print_dist(FILE *out, const char *label, const trc_dist *d)
{
    if (!d->n) {
        fprintf(out, "%-34s none recorded\n", label);
        return;
    }
    fprintf(out, "%-34s n=%-7lld p50=%8.1f us  p90=%8.1f us  p99=%8.1f us  max=%9.1f us\n", label,
            (long long)d->n, d->p50 / 1e3, d->p90 / 1e3, d->p99 / 1e3, d->max / 1e3);
}

static void print_header(FILE *out, const trc_header *h)
{
    fprintf(out, "source      %s (%s)\n", h->source[0] ? h->source : "?",
            h->source_schema[0] ? h->source_schema : "?");
    fprintf(out, "gpu         %s, %d SMs, compute capability %.1f\n",
            h->gpu_name[0] ? h->gpu_name : "unknown", h->gpu_sms, h->gpu_cc);
    fprintf(out, "cpu         %s\n", h->cpu_model[0] ? h->cpu_model : "not recorded");
    fprintf(out, "precision   %s\n", h->precision);
    if (h->batch_size > 0)
        fprintf(out, "batch size  %d (%s)\n", h->batch_size, h->batch_size_source);
    else
        fprintf(out, "batch size  unknown (no input shapes recorded)\n");
    fprintf(out, "processes   rank %d of %d\n", h->rank, h->world_size);
    fprintf(out, "recorded    ");
    static const struct {
        uint32_t bit;
        const char *name;
    } has[] = {{TRC_HAS_CPU_OPS, "cpu-ops"},       {TRC_HAS_KERNELS, "kernels"},
               {TRC_HAS_MEMCPY, "memcpy"},         {TRC_HAS_SHAPES, "shapes"},
               {TRC_HAS_BLOCKS, "grid-sizes"},     {TRC_HAS_SYNCS, "syncs"},
               {TRC_HAS_DATA_WAITS, "data-waits"}, {TRC_HAS_COLLECTIVES, "collectives"},
               {TRC_HAS_LOADER, "loader-spans"}};
    for (size_t i = 0; i < sizeof has / sizeof has[0]; i++)
        if (h->recorded & has[i].bit) fprintf(out, "%s ", has[i].name);
    fprintf(out, "\nsteps       %d in the file", h->steps_recorded);
    if (h->n_dropped) {
        fprintf(out, "; dropped as warm-up:");
        for (int i = 0; i < h->n_dropped; i++)
            fprintf(out, " #%lld (%s)", (long long)h->dropped[i].index,
                    trc_drop_reason_name(h->dropped[i].reason));
    }
    fprintf(out, "\nimporter    %s\n", h->importer);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void js_dist(yajl_gen g, const char *k, const trc_dist *d)
{
    sim_json_key(g, k);
    yajl_gen_map_open(g);
    sim_json_int(g, "n", d->n);
    sim_json_num(g, "mean_us", d->mean / 1e3);
    sim_json_num(g, "p50_us", d->p50 / 1e3);
    sim_json_num(g, "p90_us", d->p90 / 1e3);
    sim_json_num(g, "p99_us", d->p99 / 1e3);
    sim_json_num(g, "max_us", d->max / 1e3);
    yajl_gen_map_close(g);
}

/* The header's fields, the step count and the dropped steps. */
static void js_header(yajl_gen g, const trc_header *h, int n)
{
    sim_json_str(g, "source", h->source);
    sim_json_str(g, "source_schema", h->source_schema);
    sim_json_str(g, "gpu_name", h->gpu_name);
    sim_json_int(g, "gpu_sms", h->gpu_sms);
    sim_json_num(g, "gpu_cc", h->gpu_cc);
    sim_json_str(g, "precision", h->precision);
    sim_json_int(g, "batch_size", h->batch_size);
    sim_json_str(g, "batch_size_source", h->batch_size_source);
    sim_json_int(g, "world_size", h->world_size);
    sim_json_int(g, "rank", h->rank);
    sim_json_int(g, "steps", n);
    sim_json_key(g, "dropped_steps");
    yajl_gen_array_open(g);
    for (int i = 0; i < h->n_dropped; i++) {
        yajl_gen_map_open(g);
        sim_json_int(g, "index", h->dropped[i].index);
        sim_json_str(g, "reason", trc_drop_reason_name(h->dropped[i].reason));
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
}

/* What the import did: output, sizes, speed, events and what was dropped. */
static void js_import(yajl_gen g, const trc_kineto_summary *imp, const char *out_path)
{
    sim_json_str(g, "output", out_path);
    sim_json_int(g, "file_bytes", imp->file_bytes);
    sim_json_int(g, "json_bytes", imp->json_bytes);
    sim_json_num(g, "import_s", imp->total_s);
    sim_json_num(g, "parse_s", imp->parse_s);
    sim_json_num(g, "import_mb_per_s", imp->total_s > 0 ? imp->json_bytes / 1e6 / imp->total_s : 0);
    sim_json_int(g, "events", imp->events);
    sim_json_int(g, "gpu_events", imp->gpu_events);
    sim_json_int(g, "unlinked_gpu_events", imp->unlinked_gpu);
    sim_json_int(g, "launches_without_gpu", imp->launches_without_gpu);
    sim_json_int(g, "steps_found", imp->steps_found);
    sim_json_str(g, "steps_from", trc_kineto_step_source_name(imp->step_source));
    sim_json_key(g, "dropped_events"); /* per trc_bad_time reason */
    yajl_gen_map_open(g);
    for (int i = 0; i < TRC_BAD_TIME_COUNT; i++)
        sim_json_int(g, trc_kineto_bad_time_name(i), imp->bad_time[i]);
    yajl_gen_map_close(g);
    sim_json_int(g, "threads", imp->threads);
}

/* One step's figures. */
static void js_step(yajl_gen g, const trc_step_stat *s)
{
    yajl_gen_map_open(g);
    sim_json_int(g, "index", s->index);
    sim_json_num(g, "step_ms", ms(s->step_ns));
    sim_json_num(g, "gpu_busy_ms", ms(s->gpu_busy_ns));
    sim_json_num(g, "kernel_ms", ms(s->kernel_ns));
    sim_json_int(g, "kernels", s->kernels);
    sim_json_num(g, "tensor_kernel_ms", ms(s->tensor_kernel_ns));
    sim_json_num(g, "cuda_kernel_ms", ms(s->cuda_kernel_ns));
    sim_json_int(g, "memcpys", s->memcpys);
    sim_json_num(g, "memcpy_ms", ms(s->memcpy_ns));
    sim_json_int(g, "h2d_bytes", s->h2d_bytes);
    sim_json_int(g, "memsets", s->memsets);
    sim_json_int(g, "syncs", s->syncs);
    sim_json_num(g, "sync_ms", ms(s->sync_ns));
    sim_json_num(g, "data_wait_ms", ms(s->data_wait_ns));
    sim_json_int(g, "collectives", s->collectives);
    sim_json_num(g, "collective_gpu_ms", ms(s->collective_gpu_ns));
    sim_json_int(g, "collective_bytes", s->collective_bytes);
    sim_json_int(g, "ops", s->ops);
    sim_json_num(g, "op_cpu_ms", ms(s->op_cpu_ns));
    sim_json_num(g, "launch_cpu_ms", ms(s->launch_cpu_ns));
    sim_json_num(g, "gpu_first_ms", ms(s->gpu_first_ns));
    sim_json_num(g, "gpu_last_ms", ms(s->gpu_last_ns));
    sim_json_num(g, "gflops", s->flops / 1e9);
    sim_json_int(g, "kernels_with_flops", s->kernels_with_flops);
    yajl_gen_map_close(g);
}

static void js_summary(yajl_gen g, const trc_header *h, const trc_step_stat *st, int n,
                       const trc_dist *launch, const trc_dist *op, const trc_kineto_summary *imp,
                       const char *out_path)
{
    yajl_gen_map_open(g);
    js_header(g, h, n);
    if (imp) js_import(g, imp, out_path);
    js_dist(g, "launch_cpu", launch);
    js_dist(g, "op_cpu", op);
    sim_json_key(g, "per_step");
    yajl_gen_array_open(g);
    for (int i = 0; i < n; i++)
        js_step(g, &st[i]);
    yajl_gen_array_close(g);
    yajl_gen_map_close(g);
}

static int write_json(FILE *out, const trc_header *h, const trc_step_stat *st, int n,
                      const trc_dist *launch, const trc_dist *op, const trc_kineto_summary *imp,
                      const char *out_path)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g) return SIM_ENOMEM;
    yajl_gen_config(g, yajl_gen_beautify, 1);
    js_summary(g, h, st, n, launch, op, imp, out_path);
    const unsigned char *buf;
    size_t len;
    yajl_gen_get_buf(g, &buf, &len);
    size_t wrote = fwrite(buf, 1, len, out);
    yajl_gen_free(g);
    return wrote == len ? SIM_OK : SIM_EIO;
}

/* ---- import -------------------------------------------------------------------------------- */

/* The import summary as JSON into PATH (sim/outfile.h rules); 0, or non-zero after printing why. */
static int write_summary(const char *path, const trc_header *h, const trc_kineto_summary *sum,
                         const char *out_path)
{
    sim_outfile o;
    sim_err err;
    int rc = sim_outfile_open(&o, path, &err);
    if (!rc && write_json(o.fp, h, sum->steps, sum->n_steps, &sum->launch_ns, &sum->op_ns, sum,
                          out_path)) {
        sim_outfile_abort(&o);
        rc = sim_err_set(&err, SIM_EIO, path, 0, 0, "cannot write the summary");
    } else if (!rc) {
        rc = sim_outfile_commit(&o, &err);
    }
    if (rc) sim_err_print(&err, stderr);
    return rc;
}

/* How the steps were found, when not by ProfilerStep#N, and the events dropped for their times
 * per reason, when any were (nothing for a plain trace). */
static void print_import_notes(FILE *out, const trc_kineto_summary *sum)
{
    if (sum->step_source == TRC_STEPS_PERIOD)
        fprintf(out, "steps       %s: %d kernels per step\n",
                trc_kineto_step_source_name(sum->step_source), sum->period_kernels);
    else if (sum->step_source != TRC_STEPS_PROFILER)
        fprintf(out, "steps       %s\n", trc_kineto_step_source_name(sum->step_source));
    int64_t n = 0;
    for (int i = 0; i < TRC_BAD_TIME_COUNT; i++)
        n += sum->bad_time[i];
    if (n == 0) return;
    fprintf(out, "dropped     %lld events (%lld GPU) for unusable times, first traceEvents[%lld]:",
            (long long)n, (long long)sum->bad_gpu, (long long)sum->first_bad);
    for (int i = 0; i < TRC_BAD_TIME_COUNT; i++)
        if (sum->bad_time[i])
            fprintf(out, " %s %lld", trc_kineto_bad_time_name(i), (long long)sum->bad_time[i]);
    fprintf(out, "\n");
}

/* The command line of `epochsim import`. */
typedef struct import_args {
    const char *fmt, *in, *out, *json;
    int quiet;
    trc_kineto_options opt;
} import_args;

/* Returns 0, -1 after --help, or an exit code. */
static int parse_import_args(int argc, char **argv, import_args *ia)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            import_usage(stdout);
            return -1;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) goto missing;
            ia->out = argv[i];
        } else if (!strcmp(a, "--summary-json")) {
            if (++i >= argc) goto missing;
            ia->json = argv[i];
        } else if (!strcmp(a, "--batch-size")) {
            if (++i >= argc) goto missing;
            char *end;
            long v = strtol(argv[i], &end, 10);
            if (*end || v <= 0 || v > 1000000000) {
                fprintf(stderr,
                        "epochsim import: --batch-size wants a positive integer, not '%s'\n",
                        argv[i]);
                return SIM_EXIT_USAGE;
            }
            ia->opt.batch_size = (int)v;
        } else if (!strcmp(a, "--keep-warmup")) {
            ia->opt.keep_warmup = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            ia->quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "epochsim import: unknown option '%s'\n", a);
            import_usage(stderr);
            return SIM_EXIT_USAGE;
        } else if (!ia->fmt) {
            ia->fmt = a;
        } else if (!ia->in) {
            ia->in = a;
        } else {
            fprintf(stderr, "epochsim import: unexpected argument '%s'\n", a);
            import_usage(stderr);
            return SIM_EXIT_USAGE;
        }
        continue;
    missing:
        fprintf(stderr, "epochsim import: %s needs a value\n", a);
        return SIM_EXIT_USAGE;
    }
    return 0;
}

/* The format, input and output are all given; returns 0 or an exit code. */
static int check_import_args(const import_args *ia)
{
    if (!ia->fmt || strcmp(ia->fmt, "kineto") != 0) {
        fprintf(stderr, "epochsim import: %s '%s'; the only format is 'kineto'\n",
                ia->fmt ? "unknown format" : "missing format", ia->fmt ? ia->fmt : "");
        import_usage(stderr);
        return SIM_EXIT_USAGE;
    }
    if (!ia->in || !ia->out) {
        fprintf(stderr, "epochsim import: %s\n", !ia->in ? "missing input file" : "missing -o OUT");
        import_usage(stderr);
        return SIM_EXIT_USAGE;
    }
    return 0;
}

/* The import's report on stdout: the header written, the notes, the speed, steps and CPU times. */
static void print_import(const trc_header *h, const char *out, const trc_kineto_summary *sum)
{
    print_header(stdout, h);
    printf("output      %s\n", out);
    print_import_notes(stdout, sum);
    printf("import      %.2f s, %.1f MB of JSON (%.1f MB on disk), %.1f MB/s; %lld events, "
           "%lld GPU events (%lld unlinked), %d thread%s kept\n\n",
           sum->total_s, sum->json_bytes / 1e6, sum->file_bytes / 1e6,
           sum->total_s > 0 ? sum->json_bytes / 1e6 / sum->total_s : 0.0, (long long)sum->events,
           (long long)sum->gpu_events, (long long)sum->unlinked_gpu, sum->threads,
           sum->threads == 1 ? "" : "s");
    print_steps(stdout, sum->steps, sum->n_steps);
    printf("\n");
    print_dist(stdout, "launch CPU time (cudaLaunchKernel)", &sum->launch_ns);
    print_dist(stdout, "top-level op CPU time", &sum->op_ns);
}

int sim_import_cmd(int argc, char **argv)
{
    import_args ia = {0};
    trc_kineto_options_init(&ia.opt);
    int rc = parse_import_args(argc, argv, &ia);
    if (rc) return rc < 0 ? SIM_EXIT_OK : rc;
    if ((rc = check_import_args(&ia))) return rc;
    trc_kineto_summary sum;
    sim_err err;
    sim_err_clear(&err);
    rc = trc_kineto_import(ia.in, ia.out, &ia.opt, &sum, &err);
    if (rc) {
        sim_err_print(&err, stderr);
        print_import_notes(stderr, &sum);
        trc_kineto_summary_free(&sum);
        return SIM_EXIT_ERROR;
    }
    /* the header as written, read back */
    trc_reader *r = NULL;
    rc = trc_reader_open(ia.out, &r, &err);
    if (rc) {
        sim_err_print(&err, stderr);
        trc_kineto_summary_free(&sum);
        return SIM_EXIT_ERROR;
    }
    const trc_header *h = trc_reader_header(r);
    if (!ia.quiet) print_import(h, ia.out, &sum);
    int status = SIM_EXIT_OK;
    if (ia.json && write_summary(ia.json, h, &sum, ia.out)) status = SIM_EXIT_ERROR;
    trc_reader_close(r);
    trc_kineto_summary_free(&sum);
    return status;
}

/* ---- trace show ---------------------------------------------------------------------------- */

static int print_program(FILE *out, const char *path)
{
    sim_program p;
    memset(&p, 0, sizeof p);
    trc_program_info in;
    sim_err err;
    sim_err_clear(&err);
    if (trc_trace_file_to_program(path, NULL, &p, &in, &err)) {
        sim_err_print(&err, stderr);
        return SIM_EXIT_ERROR;
    }
    size_t counts[SIM_OP_ALLREDUCE + 1] = {0};
    for (size_t i = 0; i < p.n_ops; i++)
        if (p.ops[i].kind <= SIM_OP_ALLREDUCE) counts[p.ops[i].kind]++;
    fprintf(out, "\nreplay program of the median step (#%lld of %d steps)\n",
            (long long)in.step_index, in.steps);
    fprintf(out,
            "  ops            %zu: %zu kernel, %zu cpu, %zu sync, %zu h2d, %zu d2h, %zu "
            "collective\n",
            p.n_ops, counts[SIM_OP_KERNEL], counts[SIM_OP_CPU], counts[SIM_OP_SYNC],
            counts[SIM_OP_MEMCPY_H2D], counts[SIM_OP_MEMCPY_D2H], counts[SIM_OP_ALLREDUCE]);
    fprintf(out, "  step           %.3f ms recorded (median %.3f, mean %.3f)\n", ms(in.step_ns),
            ms(in.step_ns_median), ms(in.step_ns_mean));
    fprintf(out, "  dispatch       %.3f ms of CPU work on the source CPU (unscaled)\n",
            ms(in.dispatch_ns));
    fprintf(out,
            "  left out       %.3f ms data wait, %.3f ms syncs, %.3f ms blocked in launch/copy "
            "calls (cap %.1f us = max(4 x median launch %.1f us, 20 us))\n",
            ms(in.data_wait_ns), ms(in.sync_ns), ms(in.blocked_ns), in.launch_cap_ns / 1e3,
            in.launch_ns / 1e3);
    fprintf(out,
            "  gpu            %.3f ms in program kernels; recorded busy %.3f ms, kernels "
            "%.3f ms, collectives %.3f ms\n",
            ms(sim_program_gpu_ns(&p)), ms(in.gpu_busy_ns), ms(in.kernel_ns),
            ms(in.collective_gpu_ns));
    sim_program_free(&p);
    return SIM_EXIT_OK;
}

static const char *const unit_names[] = {"-", "tensor", "cuda", "memory"};

static void print_records(FILE *out, const trc_step *s)
{
    fprintf(out, "step %lld: %zu records, %zu names, %.3f ms\n", (long long)s->index, s->n_recs,
            s->n_names, ms(s->dur_ns));
    fprintf(out, "%-10s %3s %12s %10s %6s %12s %10s  %s\n", "kind", "thr", "cpu_start_us", "cpu_us",
            "stream", "gpu_start_us", "gpu_us", "details");
    for (size_t i = 0; i < s->n_recs; i++) {
        const trc_record *r = &s->recs[i];
        fprintf(out, "%-10s %3d %12.1f %10.1f", trc_rec_kind_name(r->kind), r->thread,
                r->cpu_start_ns / 1e3, r->cpu_dur_ns / 1e3);
        if (r->gpu_dur_ns >= 0)
            fprintf(out, " %6d %12.1f %10.1f ", r->stream, r->gpu_start_ns / 1e3,
                    r->gpu_dur_ns / 1e3);
        else
            fprintf(out, " %6s %12s %10s ", "-", "-", "-");
        switch (r->kind) {
        case TRC_REC_KERNEL:
            fprintf(out, " %s blocks=%lld flops=%.4g bytes=%.4g %.90s",
                    unit_names[r->unit < 4 ? r->unit : 0], (long long)r->blocks, r->flops, r->bytes,
                    trc_step_rec_name(s, r));
            break;
        case TRC_REC_MEMCPY:
            fprintf(out, " %s %s %.0f bytes", trc_memcpy_dir_name(r->sub),
                    r->pinned == 1   ? "pinned"
                    : r->pinned == 0 ? "pageable"
                                     : "",
                    r->bytes);
            break;
        case TRC_REC_MEMSET:
            fprintf(out, " %.0f bytes", r->bytes);
            break;
        case TRC_REC_SYNC:
            fprintf(out, " %s", trc_sync_kind_name(r->sub));
            break;
        case TRC_REC_COLLECTIVE:
            fprintf(out, " %s %.0f bytes, %d ranks", trc_coll_kind_name(r->sub), r->bytes,
                    r->group_size);
            break;
        case TRC_REC_OP:
            fprintf(out, " %s", trc_step_rec_name(s, r));
            if (r->flops > 0 || r->bytes > 0)
                fprintf(out, " flops=%.4g bytes=%.4g", r->flops, r->bytes);
            break;
        case TRC_REC_LOADER:
            fprintf(out, " %s worker=%d", trc_step_rec_name(s, r), r->worker);
            break;
        default:
            fprintf(out, " %s", trc_step_rec_name(s, r));
        }
        fputc('\n', out);
    }
    fputc('\n', out);
}

/* The command line of `epochsim trace`. */
typedef struct trace_args {
    const char *sub, *path;
    int json, program;
    long long dump; /* --records: the step whose records to print; -1: none */
} trace_args;

/* Returns 0 (a `show FILE`), -1 after --help, or an exit code. */
static int parse_trace_args(int argc, char **argv, trace_args *ta)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            trace_usage(stdout);
            return -1;
        } else if (!strcmp(a, "--json")) {
            ta->json = 1;
        } else if (!strcmp(a, "--program")) {
            ta->program = 1;
        } else if (!strcmp(a, "--records")) {
            char *end;
            if (++i >= argc || (ta->dump = strtoll(argv[i], &end, 10), *end) || ta->dump < 0) {
                fprintf(stderr, "epochsim trace: --records wants a step number\n");
                return SIM_EXIT_USAGE;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "epochsim trace: unknown option '%s'\n", a);
            trace_usage(stderr);
            return SIM_EXIT_USAGE;
        } else if (!ta->sub) {
            ta->sub = a;
        } else if (!ta->path) {
            ta->path = a;
        } else {
            fprintf(stderr, "epochsim trace: unexpected argument '%s'\n", a);
            return SIM_EXIT_USAGE;
        }
    }
    int known = ta->sub && (!strcmp(ta->sub, "show") || !strcmp(ta->sub, "dispatch"));
    if (!known || !ta->path) {
        fprintf(stderr, "epochsim trace: %s\n",
                !ta->sub ? "missing subcommand"
                : !known ? "unknown subcommand"
                         : "missing FILE");
        trace_usage(stderr);
        return SIM_EXIT_USAGE;
    }
    return 0;
}

/* The steps of a trace: their figures and their CPU-time samples. */
typedef struct trace_stats {
    trc_step_stat *st;
    int n, cap;
    trc_sample launch, ops;
} trace_stats;

/* Reads every step of r into ts, printing the records of step --records on the way (text only);
 * returns what trc_reader_next_step last did (negative: an error, in err). */
static int read_stats(trc_reader *r, const trace_args *ta, trace_stats *ts, sim_err *err)
{
    const trc_step *s;
    int rc;
    while ((rc = trc_reader_next_step(r, &s, err)) > 0) {
        if (ts->n == ts->cap) {
            ts->cap = ts->cap ? 2 * ts->cap : 16;
            trc_step_stat *p = realloc(ts->st, (size_t)ts->cap * sizeof *p);
            if (!p) return sim_err_set(err, SIM_ENOMEM, ta->path, 0, 0, "out of memory");
            ts->st = p;
        }
        if (s->index == ta->dump && !ta->json) print_records(stdout, s);
        if ((rc = trc_step_stats(s, &ts->st[ts->n])) ||
            (rc = trc_step_sample_cpu(s, &ts->launch, &ts->ops))) {
            sim_err_set(err, rc, ta->path, 0, 0, "out of memory");
            return rc;
        }
        ts->n++;
    }
    return rc;
}

/* The header, per-step figures and CPU-time distributions, as text or JSON; an exit code. */
static int print_stats(const trc_header *h, trace_stats *ts, int json)
{
    trc_dist dl, dop;
    trc_sample_dist(&ts->launch, &dl);
    trc_sample_dist(&ts->ops, &dop);
    if (json)
        return write_json(stdout, h, ts->st, ts->n, &dl, &dop, NULL, NULL) ? SIM_EXIT_ERROR
                                                                           : SIM_EXIT_OK;
    print_header(stdout, h);
    printf("\n");
    print_steps(stdout, ts->st, ts->n);
    printf("\n");
    print_dist(stdout, "launch CPU time (cudaLaunchKernel)", &dl);
    print_dist(stdout, "top-level op CPU time", &dop);
    return SIM_EXIT_OK;
}

/* ---- trace dispatch ------------------------------------------------------------------------ */

static void print_dispatch(const trc_header *h, const trc_dispatch *d)
{
    printf("source      %s\ngpu         %s\nsteps       %d; %.0f parameter tensors "
           "(AccumulateGrad nodes per step)\nblocked     %lld ops left out (a launch inside "
           "took over %dx the step's median)\n\n",
           h->source, h->gpu_name, d->steps, d->params, (long long)d->blocked,
           TRC_DISPATCH_BLOCKED);
    printf("%-16s %8s %9s %9s %9s %9s\n", "class", "per_step", "p50_us", "mean_us", "p90_us",
           "launches");
    for (int c = 0; c < TRC_DC_COUNT; c++)
        printf("%-16s %8.0f %9.1f %9.1f %9.1f %9.2f\n", trc_dispatch_class_name(c), d->per_step[c],
               d->cls[c].p50 / 1e3, d->cls[c].mean / 1e3, d->cls[c].p90 / 1e3,
               d->launches_per_op[c]);
    printf("%-16s %8s %9.1f %9.1f %9.1f\n", "cudaLaunchKernel", "-", d->launch_ns.p50 / 1e3,
           d->launch_ns.mean / 1e3, d->launch_ns.p90 / 1e3);
    printf("%-16s %8s %9.1f %9.1f %9.1f\n", "opt_region", "-", d->opt_region_ns.p50 / 1e3,
           d->opt_region_ns.mean / 1e3, d->opt_region_ns.p90 / 1e3);
    printf("%-16s %8s %9.2f %9.2f %9.2f\n", "opt_per_param", "-", d->opt_param_ns.p50 / 1e3,
           d->opt_param_ns.mean / 1e3, d->opt_param_ns.p90 / 1e3);
}

static int dispatch_cmd(const char *path)
{
    sim_err err;
    sim_err_clear(&err);
    char tmp[1024];
    trc_reader *r = NULL;
    trc_dispatch d;
    int rc = trc_import_temp(path, "dispatch", tmp, sizeof tmp, &err);
    if (!rc) {
        rc = trc_reader_open(tmp[0] ? tmp : path, &r, &err);
        trc_import_temp_drop(tmp); /* the reader holds the file open */
    }
    if (!rc) rc = trc_dispatch_measure(r, &d, &err);
    if (!rc) print_dispatch(trc_reader_header(r), &d);
    trc_reader_close(r);
    if (rc) sim_err_print(&err, stderr);
    return rc ? SIM_EXIT_ERROR : SIM_EXIT_OK;
}

int sim_trace_cmd(int argc, char **argv)
{
    trace_args ta = {.dump = -1};
    int status = parse_trace_args(argc, argv, &ta);
    if (status) return status < 0 ? SIM_EXIT_OK : status;
    if (!strcmp(ta.sub, "dispatch")) return dispatch_cmd(ta.path);
    sim_err err;
    sim_err_clear(&err);
    trc_reader *r = NULL;
    if (trc_reader_open(ta.path, &r, &err)) {
        sim_err_print(&err, stderr);
        return SIM_EXIT_ERROR;
    }
    trace_stats ts = {0};
    if (read_stats(r, &ta, &ts, &err) < 0) {
        sim_err_print(&err, stderr);
        status = SIM_EXIT_ERROR;
    } else {
        status = print_stats(trc_reader_header(r), &ts, ta.json);
    }
    if (status == SIM_EXIT_OK && ta.program && !ta.json) status = print_program(stdout, ta.path);
    free(ts.st);
    trc_sample_free(&ts.launch);
    trc_sample_free(&ts.ops);
    trc_reader_close(r);
    return status;
}
