/* advice.c — candidate changes per bottleneck, each simulated (see advice.h). Candidates are
 * `--set` assignments applied to a copy of the experiment, so a change reaches everything the
 * key feeds (a batch size re-prices the model and its memory) exactly as the user's would. */
#include "sim/setup/advice.h"

#include "sim/setup/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct candidates {
    char change[SIM_ADVICE_MAX][96];
    int n;
} candidates;

static void add_text(candidates *c, const char *change)
{
    if (c->n < SIM_ADVICE_MAX) snprintf(c->change[c->n++], sizeof c->change[0], "%s", change);
}

static void add(candidates *c, const char *key, int value)
{
    if (c->n < SIM_ADVICE_MAX)
        snprintf(c->change[c->n++], sizeof c->change[0], "%s=%d", key, value);
}

/* More workers (twice as many, and one per core of this GPU's share when that is more) and a
 * deeper prefetch queue: what PyTorch users reach for when batches come late. */
static void loader_candidates(const sim_scenario *sc, candidates *c)
{
    int nw = sc->loader.num_workers;
    int per_gpu = sc->hw.cpu.cores / sc->hw.gpu_count;
    if (nw == 0) {
        add(c, "loader.num_workers", per_gpu > 1 ? per_gpu : 1);
        return;
    }
    add(c, "loader.num_workers", 2 * nw);
    if (per_gpu > 2 * nw) add(c, "loader.num_workers", per_gpu);
    add(c, "loader.prefetch_factor", 2 * sc->loader.prefetch_factor);
}

static void list_candidates(const sim_scenario *sc, sim_bottleneck b, candidates *c)
{
    switch (b) {
    case SIM_BN_DATA_LOADING:
    case SIM_BN_STORAGE:
    case SIM_BN_MAIN_THREAD:
        loader_candidates(sc, c);
        return;
    case SIM_BN_H2D:
        if (!sc->loader.pin_memory || !sc->loader.non_blocking)
            add_text(c, "loader.pin_memory=true loader.non_blocking=true");
        return;
    case SIM_BN_CPU_DISPATCH:
        if (!sc->training.cuda_graphs) add_text(c, "training.cuda_graphs=true");
        add(c, "loader.batch_size", 2 * sc->loader.batch_size);
        return;
    case SIM_BN_COMMUNICATION:
        add(c, "loader.batch_size", 2 * sc->loader.batch_size);
        return;
    case SIM_BN_GPU_COMPUTE:
    case SIM_BN_SHARED_GPU: /* a change of the job alone cannot give it the GPU back */
    case SIM_BN_HOST_CPU:   /* nor the host's cores */
    case SIM_BN_COUNT:
        return;
    }
}

int sim_advice_apply(const char *change, sim_experiment *x, cfg_experiment_set *set, sim_err *err)
{
    char buf[96];
    snprintf(buf, sizeof buf, "%s", change);
    int rc = SIM_OK;
    for (char *save = NULL, *a = strtok_r(buf, " ", &save); a && !rc;
         a = strtok_r(NULL, " ", &save))
        rc = cfg_experiment_apply(a, x, set, err);
    return rc;
}

/* Samples/s of x with change applied. A change that does not fit in GPU memory or that the
 * experiment cannot take (a replayed trace) returns that error: it is not advice. */
static int simulate_change(const sim_experiment *base, const cfg_experiment_set *base_set,
                           const char *catalog_dir, const char *change, double *sps, sim_err *err)
{
    sim_experiment x = *base;
    cfg_experiment_set set = base_set ? *base_set : (cfg_experiment_set){0};
    sim_scenario sc;
    memset(&sc, 0, sizeof sc);
    *sps = 0;
    int rc = sim_advice_apply(change, &x, &set, err);
    if (!rc) rc = sim_scenario_build(&x, &set, catalog_dir, &sc, err);
    sim_result res;
    if (!rc) rc = sim_run(&sc, &res, err);
    if (!rc) {
        *sps = res.mean.samples_per_s;
        sim_result_free(&res);
    }
    sim_scenario_free(&sc);
    return rc;
}

static int by_gain(const void *a, const void *b)
{
    double ga = ((const sim_advice *)a)->gain_pct, gb = ((const sim_advice *)b)->gain_pct;
    return (ga < gb) - (ga > gb);
}

int sim_advice_find(const sim_experiment *x, const cfg_experiment_set *set, const char *catalog_dir,
                    const sim_scenario *sc, const sim_result *res, sim_advice out[SIM_ADVICE_MAX])
{
    candidates c = {.n = 0};
    list_candidates(sc, res->bottleneck, &c);
    double base = res->mean.samples_per_s;
    int n = 0;
    for (int i = 0; i < c.n; i++) {
        double sps;
        sim_err err;
        sim_err_clear(&err);
        if (simulate_change(x, set, catalog_dir, c.change[i], &sps, &err)) continue;
        double gain = base > 0 ? 100.0 * (sps / base - 1) : 0;
        if (gain < SIM_ADVICE_MIN_GAIN_PCT) continue;
        snprintf(out[n].change, sizeof out[n].change, "%s", c.change[i]);
        out[n].samples_per_s = sps;
        out[n].gain_pct = gain;
        n++;
    }
    qsort(out, (size_t)n, sizeof *out, by_gain);
    return n;
}
