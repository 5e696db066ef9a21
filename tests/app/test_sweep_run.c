/* test_sweep_run.c — whole sweeps in process on the test catalog: -j N output byte-identical to
 * -j 1, invalid points as error rows, resuming cut files, refusing foreign files, stopping,
 * replications with confidence intervals, and JSON lines that parse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/app/sweep_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/tests/data/catalog"

/* A small job (40 steps of 10 kernels) on the test devices, loader-bound enough that decode
 * variation shows in the figures. */
static void base(sim_experiment *x, cfg_experiment_set *set)
{
    static const char *const sets[] = {
        "system.gpu=test-gpu",          "system.cpu=test-cpu-8c",
        "system.storage=test-nvme",     "system.host_memory_gb=64",
        "dataset.samples=100000",       "dataset.sample_bytes=1000",
        "dataset.decode_us=500",        "dataset.decode_cv=0.3",
        "dataset.input_bytes=1000",     "loader.batch_size=64",
        "loader.num_workers=2",         "loader.worker_start_ms=0",
        "workload.kernels_per_step=10", "workload.kernel_us=1000",
        "training.max_steps=40",        NULL,
    };
    sim_err err;
    memset(set, 0, sizeof *set);
    sim_experiment_defaults(x);
    for (const char *const *s = sets; *s; s++)
        assert_int_equal(cfg_experiment_apply(*s, x, set, &err), 0);
}

static void make_spec(sim_sweep_spec *s, const char *const *axes)
{
    sim_err err;
    sim_sweep_spec_init(s);
    for (const char *const *a = axes; *a; a++) {
        int zip = !strncmp(*a, "zip:", 4);
        if (sim_sweep_spec_add(s, zip ? *a + 4 : *a, zip, &err)) fail_msg("%s: %s", *a, err.msg);
    }
    assert_int_equal(sim_sweep_spec_check(s, &err), 0);
}

static void tmp_path(char *path, size_t size)
{
    snprintf(path, size, "/tmp/epochsim-sweep-run-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path); /* the runner creates it; it must not exist */
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
    buf[n] = 0;
    fclose(fp);
    if (len) *len = (size_t)n;
    return buf;
}

static void spit(const char *path, const char *data, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, len, fp), len);
    fclose(fp);
}

/* Runs the sweep over axes into path with the given options; returns the runner's code. */
static int sweep(const char *const *axes, const char *path, sim_sweep_opts o, sim_sweep_stats *st,
                 sim_err *err)
{
    sim_experiment x;
    cfg_experiment_set set;
    base(&x, &set);
    sim_sweep_spec s;
    make_spec(&s, axes);
    o.out_path = path;
    o.catalog_dir = CATALOG;
    if (!o.threads) o.threads = 1;
    if (!o.replications) o.replications = 1;
    sim_sweep_stats local;
    int rc = sim_sweep_run(&s, &x, &set, &o, st ? st : &local, err);
    sim_sweep_spec_free(&s);
    return rc;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static const char *const mixed[] = {"loader.batch_size=16,32,abc,64", "loader.num_workers=0,2,4",
                                    "system.gpu=test-gpu,nope", NULL};

static void test_sweep_run_parallel_output_is_identical(void **state)
{
    (void)state;
    for (int f = 0; f < 2; f++) {
        char a[64], b[64];
        tmp_path(a, sizeof a);
        tmp_path(b, sizeof b);
        sim_err err;
        sim_sweep_opts o = {.format = f ? SIM_SWEEP_JSONL : SIM_SWEEP_CSV, .threads = 1};
        sim_sweep_stats st;
        assert_int_equal(sweep(mixed, a, o, &st, &err), 0);
        assert_int_equal(st.written, 24);
        o.threads = 3; /* more threads than the machine's 2 cores: order must still hold */
        assert_int_equal(sweep(mixed, b, o, &st, &err), 0);
        size_t la, lb;
        char *da = slurp(a, &la), *db = slurp(b, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(da, db, la);
        assert_int_equal(count_lines(da), f ? 24 : 25); /* CSV has a header */
        free(da);
        free(db);
        unlink(a);
        unlink(b);
    }
}

static void test_sweep_run_invalid_point_is_an_error_row(void **state)
{
    (void)state;
    char p[64];
    tmp_path(p, sizeof p);
    sim_err err;
    sim_sweep_stats st;
    sim_sweep_opts o = {.format = SIM_SWEEP_CSV};
    assert_int_equal(sweep(mixed, p, o, &st, &err), 0);
    /* 4 x 3 x 2 points; the 'abc' batch fails with either GPU (6), 'nope' fails the other 9. */
    assert_int_equal(st.points, 24);
    assert_int_equal(st.written, 24);
    assert_int_equal(st.failed, 6 + 9);
    assert_int_equal(st.oom, 0);
    char *d = slurp(p, NULL);
    const char *row0 = strchr(d, '\n') + 1;
    assert_true(!strncmp(row0, "0,16,0,test-gpu,", 16));
    const char *bad = strstr(d, "\n1,16,0,nope,");
    assert_non_null(bad);
    const char *eol = strchr(bad + 1, '\n');
    const char *msg = strstr(bad, "unknown gpus 'nope'");
    assert_true(msg && msg < eol);
    const char *abc = strstr(d, "\n12,abc,0,test-gpu,");
    assert_non_null(abc);
    msg = strstr(abc, "expected an integer, got 'abc'");
    assert_true(msg && msg < strchr(abc + 1, '\n'));
    /* A valid row after the bad ones was still run: oom = 0, no memory figures (synthetic
     * job), no error. */
    const char *last = strstr(d, "\n22,64,4,test-gpu,");
    assert_non_null(last);
    eol = strchr(last + 1, '\n');
    assert_true(eol - last > 6 && !strncmp(eol - 6, ",0,,,,", 6));
    free(d);
    unlink(p);
}

static void test_sweep_run_resume_after_cut_file(void **state)
{
    (void)state;
    static const char *const axes[] = {"loader.batch_size=16,32,64", "loader.num_workers=0,2",
                                       "zip:dataset.decode_cv=0,0.5",
                                       "zip:loader.prefetch_factor=1,2", NULL};
    for (int f = 0; f < 2; f++) {
        char full[64], part[64];
        tmp_path(full, sizeof full);
        tmp_path(part, sizeof part);
        sim_err err;
        sim_sweep_stats st;
        sim_sweep_opts o = {.format = f ? SIM_SWEEP_JSONL : SIM_SWEEP_CSV, .threads = 2};
        assert_int_equal(sweep(axes, full, o, &st, &err), 0);
        size_t len;
        char *want = slurp(full, &len);
        size_t nl = count_lines(want);
        assert_int_equal(nl, f ? 12 : 13);
        /* Cut at the start, inside the header (CSV) or first row, right after a newline, in the
         * middle of a row, and one byte short of the end. */
        const char *third = strchr(strchr(want, '\n') + 1, '\n') + 1;
        size_t cuts[] = {0,       10, (size_t)(third - want), (size_t)(third - want) + 25, len / 2,
                         len - 1, len};
        for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
            spit(part, want, cuts[k]);
            o.resume = true;
            if (sweep(axes, part, o, &st, &err))
                fail_msg("cut %zu: %s:%d: %s", cuts[k], err.where, err.line, err.msg);
            o.resume = false;
            size_t glen;
            char *got = slurp(part, &glen);
            /* Rows are written in point order, so the finished file is the clean one. */
            assert_int_equal(glen, len);
            assert_memory_equal(got, want, len);
            assert_int_equal(st.skipped + st.written, 12);
            if (cuts[k] == len) assert_int_equal(st.written, 0);
            free(got);
        }
        free(want);
        unlink(full);
        unlink(part);
    }
}

static void test_sweep_run_resume_refuses_another_sweep(void **state)
{
    (void)state;
    static const char *const a[] = {"loader.batch_size=16,32", NULL};
    static const char *const b[] = {"loader.batch_size=16,48", NULL};
    static const char *const c[] = {"loader.num_workers=1,2", NULL};
    char p[64];
    tmp_path(p, sizeof p);
    sim_err err;
    sim_sweep_stats st;
    sim_sweep_opts o = {.format = SIM_SWEEP_CSV};
    assert_int_equal(sweep(a, p, o, &st, &err), 0);
    o.resume = true;
    /* Same columns, other values: the second row (line 3) is not a point of sweep b. */
    assert_int_equal(sweep(b, p, o, &st, &err), SIM_EFORMAT);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.where, p);
    /* Other columns: the header differs. */
    assert_int_equal(sweep(c, p, o, &st, &err), SIM_EFORMAT);
    assert_int_equal(err.line, 1);
    /* Other replications: the header differs too (the _ci95 columns). */
    o.replications = 3;
    assert_int_equal(sweep(a, p, o, &st, &err), SIM_EFORMAT);
    /* Without --resume an existing file is refused, with --force it starts over. */
    o.resume = false;
    o.replications = 1;
    assert_int_equal(sweep(c, p, o, &st, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "--resume"));
    o.force = true;
    assert_int_equal(sweep(c, p, o, &st, &err), 0);
    char *d = slurp(p, NULL);
    assert_true(!strncmp(d, "point,loader.num_workers,seed,", 30));
    free(d);
    unlink(p);
}

static void test_sweep_run_stop_then_resume(void **state)
{
    (void)state;
    static const char *const axes[] = {"loader.batch_size=16,32,64", NULL};
    char p[64], q[64];
    tmp_path(p, sizeof p);
    tmp_path(q, sizeof q);
    sim_err err;
    sim_sweep_stats st;
    volatile sig_atomic_t stop = 1; /* as if SIGTERM came before the first point */
    sim_sweep_opts o = {.format = SIM_SWEEP_CSV, .threads = 2, .stop = &stop};
    assert_int_equal(sweep(axes, p, o, &st, &err), 0);
    assert_true(st.interrupted);
    assert_int_equal(st.written, 0);
    char *d = slurp(p, NULL);
    assert_int_equal(count_lines(d), 1); /* the header alone, whole */
    free(d);
    stop = 0;
    o.resume = true;
    assert_int_equal(sweep(axes, p, o, &st, &err), 0);
    assert_false(st.interrupted);
    assert_int_equal(st.written, 3);
    o.resume = false;
    assert_int_equal(sweep(axes, q, o, &st, &err), 0);
    size_t lp, lq;
    char *dp = slurp(p, &lp), *dq = slurp(q, &lq);
    assert_int_equal(lp, lq);
    assert_memory_equal(dp, dq, lp);
    free(dp);
    free(dq);
    unlink(p);
    unlink(q);
}

/* Reads the JSONL file into trees, one per line; checks each parses. */
static size_t read_jsonl(const char *path, yajl_val *rows, size_t max)
{
    char *d = slurp(path, NULL);
    size_t n = 0;
    for (char *line = d, *eol; (eol = strchr(line, '\n')); line = eol + 1) {
        *eol = 0;
        char why[128];
        assert_true(n < max);
        rows[n] = yajl_tree_parse(line, why, sizeof why);
        if (!rows[n]) fail_msg("line %zu does not parse: %s", n + 1, why);
        n++;
    }
    free(d);
    return n;
}

static double num(yajl_val row, const char *key)
{
    const char *path[] = {key, NULL};
    yajl_val v = yajl_tree_get(row, path, yajl_t_number);
    if (!v) fail_msg("no number '%s'", key);
    return YAJL_GET_DOUBLE(v);
}

static void test_sweep_run_jsonl_rows_parse(void **state)
{
    (void)state;
    char p[64];
    tmp_path(p, sizeof p);
    sim_err err;
    sim_sweep_stats st;
    sim_sweep_opts o = {.format = SIM_SWEEP_JSONL};
    assert_int_equal(sweep(mixed, p, o, &st, &err), 0);
    yajl_val rows[32];
    size_t n = read_jsonl(p, rows, 32);
    assert_int_equal(n, 24);
    for (size_t i = 0; i < n; i++) {
        assert_true(YAJL_IS_OBJECT(rows[i]));
        assert_true(num(rows[i], "point") == (double)i);
        const char *ek[] = {"error", NULL};
        yajl_val e = yajl_tree_get(rows[i], ek, yajl_t_any);
        assert_non_null(e);
        if (YAJL_IS_NULL(e)) { /* a run: the figures are numbers */
            assert_true(num(rows[i], "epoch_time_s") > 0);
            assert_true(num(rows[i], "stall_pct.decode") >= 0);
            assert_true(num(rows[i], "oom") == 0);
        } else {
            assert_true(YAJL_IS_STRING(e));
        }
        /* Swept integers are numbers, names strings. */
        const char *bk[] = {"loader.batch_size", NULL};
        yajl_val b = yajl_tree_get(rows[i], bk, yajl_t_any);
        assert_true(i / 6 == 2 ? YAJL_IS_STRING(b) : YAJL_IS_INTEGER(b));
        yajl_tree_free(rows[i]);
    }
    unlink(p);
}

static void test_sweep_run_replications_give_confidence_intervals(void **state)
{
    (void)state;
    static const char *const axes[] = {"dataset.decode_cv=0,0.5", NULL};
    char p[64];
    tmp_path(p, sizeof p);
    sim_err err;
    sim_sweep_stats st;
    sim_sweep_opts o = {.format = SIM_SWEEP_JSONL, .replications = 5, .threads = 2};
    assert_int_equal(sweep(axes, p, o, &st, &err), 0);
    yajl_val rows[4];
    assert_int_equal(read_jsonl(p, rows, 4), 2);
    /* decode_cv = 0: nothing in this job is random, so five seeds give one answer. */
    assert_true(num(rows[0], "epoch_time_s_ci95") == 0);
    assert_true(num(rows[0], "step_time_ms_p99_ci95") == 0);
    /* decode_cv = 0.5 on a loader-bound job: epoch times differ from seed to seed. */
    double mean = num(rows[1], "epoch_time_s"), half = num(rows[1], "epoch_time_s_ci95");
    assert_true(half > 0);
    /* The spread of 5 runs of 40 steps is far below the mean (loose: it is a sanity bound). */
    assert_true(half < 0.5 * mean);
    /* Text figures are kept (those of the first replication). */
    const char *bk[] = {"bottleneck", NULL};
    assert_non_null(yajl_tree_get(rows[1], bk, yajl_t_string));
    yajl_tree_free(rows[0]);
    yajl_tree_free(rows[1]);
    unlink(p);

    /* R = 1: plain figures, no _ci95 columns. */
    o.replications = 1;
    o.format = SIM_SWEEP_CSV;
    assert_int_equal(sweep(axes, p, o, &st, &err), 0);
    char *d = slurp(p, NULL);
    assert_null(strstr(d, "_ci95"));
    free(d);
    unlink(p);
}

static void test_sweep_run_oom_point_is_a_row(void **state)
{
    (void)state;
    /* The real catalog: a 7B model's weights alone exceed an A10's 24 GB, of which 22.5 GB are
     * usable with the ECC it ships with (catalog ecc_reserve 1/16); ResNet-18 fits. */
    sim_experiment x;
    cfg_experiment_set set;
    base(&x, &set);
    sim_err err;
    assert_int_equal(cfg_experiment_apply("system.gpu=a10", &x, &set, &err), 0);
    assert_int_equal(cfg_experiment_apply("system.cpu=epyc-7742", &x, &set, &err), 0);
    assert_int_equal(cfg_experiment_apply("system.storage=nvme-gen4", &x, &set, &err), 0);
    assert_int_equal(cfg_experiment_apply("training.max_steps=3", &x, &set, &err), 0);
    assert_int_equal(cfg_experiment_apply("loader.batch_size=8", &x, &set, &err), 0);
    sim_sweep_spec s;
    static const char *const axes[] = {"workload.model=llama-7b,resnet18", NULL};
    make_spec(&s, axes);
    char p[64];
    tmp_path(p, sizeof p);
    sim_sweep_opts o = {.out_path = p,
                        .format = SIM_SWEEP_JSONL,
                        .threads = 1,
                        .replications = 1,
                        .catalog_dir = EPOCHSIM_SOURCE_DIR "/configs/hardware"};
    sim_sweep_stats st;
    if (sim_sweep_run(&s, &x, &set, &o, &st, &err)) fail_msg("%s", err.msg);
    assert_int_equal(st.oom, 1);
    assert_int_equal(st.failed, 0);
    yajl_val rows[2];
    assert_int_equal(read_jsonl(p, rows, 2), 2);
    assert_true(num(rows[0], "oom") == 1);
    assert_true(num(rows[0], "memory.capacity_gb") == 22.5);
    assert_true(num(rows[0], "memory.peak_gb") > 24);
    assert_true(num(rows[0], "memory.max_batch") == 0);
    const char *ek[] = {"epoch_time_s", NULL};
    assert_true(YAJL_IS_NULL(yajl_tree_get(rows[0], ek, yajl_t_any))); /* not simulated */
    assert_true(num(rows[1], "oom") == 0);
    assert_true(num(rows[1], "memory.peak_gb") < 24);
    assert_true(num(rows[1], "epoch_time_s") > 0);
    yajl_tree_free(rows[0]);
    yajl_tree_free(rows[1]);
    sim_sweep_spec_free(&s);
    unlink(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_run_parallel_output_is_identical),
        cmocka_unit_test(test_sweep_run_invalid_point_is_an_error_row),
        cmocka_unit_test(test_sweep_run_resume_after_cut_file),
        cmocka_unit_test(test_sweep_run_resume_refuses_another_sweep),
        cmocka_unit_test(test_sweep_run_stop_then_resume),
        cmocka_unit_test(test_sweep_run_jsonl_rows_parse),
        cmocka_unit_test(test_sweep_run_replications_give_confidence_intervals),
        cmocka_unit_test(test_sweep_run_oom_point_is_a_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
