/* build.h — the one call the engine needs: `workload.model: NAME` + options + a GPU -> the
 * sim_program of one optimizer step, with its memory verdict. Wraps zoo -> expand -> cost ->
 * memory so the lead's scenario builder does not see the intermediate structures. */
#ifndef MDL_BUILD_H
#define MDL_BUILD_H

#include "models/expand.h"
#include "models/memory.h"
#include "sim/base/err.h"
#include "sim/core/hw.h"
#include "sim/core/workload.h"

/* Builds model NAME (zoo.h) for opt on gpu.
 * - On success returns 0; *prog holds one optimizer step (zero_grad, opt->accum_steps micro-
 *   batches of forward + backward, the optimizer), every kernel priced on gpu; it consumes
 *   opt->accum_steps loader batches. Free with sim_program_free.
 * - When the step does not fit gpu->mem_gb, returns SIM_EOOM, leaves *prog empty and fills
 *   *mem (peak, capacity, each component, max_batch) and err with a one-line summary.
 * - Unknown model: SIM_ENOENT; bad options or shapes: SIM_EINVAL; SIM_ENOMEM.
 * mem may be NULL. d = NULL uses the built-in reference-core costs (expand.c). */
int mdl_build_program(const char *model, const mdl_options *opt, const mdl_dispatch *d,
                      const sim_gpu_desc *gpu, sim_program *prog, mdl_memory *mem, sim_err *err);

/* The step of net (model `model` as mdl_build_net made it) under o: mdl_expand, or with a
 * sequence mix (o->seq_mix.n > 0) the model built again at each group's padded length and each
 * group's micro-batches run on their own net (mdl_expand_mix). Free with mdl_step_free. */
int mdl_build_step(const char *model, const mdl_net *net, const mdl_options *o,
                   const mdl_dispatch *d, mdl_step *step, sim_err *err);

/* The zoo network of `model` as opt runs it: mdl_zoo_build, then opt->attention applied (the
 * model's own attention runs SDPA only from PyTorch 2.0, which added it). Free with mdl_net_free
 * (also after an error). */
int mdl_build_net(const char *model, const mdl_options *opt, mdl_net *net, sim_err *err);

/* opt as it runs on gpu (NULL: no GPU named): whether its convolutions use tensor cores
 * (mdl_conv_tensor_cores) is settled. */
mdl_options mdl_options_on(const mdl_options *opt, const sim_gpu_desc *gpu);

#endif
