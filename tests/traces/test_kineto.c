/* test_kineto.c — the Kineto importer on the hand-made fixtures of both schemas (every figure
 * below is worked out by hand from the fixtures in tests/data/kineto/), on broken input, and on the
 * five real traces copied into tests/data/validation-traces/ (a missing one is a failure). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/core/workload.h"
#include "traces/kineto.h"
#include "traces/program.h"
#include "traces/stats.h"
#include "traces/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define FIXTURES EPOCHSIM_SOURCE_DIR "/tests/data/kineto/"
#define REAL EPOCHSIM_SOURCE_DIR "/tests/data/validation-traces/"
#define T1 REAL "kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
#define T2 REAL "kineto/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz"
#define T3 REAL "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
#define T4 REAL "hta/nccl_parser_config/nccl_data.json.gz"
#define T5 REAL "hta/trace_diff/control/control.json.gz"

static void out_path(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "/tmp/epochsim_test_kineto_%ld_%s.trace", (long)getpid(), tag);
}

/* Reads every step of a native trace into an array (caller frees with free_steps). */
typedef struct steps {
    trc_header h;
    trc_step *v;
    size_t n;
} steps;

static void read_steps(const char *path, steps *out)
{
    memset(out, 0, sizeof *out);
    trc_reader *r = NULL;
    sim_err err;
    sim_err_clear(&err);
    if (trc_reader_open(path, &r, &err)) fail_msg("%s: %s", path, err.msg);
    out->h = *trc_reader_header(r);
    const trc_step *s;
    int rc;
    while ((rc = trc_reader_next_step(r, &s, &err)) > 0) {
        out->v = realloc(out->v, (out->n + 1) * sizeof *out->v);
        trc_step *c = &out->v[out->n++];
        memset(c, 0, sizeof *c);
        c->index = s->index, c->start_ns = s->start_ns, c->dur_ns = s->dur_ns;
        for (size_t i = 0; i < s->n_names; i++)
            assert_true(trc_step_add_name(c, s->names[i]) >= 0);
        for (size_t i = 0; i < s->n_recs; i++)
            assert_int_equal(trc_step_add(c, &s->recs[i]), 0);
    }
    assert_int_equal(rc, 0);
    trc_reader_close(r);
}

static void free_steps(steps *s)
{
    for (size_t i = 0; i < s->n; i++)
        trc_step_free(&s->v[i]);
    free(s->v);
}

static const trc_record *find_rec(const trc_step *s, int kind, const char *name, int nth)
{
    for (size_t i = 0; i < s->n_recs; i++) {
        const trc_record *r = &s->recs[i];
        if (r->kind != kind) continue;
        if (name && strcmp(trc_step_rec_name(s, r), name) != 0) continue;
        if (nth-- == 0) return r;
    }
    return NULL;
}

static int count_kind(const trc_step *s, int kind)
{
    int n = 0;
    for (size_t i = 0; i < s->n_recs; i++)
        n += s->recs[i].kind == kind;
    return n;
}

static void test_kineto_old_schema_fixture(void **state)
{
    (void)state;
    char out[256];
    out_path(out, sizeof out, "old");
    trc_kineto_summary sum;
    sim_err err;
    sim_err_clear(&err);
    int rc = trc_kineto_import(FIXTURES "old_schema.json", out, NULL, &sum, &err);
    if (rc) fail_msg("%s", err.msg);
    assert_string_equal(sum.source_schema, "kineto-old");
    assert_int_equal(sum.steps_found, 4);
    assert_int_equal(sum.steps_kept, 2);
    /* step 1: its copy started 6 ms after the launch with no recorded GPU work (rule W1);
     * step 4: its conv launch has no kernel (rule W2) */
    assert_int_equal(sum.n_dropped, 2);
    assert_int_equal(sum.dropped[0].index, 1);
    assert_int_equal(sum.dropped[0].reason, TRC_DROP_GPU_HELD);
    assert_int_equal(sum.dropped[1].index, 4);
    assert_int_equal(sum.dropped[1].reason, TRC_DROP_GPU_MISSING);
    assert_int_equal(sum.launches_without_gpu, 1);
    assert_int_equal(sum.threads, 2);
    assert_int_equal(sum.n_steps, 2);
    const trc_step_stat *st = &sum.steps[0];
    assert_int_equal(st->index, 2);
    assert_int_equal(st->step_ns, 9000000);
    assert_int_equal(st->kernels, 5);
    /* conv 30 + bn 10 + dgrad 20 + wgrad 20 + add 5 us */
    assert_int_equal(st->kernel_ns, 85000);
    /* + copy 20 + memset 2 us, none overlapping */
    assert_int_equal(st->gpu_busy_ns, 107000);
    assert_int_equal(st->data_wait_ns, 100000);
    assert_int_equal(st->h2d_bytes, 1536);
    assert_int_equal(st->syncs, 1);
    assert_int_equal(st->memsets, 1);
    /* aten::to, aten::conv2d, aten::batch_norm, CudnnConvolutionBackward, aten::add_ */
    assert_int_equal(st->ops, 5);
    assert_int_equal(sum.steps[1].step_ns, 8800000);
    assert_true(sum.launch_ns.p50 == 10000.0);
    trc_kineto_summary_free(&sum);

    steps s;
    read_steps(out, &s);
    assert_string_equal(s.h.gpu_name, "Tesla V100-DGXS-32GB");
    assert_int_equal(s.h.gpu_sms, 80);
    assert_true(s.h.gpu_cc == 7.0);
    assert_string_equal(s.h.precision, "fp32");
    assert_int_equal(s.h.batch_size, 2);
    assert_int_equal(s.h.steps_recorded, 2);
    assert_int_equal(s.n, 2);
    const trc_step *p = &s.v[0];
    /* the forward conv: [2,3,8,8] * [4,3,3,3] -> [2,4,8,8] (from the batch norm after it):
     * 2*2*4*3*3*3*8*8 = 27648 FLOPs, all on its one compute kernel */
    const trc_record *k = find_rec(p, TRC_REC_KERNEL, "volta_scudnn_128x64_relu_interior_nn_v1", 0);
    assert_non_null(k);
    assert_true(k->flops == 27648.0);
    assert_int_equal(k->unit, SIM_UNIT_CUDA);
    assert_int_equal(k->blocks, 40);
    assert_int_equal(k->stream, 7);
    assert_int_equal(k->cpu_start_ns, 220000);
    assert_int_equal(k->cpu_dur_ns, 10000);
    assert_int_equal(k->gpu_start_ns, 235000);
    assert_int_equal(k->gpu_dur_ns, 30000);
    const trc_record *op = find_rec(p, TRC_REC_OP, "aten::conv2d", 0);
    assert_non_null(op);
    assert_true(op->flops == 27648.0);
    /* backward: twice the forward FLOPs, split 20:20 over dgrad and wgrad; on thread 1 */
    const trc_record *dg = find_rec(p, TRC_REC_KERNEL, NULL, 2);
    assert_non_null(dg);
    assert_int_equal(dg->thread, 1);
    assert_true(dg->flops == 27648.0);
    const trc_record *bop = find_rec(p, TRC_REC_OP, "CudnnConvolutionBackward", 0);
    assert_non_null(bop);
    assert_true(bop->flops == 2 * 27648.0);
    /* batch norm kernel: memory-bound, bytes of aten::batch_norm: input 2048 + 4 params of 16 +
     * output 2048 */
    const trc_record *bn = find_rec(p, TRC_REC_KERNEL, NULL, 1);
    assert_int_equal(bn->unit, SIM_UNIT_MEMORY);
    assert_true(bn->bytes == 2048 + 64 + 2048);
    const trc_record *cp = find_rec(p, TRC_REC_MEMCPY, NULL, 0);
    assert_int_equal(cp->sub, TRC_MEMCPY_H2D);
    assert_int_equal(cp->pinned, 0);
    assert_true(cp->bytes == 1536);
    const trc_record *w = find_rec(p, TRC_REC_WAIT, NULL, 0);
    assert_int_equal(w->cpu_start_ns, 10000);
    assert_int_equal(w->cpu_dur_ns, 100000);
    /* records are in CPU start order */
    for (size_t i = 1; i < p->n_recs; i++)
        assert_true(p->recs[i].cpu_start_ns >= p->recs[i - 1].cpu_start_ns);
    free_steps(&s);
    remove(out);
}

static void check_new_fixture(const char *in, const char *tag)
{
    char out[256];
    out_path(out, sizeof out, tag);
    trc_kineto_summary sum;
    sim_err err;
    sim_err_clear(&err);
    if (trc_kineto_import(in, out, NULL, &sum, &err)) fail_msg("%s: %s", in, err.msg);
    assert_string_equal(sum.source_schema, "kineto-new");
    assert_int_equal(sum.steps_found, 3);
    assert_int_equal(sum.steps_kept, 3);
    assert_int_equal(sum.n_dropped, 0);
    assert_int_equal(sum.world_size, 2);
    assert_int_equal(sum.rank, 1);
    const trc_step_stat *st = &sum.steps[0];
    assert_int_equal(st->index, 10);
    assert_int_equal(st->step_ns, 8000250); /* 8000.25 us, exactly */
    assert_int_equal(st->kernels, 4);
    assert_int_equal(st->kernel_ns, 24000); /* 12.5 + 2 + 8 + 1.5 us */
    /* + H2D 3.5, D2H 1.5, NCCL 150, memset 1 us */
    assert_int_equal(st->gpu_busy_ns, 180000);
    assert_int_equal(st->collectives, 1);
    assert_int_equal(st->collective_gpu_ns, 150000);
    assert_int_equal(st->collective_bytes, 4000); /* 1000 Float elements */
    assert_int_equal(st->data_wait_ns, 80125);    /* __next__ 50.125 + wait_for_batch 30 us */
    assert_int_equal(st->h2d_bytes, 2048);
    assert_int_equal(st->memcpys, 2);
    assert_int_equal(st->syncs, 1);
    /* aten::to, linear, relu, item, add_ on the main thread; the autograd node on thread 1 */
    assert_int_equal(st->ops, 6);
    assert_int_equal(sum.steps[2].step_ns, 7999750);
    trc_kineto_summary_free(&sum);

    steps s;
    read_steps(out, &s);
    assert_string_equal(s.h.gpu_name, "NVIDIA A100-SXM4-40GB");
    assert_int_equal(s.h.gpu_sms, 108);
    assert_string_equal(s.h.precision, "tf32");
    assert_int_equal(s.h.batch_size, 16);
    assert_int_equal(s.h.world_size, 2);
    assert_int_equal(s.h.rank, 1);
    assert_true(s.h.recorded & TRC_HAS_COLLECTIVES);
    assert_true(s.h.recorded & TRC_HAS_LOADER);
    assert_true(s.h.recorded & TRC_HAS_DATA_WAITS);
    const trc_step *p = &s.v[0];
    /* the copy call starts at 5000115.75 us, the step at 5000000.5 us: 115.25 us exactly */
    const trc_record *cp = find_rec(p, TRC_REC_MEMCPY, NULL, 0);
    assert_int_equal(cp->cpu_start_ns, 115250);
    assert_int_equal(cp->cpu_dur_ns, 8500);
    assert_int_equal(cp->stream, 22);
    assert_int_equal(cp->pinned, 1);
    const trc_record *d2h = find_rec(p, TRC_REC_MEMCPY, NULL, 1);
    assert_int_equal(d2h->sub, TRC_MEMCPY_D2H);
    assert_int_equal(d2h->pinned, 0);
    /* addmm [16,32] x [32,8] + bias: 2*16*32*8 + 16*8 FLOPs on tensor cores (tf32) */
    const trc_record *g = find_rec(p, TRC_REC_KERNEL, NULL, 0);
    assert_int_equal(g->unit, SIM_UNIT_TENSOR);
    assert_true(g->flops == 8320.0);
    /* backward mm [16,8] x [8,32] on CUDA cores, thread 1 */
    const trc_record *b = find_rec(p, TRC_REC_KERNEL, "ampere_sgemm_32x128_nn", 0);
    assert_non_null(b);
    assert_int_equal(b->thread, 1);
    assert_int_equal(b->unit, SIM_UNIT_CUDA);
    assert_true(b->flops == 8192.0);
    const trc_record *c = find_rec(p, TRC_REC_COLLECTIVE, NULL, 0);
    assert_int_equal(c->sub, TRC_COLL_ALL_REDUCE);
    assert_int_equal(c->group_size, 2);
    assert_int_equal(c->stream, 40);
    assert_int_equal(c->gpu_dur_ns, 150000);
    assert_int_equal(c->thread, 1);
    assert_non_null(find_rec(p, TRC_REC_LOADER, "## load_batch ##", 0));
    assert_non_null(find_rec(p, TRC_REC_WAIT, "## wait_for_batch ##", 0));
    /* the NCCL kernel is the collective's, not a kernel record */
    for (size_t i = 0; i < p->n_recs; i++)
        if (p->recs[i].kind == TRC_REC_KERNEL)
            assert_null(strstr(trc_step_rec_name(p, &p->recs[i]), "nccl"));
    free_steps(&s);
    remove(out);
}

static void test_kineto_new_schema_fixture(void **state)
{
    (void)state;
    check_new_fixture(FIXTURES "new_schema.json", "new");
}

static void test_kineto_gzip_input(void **state)
{
    (void)state;
    char gz[256];
    snprintf(gz, sizeof gz, "/tmp/epochsim_test_kineto_%ld.json.gz", (long)getpid());
    FILE *f = fopen(FIXTURES "new_schema.json", "rb");
    assert_non_null(f);
    gzFile z = gzopen(gz, "wb");
    assert_non_null(z);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        assert_int_equal(gzwrite(z, buf, (unsigned)n), (int)n);
    fclose(f);
    assert_int_equal(gzclose(z), Z_OK);
    check_new_fixture(gz, "gz");

    /* the same gzip cut in half: an error, never a crash or a partial trace */
    struct stat st;
    assert_int_equal(stat(gz, &st), 0);
    assert_int_equal(truncate(gz, st.st_size / 2), 0);
    char out[256];
    out_path(out, sizeof out, "gzcut");
    remove(out);
    sim_err err;
    sim_err_clear(&err);
    int rc = trc_kineto_import(gz, out, NULL, NULL, &err);
    assert_true(rc == SIM_EFORMAT || rc == SIM_EIO);
    assert_int_not_equal(stat(out, &st), 0);
    remove(gz);
}

static void write_text(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
}

static void test_kineto_bad_input(void **state)
{
    (void)state;
    char in[256], out[256];
    snprintf(in, sizeof in, "/tmp/epochsim_test_kineto_%ld_bad.json", (long)getpid());
    out_path(out, sizeof out, "bad");
    sim_err err;
    sim_err_clear(&err);
    struct stat st;

    assert_int_equal(trc_kineto_import("/nonexistent/x.json", out, NULL, NULL, &err), SIM_ENOENT);

    /* not JSON: the error names line and column */
    const char notjson[] = "{\n  \"traceEvents\": [\n    {\"ph\": X}\n  ]\n}\n";
    write_text(in, notjson, sizeof notjson - 1);
    assert_int_equal(trc_kineto_import(in, out, NULL, NULL, &err), SIM_EFORMAT);
    assert_int_equal(err.line, 3);
    assert_true(err.col > 1);
    assert_true(err.offset > 0);

    /* JSON without traceEvents, without GPU work (with or without steps: a trace without
     * ProfilerStep#N is cut into steps from its kernels, so it needs some) */
    const char empty[] = "{\"schemaVersion\": 1}";
    write_text(in, empty, sizeof empty - 1);
    assert_int_equal(trc_kineto_import(in, out, NULL, NULL, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "traceEvents"));
    const char nosteps[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": "
                           "\"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}]}";
    write_text(in, nosteps, sizeof nosteps - 1);
    assert_int_equal(trc_kineto_import(in, out, NULL, NULL, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "no GPU kernels"));
    const char nogpu[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"user_annotation\", "
                         "\"name\": \"ProfilerStep#1\", \"pid\": 1, \"tid\": 1, \"ts\": 1, "
                         "\"dur\": 20}]}";
    write_text(in, nogpu, sizeof nogpu - 1);
    assert_int_equal(trc_kineto_import(in, out, NULL, NULL, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "GPU"));

    /* the fixture cut at many places: always an error, never a file */
    FILE *f = fopen(FIXTURES "new_schema.json", "rb");
    assert_non_null(f);
    static char text[1 << 17];
    size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    assert_true(n > 1000 && n < sizeof text);
    for (size_t cut = 0; cut < n - 2; cut += 97) {
        write_text(in, text, cut);
        remove(out);
        int rc = trc_kineto_import(in, out, NULL, NULL, &err);
        if (rc >= 0) fail_msg("the fixture cut to %zu bytes was imported", cut);
        assert_int_not_equal(stat(out, &st), 0);
    }
    remove(in);
}

static int have(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Imports a real trace; a missing one fails the test (they are part of the repository). */
static void import_real(const char *path, const char *tag, trc_kineto_summary *sum, steps *s)
{
    if (!have(path))
        fail_msg("%s is missing: the validation traces belong in the repository", path);
    char out[256];
    out_path(out, sizeof out, tag);
    sim_err err;
    sim_err_clear(&err);
    if (trc_kineto_import(path, out, NULL, sum, &err)) fail_msg("%s: %s", path, err.msg);
    read_steps(out, s);
    remove(out);
}

/* Every ns of a step's CPU span is dispatch, data wait, sync or blocked time in the program. */
static void check_program_identity(const steps *s)
{
    for (size_t i = 0; i < s->n; i++) {
        sim_program p;
        memset(&p, 0, sizeof p);
        trc_program_info info;
        memset(&info, 0, sizeof info);
        assert_int_equal(trc_step_to_program(&s->v[i], s->h.gpu_sms, 0, &p, &info, NULL), 0);
        int64_t accounted = info.dispatch_ns + info.data_wait_ns + info.sync_ns + info.blocked_ns;
        assert_true(accounted >= s->v[i].dur_ns);
        /* only records that run past the step's end can add to it; none do by more than 1 ms
         * in the validation traces */
        assert_true(accounted - s->v[i].dur_ns < 1000000);
        /* the kernel ops carry every recorded kernel */
        trc_step_stat st;
        assert_int_equal(trc_step_stats(&s->v[i], &st), 0);
        assert_true(sim_program_gpu_ns(&p) >= st.kernel_ns);
        for (size_t k = 0; k < p.n_ops; k++) {
            assert_true(p.ops[k].dispatch_ns >= 0);
            assert_true(p.ops[k].sm_fraction > 0 && p.ops[k].sm_fraction <= 1);
        }
        sim_program_free(&p);
    }
}

static void test_kineto_real_trace1_resnet50_workers0(void **state)
{
    (void)state;
    trc_kineto_summary sum;
    steps s;
    import_real(T1, "t1", &sum, &s);
    /* README: Tesla V100-DGXS-32GB, 80 SMs, ResNet-50 batch 32 fp32, num_workers=0 */
    assert_string_equal(s.h.gpu_name, "Tesla V100-DGXS-32GB");
    assert_int_equal(s.h.gpu_sms, 80);
    assert_int_equal(s.h.batch_size, 32);
    assert_string_equal(s.h.precision, "fp32");
    assert_string_equal(s.h.source_schema, "kineto-old");
    /* ProfilerStep#5..#10, all complete */
    assert_int_equal(sum.steps_found, 6);
    assert_int_equal(sum.steps_kept, 6);
    assert_int_equal(sum.unlinked_gpu, 0);
    for (int i = 0; i < sum.n_steps; i++) {
        const trc_step_stat *st = &sum.steps[i];
        /* 1462 kernels per step, counted independently with Python's json module over the
         * same file (Kernel events whose cudaLaunchKernel lies in the step) */
        assert_int_equal(st->kernels, 1462);
        /* that count gave 100.5-100.65 ms of GPU busy time per step (union over the stream);
         * +-1 ms allows for nothing but rounding */
        assert_true(st->gpu_busy_ns > 99500000 && st->gpu_busy_ns < 101700000);
        /* the input batch: 32 x 3 x 224 x 224 fp32 = 19,267,584 bytes, plus 256 of labels */
        assert_int_equal(st->h2d_bytes, 19267584 + 256);
        /* num_workers = 0: the main thread loads the batch itself, most of the step */
        assert_true(st->data_wait_ns > st->step_ns / 3);
    }
    assert_int_equal(sum.steps[0].step_ns, 176078000); /* ProfilerStep#5 "dur": 176078 */
    check_program_identity(&s);
    trc_kineto_summary_free(&sum);
    free_steps(&s);
}

static void test_kineto_real_trace2_resnet50_workers4(void **state)
{
    (void)state;
    trc_kineto_summary sum;
    steps s;
    import_real(T2, "t2", &sum, &s);
    assert_string_equal(s.h.gpu_name, "Tesla V100-DGXS-32GB");
    assert_int_equal(s.h.batch_size, 32);
    /* step 5's input copy waited 36 ms for GPU work of the unrecorded step 4 (rule W1) */
    assert_int_equal(sum.steps_found, 6);
    assert_int_equal(sum.steps_kept, 5);
    assert_int_equal(sum.n_dropped, 1);
    assert_int_equal(sum.dropped[0].index, 5);
    assert_int_equal(sum.dropped[0].reason, TRC_DROP_GPU_HELD);
    for (int i = 0; i < sum.n_steps; i++) {
        assert_int_equal(sum.steps[i].kernels, 1478); /* Python count, as for trace 1 */
        /* 4 workers keep the batch ready: under 2 ms of waiting in a 116-163 ms step */
        assert_true(sum.steps[i].data_wait_ns < 2000000);
    }
    check_program_identity(&s);
    trc_kineto_summary_free(&sum);
    free_steps(&s);
}

static void test_kineto_real_trace3_ddp_v100(void **state)
{
    (void)state;
    trc_kineto_summary sum;
    steps s;
    import_real(T3, "t3", &sum, &s);
    assert_string_equal(s.h.gpu_name, "Tesla V100-SXM2-32GB");
    assert_string_equal(s.h.source_schema, "kineto-new");
    assert_int_equal(s.h.batch_size, 0); /* no shapes recorded */
    assert_int_equal(s.h.world_size, 1);
    assert_int_equal(sum.steps_kept, 5);
    for (int i = 0; i < sum.n_steps; i++) {
        assert_int_equal(sum.steps[i].kernels, 870); /* Python count */
        /* 5 nccl:all_reduce (DDP buckets) and 2 nccl:broadcast per step; one rank, so NCCL
         * launches no kernel */
        assert_int_equal(sum.steps[i].collectives, 7);
        assert_int_equal(sum.steps[i].collective_gpu_ns, 0);
    }
    /* GPU-bound: the launch queue fills, launch calls block (p90 far above p50) */
    assert_true(sum.launch_ns.p90 > 10 * sum.launch_ns.p50);
    sim_program p;
    memset(&p, 0, sizeof p);
    trc_program_info info;
    sim_err err;
    sim_err_clear(&err);
    char out[256];
    out_path(out, sizeof out, "t3p");
    assert_int_equal(trc_kineto_import(T3, out, NULL, NULL, &err), 0);
    assert_int_equal(trc_trace_file_to_program(out, NULL, &p, &info, &err), 0);
    /* the median of 35.1, 72.1, 95.7, 95.6, 95.7 ms is step 104's 95.551 ms */
    assert_int_equal(info.step_index, 104);
    assert_int_equal(info.step_ns, 95551087);
    assert_true(info.blocked_ns > info.step_ns / 2);
    assert_int_equal(info.collectives, 7);
    sim_program_free(&p);
    remove(out);
    check_program_identity(&s);
    trc_kineto_summary_free(&sum);
    free_steps(&s);
}

static void test_kineto_real_trace4_nccl_a100(void **state)
{
    (void)state;
    trc_kineto_summary sum;
    steps s;
    import_real(T4, "t4", &sum, &s);
    assert_string_equal(s.h.gpu_name, "NVIDIA A100-PG509-200");
    assert_int_equal(s.h.gpu_sms, 108);
    assert_int_equal(s.h.world_size, 2);
    assert_int_equal(s.h.rank, 0);
    assert_string_equal(s.h.precision, "tf32"); /* s1688 / tf32 xmma kernels dominate */
    assert_int_equal(sum.steps_kept, 3);
    for (size_t i = 0; i < s.n; i++) {
        int ar = 0;
        for (size_t k = 0; k < s.v[i].n_recs; k++) {
            const trc_record *r = &s.v[i].recs[k];
            if (r->kind != TRC_REC_COLLECTIVE || r->sub != TRC_COLL_ALL_REDUCE) continue;
            ar++;
            /* an NCCL kernel on its own stream, and the bucket size from record_param_comms */
            assert_int_equal(r->stream, 40);
            assert_true(r->gpu_dur_ns > 0);
            assert_int_equal(r->group_size, 2);
            assert_true(r->bytes >= 4.0 * 1e6);
        }
        assert_int_equal(ar, 5); /* 15 ncclKernel_AllReduce kernels over 3 steps */
    }
    check_program_identity(&s);
    trc_kineto_summary_free(&sum);
    free_steps(&s);
}

static void test_kineto_real_trace5_recsys(void **state)
{
    (void)state;
    trc_kineto_summary sum;
    steps s;
    import_real(T5, "t5", &sum, &s);
    assert_string_equal(s.h.gpu_name, "NVIDIA A100-PG509-200");
    assert_int_equal(s.h.world_size, 8);
    assert_int_equal(s.h.rank, 3);
    /* README: aten::linear with input [1024, 1705] */
    assert_int_equal(s.h.batch_size, 1024);
    assert_true(s.h.recorded & TRC_HAS_LOADER);
    assert_int_equal(sum.steps_kept, 6);
    for (size_t i = 0; i < s.n; i++) {
        const trc_step *p = &s.v[i];
        assert_non_null(find_rec(p, TRC_REC_WAIT, "## wait_for_batch ##", 0));
        assert_non_null(find_rec(p, TRC_REC_LOADER, "## load_batch ##", 0));
        int a2a = 0;
        for (size_t k = 0; k < p->n_recs; k++)
            a2a += p->recs[k].kind == TRC_REC_COLLECTIVE && p->recs[k].sub == TRC_COLL_ALL_TO_ALL;
        assert_true(a2a >= 6); /* 36 nccl:all_to_all annotations on the main thread / 6 steps */
        assert_true(count_kind(p, TRC_REC_MEMCPY) > 20); /* the sparse batch: many pinned H2D */
        /* FLOPs were derived for the linear layers (shapes recorded) */
        trc_step_stat st;
        assert_int_equal(trc_step_stats(p, &st), 0);
        assert_true(st.kernels_with_flops > 10 && st.flops > 1e9);
    }
    check_program_identity(&s);
    trc_kineto_summary_free(&sum);
    free_steps(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kineto_old_schema_fixture),
        cmocka_unit_test(test_kineto_new_schema_fixture),
        cmocka_unit_test(test_kineto_gzip_input),
        cmocka_unit_test(test_kineto_bad_input),
        cmocka_unit_test(test_kineto_real_trace1_resnet50_workers0),
        cmocka_unit_test(test_kineto_real_trace2_resnet50_workers4),
        cmocka_unit_test(test_kineto_real_trace3_ddp_v100),
        cmocka_unit_test(test_kineto_real_trace4_nccl_a100),
        cmocka_unit_test(test_kineto_real_trace5_recsys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
