/* test_timeline.c — the timeline recorder and its Chrome-trace export: the JSON parses (yajl_tree)
 * and follows the Trace Event Format, every lane is named, the GPU stream is in order, nested
 * lanes nest, every flow start has its finish bound to a kernel, --timeline-steps bounds the
 * recording, and the kernel time in the window equals the closed form of the synthetic job
 * (tests/data/catalog; 10 kernels x 1 ms per step). Recording must not change any figure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/setup/scenario.h"
#include "sim/core/timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/tests/data/catalog"
#define KERNELS 10
#define KERNEL_NS 1000000LL

static void build(const char *const *sets, sim_scenario *sc)
{
    static const char *const base[] = {
        "system.gpu=test-gpu",
        "system.cpu=test-cpu-8c",
        "system.storage=test-nvme",
        "system.host_memory_gb=64",
        "dataset.samples=2560",
        "dataset.sample_bytes=1000",
        "dataset.decode_us=10",
        "dataset.decode_cv=0.3",
        "dataset.input_bytes=1000",
        "loader.batch_size=64",
        "loader.num_workers=4",
        "loader.pin_memory=true",
        "loader.non_blocking=true",
        "loader.worker_start_ms=1",
        "workload.kernels_per_step=10",
        "workload.kernel_us=1000",
        "workload.dispatch_us=5",
        "workload.step_overhead_us=20",
        NULL,
    };
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err err;
    sim_err_clear(&err);
    sim_experiment_defaults(&x);
    for (const char *const *s = base; *s; s++)
        assert_int_equal(cfg_experiment_apply(*s, &x, &set, &err), 0);
    for (const char *const *s = sets; s && *s; s++)
        if (cfg_experiment_apply(*s, &x, &set, &err)) fail_msg("%s: %s", *s, err.msg);
    if (sim_scenario_build(&x, &set, CATALOG, sc, &err)) fail_msg("build: %s", err.msg);
}

/* ---- the parsed file ---------------------------------------------------------------------- */
typedef struct event {
    char ph;
    char name[96];
    long long pid, tid, id;
    int64_t ts_ns, dur_ns;
    bool bp_e;
} event;

typedef struct trace {
    event *ev;
    size_t n;
    char lane_name[256][64]; /* by tid */
} trace;

/* "12.345" microseconds -> 12345 ns, exactly (the writer prints three decimals). */
static int64_t us_to_ns(const char *s)
{
    const char *dot = strchr(s, '.');
    int64_t ns = strtoll(s, NULL, 10) * 1000;
    if (dot) {
        int64_t frac = 0, scale = 100;
        for (const char *p = dot + 1; *p >= '0' && *p <= '9' && scale > 0; p++, scale /= 10)
            frac += (*p - '0') * scale;
        ns += s[0] == '-' ? -frac : frac;
    }
    return ns;
}

/* The string of v, or "" when v is not a string. */
static const char *str_of(yajl_val v)
{
    return v && v->type == yajl_t_string && v->u.string ? v->u.string : "";
}

static yajl_val member(yajl_val obj, const char *k)
{
    const char *path[] = {k, NULL};
    return yajl_tree_get(obj, path, yajl_t_any);
}

static void parse_file(const char *path, trace *t)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    buf[len] = 0;
    fclose(f);
    char errbuf[256];
    yajl_val root = yajl_tree_parse(buf, errbuf, sizeof errbuf);
    if (!root) fail_msg("not JSON: %s", errbuf);
    free(buf);
    yajl_val evs = member(root, "traceEvents");
    assert_true(YAJL_IS_ARRAY(evs));
    memset(t, 0, sizeof *t);
    t->n = YAJL_GET_ARRAY(evs)->len;
    t->ev = calloc(t->n, sizeof *t->ev);
    assert_non_null(t->ev);
    for (size_t i = 0; i < t->n; i++) {
        yajl_val e = YAJL_GET_ARRAY(evs)->values[i];
        event *o = &t->ev[i];
        yajl_val ph = member(e, "ph"), name = member(e, "name"), pid = member(e, "pid"),
                 tid = member(e, "tid");
        /* Required of every event: ph, name, pid, tid. */
        assert_true(YAJL_IS_STRING(ph) && strlen(str_of(ph)) == 1);
        assert_true(YAJL_IS_STRING(name));
        assert_true(YAJL_IS_INTEGER(pid) && YAJL_IS_INTEGER(tid));
        o->ph = str_of(ph)[0];
        snprintf(o->name, sizeof o->name, "%s", str_of(name));
        o->pid = YAJL_GET_INTEGER(pid);
        o->tid = YAJL_GET_INTEGER(tid);
        assert_true(o->tid >= 0 && o->tid < 256);
        if (o->ph == 'M') {
            yajl_val args = member(e, "args");
            assert_true(YAJL_IS_OBJECT(args));
            if (!strcmp(o->name, "thread_name")) {
                yajl_val n = member(args, "name");
                assert_true(YAJL_IS_STRING(n));
                snprintf(t->lane_name[o->tid], sizeof t->lane_name[0], "%s", str_of(n));
            }
            continue;
        }
        /* X, s and f carry a category and a timestamp in microseconds. */
        assert_true(YAJL_IS_STRING(member(e, "cat")));
        yajl_val ts = member(e, "ts");
        assert_true(YAJL_IS_NUMBER(ts));
        o->ts_ns = us_to_ns(YAJL_GET_NUMBER(ts));
        assert_true(o->ts_ns >= 0);
        if (o->ph == 'X') {
            yajl_val dur = member(e, "dur");
            assert_true(YAJL_IS_NUMBER(dur));
            o->dur_ns = us_to_ns(YAJL_GET_NUMBER(dur));
            assert_true(o->dur_ns >= 0);
        } else if (o->ph == 's' || o->ph == 'f') {
            yajl_val id = member(e, "id");
            assert_true(YAJL_IS_INTEGER(id));
            o->id = YAJL_GET_INTEGER(id);
            yajl_val bp = member(e, "bp");
            o->bp_e = !strcmp(str_of(bp), "e");
        } else {
            fail_msg("unexpected phase '%c'", o->ph);
        }
    }
    yajl_tree_free(root);
}

static int lane_tid(const trace *t, const char *prefix)
{
    for (int i = 0; i < 256; i++)
        if (!strncmp(t->lane_name[i], prefix, strlen(prefix))) return i;
    return -1;
}

static size_t count_x(const trace *t, int tid, const char *prefix, int64_t *sum_ns)
{
    size_t n = 0;
    if (sum_ns) *sum_ns = 0;
    for (size_t i = 0; i < t->n; i++) {
        const event *e = &t->ev[i];
        if (e->ph == 'X' && (tid < 0 || e->tid == tid) &&
            !strncmp(e->name, prefix, strlen(prefix))) {
            n++;
            if (sum_ns) *sum_ns += e->dur_ns;
        }
    }
    return n;
}

/* X spans on lane `tid` are either disjoint or nested (`strict`: disjoint only). The writer
 * emits them sorted by start, longest first, so a stack check suffices. */
static void check_lane_nesting(const trace *t, int tid, bool strict)
{
    int64_t stack[64];
    int depth = 0;
    for (size_t i = 0; i < t->n; i++) {
        const event *e = &t->ev[i];
        if (e->ph != 'X' || e->tid != tid) continue;
        int64_t end = e->ts_ns + e->dur_ns;
        while (depth > 0 && stack[depth - 1] <= e->ts_ns)
            depth--;
        if (depth > 0) {
            if (strict)
                fail_msg("lane %s: '%s' at %lld ns overlaps the previous span", t->lane_name[tid],
                         e->name, (long long)e->ts_ns);
            if (end > stack[depth - 1])
                fail_msg("lane %s: '%s' at %lld ns overlaps its parent without nesting",
                         t->lane_name[tid], e->name, (long long)e->ts_ns);
        }
        assert_true(depth < 64);
        stack[depth++] = end;
    }
}

/* Every flow start has exactly one finish; the start shares ts and tid with a dispatch or graph
 * launch slice on the main thread, the finish (bound to its enclosing slice) with a kernel. */
static size_t check_flows(const trace *t)
{
    size_t starts = 0;
    for (size_t i = 0; i < t->n; i++) {
        const event *s = &t->ev[i];
        if (s->ph != 's') continue;
        starts++;
        const event *f = NULL;
        for (size_t j = 0; j < t->n; j++)
            if (t->ev[j].ph == 'f' && t->ev[j].id == s->id) {
                assert_null(f); /* exactly one */
                f = &t->ev[j];
            }
        if (!f) fail_msg("flow %lld has no finish", s->id);
        assert_true(f->bp_e);
        assert_true(f->ts_ns >= s->ts_ns);
        bool from = false, to = false;
        for (size_t j = 0; j < t->n; j++) {
            const event *x = &t->ev[j];
            if (x->ph != 'X') continue;
            if (x->tid == s->tid && x->ts_ns == s->ts_ns &&
                (strstr(x->name, "kernel launch") || strstr(x->name, "graph launch")))
                from = true;
            if (x->tid == f->tid && x->ts_ns == f->ts_ns && strstr(x->name, "kernel (")) to = true;
        }
        assert_true(from && to);
        assert_true(!strncmp(t->lane_name[s->tid], "main thread", 11));
        assert_non_null(strstr(t->lane_name[f->tid], "compute stream"));
    }
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].ph == 'f') {
            bool has = false;
            for (size_t j = 0; j < t->n && !has; j++)
                has = t->ev[j].ph == 's' && t->ev[j].id == t->ev[i].id;
            assert_true(has);
        }
    return starts;
}

/* Runs with a timeline of `steps` steps from step `first` and writes it; fills t. */
static void record_from(const char *const *sets, int64_t first, int64_t steps, trace *t,
                        sim_result *res_out)
{
    sim_scenario sc;
    build(sets, &sc);
    sim_timeline *tl = sim_timeline_create_from(first, steps);
    assert_non_null(tl);
    sim_run_opts o = {.timeline = tl};
    sim_result res;
    sim_err err;
    if (sim_run_ex(&sc, &o, &res, &err)) fail_msg("run: %s", err.msg);
    char path[] = "/tmp/epochsim-tl-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    if (sim_timeline_write_json(tl, path, &err)) fail_msg("write: %s", err.msg);
    parse_file(path, t);
    unlink(path);
    if (res_out)
        *res_out = res;
    else
        sim_result_free(&res);
    sim_timeline_destroy(tl);
    sim_scenario_free(&sc);
}

/* Runs with a timeline of the first `steps` steps and writes it; fills t. */
static void record(const char *const *sets, int64_t steps, trace *t, sim_result *res_out)
{
    record_from(sets, 0, steps, t, res_out);
}

static void test_timeline_json_structure(void **state)
{
    (void)state;
    trace t;
    record(NULL, 3, &t, NULL);
    /* Lanes: workers, pin thread, main thread, storage, both PCIe directions, the stream. */
    const char *lanes[] = {"DataLoader worker 0", "DataLoader worker 3", "pin-memory thread",
                           "main thread",         "storage slot 0",      "PCIe H2D (GPU 0)",
                           "PCIe D2H (GPU 0)",    "GPU 0 compute stream"};
    for (size_t i = 0; i < sizeof lanes / sizeof lanes[0]; i++)
        if (lane_tid(&t, lanes[i]) < 0) fail_msg("no lane '%s'", lanes[i]);
    assert_int_equal(lane_tid(&t, "DataLoader worker 4"), -1);
    int stream = lane_tid(&t, "GPU 0 compute stream");
    int main_tid = lane_tid(&t, "main thread");
    int h2d = lane_tid(&t, "PCIe H2D");
    /* One in-order stream: its spans never overlap; so for the link and each storage slot. */
    check_lane_nesting(&t, stream, true);
    check_lane_nesting(&t, h2d, true);
    for (int i = 0; i < 256; i++)
        if (!strncmp(t.lane_name[i], "storage slot", 12)) check_lane_nesting(&t, i, true);
    /* Threads nest: a step holds its waits and dispatches, a batch its reads and decodes. */
    check_lane_nesting(&t, main_tid, false);
    for (int w = 0; w < 4; w++) {
        char name[32];
        snprintf(name, sizeof name, "DataLoader worker %d", w);
        check_lane_nesting(&t, lane_tid(&t, name), false);
    }
    check_lane_nesting(&t, lane_tid(&t, "pin-memory thread"), true);
    /* Exactly the first 3 steps of the main thread, with their kernels and flows. */
    assert_int_equal(count_x(&t, main_tid, "step ", NULL), 3);
    assert_int_equal(count_x(&t, main_tid, "wait for batch", NULL), 3);
    int64_t busy;
    assert_int_equal(count_x(&t, stream, "op ", &busy) - count_x(&t, stream, "op -", NULL),
                     3 * KERNELS);
    /* Closed form: the kernel time in the window is 3 steps x 10 kernels x 1 ms, exactly
     * (integer nanoseconds, written with three decimals of a microsecond). */
    assert_int_equal(count_x(&t, stream, "op 0 kernel", NULL), 3);
    int64_t kernel_ns = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.ev[i].ph == 'X' && t.ev[i].tid == stream && strstr(t.ev[i].name, "kernel ("))
            kernel_ns += t.ev[i].dur_ns;
    assert_int_equal(kernel_ns, 3 * KERNELS * KERNEL_NS);
    /* The input copy of each step is on the stream and on the H2D lane. */
    assert_int_equal(count_x(&t, stream, "input batch H2D", NULL), 3);
    assert_int_equal(count_x(&t, h2d, "input batch H2D", NULL), 3);
    assert_int_equal(check_flows(&t), 3 * KERNELS);
    /* The loader's work of the first batches is there: 64 reads and decodes per batch. */
    assert_true(count_x(&t, -1, "decode", NULL) >= 3 * 64);
    assert_true(count_x(&t, -1, "read 1 kB", NULL) >= 3 * 64);
    free(t.ev);
}

static void test_timeline_steps_bound_the_recording(void **state)
{
    (void)state;
    trace a, b;
    record(NULL, 1, &a, NULL);
    record(NULL, 6, &b, NULL);
    int sa = lane_tid(&a, "GPU 0 compute stream"), sb = lane_tid(&b, "GPU 0 compute stream");
    assert_int_equal(count_x(&a, -1, "step ", NULL), 1);
    assert_int_equal(count_x(&b, -1, "step ", NULL), 6);
    int64_t ka, kb;
    count_x(&a, sa, "op ", &ka);
    count_x(&b, sb, "op ", &kb);
    assert_int_equal(check_flows(&a), KERNELS);
    assert_int_equal(check_flows(&b), 6 * KERNELS);
    /* The job has 40 steps; far fewer events are written than a whole epoch's. */
    assert_true(a.n < b.n);
    assert_true(b.n < 40 * (64 * 3 + KERNELS * 3));
    free(a.ev);
    free(b.ev);
}

/* --timeline-from: steps 10-12 only, nothing that started before step 10 began, the same
 * number of kernels and launch arrows as three steps from the start. */
static void test_timeline_window_from_a_later_step(void **state)
{
    (void)state;
    trace t;
    record_from(NULL, 10, 3, &t, NULL);
    int main_tid = lane_tid(&t, "main thread"), stream = lane_tid(&t, "GPU 0 compute stream");
    assert_int_equal(count_x(&t, main_tid, "step ", NULL), 3);
    int64_t begin = -1;
    for (size_t i = 0; i < t.n; i++)
        if (t.ev[i].ph == 'X' && !strcmp(t.ev[i].name, "step 10")) begin = t.ev[i].ts_ns;
    assert_true(begin > 0);
    assert_int_equal(count_x(&t, main_tid, "step 9", NULL), 0);
    assert_int_equal(count_x(&t, main_tid, "step 13", NULL), 0);
    for (size_t i = 0; i < t.n; i++)
        if (t.ev[i].ph == 'X' && t.ev[i].ts_ns < begin)
            fail_msg("'%s' starts at %lld ns, before step 10 (%lld ns)", t.ev[i].name,
                     (long long)t.ev[i].ts_ns, (long long)begin);
    int64_t k;
    assert_int_equal(count_x(&t, stream, "op ", &k), 3 * KERNELS);
    assert_int_equal(check_flows(&t), 3 * KERNELS);
    free(t.ev);
    assert_null(sim_timeline_create_from(-1, 3));
}

static void test_timeline_does_not_change_results(void **state)
{
    (void)state;
    sim_scenario sc;
    build(NULL, &sc);
    sim_result plain, rec;
    sim_err err;
    assert_int_equal(sim_run(&sc, &plain, &err), 0);
    sim_timeline *tl = sim_timeline_create(5);
    sim_run_series series;
    sim_run_opts o = {.timeline = tl, .series = &series};
    assert_int_equal(sim_run_ex(&sc, &o, &rec, &err), 0);
    assert_memory_equal(&plain.mean, &rec.mean, sizeof plain.mean);
    assert_true(plain.total_time_s == rec.total_time_s);
    assert_int_equal(plain.n_util, rec.n_util);
    assert_memory_equal(plain.util_series, rec.util_series, (size_t)plain.n_util);
    assert_string_equal(plain.verdict, rec.verdict);
    /* The series: one value per NVML window, CPU within 0..100 %, the queue within what the
     * loader may hold (prefetch_factor 2 x 4 workers). */
    assert_int_equal(series.n, rec.n_util);
    assert_true(series.window_ns == rec.util_window_ns);
    double cpu_sum = 0;
    for (int64_t i = 0; i < series.n; i++) {
        assert_true(series.cpu_util_pct[i] >= 0 && series.cpu_util_pct[i] <= 100 + 1e-9);
        assert_true(series.queue_depth[i] >= 0 && series.queue_depth[i] <= 8);
        cpu_sum += series.cpu_util_pct[i];
    }
    /* Over whole windows the series' mean is the run's CPU figure (the last window is
     * partial, hence the 1-window tolerance). */
    double mean = cpu_sum / (double)series.n;
    assert_true(fabs(mean - rec.mean.cpu_util_pct) <=
                100.0 / (double)series.n + 0.01 * rec.mean.cpu_util_pct);
    sim_run_series_free(&series);
    sim_timeline_destroy(tl);
    sim_result_free(&plain);
    sim_result_free(&rec);
    sim_scenario_free(&sc);
}

static void test_timeline_two_gpus(void **state)
{
    (void)state;
    static const char *const sets[] = {"system.gpu_count=2", NULL};
    trace t;
    record(sets, 2, &t, NULL);
    int s0 = lane_tid(&t, "GPU 0 compute stream"), s1 = lane_tid(&t, "GPU 1 compute stream");
    assert_true(s0 >= 0 && s1 >= 0 && s0 != s1);
    assert_true(lane_tid(&t, "main thread (rank 1)") >= 0);
    assert_true(lane_tid(&t, "DataLoader worker 3 (rank 1)") >= 0);
    assert_true(lane_tid(&t, "PCIe H2D (GPU 1)") >= 0);
    check_lane_nesting(&t, s0, true);
    check_lane_nesting(&t, s1, true);
    assert_int_equal(check_flows(&t), 2 * 2 * KERNELS);
    assert_int_equal(count_x(&t, s1, "op 9 kernel", NULL), 2);
    free(t.ev);
}

static void test_timeline_main_thread_loads(void **state)
{
    (void)state;
    static const char *const sets[] = {"loader.num_workers=0", NULL};
    trace t;
    record(sets, 2, &t, NULL);
    assert_int_equal(lane_tid(&t, "DataLoader worker 0"), -1);
    assert_int_equal(lane_tid(&t, "pin-memory thread"), -1); /* pinning on the main thread */
    int m = lane_tid(&t, "main thread");
    check_lane_nesting(&t, m, false);
    assert_int_equal(count_x(&t, m, "decode", NULL), 2 * 64);
    assert_int_equal(count_x(&t, m, "batch ", NULL), 2);
    assert_int_equal(count_x(&t, m, "pin batch ", NULL), 2);
    free(t.ev);
}

static void test_timeline_cuda_graphs_and_sync(void **state)
{
    (void)state;
    static const char *const sets[] = {"training.cuda_graphs=true", "training.sync_every_step=true",
                                       NULL};
    trace t;
    record(sets, 2, &t, NULL);
    int m = lane_tid(&t, "main thread");
    assert_int_equal(count_x(&t, m, "CUDA graph launch", NULL), 2);
    assert_int_equal(count_x(&t, m, "op ", NULL), 0); /* no per-op dispatch */
    assert_int_equal(count_x(&t, m, "synchronize", NULL), 2);
    assert_int_equal(check_flows(&t), 2 * KERNELS);
    check_lane_nesting(&t, m, false);
    check_lane_nesting(&t, lane_tid(&t, "GPU 0 compute stream"), true);
    free(t.ev);
}

static void test_timeline_write_whole_or_nothing(void **state)
{
    (void)state;
    sim_timeline *tl = sim_timeline_create(1);
    assert_non_null(tl);
    assert_int_equal(sim_timeline_attach(tl, 1, 2, true), 0);
    sim_err err;
    sim_err_clear(&err);
    /* a missing folder is SIM_ENOENT for every output file (sim/base/outfile.c) */
    assert_int_equal(sim_timeline_write_json(tl, "/nonexistent-dir/t.json", &err), SIM_ENOENT);
    assert_int_equal(access("/nonexistent-dir/t.json", F_OK), -1);
    assert_null(sim_timeline_create(0)); /* at least one step */
    sim_timeline_destroy(tl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeline_json_structure),
        cmocka_unit_test(test_timeline_steps_bound_the_recording),
        cmocka_unit_test(test_timeline_window_from_a_later_step),
        cmocka_unit_test(test_timeline_does_not_change_results),
        cmocka_unit_test(test_timeline_two_gpus),
        cmocka_unit_test(test_timeline_main_thread_loads),
        cmocka_unit_test(test_timeline_cuda_graphs_and_sync),
        cmocka_unit_test(test_timeline_write_whole_or_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
