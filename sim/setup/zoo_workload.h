/* zoo_workload.h — `workload.model: NAME` (a model-zoo network) as the scenario's step program:
 * the experiment's workload keys become models/ options, the model is expanded and priced on
 * the scenario's GPU, and its memory footprint is checked before anything is simulated. */
#ifndef SIM_ZOO_WORKLOAD_H
#define SIM_ZOO_WORKLOAD_H

#include "sim/setup/config.h"
#include "sim/core/run.h"
#include "models/seqmix.h"

/* Fills sc->program and sc->memory for x->workload.model on sc->hw.gpu. The dataset keys the
 * user did not give (`set`) follow the model's kind of data: input_bytes becomes the model's
 * input tensor per sample; vector and token models also get their own sample_bytes, decode_us
 * and decode_cv (zoo_workload.c says why), image models keep the ImageNet defaults.
 * mix: the micro-batches' padded lengths (sim_zoo_seq_mix; n = 0: all at the model's length).
 * Returns 0; SIM_EOOM with sc->memory filled when the step does not fit; SIM_ENOENT for an
 * unknown model; SIM_EINVAL for bad options. */
int sim_zoo_workload(const sim_experiment *x, const mdl_seq_mix *mix, const cfg_experiment_set *set,
                     sim_scenario *sc, sim_err *err);

/* The padded lengths of x's micro-batches when workload.seq_lengths names a histogram
 * (sim/setup/seqlen.h), for x's model at its sequence length; mix->n = 0 when it does not. A
 * model that takes no token sequences is an error. Returns 0, SIM_EINVAL, SIM_EFORMAT, ... */
int sim_zoo_seq_mix(const sim_experiment *x, mdl_seq_mix *mix, sim_err *err);

#endif
