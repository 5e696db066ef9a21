/* validate_stats.c — error statistics of the published table (validate.h): mean absolute
 * percentage error per group, per GPU generation and overall, and of cross-GPU ratios, each
 * over the predicted rows of one role. Generations, overall and ratios are taken over the rows
 * that measure a training run; kernel, copy and collective rows count in their groups only.
 * Rows that could not be predicted are counted apart. */
#include "sim/app/validate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Catalog `arch` values in release order (configs/hardware/gpus/). */
static const char *const generations[] = {"volta", "turing", "ampere",
                                          "ada",   "hopper", "blackwell"};
#define N_GEN (sizeof generations / sizeof generations[0])

const char *sim_val_scope_name(sim_val_scope s)
{
    static const char *const names[] = {"group", "generation", "overall", "ratio"};
    return s <= SIM_VAL_RATIO ? names[s] : "?";
}

static bool ok(const sim_val_row *r)
{
    return !r->error[0] && isfinite(r->predicted);
}

/* A row that measures a training run (its throughput, step, GPU-Util, largest batch, share beside
 * copies of itself), not one kernel, copy or collective: the figures a user's question is about,
 * which a handful of easy microbenchmark rows must not dilute. */
static bool training_run(const sim_val_row *r)
{
    switch (r->metric) {
    case SIM_VAL_SAMPLES_PER_S:
    case SIM_VAL_STEP_MS:
    case SIM_VAL_GPU_UTIL_PCT:
    case SIM_VAL_MAX_BATCH:
    case SIM_VAL_COLOCATED_PCT:
        return true;
    default:
        return false;
    }
}

static int push(sim_val_summary *s, sim_val_scope scope, sim_val_role role, const char *name, int n,
                double sum_pct)
{
    if (n == 0) return SIM_OK;
    sim_val_stat *p = realloc(s->stats, (s->n + 1) * sizeof *p);
    if (!p) return SIM_ENOMEM;
    s->stats = p;
    p[s->n] = (sim_val_stat){.scope = scope, .role = role, .n = n, .mape_pct = sum_pct / n};
    snprintf(p[s->n].name, sizeof p[s->n].name, "%s", name);
    s->n++;
    return SIM_OK;
}

/* MAPE over the predicted rows of role whose group (or arch) is name; NULL name = all. */
static int rows_stat(const sim_val_table *t, sim_val_summary *s, sim_val_scope scope,
                     sim_val_role role, const char *name)
{
    int n = 0;
    double sum = 0;
    for (size_t i = 0; i < t->n; i++) {
        const sim_val_row *r = &t->rows[i];
        const char *key = scope == SIM_VAL_GROUP ? r->group : r->arch;
        if (r->role != role || !ok(r) || (name && strcmp(key, name))) continue;
        if (scope != SIM_VAL_GROUP && !training_run(r)) continue;
        sum += fabs(sim_val_error_pct(r));
        n++;
    }
    return push(s, scope, role, name ? name : "overall", n, sum);
}

static size_t source_len(const char *s)
{
    return strcspn(s, " \t");
}

/* Rows a and b are the same job measured alike on another GPU: same source URL, software,
 * group, metric, model, precision and GPU count. One table can hold runs of several releases
 * (Lambda's older table spans NGC 20.01 to 21.07); a ratio across releases carries the
 * software's difference as well as the GPUs', and one across models or GPU counts (Lambda's
 * multi-GPU table holds BERT-large and BERT-base on 2, 4 and 8 GPUs in one group) the
 * workloads'. */
static bool comparable(const sim_val_row *a, const sim_val_row *b)
{
    size_t la = source_len(a->source);
    return a->role == b->role && la == source_len(b->source) &&
           !strncmp(a->source, b->source, la) && !strcmp(a->software, b->software) &&
           !strcmp(a->group, b->group) && a->metric == b->metric && !strcmp(a->model, b->model) &&
           !strcmp(a->precision, b->precision) && a->gpus == b->gpus && strcmp(a->gpu, b->gpu);
}

static int ratio_stat(const sim_val_table *t, sim_val_summary *s, sim_val_role role)
{
    int n = 0;
    double sum = 0;
    for (size_t i = 0; i < t->n; i++)
        for (size_t j = i + 1; j < t->n; j++) {
            const sim_val_row *a = &t->rows[i], *b = &t->rows[j];
            if (a->role != role || !ok(a) || !ok(b) || !training_run(a) || !comparable(a, b))
                continue;
            double pub = a->value / b->value, pred = a->predicted / b->predicted;
            sum += fabs(pred / pub - 1) * 100;
            n++;
        }
    return push(s, SIM_VAL_RATIO, role, "ratio", n, sum);
}

static bool seen_before(const sim_val_table *t, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (!strcmp(t->rows[j].group, t->rows[i].group)) return true;
    return false;
}

static int role_stats(const sim_val_table *t, sim_val_summary *s, sim_val_role role)
{
    int rc = SIM_OK;
    for (size_t i = 0; !rc && i < t->n; i++)
        if (!seen_before(t, i)) rc = rows_stat(t, s, SIM_VAL_GROUP, role, t->rows[i].group);
    for (size_t g = 0; !rc && g < N_GEN; g++)
        rc = rows_stat(t, s, SIM_VAL_GENERATION, role, generations[g]);
    if (!rc) rc = rows_stat(t, s, SIM_VAL_OVERALL, role, NULL);
    if (!rc) rc = ratio_stat(t, s, role);
    return rc;
}

int sim_val_summarize(const sim_val_table *t, sim_val_summary *s)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < t->n; i++) {
        const sim_val_row *r = &t->rows[i];
        if (ok(r))
            s->predicted[r->role]++;
        else
            s->failed[r->role]++;
    }
    int rc = SIM_OK;
    for (int role = 0; !rc && role < SIM_VAL_ROLES; role++)
        rc = role_stats(t, s, (sim_val_role)role);
    if (rc) sim_val_summary_free(s);
    return rc;
}

void sim_val_summary_free(sim_val_summary *s)
{
    free(s->stats);
    memset(s, 0, sizeof *s);
}
