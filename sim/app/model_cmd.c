/* model_cmd.c — `epochsim model list` and `epochsim model show NAME ...` (see model_cmd.h).
 * Arguments are parsed by hand into mdl_options (every value range-checked, errors name the
 * flag); the report is built once into a struct and printed either as text or as JSON (yajl). */
#include "sim/app/model_cmd.h"

#include "sim/base/json.h"
#include "models/build.h"
#include "models/cost.h"
#include "models/expand.h"
#include "models/memory.h"
#include "models/zoo.h"
#include "sim/setup/catalog.h"
#include "sim/setup/seqlen.h"
#include "sim/app/app.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: epochsim model list [--json]\n"
            "       epochsim model show NAME [options]\n"
            "\n"
            "Shows a zoo model's parameters, FLOPs per sample, kernels and CPU dispatch per\n"
            "training step, and its GPU memory footprint.\n"
            "\n"
            "options of `show`:\n"
            "  --batch B              samples per micro-batch (default 32)\n"
            "  --precision P          fp32 tf32 fp16 bf16 amp_fp16 amp_bf16 (default fp32)\n"
            "  --image HxW | --image N  input image size (vision models; default 224)\n"
            "  --seq N                sequence length (text models)\n"
            "  --features N           input features (vector models)\n"
            "  --seq-lengths FILE     text models: the dataset's sequence-length histogram\n"
            "                         (CSV: length,count); each batch padded to its longest\n"
            "  --seq-bin N            with --seq-lengths: length bins of N tokens (LDDL)\n"
            "  --seq-align N          with --seq-lengths: pad to a multiple of N (default 8)\n"
            "  --optimizer O          sgd (with momentum, default), adam (AdamW), bertadam\n"
            "                         (NVIDIA BERT's per-parameter loop, clips each gradient)\n"
            "                         or none (forward and backward only: no step, gradients\n"
            "                         add up)\n"
            "  --opt-impl I           foreach (default), fused, forloop\n"
            "  --grad-clip C          none (default), global (clip_grad_norm_ over all) or apex\n"
            "                         (multi-tensor norm, .item(), scale: NVIDIA BERT's)\n"
            "  --zero-grad Z          auto (default: zero before PyTorch 2.0 unless fused,\n"
            "                         else set_to_none; none without an optimizer), none,\n"
            "                         set_to_none or zero (a fill kernel per gradient)\n"
            "  --no-weight-decay      optimizer without weight decay\n"
            "  --accum N              gradient accumulation steps (default 1)\n"
            "  --checkpoint[=S]       activation checkpointing in S segments (default sqrt)\n"
            "  --cuda-graphs          the step is replayed as one CUDA graph\n"
            "  --inference            model.eval() under torch.no_grad(): the forward alone,\n"
            "                         no loss, dropout off, nothing kept for backward\n"
            "  --memory-format F      contiguous (NCHW, default) or channels_last\n"
            "  --pytorch V            PyTorch release, 1.6 .. 2.9 (default 2.9)\n"
            "  --attention A          default (the model's own), eager or sdpa\n"
            "  --fuser F              none (eager, default) or nvfuser (torch.jit.script:\n"
            "                         attention's softmax chain and dropout+add fused)\n"
            "  --gpu NAME             price kernels on a catalog GPU, check its memory\n"
            "  --catalog DIR          hardware catalog (default $EPOCHSIM_CATALOG or built-in)\n"
            "  --capacity-gb G        check memory against G GiB (without --gpu)\n"
            "  --ecc E                with --gpu: default (as the card ships), on or off; a\n"
            "                         GDDR card's ECC check bits take 1/16 of its memory\n"
            "  --kernels              list every kernel and CPU op of the step\n"
            "  --json                 machine-readable output\n"
            "\n"
            "examples:\n"
            "  epochsim model list\n"
            "  epochsim model show resnet50 --batch 256 --precision amp_fp16\n"
            "  epochsim model show bert-large --seq 384 --batch 32 --optimizer adam --gpu "
            "a100-sxm4-80gb\n"
            "  epochsim model show llama-7b --batch 1 --precision bf16 --optimizer adam "
            "--capacity-gb 24 --json\n");
}

static const char *input_kind_name(mdl_input_kind k)
{
    return k == MDL_IN_IMAGE ? "image" : k == MDL_IN_TOKENS ? "tokens" : "vector";
}

/* ---- JSON helpers ---- */

static void js(yajl_gen g, const char *s)
{
    yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void jflush(yajl_gen g)
{
    const unsigned char *buf;
    size_t len;
    yajl_gen_get_buf(g, &buf, &len);
    fwrite(buf, 1, len, stdout);
    yajl_gen_free(g);
}

static yajl_gen jnew(void)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    if (g) yajl_gen_config(g, yajl_gen_beautify, 1);
    return g;
}

/* ---- list ---- */

static int cmd_list(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return SIM_EXIT_OK;
        } else {
            fprintf(stderr, "epochsim model list: unknown argument '%s'\n", argv[i]);
            return SIM_EXIT_USAGE;
        }
    }
    yajl_gen g = NULL;
    if (json) {
        g = jnew();
        if (!g) return SIM_EXIT_ERROR;
        yajl_gen_array_open(g);
    } else {
        printf("%-20s %-8s %-10s %12s %12s  %s\n", "name", "input", "default", "params", "fwd GMAC",
               "label");
    }
    for (size_t i = 0; i < mdl_zoo_count(); i++) {
        const mdl_zoo_entry *e = mdl_zoo_at(i);
        mdl_net net;
        sim_err err;
        mdl_shape s = {0};
        if (mdl_zoo_build(e->name, &s, &net, &err)) {
            mdl_net_free(&net);
            fprintf(stderr, "epochsim model list: %s\n", err.msg);
            if (g) yajl_gen_free(g);
            return SIM_EXIT_ERROR;
        }
        mdl_zoo_resolve_shape(e, &s);
        char def[32];
        if (e->input == MDL_IN_IMAGE)
            snprintf(def, sizeof def, "%dx%d", s.h, s.w);
        else if (e->input == MDL_IN_TOKENS)
            snprintf(def, sizeof def, "seq %d", s.seq);
        else
            snprintf(def, sizeof def, "%d feat", s.features);
        double params = mdl_net_params(&net), macs = mdl_net_fwd_macs(&net);
        if (g) {
            yajl_gen_map_open(g);
            sim_json_str(g, "name", e->name);
            sim_json_str(g, "label", e->label);
            sim_json_str(g, "input", input_kind_name(e->input));
            sim_json_str(g, "default_shape", def);
            sim_json_num(g, "params", params);
            sim_json_num(g, "fwd_macs_per_sample", macs);
            sim_json_str(g, "source", e->source);
            yajl_gen_map_close(g);
        } else {
            printf("%-20s %-8s %-10s %11.2fM %12.3f  %s\n", e->name, input_kind_name(e->input), def,
                   params / 1e6, macs / 1e9, e->label);
        }
        mdl_net_free(&net);
    }
    if (g) {
        yajl_gen_array_close(g);
        jflush(g);
    }
    return SIM_EXIT_OK;
}

/* ---- show ---- */

typedef struct show_args {
    const char *model;
    mdl_options opt;
    const char *gpu;
    const char *catalog;
    double capacity_gb;
    int ecc; /* SIM_ECC_*: the GPU's memory as it ships, or with ECC on or off (--gpu only) */
    const char *seq_lengths; /* a sequence-length histogram (docs/sequence-lengths.md) */
    int seq_bin, seq_align;  /* its bins and padding multiple */
    bool kernels, json;
} show_args;

static int parse_long(const char *flag, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "epochsim model show: %s expects an integer in %ld..%ld, got '%s'\n", flag,
                lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_image(const char *s, int *h, int *w)
{
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10), b = a;
    if (!errno && end != s && (*end == 'x' || *end == 'X')) {
        const char *p = end + 1;
        b = strtol(p, &end, 10);
        if (end == p) return -1;
    }
    if (errno || *end || a < 1 || b < 1 || a > 8192 || b > 8192) return -1;
    *h = (int)a;
    *w = (int)b;
    return 0;
}

/* What an option helper below returns for an option that is not one of its own. */
#define NOT_MINE (-2)

/* Inside an option helper: fails when option f has no value v. */
#define NEED_VALUE(f, v)                                                                           \
    do {                                                                                           \
        if (!(v)) {                                                                                \
            fprintf(stderr, "epochsim model show: %s needs a value\n", f);                         \
            return SIM_EXIT_USAGE;                                                                 \
        }                                                                                          \
    } while (0)

/* Option f with value v (NULL when f is last) for the model's batch, precision and input shape;
 * returns 0 (v used), an exit code, or NOT_MINE. */
static int shape_option(const char *f, const char *v, show_args *a)
{
    long n;
    if (!strcmp(f, "--batch")) {
        NEED_VALUE(f, v);
        if (parse_long(f, v, 1, 1L << 24, &n)) return SIM_EXIT_USAGE;
        a->opt.batch = (int)n;
    } else if (!strcmp(f, "--precision")) {
        NEED_VALUE(f, v);
        if (sim_precision_parse(v, &a->opt.precision)) {
            fprintf(stderr,
                    "epochsim model show: unknown precision '%s' (fp32, tf32, fp16, bf16, "
                    "amp_fp16, amp_bf16)\n",
                    v);
            return SIM_EXIT_USAGE;
        }
    } else if (!strcmp(f, "--image")) {
        NEED_VALUE(f, v);
        if (parse_image(v, &a->opt.shape.h, &a->opt.shape.w)) {
            fprintf(stderr,
                    "epochsim model show: --image expects HxW or N in 1..8192, got "
                    "'%s'\n",
                    v);
            return SIM_EXIT_USAGE;
        }
    } else if (!strcmp(f, "--seq")) {
        NEED_VALUE(f, v);
        if (parse_long(f, v, 1, 1L << 20, &n)) return SIM_EXIT_USAGE;
        a->opt.shape.seq = (int)n;
    } else if (!strcmp(f, "--seq-lengths")) {
        NEED_VALUE(f, v);
        a->seq_lengths = v;
    } else if (!strcmp(f, "--seq-bin")) {
        NEED_VALUE(f, v);
        if (parse_long(f, v, 0, 1L << 24, &n)) return SIM_EXIT_USAGE;
        a->seq_bin = (int)n;
    } else if (!strcmp(f, "--seq-align")) {
        NEED_VALUE(f, v);
        if (parse_long(f, v, 1, 4096, &n)) return SIM_EXIT_USAGE;
        a->seq_align = (int)n;
    } else if (!strcmp(f, "--features")) {
        NEED_VALUE(f, v);
        if (parse_long(f, v, 1, 1L << 24, &n)) return SIM_EXIT_USAGE;
        a->opt.shape.features = (int)n;
    } else {
        return NOT_MINE;
    }
    return 0;
}

/* "epochsim model show: unknown --FLAG 'v' (a, b, c)"; returns the usage exit code. */
static int unknown_value(const char *flag, const char *v, const char *const *names)
{
    fprintf(stderr, "epochsim model show: unknown %s '%s' (", flag, v);
    for (int i = 0; names[i]; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", names[i]);
    fprintf(stderr, ")\n");
    return SIM_EXIT_USAGE;
}

/* Option f with value v for the optimizer, accumulation, GPU and capacity; as shape_option. */
static int step_option(const char *f, const char *v, show_args *a)
{
    long n;
    if (!strcmp(f, "--optimizer")) {
        NEED_VALUE(f, v);
        if (mdl_optimizer_parse(v, &a->opt.optimizer)) {
            fprintf(stderr,
                    "epochsim model show: unknown optimizer '%s' (sgd, adam, bertadam, none)\n", v);
            return SIM_EXIT_USAGE;
        }
    } else if (!strcmp(f, "--opt-impl")) {
        NEED_VALUE(f, v);
        if (mdl_opt_impl_parse(v, &a->opt.opt_impl)) {
            fprintf(stderr,
                    "epochsim model show: unknown --opt-impl '%s' (foreach, fused, forloop)\n", v);
            return SIM_EXIT_USAGE;
        }
    } else if (!strcmp(f, "--grad-clip")) {
        NEED_VALUE(f, v);
        int i = mdl_name_index(mdl_grad_clip_names, v);
        if (i < 0) return unknown_value(f, v, mdl_grad_clip_names);
        a->opt.grad_clip = i;
    } else if (!strcmp(f, "--zero-grad")) {
        NEED_VALUE(f, v);
        int i = mdl_name_index(mdl_zero_grad_names, v);
        if (i < 0) return unknown_value(f, v, mdl_zero_grad_names);
        a->opt.zero_grad = i;
    } else if (!strcmp(f, "--accum")) {
        NEED_VALUE(f, v);
        if (parse_long(f, v, 1, 1024, &n)) return SIM_EXIT_USAGE;
        a->opt.accum_steps = (int)n;
    } else if (!strcmp(f, "--memory-format")) {
        NEED_VALUE(f, v);
        int i = mdl_name_index(mdl_memory_format_names, v);
        if (i < 0) return unknown_value(f, v, mdl_memory_format_names);
        a->opt.channels_last = i == 1;
    } else if (!strcmp(f, "--attention")) {
        NEED_VALUE(f, v);
        int i = mdl_name_index(mdl_attention_names, v);
        if (i < 0) return unknown_value(f, v, mdl_attention_names);
        a->opt.attention = i;
    } else if (!strcmp(f, "--fuser")) {
        NEED_VALUE(f, v);
        int i = mdl_name_index(mdl_fuser_names, v);
        if (i < 0) return unknown_value(f, v, mdl_fuser_names);
        a->opt.fuser = i;
    } else if (!strcmp(f, "--pytorch")) {
        NEED_VALUE(f, v);
        int i = mdl_name_index(mdl_pytorch_names, v);
        if (i < 0) return unknown_value(f, v, mdl_pytorch_names);
        a->opt.pytorch = mdl_pytorch_version(i);
    } else if (!strcmp(f, "--gpu")) {
        NEED_VALUE(f, v);
        a->gpu = v;
    } else if (!strcmp(f, "--catalog")) {
        NEED_VALUE(f, v);
        a->catalog = v;
    } else if (!strcmp(f, "--ecc")) {
        NEED_VALUE(f, v);
        int i = mdl_name_index(sim_gpu_ecc_names, v);
        if (i < 0) return unknown_value(f, v, sim_gpu_ecc_names);
        a->ecc = i;
    } else if (!strcmp(f, "--capacity-gb")) {
        NEED_VALUE(f, v);
        char *end;
        errno = 0;
        double g = strtod(v, &end);
        if (errno || end == v || *end || !(g > 0 && g < 1e6)) {
            fprintf(stderr,
                    "epochsim model show: --capacity-gb expects a number > 0, got "
                    "'%s'\n",
                    v);
            return SIM_EXIT_USAGE;
        }
        a->capacity_gb = g;
    } else {
        return NOT_MINE;
    }
    return 0;
}
#undef NEED_VALUE

/* Option f without a value; returns 0, an exit code, or NOT_MINE. */
static int flag_option(const char *f, show_args *a)
{
    long n;
    if (!strcmp(f, "--no-weight-decay")) {
        a->opt.weight_decay = false;
    } else if (!strcmp(f, "--checkpoint")) {
        a->opt.checkpointing = true;
    } else if (!strncmp(f, "--checkpoint=", 13)) {
        if (parse_long("--checkpoint", f + 13, 1, 100000, &n)) return SIM_EXIT_USAGE;
        a->opt.checkpointing = true;
        a->opt.ckpt_segments = (int)n;
    } else if (!strcmp(f, "--cuda-graphs")) {
        a->opt.cuda_graphs = true;
    } else if (!strcmp(f, "--inference")) {
        a->opt.inference = true;
    } else if (!strcmp(f, "--kernels")) {
        a->kernels = true;
    } else if (!strcmp(f, "--json")) {
        a->json = true;
    } else {
        return NOT_MINE;
    }
    return 0;
}

/* Returns 0, -1 after --help, or an exit code. */
static int parse_show(int argc, char **argv, show_args *a)
{
    memset(a, 0, sizeof *a);
    mdl_options_defaults(&a->opt);
    a->seq_align = 8; /* as workload.seq_align */
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            usage(stdout);
            return -1;
        }
        int rc = shape_option(f, v, a);
        if (rc == NOT_MINE) rc = step_option(f, v, a);
        if (rc != NOT_MINE) {
            if (rc) return rc;
            i++; /* its value */
            continue;
        }
        if ((rc = flag_option(f, a)) != NOT_MINE) {
            if (rc) return rc;
        } else if (f[0] == '-') {
            fprintf(stderr, "epochsim model show: unknown option '%s' (see --help)\n", f);
            return SIM_EXIT_USAGE;
        } else if (!a->model) {
            a->model = f;
        } else {
            fprintf(stderr, "epochsim model show: unexpected argument '%s'\n", f);
            return SIM_EXIT_USAGE;
        }
    }
    if (!a->model) {
        fprintf(stderr, "epochsim model show: which model? (epochsim model list)\n");
        return SIM_EXIT_USAGE;
    }
    if (a->ecc != SIM_ECC_DEFAULT && !a->gpu) {
        fprintf(stderr, "epochsim model show: --ecc applies to a catalog GPU: give --gpu NAME\n");
        return SIM_EXIT_USAGE;
    }
    return 0;
}
#undef NOT_MINE

static const char *kind_name(uint8_t k)
{
    switch (k) {
    case SIM_OP_KERNEL:
        return "kernel";
    case SIM_OP_CPU:
        return "cpu";
    case SIM_OP_SYNC:
        return "sync";
    case SIM_OP_MEMCPY_D2H:
        return "d2h";
    case SIM_OP_MEMCPY_H2D:
        return "h2d";
    default:
        return "?";
    }
}

typedef struct mem_row {
    const char *key, *label;
    double bytes;
} mem_row;

static int mem_rows(const mdl_memory *m, mem_row *r)
{
    int n = 0;
    r[n++] = (mem_row){"weights_gb", "weights", m->weights_bytes};
    r[n++] = (mem_row){"weight_copies_gb", "AMP weight copies", m->weight_copies_bytes};
    r[n++] = (mem_row){"grads_gb", "gradients", m->grads_bytes};
    r[n++] = (mem_row){"optimizer_gb", "optimizer state", m->optimizer_bytes};
    r[n++] = (mem_row){"activations_gb", "activations", m->activations_bytes};
    r[n++] = (mem_row){"transient_gb", "backward working set", m->transient_bytes};
    r[n++] = (mem_row){"optimizer_temp_gb", "optimizer temporaries", m->optimizer_temp_bytes};
    r[n++] = (mem_row){"workspace_gb", "cuBLAS/cuDNN workspace", m->workspace_bytes};
    r[n++] = (mem_row){"context_gb", "CUDA context", m->context_bytes};
    r[n++] = (mem_row){"allocator_rounding_gb", "allocator rounding", m->rounding_bytes};
    return n;
}

#define GIB 1073741824.0

/* Everything `model show` reports, built once and printed as text or JSON. */
typedef struct show_report {
    const show_args *a;
    const mdl_zoo_entry *e;
    mdl_net net;
    mdl_step step;
    mdl_memory mem;
    mdl_step_totals t;
    sim_gpu_desc gpu;
    bool have_gpu;
    double capacity;               /* bytes; 0 = none given */
    double samples;                /* per step: batch x micro-batches */
    double fwd_flops, train_flops; /* per step */
    double params, macs;           /* macs: forward, per sample */
    int64_t gpu_ns, dispatch_ns;   /* per step */
    char shape_txt[48];
    mdl_seq_mix mix; /* the micro-batches' padded lengths (--seq-lengths; n = 0 without) */
    mem_row rows[12];
    int nrows;
} show_report;

/* Builds the model, its step and its memory into r (r->a, gpu and capacity set). */
static int build_report(show_report *r, sim_err *err)
{
    const show_args *a = r->a;
    mdl_options o = mdl_options_on(&a->opt, r->have_gpu ? &r->gpu : NULL);
    if (mdl_build_net(a->model, &o, &r->net, err)) return -1;
    r->e = mdl_zoo_find(a->model);
    mdl_shape shape = a->opt.shape;
    mdl_zoo_resolve_shape(r->e, &shape);
    if (a->seq_lengths && (r->e->input != MDL_IN_TOKENS ||
                           cfg_seq_mix_file(a->seq_lengths, shape.seq, a->seq_bin, a->seq_align,
                                            a->opt.batch, a->opt.accum_steps, &r->mix, err)))
        return r->e->input == MDL_IN_TOKENS
                   ? -1
                   : sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                                 "--seq-lengths: %s takes no token sequences", r->e->name);
    o.seq_mix = r->mix;
    if (mdl_build_step(a->model, &r->net, &o, NULL, &r->step, err) ||
        mdl_memory_estimate(&r->net, &o, r->capacity, &r->mem, err))
        return -1;
    mdl_step_totals_get(&r->step, &r->t);
    r->samples = (double)a->opt.batch * a->opt.accum_steps;
    r->fwd_flops = r->t.flops[MDL_PH_FWD] + r->t.flops[MDL_PH_LOSS];
    for (int p = 0; p < MDL_PH_COUNT; p++)
        r->train_flops += r->t.flops[p];
    r->params = mdl_net_params(&r->net);
    r->macs = mdl_net_fwd_macs(&r->net);
    r->gpu_ns = r->have_gpu ? mdl_step_gpu_ns(&r->step, &r->gpu) : 0;
    r->dispatch_ns = a->opt.cuda_graphs ? r->step.graph_launch_ns : r->t.dispatch_ns;
    if (r->e->input == MDL_IN_IMAGE)
        snprintf(r->shape_txt, sizeof r->shape_txt, "3x%dx%d image", shape.h, shape.w);
    else if (r->e->input == MDL_IN_TOKENS)
        snprintf(r->shape_txt, sizeof r->shape_txt, "%d tokens", shape.seq);
    else
        snprintf(r->shape_txt, sizeof r->shape_txt, "%d features", shape.features);
    r->nrows = mem_rows(&r->mem, r->rows);
    return 0;
}

/* JSON: the model, the step's options and its counts. */
static void json_summary(yajl_gen g, const show_report *r)
{
    const show_args *a = r->a;
    sim_json_str(g, "model", r->e->name);
    sim_json_str(g, "label", r->e->label);
    sim_json_str(g, "source", r->e->source);
    sim_json_str(g, "input", r->shape_txt);
    if (r->mix.n) { /* --seq-lengths: the micro-batches' padded lengths */
        sim_json_num(g, "seq_mean", mdl_seq_mix_mean(&r->mix));
        sim_json_bool(g, "seq_averaged", r->mix.averaged);
        js(g, "seq_groups");
        yajl_gen_array_open(g);
        for (int i = 0; i < r->mix.n; i++) {
            yajl_gen_map_open(g);
            sim_json_int(g, "tokens", r->mix.seq[i]);
            sim_json_int(g, "micro_batches", r->mix.micro[i]);
            yajl_gen_map_close(g);
        }
        yajl_gen_array_close(g);
    }
    sim_json_int(g, "batch", a->opt.batch);
    sim_json_str(g, "precision", sim_precision_name(a->opt.precision));
    sim_json_str(g, "optimizer", mdl_optimizer_name(a->opt.optimizer));
    sim_json_str(g, "opt_impl", mdl_opt_impl_name(a->opt.opt_impl));
    sim_json_str(g, "grad_clip", mdl_grad_clip_names[a->opt.grad_clip]);
    sim_json_str(g, "zero_grad", mdl_zero_grad_names[mdl_zero_grad_mode(&a->opt)]);
    sim_json_bool(g, "master_weights", mdl_master_weights(&a->opt));
    sim_json_str(g, "fuser", mdl_fuser_names[a->opt.fuser]);
    sim_json_int(g, "accum_steps", a->opt.accum_steps);
    sim_json_int(g, "checkpoint_segments", r->step.ckpt_segments);
    sim_json_bool(g, "cuda_graphs", a->opt.cuda_graphs);
    sim_json_num(g, "params", r->params);
    sim_json_int(g, "param_tensors", mdl_net_param_tensors(&r->net));
    sim_json_num(g, "fwd_macs_per_sample", r->macs);
    sim_json_num(g, "fwd_flops_per_sample", r->fwd_flops / r->samples);
    sim_json_num(g, "train_flops_per_sample", r->train_flops / r->samples);
    sim_json_int(g, "kernels_per_step", (long long)r->t.kernels);
    js(g, "kernels_by_phase");
    yajl_gen_map_open(g);
    for (int p = 0; p < MDL_PH_COUNT; p++)
        sim_json_int(g, mdl_phase_name((mdl_phase)p), (long long)r->t.kernels_phase[p]);
    yajl_gen_map_close(g);
    sim_json_int(g, "cpu_ops_per_step", (long long)r->t.cpu_ops);
    sim_json_int(g, "syncs_per_step", (long long)r->t.syncs);
    sim_json_num(g, "dispatch_ms_per_step", r->dispatch_ns / 1e6);
    sim_json_num(g, "graph_launch_us", r->step.graph_launch_ns / 1e3);
}

/* JSON: the step on the GPU (when one is given) and the memory footprint. */
static void json_gpu_memory(yajl_gen g, const show_report *r)
{
    if (r->have_gpu) {
        js(g, "gpu");
        yajl_gen_map_open(g);
        sim_json_str(g, "name", r->gpu.name);
        sim_json_num(g, "step_gpu_ms", r->gpu_ns / 1e6);
        sim_json_num(g, "samples_per_s_gpu_bound",
                     r->gpu_ns > 0 ? r->samples / (r->gpu_ns / 1e9) : 0);
        yajl_gen_map_close(g);
    }
    js(g, "memory");
    yajl_gen_map_open(g);
    for (int i = 0; i < r->nrows; i++)
        sim_json_num(g, r->rows[i].key, r->rows[i].bytes / GIB);
    sim_json_num(g, "peak_gb", r->mem.peak_bytes / GIB);
    js(g, "capacity_gb");
    if (r->capacity > 0)
        yajl_gen_double(g, r->capacity / GIB);
    else
        yajl_gen_null(g);
    sim_json_bool(g, "oom", r->mem.oom);
    js(g, "max_batch");
    if (r->mem.max_batch >= 0)
        yajl_gen_integer(g, r->mem.max_batch);
    else
        yajl_gen_null(g);
    yajl_gen_map_close(g);
}

/* JSON: one object per kernel of the step (--kernels). */
static void json_kernels(yajl_gen g, const show_report *r)
{
    js(g, "kernels");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < r->step.n; i++) {
        const mdl_kernel *k = &r->step.k[i];
        yajl_gen_map_open(g);
        sim_json_str(g, "op", k->op);
        sim_json_str(g, "kind", kind_name(k->kind));
        sim_json_str(g, "phase", mdl_phase_name((mdl_phase)k->phase));
        sim_json_str(g, "layer", k->layer >= 0 ? r->net.layers[k->layer].name : "");
        sim_json_int(g, "micro", k->micro);
        sim_json_num(g, "flops", k->flops);
        sim_json_num(g, "bytes", k->bytes);
        sim_json_num(g, "dispatch_us", k->dispatch_ns / 1e3);
        if (r->have_gpu && k->kind == SIM_OP_KERNEL) {
            mdl_cost c;
            mdl_kernel_cost(k, &r->gpu, r->a->opt.precision, &c);
            sim_json_num(g, "gpu_us", c.total_ns / 1e3);
            sim_json_str(g, "unit", sim_unit_name(c.unit));
            sim_json_num(g, "blocks", c.blocks);
            if (k->math == MDL_MATH_CONV) sim_json_str(g, "algo", mdl_algo_name(c.algo));
        }
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
}

/* The report as one JSON object on stdout; -1 when the generator cannot be made. */
static int show_json(const show_report *r)
{
    yajl_gen g = jnew();
    if (!g) return -1;
    yajl_gen_map_open(g);
    json_summary(g, r);
    json_gpu_memory(g, r);
    if (r->a->kernels) json_kernels(g, r);
    yajl_gen_map_close(g);
    jflush(g);
    return 0;
}

/* Text: the model, the step's options and its counts, its time on the GPU. */
static void text_summary(const show_report *r)
{
    const show_args *a = r->a;
    const mdl_step_totals *t = &r->t;
    printf("model          %s - %s\n", r->e->name, r->e->label);
    printf("source         %s\n", r->e->source);
    printf("input          %s\n", r->shape_txt);
    if (r->mix.n) {
        printf("sequences      padded to %.1f tokens a sample on average:",
               mdl_seq_mix_mean(&r->mix));
        for (int i = 0; i < r->mix.n; i++)
            printf(" %d x %d", r->mix.micro[i], r->mix.seq[i]);
        printf(" (micro-batches x tokens)%s\n",
               r->mix.averaged ? "; one mean length: fewer micro-batches than bins" : "");
    }
    printf("parameters     %.2f M in %d tensors\n", r->params / 1e6,
           mdl_net_param_tensors(&r->net));
    printf("forward        %.3f GMAC per sample (conv/linear/attention matmuls)\n", r->macs / 1e9);
    if (a->opt.inference)
        printf("inference step batch %d, %s, model.eval() under torch.no_grad()%s%s\n",
               a->opt.batch, sim_precision_name(a->opt.precision),
               a->opt.fuser == MDL_FUSER_NVFUSER ? ", NVFuser" : "",
               a->opt.cuda_graphs ? ", CUDA graphs" : "");
    else
        printf("training step  batch %d x %d micro-batches, %s, %s (%s)%s%s%s%s%s%s\n",
               a->opt.batch, a->opt.accum_steps, sim_precision_name(a->opt.precision),
               mdl_optimizer_name(a->opt.optimizer),
               a->opt.optimizer == MDL_OPT_BERTADAM ? "loop"
               : a->opt.optimizer == MDL_OPT_NONE   ? "no step"
                                                    : mdl_opt_impl_name(a->opt.opt_impl),
               a->opt.grad_clip == MDL_CLIP_GLOBAL ? ", global gradient clipping"
               : a->opt.grad_clip == MDL_CLIP_APEX ? ", apex gradient clipping"
                                                   : "",
               r->step.ckpt_segments ? ", activation checkpointing" : "",
               a->opt.fuser == MDL_FUSER_NVFUSER ? ", NVFuser" : "",
               mdl_zero_grad_mode(&a->opt) == MDL_ZG_ZERO ? ", zero_grad zeroes each gradient" : "",
               a->opt.cuda_graphs ? ", CUDA graphs" : "",
               mdl_master_weights(&a->opt) ? ", fp32 master weights (apex O2)" : "");
    printf("FLOPs/sample   forward %.3f GFLOP, training step %.3f GFLOP (all kernels)\n",
           r->fwd_flops / r->samples / 1e9, r->train_flops / r->samples / 1e9);
    printf("kernels/step   %zu (forward %zu, loss %zu, backward %zu, recompute %zu, "
           "optimizer %zu); CPU-only ops %zu; syncs %zu\n",
           t->kernels, t->kernels_phase[MDL_PH_FWD], t->kernels_phase[MDL_PH_LOSS],
           t->kernels_phase[MDL_PH_BWD], t->kernels_phase[MDL_PH_RECOMPUTE],
           t->kernels_phase[MDL_PH_OPT], t->cpu_ops, t->syncs);
    if (a->opt.cuda_graphs)
        printf("dispatch/step  %.3f ms (one CUDA-graph launch; eager would be %.2f ms)\n",
               r->dispatch_ns / 1e6, t->dispatch_ns / 1e6);
    else
        printf("dispatch/step  %.2f ms of CPU on the reference core (eager)\n",
               r->dispatch_ns / 1e6);
    if (r->have_gpu)
        printf("GPU time/step  %.2f ms on %s -> %.1f samples/s if GPU-bound\n", r->gpu_ns / 1e6,
               r->gpu.name, r->gpu_ns > 0 ? r->samples / (r->gpu_ns / 1e9) : 0);
}

/* Text: the memory footprint. */
static void text_memory(const show_report *r)
{
    printf("memory (GiB)\n");
    for (int i = 0; i < r->nrows; i++)
        printf("  %-24s %9.3f\n", r->rows[i].label, r->rows[i].bytes / GIB);
    printf("  %-24s %9.3f\n", "peak", r->mem.peak_bytes / GIB);
    if (r->capacity > 0)
        printf("  %-24s %9.3f  -> %s; largest batch that fits: %d\n", "capacity", r->capacity / GIB,
               r->mem.oom ? "OUT OF MEMORY" : "fits", r->mem.max_batch);
}

/* Text: a table of the step's kernels (--kernels). */
static void text_kernels(const show_report *r)
{
    printf("\n%5s %-9s %-6s %-44s %-34s %12s %12s %9s", "#", "phase", "kind", "layer", "op",
           "MFLOP", "MB", "disp_us");
    if (r->have_gpu) printf(" %9s %-7s %8s", "gpu_us", "unit", "blocks");
    printf("\n");
    for (size_t i = 0; i < r->step.n; i++) {
        const mdl_kernel *k = &r->step.k[i];
        printf("%5zu %-9s %-6s %-44s %-34s %12.3f %12.3f %9.1f", i,
               mdl_phase_name((mdl_phase)k->phase), kind_name(k->kind),
               k->layer >= 0 ? r->net.layers[k->layer].name : "-", k->op, k->flops / 1e6,
               k->bytes / 1e6, k->dispatch_ns / 1e3);
        if (r->have_gpu && k->kind == SIM_OP_KERNEL) {
            mdl_cost c;
            mdl_kernel_cost(k, &r->gpu, r->a->opt.precision, &c);
            printf(" %9.1f %-7s %8.0f", c.total_ns / 1e3, sim_unit_name(c.unit), c.blocks);
            if (c.algo == MDL_ALGO_WINOGRAD) printf(" %s", mdl_algo_name(c.algo));
        }
        printf("\n");
    }
}

/* The report as text on stdout. */
static int show_text(const show_report *r)
{
    text_summary(r);
    text_memory(r);
    if (r->a->kernels) text_kernels(r);
    return 0;
}

static int cmd_show(int argc, char **argv)
{
    show_args a;
    int rc = parse_show(argc, argv, &a);
    if (rc < 0) return SIM_EXIT_OK; /* --help */
    if (rc) return rc;
    sim_err err;
    sim_err_clear(&err);
    if (mdl_options_check(&a.opt, &err)) {
        fprintf(stderr, "epochsim model show: %s\n", err.msg);
        return SIM_EXIT_USAGE;
    }
    show_report r;
    memset(&r, 0, sizeof r);
    r.a = &a;
    if (a.gpu) {
        if (cfg_catalog_load(sim_app_catalog_dir(a.catalog), CFG_CAT_GPU, a.gpu, &r.gpu, &err)) {
            fprintf(stderr, "epochsim model show: ");
            sim_err_print(&err, stderr);
            return SIM_EXIT_ERROR;
        }
        cfg_gpu_apply_ecc(&r.gpu, a.ecc); /* the memory a job sees */
        r.have_gpu = true;
    }
    r.capacity = r.have_gpu ? mdl_gpu_capacity_bytes(&r.gpu) : a.capacity_gb * GIB;
    int exit_code = SIM_EXIT_ERROR;
    if (build_report(&r, &err) || (a.json ? show_json(&r) : show_text(&r))) {
        if (!err.msg[0]) sim_err_set(&err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        fprintf(stderr, "epochsim model show: ");
        sim_err_print(&err, stderr); /* file:line where the error is in a file */
    } else {
        if (r.mem.oom)
            fprintf(stderr,
                    "epochsim model show: %s at batch %d does not fit: peak %.2f GiB > %.2f GiB; "
                    "largest batch that fits: %d\n",
                    r.e->name, a.opt.batch, r.mem.peak_bytes / GIB, r.capacity / GIB,
                    r.mem.max_batch);
        exit_code = SIM_EXIT_OK;
    }
    mdl_step_free(&r.step);
    mdl_net_free(&r.net);
    return exit_code;
}

int sim_model_cmd(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? SIM_EXIT_USAGE : SIM_EXIT_OK;
    }
    if (!strcmp(argv[1], "list")) return cmd_list(argc - 1, argv + 1);
    if (!strcmp(argv[1], "show")) return cmd_show(argc - 1, argv + 1);
    fprintf(stderr, "epochsim model: unknown subcommand '%s' (list, show)\n", argv[1]);
    usage(stderr);
    return SIM_EXIT_USAGE;
}
