/* jobs.c — the `jobs:` list of an experiment file and the scenarios it resolves to (jobs.h).
 * Each job is an ordinary experiment: it is loaded with the experiment key table and built by
 * sim_scenario_build on its own GPUs, so a job has every key and every check a single run has. */
#include "sim/setup/jobs.h"

#include "sim/setup/mig.h"
#include "sim/setup/scenario.h"

#include <stdlib.h>
#include <string.h>

static const char *const item_keys[] = {"name", "experiment", NULL};

static int node_error(const char *path, const yaml_node_t *n, sim_err *err, const char *msg,
                      const char *a)
{
    return sim_err_set(err, SIM_EINVAL, path, (int)n->start_mark.line + 1,
                       (int)n->start_mark.column + 1, msg, a);
}

/* The scalar value of `key` in mapping map, or NULL; *node gets its node. */
static const char *scalar_of(yaml_document_t *doc, yaml_node_t *map, const char *key,
                             yaml_node_t **node)
{
    *node = NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key)) {
            *node = yaml_document_get_node(doc, p->value);
            return (*node)->type == YAML_SCALAR_NODE ? (const char *)(*node)->data.scalar.value
                                                     : NULL;
        }
    }
    return NULL;
}

/* True when the keys marked in `set` include `seed`. */
static bool sets_seed(const cfg_experiment_set *set)
{
    size_t i;
    return cfg_table_find(cfg_experiment_table(), "seed", &i) && set->flag[i];
}

/* `experiment: FILE` of an item: the job starts from that file (relative to path's folder) with
 * the top level's system. */
static int load_job_file(const char *path, const char *file, const cfg_experiment_set *top_set,
                         const sim_experiment *top, cfg_job *job, sim_err *err)
{
    char full[SIM_PATH_MAX];
    const char *slash = strrchr(path, '/');
    int dlen = file[0] != '/' && slash ? (int)(slash - path) + 1 : 0;
    if (snprintf(full, sizeof full, "%.*s%s", dlen, path, file) >= (int)sizeof full)
        return sim_err_set(err, SIM_EINVAL, path, 0, 0, "experiment: '%s' is too long", file);
    sim_experiment_defaults(&job->x);
    memset(&job->set, 0, sizeof job->set);
    int rc = cfg_experiment_load(full, &job->x, &job->set, err);
    if (rc) return rc;
    job->own_seed = sets_seed(&job->set);
    job->x.system = top->system;
    const cfg_table *t = cfg_experiment_table();
    for (size_t i = 0; i < t->n; i++)
        if (!strncmp(t->fields[i].key, "system.", 7)) {
            job->set.flag[i] = top_set->flag[i];
            job->set.mark[i] = top_set->mark[i];
        }
    return SIM_OK;
}

/* The item's own keys on top of what the job has so far; system keys are refused. */
static int load_item_keys(const char *path, yaml_document_t *doc, yaml_node_t *item, cfg_job *job,
                          sim_err *err)
{
    cfg_experiment_set own;
    memset(&own, 0, sizeof own);
    int rc = cfg_experiment_load_node(path, doc, item, item_keys, &job->x, &own, err);
    if (rc) return rc;
    const cfg_table *t = cfg_experiment_table();
    for (size_t i = 0; i < t->n; i++) {
        if (!own.flag[i]) continue;
        if (!strncmp(t->fields[i].key, "system.", 7))
            return sim_err_set(err, SIM_EINVAL, path, own.mark[i].line, own.mark[i].col,
                               "job '%s': '%s': the system is shared by all jobs; set it at the "
                               "top level of the file",
                               job->name, t->fields[i].key);
        job->set.flag[i] = true;
        job->set.mark[i] = own.mark[i];
    }
    if (sets_seed(&own)) job->own_seed = true;
    if (job->x.placement.gpus.n == 0) job->x.placement.gpus = (sim_int_list){1, {0}};
    return SIM_OK;
}

static int load_item(const char *path, yaml_document_t *doc, yaml_node_t *item,
                     const sim_experiment *top, const cfg_experiment_set *top_set, cfg_job *job,
                     sim_err *err)
{
    if (item->type != YAML_MAPPING_NODE)
        return node_error(path, item, err,
                          "jobs: each item is a mapping with name: and the "
                          "job's keys (or experiment: FILE)%s",
                          "");
    yaml_node_t *n;
    const char *name = scalar_of(doc, item, "name", &n);
    if (!name || !*name)
        return node_error(path, n ? n : item, err, "jobs: each item needs a name:%s", "");
    if (strlen(name) >= sizeof job->name)
        return node_error(path, n, err, "jobs: the name '%s' is too long", name);
    snprintf(job->name, sizeof job->name, "%s", name);
    job->x = *top;
    job->set = *top_set;
    const char *file = scalar_of(doc, item, "experiment", &n);
    if (n && !file) return node_error(path, n, err, "jobs: experiment: expects a file path%s", "");
    int rc = file ? load_job_file(path, file, top_set, top, job, err) : SIM_OK;
    return rc ? rc : load_item_keys(path, doc, item, job, err);
}

/* The items of the `jobs:` sequence into out. */
static int load_list(const char *path, yaml_document_t *doc, yaml_node_t *list,
                     const sim_experiment *top, const cfg_experiment_set *top_set, cfg_jobs *out,
                     sim_err *err)
{
    long n = (long)(list->data.sequence.items.top - list->data.sequence.items.start);
    if (list->type != YAML_SEQUENCE_NODE || n < 1 || n > SIM_JOBS_MAX)
        return node_error(path, list, err, "jobs: expected a list of 1 to %s jobs", "64");
    out->job = calloc((size_t)n, sizeof *out->job);
    if (!out->job) return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    for (long i = 0; i < n; i++) {
        yaml_node_t *item = yaml_document_get_node(doc, list->data.sequence.items.start[i]);
        int rc = load_item(path, doc, item, top, top_set, &out->job[i], err);
        if (rc) return rc;
        out->n++;
        for (int k = 0; k < out->n - 1; k++)
            if (!strcmp(out->job[k].name, out->job[i].name))
                return node_error(path, item, err, "jobs: two jobs are named '%s'",
                                  out->job[i].name);
    }
    return SIM_OK;
}

int cfg_jobs_load(const char *path, const sim_experiment *top, const cfg_experiment_set *top_set,
                  cfg_jobs *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    yaml_document_t doc;
    int rc = cfg_yaml_load_file(path, &doc, err);
    if (rc) return rc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    for (yaml_node_pair_t *p =
             root && root->type == YAML_MAPPING_NODE ? root->data.mapping.pairs.start : NULL;
         p && p < root->data.mapping.pairs.top && !rc; p++) {
        yaml_node_t *k = yaml_document_get_node(&doc, p->key);
        if (k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, "jobs"))
            rc = load_list(path, &doc, yaml_document_get_node(&doc, p->value), top, top_set, out,
                           err);
    }
    yaml_document_delete(&doc);
    if (rc) cfg_jobs_free(out);
    return rc;
}

void cfg_jobs_free(cfg_jobs *jobs)
{
    free(jobs->job);
    memset(jobs, 0, sizeof *jobs);
}

/* Puts "job 'NAME': " before err's message. */
static int job_named(int rc, const char *name, sim_err *err)
{
    if (!rc || !err) return rc;
    char msg[SIM_ERR_MSG_MAX];
    int head = snprintf(msg, sizeof msg, "job '%s': ", name);
    if (head > 0 && head < (int)sizeof msg) {
        memcpy(msg + head, err->msg, sizeof msg - (size_t)head - 1);
        msg[sizeof msg - 1] = 0;
        memcpy(err->msg, msg, sizeof msg);
    }
    return rc;
}

static void clear_flag(cfg_experiment_set *set, const char *key, bool on)
{
    size_t i;
    if (cfg_table_find(cfg_experiment_table(), key, &i)) set->flag[i] = on;
}

uint64_t sim_jobs_seed(uint64_t seed, int index)
{
    if (index == 0) return seed;
    uint64_t z = seed + (uint64_t)index * 0x9e3779b97f4a7c15u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Job j's scenario on its own GPUs (placement.gpus, checked against the system's n_gpus), with
 * its own random stream drawn from the run's seed unless it sets a seed. */
static int build_job(const cfg_job *job, int j, uint64_t run_seed, int n_gpus, const char *dir,
                     sim_scenario *sc, int *gpus, sim_err *err)
{
    sim_experiment x = job->x;
    if (!job->own_seed) x.seed = sim_jobs_seed(run_seed, j);
    cfg_experiment_set *s = malloc(sizeof *s);
    if (!s) return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    *s = job->set;
    const sim_int_list *g = &x.placement.gpus;
    int rc = SIM_OK;
    for (int i = 0; i < g->n && !rc; i++) {
        gpus[i] = g->v[i];
        if (g->v[i] >= n_gpus)
            rc = cfg_experiment_locate(s, "placement.gpus",
                                       sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                                                   "placement.gpus lists GPU %d, but the system "
                                                   "has %d (0 .. %d)",
                                                   g->v[i], n_gpus, n_gpus - 1),
                                       err);
    }
    /* The job is data-parallel over its own GPUs; the placement is handled here. */
    x.system.gpu_count = g->n;
    clear_flag(s, "system.gpu_count", true);
    clear_flag(s, "placement.gpus", false);
    if (!rc) rc = sim_scenario_build(&x, s, dir, sc, err);
    free(s);
    return job_named(rc, job->name, err);
}

/* Whether job j has a rank on physical GPU `gpu`. */
static bool job_on(const sim_jobs_setup *s, int j, int gpu)
{
    for (int r = 0; r < s->sc[j].hw.gpu_count; r++)
        if (s->gpus[j][r] == gpu) return true;
    return false;
}

/* The jobs on each whole GPU must fit in its memory together (a MIG instance has its own). */
static int check_memory(const sim_jobs_setup *s, const cfg_jobs *jobs, sim_err *err)
{
    for (int i = 0; i < s->system.hw.gpu_count; i++) {
        char who[SIM_ERR_MSG_MAX / 2] = "";
        size_t used = 0;
        double sum = 0, cap = 0;
        int n = 0;
        for (int j = 0; j < s->n; j++) {
            const sim_scenario *sc = &s->sc[j];
            if (!job_on(s, j, i) || !sc->memory.known || sc->hw.mig[0]) continue;
            sum += sc->memory.peak_gb;
            cap = sc->memory.capacity_gb;
            n++;
            used += (size_t)snprintf(who + used, used < sizeof who ? sizeof who - used : 0,
                                     "%s%s (%.1f GiB)", used ? " + " : "", jobs->job[j].name,
                                     sc->memory.peak_gb);
        }
        if (n > 1 && sum > cap)
            return sim_err_set(err, SIM_EOOM, NULL, 0, 0,
                               "GPU %d (%s, %.1f GiB): jobs %s need %.1f GiB together; they do "
                               "not fit in its memory at once",
                               i, s->system.hw.gpu.name, cap, who, sum);
    }
    return SIM_OK;
}

/* The jobs' datasets in memory must fit in the host's RAM together, beside every job's
 * processes (each job alone was checked when it was built). */
static int check_host_memory(const sim_jobs_setup *s, sim_err *err)
{
    double left = sim_host_ram_left_gb(&s->system, s->slot, s->n), data = 0;
    for (int j = 0; j < s->n; j++)
        data += sim_dataset_ram_gb(&s->sc[j]);
    if (left >= 0 || data == 0) return SIM_OK; /* on storage, the page cache just gets none */
    return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                       "the jobs' datasets in memory (dataset.location memory) take %.3g GB of "
                       "host RAM together, and with the OS and every job's processes that is "
                       "%.3g GB over the host's %.3g GB; run fewer jobs at once, read some from "
                       "storage, or give the host more RAM (system.host_memory_gb)",
                       data, -left, s->system.hw.host_memory_gb);
}

/* MIG instances on one GPU: each takes `slices` compute slices from one of its profile's legal
 * starts, and no two overlap (the placement diagrams of the MIG user guide, as the catalog's
 * `starts:` lists them). Depth-first over the instances, at most SIM_MIG_SLOTS_MAX of them. */
static bool mig_place(const sim_mig_profile *const *inst, int n, int k, unsigned used)
{
    if (k == n) return true;
    const sim_mig_profile *p = inst[k];
    for (int i = 0; i < p->n_starts; i++) {
        unsigned mask = ((1u << p->slices) - 1u) << p->starts[i];
        if (!(used & mask) && mig_place(inst, n, k + 1, used | mask)) return true;
    }
    return false;
}

/* The MIG instances the jobs ask for on GPU `gpu` (all counted, the first SIM_MIG_SLOTS_MAX
 * kept), with their names for errors, and a job on the whole GPU in *whole (-1: none). */
static int mig_instances(const sim_jobs_setup *s, const cfg_jobs *jobs, int gpu,
                         const sim_mig_table *t, const sim_mig_profile **inst, char *who,
                         size_t size, int *whole)
{
    int n = 0;
    size_t used = 0;
    *whole = -1;
    for (int j = 0; j < s->n; j++) {
        const sim_scenario *sc = &s->sc[j];
        if (!job_on(s, j, gpu)) continue;
        if (!sc->hw.mig[0]) {
            *whole = j;
            continue;
        }
        if (n < SIM_MIG_SLOTS_MAX) inst[n] = sim_mig_find(t, sc->hw.mig);
        n++;
        used += (size_t)snprintf(who + used, used < size ? size - used : 0, "%s%s (%s)",
                                 used ? ", " : "", jobs->job[j].name, sc->hw.mig);
    }
    return n;
}

/* A GPU in MIG mode runs only instances, and its instances must have a legal placement. */
static int check_mig(const sim_jobs_setup *s, const cfg_jobs *jobs, const char *dir, sim_err *err)
{
    sim_mig_table t;
    int rc = cfg_mig_load(dir, s->system.hw.gpu.name, &t, err);
    if (rc || t.n == 0) return rc;
    for (int g = 0; g < s->system.hw.gpu_count; g++) {
        const sim_mig_profile *inst[SIM_MIG_SLOTS_MAX];
        char who[SIM_ERR_MSG_MAX / 2] = "";
        int whole, n = mig_instances(s, jobs, g, &t, inst, who, sizeof who, &whole);
        if (n == 0) continue;
        if (whole >= 0)
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                               "GPU %d runs MIG instances (%s), so job '%s' cannot have the whole "
                               "GPU: a GPU in MIG mode runs only its instances",
                               g, who, jobs->job[whole].name);
        int mem = 0;
        for (int i = 0; i < n && i < SIM_MIG_SLOTS_MAX; i++)
            mem += inst[i]->mem_slices;
        if (n > SIM_MIG_SLOTS_MAX || mem > t.memory_slices || !mig_place(inst, n, 0, 0))
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                               "GPU %d (%s): the MIG instances %s have no legal placement in its "
                               "%d compute and %d memory slices (`epochsim hw show %s` lists "
                               "each profile's slices and starts)",
                               g, s->system.hw.gpu.name, who, t.compute_slices, t.memory_slices,
                               s->system.hw.gpu.name);
    }
    return SIM_OK;
}

int sim_jobs_build(const cfg_jobs *jobs, const sim_experiment *top, const cfg_experiment_set *set,
                   const char *catalog_dir, sim_jobs_setup *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    /* The system: the top level's hardware with all its GPUs; its program is never run. */
    sim_experiment sx = *top;
    snprintf(sx.workload.model, sizeof sx.workload.model, "synthetic");
    sx.workload.trace[0] = 0;
    memset(&sx.placement, 0, sizeof sx.placement);
    cfg_experiment_set *ss = malloc(sizeof *ss);
    if (!ss) return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    *ss = *set;
    clear_flag(ss, "placement.gpus", false);
    clear_flag(ss, "placement.mig", false);
    int rc = sim_scenario_build(&sx, ss, catalog_dir, &out->system, err);
    free(ss);
    if (rc) return rc;
    out->share = (sim_gpushare_config){
        .mode = (sim_gpu_sharing)top->system.gpu_sharing,
        .slice_ns = (int64_t)(top->system.gpu_timeslice_us * 1e3),
        .switch_ns = (int64_t)(top->system.gpu_switch_us * 1e3),
    };
    out->sc = calloc((size_t)jobs->n, sizeof *out->sc);
    out->slot = calloc((size_t)jobs->n, sizeof *out->slot);
    out->gpus = calloc((size_t)jobs->n, sizeof *out->gpus);
    if (!out->sc || !out->slot || !out->gpus)
        return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    for (int j = 0; j < jobs->n; j++) {
        out->n++;
        rc = build_job(&jobs->job[j], j, top->seed, out->system.hw.gpu_count, catalog_dir,
                       &out->sc[j], out->gpus[j], err);
        if (rc) return rc;
        out->slot[j] = (sim_job_slot){.sc = &out->sc[j], .gpus = out->gpus[j]};
    }
    rc = check_mig(out, jobs, catalog_dir, err);
    if (!rc) rc = check_memory(out, jobs, err);
    return rc ? rc : check_host_memory(out, err);
}

void sim_jobs_setup_free(sim_jobs_setup *s)
{
    sim_scenario_free(&s->system);
    for (int j = 0; s->sc && j < s->n; j++)
        sim_scenario_free(&s->sc[j]);
    free(s->sc);
    free(s->slot);
    free(s->gpus);
    memset(s, 0, sizeof *s);
}
