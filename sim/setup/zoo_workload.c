/* zoo_workload.c — a model-zoo network as the scenario's workload (see zoo_workload.h). */
#include "sim/setup/zoo_workload.h"

#include "models/build.h"
#include "models/zoo.h"
#include "sim/setup/seqlen.h"

#include <string.h>

#define GIB 1073741824.0

static void options_from(const sim_experiment *x, const mdl_seq_mix *mix, mdl_options *o)
{
    static const int scaler[] = {-1, 0, 1}; /* auto, off, on: config.c's scaler_names */
    mdl_options_defaults(o);
    o->batch = x->loader.batch_size;
    o->precision = x->workload.precision;
    static const mdl_optimizer optimizer[] = {MDL_OPT_SGD, MDL_OPT_ADAMW, MDL_OPT_ADAMW,
                                              MDL_OPT_BERTADAM,
                                              MDL_OPT_NONE}; /* config.c's optimizer_names */
    o->optimizer = optimizer[x->workload.optimizer];
    o->opt_impl = (mdl_opt_impl)x->workload.optimizer_impl;
    o->inference = x->workload.mode == 1;
    o->weight_decay = x->workload.weight_decay;
    o->grad_clip = x->workload.grad_clip; /* mdl_grad_clip_names: MDL_CLIP_* */
    o->zero_grad = x->workload.zero_grad; /* mdl_zero_grad_names: MDL_ZG_* */
    o->accum_steps = x->workload.accum_steps;
    o->checkpointing = x->workload.checkpointing;
    o->grad_scaler = scaler[x->workload.grad_scaler];
    o->cuda_graphs = x->training.cuda_graphs;
    o->channels_last = x->workload.memory_format == 1; /* mdl_memory_format_names */
    o->attention = x->workload.attention;              /* mdl_attention_names: MDL_ATTN_* */
    o->fuser = x->workload.fuser;                      /* mdl_fuser_names: MDL_FUSER_* */
    o->world_size = x->system.gpu_count;
    o->ddp_bucket_mb = x->ddp_bucket_mb;
    o->pytorch = mdl_pytorch_version(x->workload.pytorch);
    o->shape.h = o->shape.w = x->workload.image_size;
    o->shape.seq = x->workload.seq_len;
    o->shape.features = x->workload.features;
    o->seq_mix = *mix;
}

/* Bytes per sample of what the loader hands to `.to("cuda")`: float32 images after ToTensor +
 * Normalize; int64 token ids plus an int64 attention mask (Hugging Face collators); float32
 * feature vectors (as many as the model takes per sample: a triplet's three). */
static double input_bytes(const mdl_zoo_entry *e, const mdl_shape *s)
{
    switch (e->input) {
    case MDL_IN_IMAGE:
        return 3.0 * s->h * s->w * 4;
    case MDL_IN_TOKENS:
        return 2.0 * s->seq * 8;
    case MDL_IN_VECTOR:
        return (double)s->features * 4 * (e->vectors > 0 ? e->vectors : 1);
    }
    return 0;
}

/* The loader's per-sample defaults follow the model's kind of data (docs/default-scenario.md);
 * images keep the built-in ImageNet JPEG figures (config.c).
 * - Vectors: a TensorDataset of float32 rows in host memory. sample_bytes is the rows; the CPU
 *   cost is DataLoader's per-sample path with num_workers=0 (_MapDatasetFetcher indexes each
 *   tensor per sample, default_collate stacks them): 2.25 us per sample in pytorch/pytorch
 *   issue 106704 (two tensors, batch 256, 100 epochs of 20,000 rows in 4.5 s on the reporter's
 *   2023 machine; 13.9 us on a 2018 two-core laptop in pull request 10260). 3 us on the
 *   reference core, an estimate that takes the reporter's core as ~1.3x an EPYC 7742 core.
 * - Tokens: pre-tokenized ids in a flat uint16 file (nanoGPT's prepare.py), a slice, astype
 *   int64 and from_numpy per sample: 2 bytes per token and an estimated 5 us (a few NumPy and
 *   torch calls of 1-2 us each).
 * Fixed-size rows take the same time each: no variation. */
#define VECTOR_SAMPLE_US 3.0
#define TOKEN_SAMPLE_US 5.0

static void data_defaults(const mdl_zoo_entry *e, const mdl_shape *s, const cfg_experiment_set *set,
                          sim_dataset_spec *d)
{
    if (!cfg_experiment_was_set(set, "dataset.input_bytes")) d->input_bytes = input_bytes(e, s);
    if (e->input == MDL_IN_IMAGE) return;
    bool vec = e->input == MDL_IN_VECTOR;
    if (!cfg_experiment_was_set(set, "dataset.sample_bytes"))
        d->sample_bytes = vec ? d->input_bytes : 2.0 * s->seq;
    if (!cfg_experiment_was_set(set, "dataset.decode_us"))
        d->decode_us = vec ? VECTOR_SAMPLE_US : TOKEN_SAMPLE_US;
    if (!cfg_experiment_was_set(set, "dataset.decode_cv")) d->decode_cv = 0;
}

static void fill_memory(const mdl_memory *m, sim_memory_info *out)
{
    const struct {
        const char *name;
        double bytes;
    } parts[] = {
        {"weights", m->weights_bytes},
        {"amp_weight_copies", m->weight_copies_bytes},
        {"gradients", m->grads_bytes},
        {"optimizer_state", m->optimizer_bytes},
        {"activations", m->activations_bytes},
        {"backward_working_set", m->transient_bytes},
        {"optimizer_temporaries", m->optimizer_temp_bytes},
        {"workspace", m->workspace_bytes},
        {"cuda_context", m->context_bytes},
        {"allocator_rounding", m->rounding_bytes},
    };
    _Static_assert(sizeof parts / sizeof parts[0] <= SIM_MEM_PARTS, "sim_memory_info.parts");
    mdl_verdict v;
    mdl_memory_verdict(m, &v);
    memset(out, 0, sizeof *out);
    out->known = true;
    out->peak_gb = v.peak_gb;
    out->capacity_gb = v.capacity_gb;
    out->oom = v.oom;
    out->max_batch = v.max_batch;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        out->parts[i].name = parts[i].name;
        out->parts[i].gb = parts[i].bytes / GIB;
    }
    out->n_parts = (int)(sizeof parts / sizeof parts[0]);
}

/* What the report says of the micro-batches' lengths. */
static void describe_mix(const mdl_seq_mix *mix, sim_workload_desc *w)
{
    w->seq_lengths = mix->n;
    if (!mix->n) return;
    w->seq_min = mix->seq[0];
    w->seq_max = mix->seq[mix->n - 1];
    w->seq_mean = mdl_seq_mix_mean(mix);
    w->seq_averaged = mix->averaged;
}

int sim_zoo_seq_mix(const sim_experiment *x, mdl_seq_mix *mix, sim_err *err)
{
    memset(mix, 0, sizeof *mix);
    if (!x->workload.seq_lengths[0]) return SIM_OK;
    const mdl_zoo_entry *e = mdl_zoo_find(x->workload.model);
    if (!e) return SIM_OK; /* the unknown model is reported by its own key */
    if (e->input != MDL_IN_TOKENS)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "%s takes no token sequences; sequence lengths apply to language "
                           "models",
                           e->name);
    mdl_shape shape = {.seq = x->workload.seq_len};
    mdl_zoo_resolve_shape(e, &shape);
    return cfg_seq_mix_file(x->workload.seq_lengths, shape.seq, x->workload.seq_bin,
                            x->workload.seq_align, x->loader.batch_size, x->workload.accum_steps,
                            mix, err);
}

int sim_zoo_workload(const sim_experiment *x, const mdl_seq_mix *mix, const cfg_experiment_set *set,
                     sim_scenario *sc, sim_err *err)
{
    const mdl_zoo_entry *e = mdl_zoo_find(x->workload.model);
    mdl_options o;
    options_from(x, mix, &o);
    mdl_memory mem;
    int rc = mdl_build_program(x->workload.model, &o, NULL, &sc->hw.gpu, &sc->program, &mem, err);
    if (rc == SIM_OK || rc == SIM_EOOM) fill_memory(&mem, &sc->memory);
    if (rc == SIM_EOOM && sc->hw.mig[0]) { /* the capacity was the instance's, not the card's */
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n, " (on its MIG %s instance)", sc->hw.mig);
    }
    if (rc) return rc;
    describe_mix(mix, &sc->workload);
    if (e) {
        mdl_shape shape = o.shape;
        mdl_zoo_resolve_shape(e, &shape);
        data_defaults(e, &shape, set, &sc->dataset);
    }
    return SIM_OK;
}
