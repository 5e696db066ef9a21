/* test_program.c — native trace step -> engine step program: dispatch gaps, what is left out
 * (waits, syncs, blocked launch time), op kinds, and the median/mean/index picks. Expected values
 * are worked out by hand from the records written here or from tests/data/kineto/old_schema.json.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/core/workload.h"
#include "traces/kineto.h"
#include "traces/program.h"
#include "traces/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static trc_record rec(int kind, int64_t start_us, int64_t dur_us)
{
    trc_record r;
    memset(&r, 0, sizeof r);
    r.kind = (uint8_t)kind;
    r.name = -1;
    r.stream = 7;
    r.worker = -1;
    r.pinned = -1;
    r.gpu_dur_ns = -1;
    r.cpu_start_ns = start_us * 1000;
    r.cpu_dur_ns = dur_us * 1000;
    return r;
}

static trc_record kernel(int64_t start_us, int64_t dur_us, int64_t gpu_us, int unit, int64_t blocks)
{
    trc_record r = rec(TRC_REC_KERNEL, start_us, dur_us);
    r.gpu_start_ns = r.cpu_start_ns + 5000;
    r.gpu_dur_ns = gpu_us * 1000;
    r.unit = (uint8_t)unit;
    r.blocks = blocks;
    r.flops = 1e6;
    r.bytes = 4e6;
    return r;
}

static void test_program_dispatch_and_left_out(void **state)
{
    (void)state;
    trc_step s;
    memset(&s, 0, sizeof s);
    s.index = 3;
    s.dur_ns = 1000000; /* 1 ms */
    trc_record r;
    r = rec(TRC_REC_WAIT, 10, 200); /* data wait 10..210 us */
    trc_step_add(&s, &r);
    r = rec(TRC_REC_OP, 215, 100); /* an op around the copy: skipped itself */
    trc_step_add(&s, &r);
    r = rec(TRC_REC_MEMCPY, 220, 500); /* pageable copy blocking 500 us */
    r.sub = TRC_MEMCPY_H2D, r.bytes = 1e6, r.pinned = 0, r.gpu_dur_ns = 100000;
    trc_step_add(&s, &r);
    for (int i = 0; i < 5; i++) { /* five launches of 10 us, 20 us apart from 730 us */
        r = kernel(730 + 20 * i, 10, 50, SIM_UNIT_TENSOR, 40);
        trc_step_add(&s, &r);
    }
    r = kernel(840, 300, 50, SIM_UNIT_MEMORY, 0); /* blocked launch: 300 us call, ends 1140 */
    trc_step_add(&s, &r);
    r = rec(TRC_REC_SYNC, 900, 10); /* overlaps the blocked launch: nothing of it is left */
    trc_step_add(&s, &r);

    sim_program p;
    memset(&p, 0, sizeof p);
    trc_program_info info;
    memset(&info, 0, sizeof info);
    assert_int_equal(trc_step_to_program(&s, 80, 0, &p, &info, NULL), 0);
    /* median launch 10 us -> cap max(40, 20) = 40 us */
    assert_int_equal(info.launch_ns, 10000);
    assert_int_equal(info.launch_cap_ns, 40000);
    assert_int_equal(p.n_ops, 8); /* copy, 6 kernels, sync (no CPU tail: the launch ran past) */
    /* copy: gap 10 before the wait + gap 10 after it + 40 of its 500 us call */
    assert_int_equal(p.ops[0].kind, SIM_OP_MEMCPY_H2D);
    assert_int_equal(p.ops[0].dispatch_ns, 60000);
    assert_true(p.ops[0].bytes == 1e6);
    assert_int_equal(p.ops[0].pinned, 0);
    /* first kernel: gap 720 -> 730 + its 10 us; later ones 10 us gap + 10 us call */
    assert_int_equal(p.ops[1].kind, SIM_OP_KERNEL);
    assert_int_equal(p.ops[1].dispatch_ns, 20000);
    assert_int_equal(p.ops[1].gpu_ns, 50000);
    assert_int_equal(p.ops[1].unit, SIM_UNIT_TENSOR);
    assert_true(p.ops[1].sm_fraction == 0.5f); /* 40 blocks on 80 SMs */
    for (int i = 2; i <= 5; i++)
        assert_int_equal(p.ops[i].dispatch_ns, 20000);
    /* blocked launch: gap 20 + 40 us cap; 260 us blocked */
    assert_int_equal(p.ops[6].dispatch_ns, 60000);
    assert_true(p.ops[6].sm_fraction == 1.0f); /* blocks unknown */
    assert_int_equal(p.ops[7].kind, SIM_OP_SYNC);
    assert_int_equal(p.ops[7].dispatch_ns, 0);
    assert_int_equal(info.blocked_ns, 460000 + 260000);
    assert_int_equal(info.data_wait_ns, 200000);
    assert_int_equal(info.sync_ns, 0);
    /* the step's 1 ms plus the 140 us the launch ran past its end, all accounted */
    assert_int_equal(info.dispatch_ns + info.data_wait_ns + info.sync_ns + info.blocked_ns,
                     1140000);
    sim_program_free(&p);
    trc_step_free(&s);
}

static void test_program_op_kinds(void **state)
{
    (void)state;
    trc_step s;
    memset(&s, 0, sizeof s);
    s.dur_ns = 2000000;
    trc_record r = rec(TRC_REC_MEMCPY, 0, 10);
    r.sub = TRC_MEMCPY_D2H, r.bytes = 4;
    trc_step_add(&s, &r);
    r = rec(TRC_REC_MEMCPY, 20, 10);
    r.sub = TRC_MEMCPY_D2D, r.bytes = 1000, r.gpu_dur_ns = 3000;
    trc_step_add(&s, &r);
    r = rec(TRC_REC_MEMSET, 40, 10);
    r.bytes = 1000, r.gpu_dur_ns = 2000;
    trc_step_add(&s, &r);
    r = rec(TRC_REC_COLLECTIVE, 60, 100);
    r.sub = TRC_COLL_ALL_REDUCE, r.bytes = 4e6, r.gpu_dur_ns = 800000;
    trc_step_add(&s, &r);
    r = rec(TRC_REC_MEMCPY, 200, 10);
    r.sub = TRC_MEMCPY_H2D, r.bytes = 512, r.pinned = 1;
    trc_step_add(&s, &r);
    r = rec(TRC_REC_LOADER, 300, 500); /* a span: nothing of its own */
    trc_step_add(&s, &r);

    sim_program p;
    memset(&p, 0, sizeof p);
    trc_program_info info;
    trc_op_extra *x = NULL;
    assert_int_equal(trc_step_to_program(&s, 108, 0, &p, &info, &x), 0);
    assert_non_null(x);
    /* what sim_op cannot carry: the collective's recorded NCCL time, streams, record indices */
    assert_int_equal(x[3].recorded_gpu_ns, 800000);
    assert_int_equal(x[3].stream, 7);
    assert_int_equal(x[3].record, 3);
    assert_int_equal(x[0].recorded_gpu_ns, -1); /* the D2H copy had no GPU span */
    assert_int_equal(x[5].record, -1);          /* the closing CPU op */
    free(x);
    assert_int_equal(p.n_ops, 6);
    assert_int_equal(p.ops[0].kind, SIM_OP_MEMCPY_D2H);
    assert_int_equal(p.ops[1].kind, SIM_OP_KERNEL); /* device copy: a memory kernel */
    assert_int_equal(p.ops[1].unit, SIM_UNIT_MEMORY);
    assert_int_equal(p.ops[1].gpu_ns, 3000);
    assert_true(p.ops[1].bytes == 2000);            /* read + write */
    assert_int_equal(p.ops[2].kind, SIM_OP_KERNEL); /* memset */
    assert_true(p.ops[2].bytes == 1000);
    assert_int_equal(p.ops[3].kind, SIM_OP_ALLREDUCE);
    assert_true(p.ops[3].bytes == 4e6);
    assert_int_equal(p.ops[3].gpu_ns, 0);
    assert_int_equal(p.ops[3].dispatch_ns, 110000); /* gap 10 + 100 us enqueue, never capped */
    assert_int_equal(p.ops[4].kind, SIM_OP_MEMCPY_H2D);
    assert_int_equal(p.ops[4].pinned, 1);
    assert_int_equal(p.ops[5].kind, SIM_OP_CPU); /* 210 us .. 2 ms */
    assert_int_equal(p.ops[5].dispatch_ns, 2000000 - 210000);
    assert_int_equal(info.collectives, 1);
    assert_int_equal(info.collective_gpu_ns, 800000);
    assert_int_equal(info.h2d_bytes, 512);
    assert_int_equal(info.kernels, 2);
    sim_program_free(&p);
    trc_step_free(&s);
}

static void write_trace(const char *path, const int64_t *durs_us, int n, int odd_one)
{
    trc_header h;
    trc_header_init(&h);
    snprintf(h.gpu_name, sizeof h.gpu_name, "Test GPU");
    h.gpu_sms = 100;
    h.batch_size = 8;
    trc_writer *w = NULL;
    sim_err err;
    sim_err_clear(&err);
    assert_int_equal(trc_writer_open(path, &h, &w, &err), 0);
    for (int i = 0; i < n; i++) {
        trc_step s;
        memset(&s, 0, sizeof s);
        s.index = 100 + i;
        s.dur_ns = durs_us[i] * 1000;
        trc_record r = kernel(10, 10, 100 + 10 * i, SIM_UNIT_CUDA, 50);
        trc_step_add(&s, &r);
        r = kernel(30 + i, 10, 200, SIM_UNIT_MEMORY, 200);
        trc_step_add(&s, &r);
        if (i == odd_one) {
            r = rec(TRC_REC_SYNC, 60, 5);
            trc_step_add(&s, &r);
        }
        assert_int_equal(trc_writer_step(w, &s, &err), 0);
        trc_step_free(&s);
    }
    assert_int_equal(trc_writer_close(w, &err), 0);
}

/* Writes steps 100..103 lasting durs_us[] (four) into a temporary file named by tag, path. */
static void write_four_steps(char *path, size_t size, const char *tag, const int64_t *durs_us)
{
    snprintf(path, size, "/tmp/epochsim_test_program_%ld%s.trace", (long)getpid(), tag);
    write_trace(path, durs_us, 4, -1);
}

static void test_program_picks(void **state)
{
    (void)state;
    char path[256];
    const int64_t durs[4] = {900, 1200, 1000, 1100};
    write_four_steps(path, sizeof path, "", durs);
    sim_program p;
    memset(&p, 0, sizeof p);
    trc_program_info info;
    sim_err err;
    sim_err_clear(&err);

    /* median of 900, 1000, 1100, 1200 (lower middle) = 1000 us: step 102 */
    assert_int_equal(trc_trace_file_to_program(path, NULL, &p, &info, &err), 0);
    assert_int_equal(info.pick, TRC_PICK_MEDIAN);
    assert_int_equal(info.step_index, 102);
    assert_int_equal(info.step_ns, 1000000);
    assert_int_equal(info.step_ns_median, 1000000);
    assert_int_equal(info.step_ns_mean, 1050000);
    assert_int_equal(info.steps, 4);
    assert_string_equal(info.gpu_name, "Test GPU");
    assert_int_equal(info.batch_size, 8);
    assert_int_equal(p.ops[0].gpu_ns, 120000);
    assert_true(p.ops[0].sm_fraction == 0.5f);
    sim_program_free(&p);

    trc_program_opts o;
    trc_program_opts_init(&o);
    o.pick = TRC_PICK_INDEX;
    o.step_index = 101;
    assert_int_equal(trc_trace_file_to_program(path, &o, &p, &info, &err), 0);
    assert_int_equal(info.step_index, 101);
    assert_int_equal(p.ops[0].gpu_ns, 110000);
    sim_program_free(&p);
    o.step_index = 7;
    assert_int_equal(trc_trace_file_to_program(path, &o, &p, &info, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "no step 7"));

    /* mean: kernel 0 averages 100, 110, 120, 130 us; the second launch's gap 20..23 us */
    o.pick = TRC_PICK_MEAN;
    o.extras = 1;
    assert_int_equal(trc_trace_file_to_program(path, &o, &p, &info, &err), 0);
    assert_non_null(info.extra);
    assert_true(info.extra[0].flops == 1e6);
    assert_int_equal(info.extra[0].blocks, 50);
    assert_int_equal(info.extra[0].recorded_gpu_ns, 115000);
    trc_program_info_free(&info);
    assert_null(info.extra);
    assert_int_equal(info.step_index, -1);
    assert_int_equal(info.step_ns, 1050000);
    assert_int_equal(p.ops[0].gpu_ns, 115000);
    /* the second launch at 30+i us: gap 10+i, call 10 -> mean of 20, 21, 22, 23 us */
    assert_int_equal(p.ops[0].dispatch_ns, 20000);
    assert_int_equal(p.ops[1].dispatch_ns, 21500);
    sim_program_free(&p);

    /* steps of different structure cannot be averaged */
    write_trace(path, durs, 4, 2);
    assert_int_equal(trc_trace_file_to_program(path, &o, &p, &info, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "differ"));
    assert_null(p.ops);
    remove(path);
}

/* trc_step_note_fn of the test: notes each step's index and op count, counts its calls. */
typedef struct seen_note {
    int64_t step_index;
    size_t n_ops, n_recs;
    int had_extra;
} seen_note;

static int note_step(void *ctx, const trc_step *s, const sim_program *prog,
                     const trc_op_extra *extra, void **note, sim_err *err)
{
    int *calls = ctx;
    seen_note *n = malloc(sizeof *n);
    if (!n) return SIM_ENOMEM;
    *n = (seen_note){s->index, prog->n_ops, s->n_recs, extra != NULL};
    *note = n;
    if (++*calls == 99) /* the hook's error ends the read */
        return sim_err_set(err, SIM_EFORMAT, NULL, 0, 0, "note %d failed", *calls);
    return SIM_OK;
}

static void test_program_step_note(void **state)
{
    (void)state;
    char path[256];
    write_four_steps(path, sizeof path, "_note", (const int64_t[4]){900, 1200, 1000, 1100});
    sim_program p;
    memset(&p, 0, sizeof p);
    trc_program_info info;
    sim_err err;
    sim_err_clear(&err);
    int calls = 0;
    trc_program_opts o;
    trc_program_opts_init(&o);
    o.extras = 1;
    o.note = note_step;
    o.note_ctx = &calls;

    /* one call per step; the median step's (102) note is handed over, the rest freed */
    assert_int_equal(trc_trace_file_to_program(path, &o, &p, &info, &err), 0);
    assert_int_equal(calls, 4);
    const seen_note *n = info.note;
    assert_non_null(n);
    assert_int_equal(n->step_index, 102);
    assert_int_equal(n->n_ops, p.n_ops);
    assert_true(n->n_recs > 0);
    assert_true(n->had_extra);
    trc_program_info_free(&info);
    assert_null(info.note);
    sim_program_free(&p);

    /* TRC_PICK_MEAN uses no step as recorded: no calls, no note */
    calls = 0;
    o.pick = TRC_PICK_MEAN;
    assert_int_equal(trc_trace_file_to_program(path, &o, &p, &info, &err), 0);
    assert_int_equal(calls, 0);
    assert_null(info.note);
    trc_program_info_free(&info);
    sim_program_free(&p);

    /* an error of the hook ends the conversion with its code */
    calls = 97;
    o.pick = TRC_PICK_MEDIAN;
    assert_int_equal(trc_trace_file_to_program(path, &o, &p, &info, &err), SIM_EFORMAT);
    assert_int_equal(calls, 99);
    assert_non_null(strstr(err.msg, "note 99 failed"));
    assert_null(p.ops);
    remove(path);
}

static void test_program_old_fixture(void **state)
{
    (void)state;
    char out[256];
    snprintf(out, sizeof out, "/tmp/epochsim_test_program_%ld_old.trace", (long)getpid());
    sim_err err;
    sim_err_clear(&err);
    assert_int_equal(trc_kineto_import(EPOCHSIM_SOURCE_DIR "/tests/data/kineto/old_schema.json",
                                       out, NULL, NULL, &err),
                     0);
    sim_program p;
    memset(&p, 0, sizeof p);
    trc_program_info info;
    assert_int_equal(trc_trace_file_to_program(out, NULL, &p, &info, &err), 0);
    /* steps 2 (9.0 ms) and 3 (8.8 ms) are kept; the lower middle is step 3 */
    assert_int_equal(info.step_index, 3);
    assert_int_equal(info.step_ns, 8800000);
    assert_int_equal(info.batch_size, 2);
    assert_string_equal(info.gpu_name, "Tesla V100-DGXS-32GB");
    /* Worked out from the fixture (us from the step start): wait 10..110; copy call 130..170
     * (cap 40 = 4 x 10 us launches); sync 172..177; launches at 220, 270, 410, 440, 620 (10 us
     * each); memset call 700..708; step ends at 8800. */
    static const struct {
        int kind;
        int64_t dispatch_us, gpu_us;
    } want[] = {
        {SIM_OP_MEMCPY_H2D, 10 + 20 + 40, 0}, /* gap before the wait, gap after it, the call */
        {SIM_OP_SYNC, 2, 0},
        {SIM_OP_KERNEL, 43 + 10, 30},  /* conv */
        {SIM_OP_KERNEL, 40 + 10, 10},  /* batch norm */
        {SIM_OP_KERNEL, 130 + 10, 20}, /* dgrad, autograd thread */
        {SIM_OP_KERNEL, 20 + 10, 20},  /* wgrad */
        {SIM_OP_KERNEL, 170 + 10, 5},  /* optimizer add_ */
        {SIM_OP_KERNEL, 70 + 8, 2},    /* memset */
        {SIM_OP_CPU, 8800 - 708, 0},
    };
    assert_int_equal(p.n_ops, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < p.n_ops; i++) {
        assert_int_equal(p.ops[i].kind, want[i].kind);
        assert_int_equal(p.ops[i].dispatch_ns, want[i].dispatch_us * 1000);
        assert_int_equal(p.ops[i].gpu_ns, want[i].gpu_us * 1000);
    }
    assert_true(p.ops[2].sm_fraction == 0.5f); /* 40 blocks, 80 SMs */
    assert_int_equal(info.data_wait_ns, 100000);
    assert_int_equal(info.sync_ns, 5000);
    assert_int_equal(info.blocked_ns, 0);
    assert_int_equal(info.dispatch_ns, 8800000 - 100000 - 5000);
    assert_int_equal(info.h2d_bytes, 1536);
    sim_program_free(&p);
    remove(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_program_dispatch_and_left_out),
        cmocka_unit_test(test_program_op_kinds),
        cmocka_unit_test(test_program_picks),
        cmocka_unit_test(test_program_step_note),
        cmocka_unit_test(test_program_old_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
