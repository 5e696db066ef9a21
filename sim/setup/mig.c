/* mig.c — the `mig:` section of a catalog GPU (see mig.h).
 * The section is walked with the same key tables as the rest of the catalog, so a wrong field
 * reads file:line:col like any other; only the list of placements is read here by hand. */
#include "sim/setup/mig.h"

#include "sim/setup/catalog.h"
#include "sim/setup/cfgtable.h"
#include "sim/base/names.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define P sim_mig_profile
#define ROW(T, f, type, size, lo, hi)                                                              \
    {                                                                                              \
#f, type, offsetof(T, f), size, lo, hi, NULL, NULL                                         \
    }

static const cfg_field profile_fields[] = {
    ROW(P, name, CFG_T_STR, sizeof(((P *)0)->name), 1, 0), /* no range */
    ROW(P, slices, CFG_T_INT, 0, 1, 16),
    ROW(P, mem_slices, CFG_T_INT, 0, 1, 16),
    ROW(P, sms, CFG_T_INT, 0, 1, 100000),
    ROW(P, copy_engines, CFG_T_INT, 0, 0, 64),
    ROW(P, max_instances, CFG_T_INT, 0, 1, SIM_MIG_SLOTS_MAX),
};
static const char *const profile_extra[] = {"starts", NULL};
static const cfg_table profile_table = {
    profile_fields, sizeof profile_fields / sizeof *profile_fields, profile_extra};

static const cfg_field section_fields[] = {
    ROW(sim_mig_table, compute_slices, CFG_T_INT, 0, 1, SIM_MIG_SLOTS_MAX),
    ROW(sim_mig_table, memory_slices, CFG_T_INT, 0, 1, 16),
};
static const char *const section_extra[] = {"profiles", NULL};
static const cfg_table section_table = {
    section_fields, sizeof section_fields / sizeof *section_fields, section_extra};

static int at(sim_err *err, const char *path, const yaml_node_t *n, const char *fmt, const char *a,
              const char *b)
{
    return sim_err_set(err, SIM_EINVAL, path, (int)n->start_mark.line + 1,
                       (int)n->start_mark.column + 1, fmt, a, b);
}

static yaml_node_t *member(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE) return NULL;
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yaml_document_get_node(doc, pr->key);
        if (k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key))
            return yaml_document_get_node(doc, pr->value);
    }
    return NULL;
}

/* starts: [0, 1, 2]: ascending first slices, each leaving room for the profile's slices. */
static int read_starts(yaml_document_t *doc, yaml_node_t *node, const sim_mig_table *t, P *p,
                       const char *path, sim_err *err)
{
    yaml_node_t *v = member(doc, node, "starts");
    if (!v || v->type != YAML_SEQUENCE_NODE)
        return at(err, path, v ? v : node,
                  "MIG profile '%s': 'starts' must be a list of first slices%s", p->name, "");
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        yaml_node_t *s = yaml_document_get_node(doc, *it);
        char *end = NULL;
        const char *txt = s->type == YAML_SCALAR_NODE ? (const char *)s->data.scalar.value : "";
        long slot = strtol(txt, &end, 10);
        bool ok = end != txt && !*end && slot >= 0 && slot + p->slices <= t->compute_slices &&
                  p->n_starts < SIM_MIG_SLOTS_MAX &&
                  (p->n_starts == 0 || slot > p->starts[p->n_starts - 1]);
        if (!ok)
            return at(err, path, s,
                      "MIG profile '%s': 'starts': '%s' is not an ascending slice where the "
                      "profile fits",
                      p->name, txt);
        p->starts[p->n_starts++] = (int)slot;
    }
    if (p->n_starts < p->max_instances)
        return at(err, path, v, "MIG profile '%s': fewer 'starts' than max_instances%s", p->name,
                  "");
    return SIM_OK;
}

static int read_profile(yaml_document_t *doc, yaml_node_t *node, const sim_mig_table *t,
                        const sim_gpu_desc *gpu, P *p, const char *path, sim_err *err)
{
    bool set[sizeof profile_fields / sizeof *profile_fields] = {false};
    memset(p, 0, sizeof *p);
    int rc = cfg_table_load_node(&profile_table, doc, node, path, p, set, NULL, err);
    if (rc) return rc;
    for (size_t i = 0; i < sizeof set; i++)
        if (!set[i])
            return at(err, path, node, "MIG profile: missing key '%s'%s", profile_fields[i].key,
                      "");
    if (p->slices > t->compute_slices || p->mem_slices > t->memory_slices || p->sms > gpu->sms)
        return at(err, path, node, "MIG profile '%s' takes more slices or SMs than %s has", p->name,
                  gpu->name);
    return read_starts(doc, node, t, p, path, err);
}

static int read_section(yaml_document_t *doc, yaml_node_t *sec, const sim_gpu_desc *gpu,
                        sim_mig_table *out, const char *path, sim_err *err)
{
    bool set[2] = {false};
    int rc = cfg_table_load_node(&section_table, doc, sec, path, out, set, NULL, err);
    if (rc) return rc;
    yaml_node_t *list = member(doc, sec, "profiles");
    if (!set[0] || !set[1] || !list || list->type != YAML_SEQUENCE_NODE)
        return at(err, path, sec, "mig: needs compute_slices, memory_slices and a profiles list%s",
                  "", "");
    int most = 0;
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++) {
        yaml_node_t *node = yaml_document_get_node(doc, *it);
        if (out->n == SIM_MIG_PROFILES_MAX)
            return at(err, path, node, "mig: more profiles than the %s a GPU may list%s", "12", "");
        sim_mig_profile *p = &out->p[out->n];
        if ((rc = read_profile(doc, node, out, gpu, p, path, err))) return rc;
        if (sim_mig_find(out, p->name)) /* out->n does not count p yet */
            return at(err, path, node, "MIG profile '%s' is listed twice%s", p->name, "");
        out->n++;
        if (p->max_instances > most) most = p->max_instances;
    }
    if (most != gpu->mig_instances)
        return sim_err_set(err, SIM_EINVAL, path, (int)sec->start_mark.line + 1,
                           (int)sec->start_mark.column + 1,
                           "mig: the profiles allow %d instances but mig_instances is %d", most,
                           gpu->mig_instances);
    return SIM_OK;
}

int cfg_mig_load(const char *dir, const char *gpu_name, sim_mig_table *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    sim_gpu_desc gpu;
    int rc = cfg_catalog_load(dir, CFG_CAT_GPU, gpu_name, &gpu, err);
    if (rc) return rc;
    char path[SIM_ERR_WHERE_MAX];
    snprintf(path, sizeof path, "%s/%s/%s.yaml", dir, cfg_catalog_kind_dir(CFG_CAT_GPU), gpu_name);
    yaml_document_t doc;
    if ((rc = cfg_yaml_load_file(path, &doc, err))) return rc;
    yaml_node_t *sec = member(&doc, yaml_document_get_root_node(&doc), "mig");
    if (sec)
        rc = read_section(&doc, sec, &gpu, out, path, err);
    else if (gpu.mig_instances)
        rc = sim_err_set(err, SIM_EINVAL, path, 0, 0,
                         "mig_instances is %d but there is no mig:", gpu.mig_instances);
    yaml_document_delete(&doc);
    if (rc) memset(out, 0, sizeof *out);
    return rc;
}

const sim_mig_profile *sim_mig_find(const sim_mig_table *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->p[i].name, name)) return &t->p[i];
    return NULL;
}

int sim_mig_unknown(const sim_mig_table *t, const sim_gpu_desc *gpu, const char *name, sim_err *err)
{
    if (!t->n)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "%s has no MIG (no instance '%s')",
                           gpu->name, name);
    const char *names[SIM_MIG_PROFILES_MAX];
    char known[SIM_MIG_PROFILES_MAX * 26] = "";
    size_t used = 0;
    for (int i = 0; i < t->n; i++) {
        names[i] = t->p[i].name;
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "",
                                 t->p[i].name);
    }
    const char *near = sim_nearest_name(name, names, (size_t)t->n);
    char hint[64] = "";
    if (near) snprintf(hint, sizeof hint, "did you mean '%s'?; ", near);
    return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                       "unknown MIG profile '%s' on %s (%sprofiles: %s)", name, gpu->name, hint,
                       known);
}

void sim_mig_apply(const sim_mig_table *t, const sim_mig_profile *p, sim_gpu_desc *gpu)
{
    double sm = (double)p->sms / gpu->sms;
    double mem = (double)p->mem_slices / t->memory_slices;
    gpu->cuda_cores = (int)(gpu->cuda_cores * sm + 0.5);
    gpu->fp32_tflops *= sm;
    gpu->fp16_tflops *= sm;
    gpu->bf16_tflops *= sm;
    gpu->tf32_tflops *= sm;
    gpu->fp8_tflops *= sm;
    gpu->sms = p->sms;
    gpu->mem_gb *= mem;
    gpu->mem_bw_gbps *= mem;
    gpu->l2_mb *= mem;
    gpu->nvlink_gbps = 0;
    gpu->mig_instances = 0;
    size_t len = strnlen(gpu->label, sizeof gpu->label);
    snprintf(gpu->label + len, sizeof gpu->label - len, " MIG %s", p->name);
}
