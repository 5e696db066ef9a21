/* test_trace.c — the native trace file: round trip, and a truncated or corrupted file always
 * gives an error with a byte offset (never a crash, never a silent success). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/core/workload.h"
#include "traces/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void tmp_path(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "/tmp/epochsim_test_trace_%ld_%s.trace", (long)getpid(), tag);
}

static void fill_header(trc_header *h)
{
    trc_header_init(h);
    snprintf(h->gpu_name, sizeof h->gpu_name, "Tesla V100-DGXS-32GB");
    h->gpu_sms = 80;
    h->gpu_cc = 7.0;
    h->gpu_mem_bytes = 34084028416LL;
    snprintf(h->cpu_model, sizeof h->cpu_model, "Intel Xeon E5-2698 v4");
    snprintf(h->precision, sizeof h->precision, "fp32");
    h->batch_size = 32;
    snprintf(h->batch_size_source, sizeof h->batch_size_source, "inferred: aten::conv2d input");
    h->world_size = 2;
    h->rank = 1;
    h->steps_recorded = 3;
    h->recorded = TRC_HAS_CPU_OPS | TRC_HAS_KERNELS | TRC_HAS_MEMCPY | TRC_HAS_SHAPES |
                  TRC_HAS_COLLECTIVES | TRC_HAS_LOADER;
    snprintf(h->importer, sizeof h->importer, "test");
    snprintf(h->source, sizeof h->source, "/some/where/worker0.pt.trace.json.gz");
    snprintf(h->source_schema, sizeof h->source_schema, "kineto-old");
    h->n_dropped = 2;
    h->dropped[0].index = 4;
    h->dropped[0].reason = TRC_DROP_GPU_HELD;
    h->dropped[1].index = 9;
    h->dropped[1].reason = TRC_DROP_GPU_MISSING;
}

/* A step with every record kind and field values that differ from their defaults. */
static void fill_step(trc_step *s, int64_t index)
{
    s->index = index;
    s->start_ns = 1000000 * index;
    s->dur_ns = 176078000 + index;
    int conv = trc_step_intern_name(s, "aten::conv2d");
    int k = trc_step_intern_name(s, "volta_sgemm_128x64_nt");
    int w = trc_step_intern_name(s, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
    int l = trc_step_intern_name(s, "## load_batch ##");
    if (index == 7) { /* templated kernel names run to kilobytes (only here: keeps files small) */
        static char longname[9000];
        memset(longname, 'k', sizeof longname - 1);
        assert_true(trc_step_intern_name(s, longname) >= 0);
    }
    assert_int_equal(trc_step_intern_name(s, "aten::conv2d"), conv);
    trc_record r;
    memset(&r, 0, sizeof r);
    r.kind = TRC_REC_WAIT, r.name = w, r.cpu_start_ns = 10, r.cpu_dur_ns = 65000000;
    assert_int_equal(trc_step_add(s, &r), 0);
    memset(&r, 0, sizeof r);
    r.kind = TRC_REC_LOADER, r.name = l, r.cpu_start_ns = 20, r.cpu_dur_ns = 981000, r.worker = 3;
    assert_int_equal(trc_step_add(s, &r), 0);
    memset(&r, 0, sizeof r);
    r.kind = TRC_REC_MEMCPY, r.sub = TRC_MEMCPY_H2D, r.bytes = 19267584, r.pinned = 0,
    r.cpu_start_ns = 65000100, r.cpu_dur_ns = 2022000, r.stream = 7, r.gpu_start_ns = 65000260,
    r.gpu_dur_ns = 1940000;
    assert_int_equal(trc_step_add(s, &r), 0);
    memset(&r, 0, sizeof r);
    r.kind = TRC_REC_SYNC, r.sub = TRC_SYNC_STREAM, r.cpu_start_ns = 67100000, r.cpu_dur_ns = 83000;
    assert_int_equal(trc_step_add(s, &r), 0);
    memset(&r, 0, sizeof r);
    r.kind = TRC_REC_OP, r.name = conv, r.cpu_start_ns = 75882000, r.cpu_dur_ns = 335000,
    r.flops = 3.7767e9 * 2, r.bytes = 2.6e7;
    assert_int_equal(trc_step_add(s, &r), 0);
    memset(&r, 0, sizeof r);
    r.kind = TRC_REC_KERNEL, r.thread = 1, r.name = k, r.cpu_start_ns = 75950000,
    r.cpu_dur_ns = 9000, r.stream = 7, r.gpu_start_ns = 76000000, r.gpu_dur_ns = 1200000,
    r.unit = SIM_UNIT_CUDA, r.flops = 7.5e9, r.bytes = 2.6e7, r.blocks = 1568;
    assert_int_equal(trc_step_add(s, &r), 0);
    memset(&r, 0, sizeof r);
    r.kind = TRC_REC_MEMSET, r.bytes = 128000, r.cpu_start_ns = 76000000, r.cpu_dur_ns = 16000,
    r.stream = 7, r.gpu_start_ns = 77300000, r.gpu_dur_ns = 1000;
    assert_int_equal(trc_step_add(s, &r), 0);
    memset(&r, 0, sizeof r);
    r.kind = TRC_REC_COLLECTIVE, r.thread = 1, r.sub = TRC_COLL_ALL_REDUCE, r.bytes = 8196000,
    r.group_size = 2, r.cpu_start_ns = 80000000, r.cpu_dur_ns = 92804, r.stream = 40,
    r.gpu_start_ns = 81000000, r.gpu_dur_ns = 3306963;
    assert_int_equal(trc_step_add(s, &r), 0);
    memset(&r, 0, sizeof r);
    /* a kernel whose GPU side was not recorded, and a negative CPU offset */
    r.kind = TRC_REC_KERNEL, r.name = -1, r.cpu_start_ns = -5, r.cpu_dur_ns = 1, r.stream = -1,
    r.gpu_dur_ns = -1, r.unit = SIM_UNIT_MEMORY;
    assert_int_equal(trc_step_add(s, &r), 0);
}

static int write_sample(const char *path, int steps)
{
    trc_header h;
    fill_header(&h);
    trc_writer *w = NULL;
    sim_err err;
    sim_err_clear(&err);
    int rc = trc_writer_open(path, &h, &w, &err);
    if (rc) return rc;
    for (int i = 0; i < steps; i++) {
        trc_step s;
        memset(&s, 0, sizeof s);
        fill_step(&s, 5 + i);
        rc = trc_writer_step(w, &s, &err);
        trc_step_free(&s);
        if (rc) {
            trc_writer_abort(w);
            return rc;
        }
    }
    return trc_writer_close(w, &err);
}

/* Reads a whole trace; returns 0 and the step count, or the first error. */
static int read_all(const char *path, int *steps, sim_err *err)
{
    trc_reader *r = NULL;
    *steps = 0;
    int rc = trc_reader_open(path, &r, err);
    if (rc) return rc;
    const trc_step *s;
    while ((rc = trc_reader_next_step(r, &s, err)) > 0)
        (*steps)++;
    trc_reader_close(r);
    return rc;
}

static void test_trace_round_trip(void **state)
{
    (void)state;
    char path[256];
    tmp_path(path, sizeof path, "rt");
    assert_int_equal(write_sample(path, 3), 0);

    trc_reader *r = NULL;
    sim_err err;
    sim_err_clear(&err);
    assert_int_equal(trc_reader_open(path, &r, &err), 0);
    trc_header want;
    fill_header(&want);
    const trc_header *h = trc_reader_header(r);
    assert_int_equal(h->version, TRC_FORMAT_VERSION);
    assert_string_equal(h->gpu_name, want.gpu_name);
    assert_int_equal(h->gpu_sms, 80);
    assert_true(h->gpu_cc == 7.0);
    assert_true(h->gpu_mem_bytes == want.gpu_mem_bytes);
    assert_string_equal(h->cpu_model, want.cpu_model);
    assert_string_equal(h->precision, "fp32");
    assert_int_equal(h->batch_size, 32);
    assert_string_equal(h->batch_size_source, want.batch_size_source);
    assert_int_equal(h->world_size, 2);
    assert_int_equal(h->rank, 1);
    assert_int_equal(h->steps_recorded, 3);
    assert_int_equal(h->recorded, want.recorded);
    assert_string_equal(h->importer, "test");
    assert_string_equal(h->source, want.source);
    assert_string_equal(h->source_schema, "kineto-old");
    assert_int_equal(h->n_dropped, 2);
    assert_int_equal(h->dropped[1].index, 9);
    assert_int_equal(h->dropped[1].reason, TRC_DROP_GPU_MISSING);

    for (int i = 0; i < 3; i++) {
        const trc_step *s = NULL;
        assert_int_equal(trc_reader_next_step(r, &s, &err), 1);
        trc_step w;
        memset(&w, 0, sizeof w);
        fill_step(&w, 5 + i);
        assert_int_equal(s->index, w.index);
        assert_int_equal(s->start_ns, w.start_ns);
        assert_int_equal(s->dur_ns, w.dur_ns);
        assert_int_equal(s->n_names, w.n_names);
        for (size_t j = 0; j < w.n_names; j++)
            assert_string_equal(s->names[j], w.names[j]);
        assert_int_equal(s->n_recs, w.n_recs);
        for (size_t j = 0; j < w.n_recs; j++) {
            const trc_record *a = &s->recs[j], *b = &w.recs[j];
            assert_int_equal(a->kind, b->kind);
            assert_int_equal(a->thread, b->thread);
            assert_int_equal(a->cpu_start_ns, b->cpu_start_ns);
            assert_int_equal(a->cpu_dur_ns, b->cpu_dur_ns);
            assert_true(a->bytes == b->bytes);
            if (b->kind == TRC_REC_OP || b->kind == TRC_REC_KERNEL || b->kind == TRC_REC_WAIT ||
                b->kind == TRC_REC_LOADER)
                assert_int_equal(a->name, b->name);
            if (b->kind == TRC_REC_KERNEL || b->kind == TRC_REC_MEMCPY ||
                b->kind == TRC_REC_MEMSET || b->kind == TRC_REC_COLLECTIVE) {
                assert_int_equal(a->stream, b->stream);
                assert_int_equal(a->gpu_start_ns, b->gpu_start_ns);
                assert_int_equal(a->gpu_dur_ns, b->gpu_dur_ns);
            }
            if (b->kind == TRC_REC_KERNEL) {
                assert_int_equal(a->unit, b->unit);
                assert_true(a->flops == b->flops);
                assert_int_equal(a->blocks, b->blocks);
            }
            if (b->kind == TRC_REC_MEMCPY) assert_int_equal(a->pinned, b->pinned);
            if (b->kind == TRC_REC_MEMCPY || b->kind == TRC_REC_SYNC ||
                b->kind == TRC_REC_COLLECTIVE)
                assert_int_equal(a->sub, b->sub);
            if (b->kind == TRC_REC_COLLECTIVE) assert_int_equal(a->group_size, b->group_size);
            if (b->kind == TRC_REC_LOADER) assert_int_equal(a->worker, b->worker);
        }
        trc_step_free(&w);
    }
    const trc_step *s = NULL;
    assert_int_equal(trc_reader_next_step(r, &s, &err), 0);
    assert_null(s);
    assert_int_equal(trc_reader_next_step(r, &s, &err), 0);
    trc_reader_close(r);
    remove(path);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)len);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return buf;
}

static void spill(const char *path, const unsigned char *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
}

static void test_trace_truncated_everywhere(void **state)
{
    (void)state;
    char path[256], cut[256];
    tmp_path(path, sizeof path, "full");
    tmp_path(cut, sizeof cut, "cut");
    assert_int_equal(write_sample(path, 2), 0);
    size_t n;
    unsigned char *buf = slurp(path, &n);
    assert_true(n > 300);
    /* every length from 0 to n-1: the whole file is small, so try them all */
    for (size_t len = 0; len < n; len++) {
        spill(cut, buf, len);
        sim_err err;
        sim_err_clear(&err);
        int steps;
        int rc = read_all(cut, &steps, &err);
        if (rc >= 0) fail_msg("a trace cut to %zu of %zu bytes was read without error", len, n);
        assert_int_equal(rc, SIM_EFORMAT);
        assert_int_equal(err.code, SIM_EFORMAT);
        assert_true(err.offset >= 0 && err.offset <= (long long)len);
        assert_true(err.msg[0] != 0);
    }
    free(buf);
    remove(path);
    remove(cut);
}

static void test_trace_corrupted_bytes(void **state)
{
    (void)state;
    char path[256], bad[256];
    tmp_path(path, sizeof path, "good");
    tmp_path(bad, sizeof bad, "bad");
    assert_int_equal(write_sample(path, 2), 0);
    size_t n;
    unsigned char *buf = slurp(path, &n);
    /* Each byte replaced by values that turn msgpack headers into huge containers (0xdd array32,
     * 0xdf map32, 0xc6 bin32), the reserved 0xc1, and its bit complement. */
    const unsigned char subst[] = {0xdd, 0xdf, 0xc6, 0xc1};
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k <= sizeof subst; k++) {
            unsigned char orig = buf[i];
            unsigned char v = k < sizeof subst ? subst[k] : (unsigned char)~orig;
            if (v == orig) continue;
            buf[i] = v;
            spill(bad, buf, n);
            buf[i] = orig;
            sim_err err;
            sim_err_clear(&err);
            int steps;
            int rc = read_all(bad, &steps, &err);
            if (rc >= 0)
                fail_msg("byte %zu of %zu changed %02x->%02x was read without error", i, n, orig,
                         v);
            assert_true(rc == SIM_EFORMAT);
            assert_true(err.offset >= 0 && err.offset <= (long long)n);
        }
    }
    free(buf);
    remove(path);
    remove(bad);
}

static void test_trace_wrong_version(void **state)
{
    (void)state;
    char path[256];
    tmp_path(path, sizeof path, "ver");
    assert_int_equal(write_sample(path, 1), 0);
    size_t n;
    unsigned char *buf = slurp(path, &n);
    /* magic: fixstr header + 14 bytes; the version follows as a positive fixint */
    assert_int_equal(buf[15], TRC_FORMAT_VERSION);
    buf[15] = TRC_FORMAT_VERSION + 1;
    spill(path, buf, n);
    trc_reader *r = NULL;
    sim_err err;
    sim_err_clear(&err);
    assert_int_equal(trc_reader_open(path, &r, &err), SIM_EFORMAT);
    assert_null(r);
    assert_int_equal(err.offset, 15);
    assert_non_null(strstr(err.msg, "version 2"));
    assert_non_null(strstr(err.msg, "newer"));
    free(buf);
    remove(path);
}

static void test_trace_not_a_trace(void **state)
{
    (void)state;
    char path[256];
    tmp_path(path, sizeof path, "json");
    const char json[] = "{\"traceEvents\": []}\n";
    spill(path, (const unsigned char *)json, sizeof json - 1);
    trc_reader *r = NULL;
    sim_err err;
    sim_err_clear(&err);
    assert_int_equal(trc_reader_open(path, &r, &err), SIM_EFORMAT);
    assert_non_null(strstr(err.msg, "not an epochsim trace"));
    assert_int_equal(err.offset, 0);
    spill(path, (const unsigned char *)"", 0);
    assert_int_equal(trc_reader_open(path, &r, &err), SIM_EFORMAT);
    assert_non_null(strstr(err.msg, "empty"));
    remove(path);
    assert_int_equal(trc_reader_open(path, &r, &err), SIM_ENOENT);
}

static void test_trace_writer_whole_or_nothing(void **state)
{
    (void)state;
    char path[256];
    tmp_path(path, sizeof path, "atomic");
    remove(path);
    trc_header h;
    fill_header(&h);
    trc_writer *w = NULL;
    sim_err err;
    sim_err_clear(&err);
    assert_int_equal(trc_writer_open(path, &h, &w, &err), 0);
    trc_step s;
    memset(&s, 0, sizeof s);
    fill_step(&s, 1);
    assert_int_equal(trc_writer_step(w, &s, &err), 0);
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0); /* nothing at the path until close */
    trc_writer_abort(w);
    assert_int_not_equal(stat(path, &st), 0);

    /* an existing trace survives an aborted rewrite */
    assert_int_equal(write_sample(path, 2), 0);
    assert_int_equal(trc_writer_open(path, &h, &w, &err), 0);
    assert_int_equal(trc_writer_step(w, &s, &err), 0);
    trc_writer_abort(w);
    int steps;
    assert_int_equal(read_all(path, &steps, &err), 0);
    assert_int_equal(steps, 2);

    /* a record pointing past the name table is refused */
    assert_int_equal(trc_writer_open(path, &h, &w, &err), 0);
    s.recs[0].name = 99;
    assert_int_equal(trc_writer_step(w, &s, &err), SIM_EINVAL);
    trc_writer_abort(w);
    trc_step_free(&s);
    remove(path);

    assert_int_equal(trc_writer_open("/nonexistent-dir/x.trace", &h, &w, &err), SIM_ENOENT);
    assert_null(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_round_trip),
        cmocka_unit_test(test_trace_truncated_everywhere),
        cmocka_unit_test(test_trace_corrupted_bytes),
        cmocka_unit_test(test_trace_wrong_version),
        cmocka_unit_test(test_trace_not_a_trace),
        cmocka_unit_test(test_trace_writer_whole_or_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
