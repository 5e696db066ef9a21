/* build.c — zoo -> expansion -> memory check -> priced program (see build.h).
 * The memory check comes first so a configuration that cannot run is never simulated. */
#include "models/build.h"

#include "models/zoo.h"

#include <string.h>

int mdl_build_step(const char *model, const mdl_net *net, const mdl_options *o,
                   const mdl_dispatch *d, mdl_step *step, sim_err *err)
{
    if (!o->seq_mix.n) return mdl_expand(net, o, d, step, err);
    mdl_net nets[MDL_SEQ_MIX_MAX];
    const mdl_net *use[MDL_SEQ_MIX_MAX] = {0};
    int built = 0, rc = SIM_OK;
    for (; built < o->seq_mix.n && !rc; built++) {
        mdl_options at = *o;
        at.shape.seq = o->seq_mix.seq[built];
        rc = mdl_build_net(model, &at, &nets[built], err);
        use[built] = &nets[built];
    }
    if (!rc) rc = mdl_expand_mix(use, o, d, step, err);
    for (int g = 0; g < built; g++)
        mdl_net_free(&nets[g]);
    return rc;
}

int mdl_build_program(const char *model, const mdl_options *opt, const mdl_dispatch *d,
                      const sim_gpu_desc *gpu, sim_program *prog, mdl_memory *mem, sim_err *err)
{
    memset(prog, 0, sizeof *prog);
    mdl_memory local;
    if (!mem) mem = &local;
    memset(mem, 0, sizeof *mem);
    int rc = mdl_options_check(opt, err);
    if (rc) return rc;
    mdl_net net;
    rc = mdl_build_net(model, opt, &net, err);
    if (rc) goto out;
    rc = mdl_memory_estimate(&net, opt, mdl_gpu_capacity_bytes(gpu), mem, err);
    if (rc) goto out;
    if (mem->oom) {
        rc = sim_err_set(err, SIM_EOOM, NULL, 0, 0,
                         "%s at batch %d (%s) needs %.1f GiB but %s has %.1f GiB; the largest "
                         "batch that fits is %d",
                         model, opt->batch, sim_precision_name(opt->precision),
                         mem->peak_bytes / 1073741824.0, gpu->name[0] ? gpu->name : "the GPU",
                         mem->capacity_bytes / 1073741824.0, mem->max_batch);
        goto out;
    }
    mdl_options o = mdl_options_on(opt, gpu);
    mdl_step step;
    rc = mdl_build_step(model, &net, &o, d, &step, err);
    if (rc) goto out;
    rc = mdl_step_program(&step, gpu, prog, err);
    mdl_step_free(&step);
out:
    mdl_net_free(&net);
    return rc;
}

/* The model's own attention, as the release runs it: a model that calls
 * torch.nn.functional.scaled_dot_product_attention (nn.MultiheadAttention does from 2.0; nanoGPT
 * when it exists) computes the scores as plain ops before PyTorch 2.0, which added it. */
static bool own_attention_sdpa(const mdl_options *opt)
{
    return opt->pytorch >= 200;
}

int mdl_build_net(const char *model, const mdl_options *opt, mdl_net *net, sim_err *err)
{
    int rc = mdl_zoo_build(model, &opt->shape, net, err);
    if (rc != SIM_OK) return rc;
    if (opt->attention != MDL_ATTN_MODEL)
        mdl_net_set_attention(net, opt->attention == MDL_ATTN_SDPA);
    else if (!own_attention_sdpa(opt))
        mdl_net_set_attention(net, false);
    return rc;
}

mdl_options mdl_options_on(const mdl_options *opt, const sim_gpu_desc *gpu)
{
    mdl_options o = *opt;
    o.conv_tensor_cores = mdl_conv_tensor_cores(gpu, opt->precision);
    return o;
}
