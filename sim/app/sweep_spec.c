/* sweep_spec.c — the `sweep:` block and `--sweep`/`--zip` arguments, and point expansion.
 * The experiment file is read twice: once by the ordinary table loader with `sweep` accepted as an
 * extra top-level key (so every experiment key keeps its checks and messages), once here with
 * libyaml for the sweep block alone, keeping node marks for file:line:col errors. */
#include "sim/app/sweep_spec.h"

#include "sim/setup/cfgtable.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static const char *const sweep_extra_keys[] = {"sweep", NULL};

void sim_sweep_spec_init(sim_sweep_spec *s)
{
    memset(s, 0, sizeof *s);
}

static void free_strs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void sim_sweep_spec_free(sim_sweep_spec *s)
{
    for (size_t i = 0; i < s->n_grid; i++)
        free_strs(s->grid[i].values, s->grid[i].n);
    for (size_t i = 0; i < s->n_zip; i++)
        free_strs(s->zip[i].values, s->zip[i].n);
    for (size_t i = 0; i < s->n_hw; i++) {
        free(s->hw[i].name);
        free_strs(s->hw[i].assign, s->hw[i].n);
    }
    free(s->grid);
    free(s->zip);
    free(s->hw);
    memset(s, 0, sizeof *s);
}

int sim_sweep_load_experiment(const char *path, sim_experiment *x, cfg_experiment_set *set,
                              sim_err *err)
{
    return cfg_experiment_load_with(path, sweep_extra_keys, x, set, err);
}

/* Values become parts of one-line rows: no line breaks. */
static const char *bad_value(const char *v)
{
    if (strpbrk(v, "\r\n")) return "a value may not contain a line break";
    return NULL;
}

static int push_str(char ***v, size_t *n, const char *s)
{
    char **nv = realloc(*v, (*n + 1) * sizeof **v);
    if (!nv) return SIM_ENOMEM;
    *v = nv;
    if (!(nv[*n] = strdup(s))) return SIM_ENOMEM;
    (*n)++;
    return SIM_OK;
}

static sim_sweep_axis *new_axis(sim_sweep_axis **arr, size_t *n, const char *key)
{
    sim_sweep_axis *na = realloc(*arr, (*n + 1) * sizeof **arr);
    if (!na) return NULL;
    *arr = na;
    sim_sweep_axis *a = &na[(*n)++];
    memset(a, 0, sizeof *a);
    snprintf(a->key, sizeof a->key, "%s", key);
    return a;
}

static bool known_key(const char *key)
{
    return cfg_table_find(cfg_experiment_table(), key, NULL) != NULL;
}

static int unknown_key(sim_err *err, const char *where, int line, int col, const char *key)
{
    const char *near = cfg_table_suggest(cfg_experiment_table(), key);
    return sim_err_set(err, SIM_EINVAL, where, line, col, "unknown key '%s'%s%s%s", key,
                       near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
}

/* ---- the YAML block ---- */

typedef struct ywalk {
    yaml_document_t *doc;
    const char *path;
    sim_err *err;
} ywalk;

static int yerr(ywalk *w, const yaml_node_t *n, const char *fmt, const char *a, const char *b)
{
    return sim_err_set(w->err, SIM_EINVAL, w->path, (int)n->start_mark.line + 1,
                       (int)n->start_mark.column + 1, fmt, a, b ? b : "");
}

static const char *scalar(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int make_key(ywalk *w, const yaml_node_t *k, const char *prefix, char *key)
{
    const char *name = scalar(k);
    if (!name) return yerr(w, k, "keys must be plain names%s%s", "", NULL);
    int len = snprintf(key, SIM_SWEEP_KEY_MAX, "%s%s%s", prefix, *prefix ? "." : "", name);
    if (len < 0 || len >= SIM_SWEEP_KEY_MAX)
        return yerr(w, k, "key '%s' is too long%s", name, NULL);
    return SIM_OK;
}

/* Whether some experiment key starts with `prefix.` (a section such as `loader`). */
static bool is_section(const char *prefix)
{
    const cfg_table *t = cfg_experiment_table();
    size_t len = strlen(prefix);
    for (size_t i = 0; i < t->n; i++)
        if (!strncmp(t->fields[i].key, prefix, len) && t->fields[i].key[len] == '.') return true;
    return false;
}

/* grid: or zip: — a mapping of keys (nested sections allowed) to non-empty lists of scalars. */
static int walk_axes(ywalk *w, yaml_node_t *map, const char *prefix, sim_sweep_axis **arr,
                     size_t *n, const char *block)
{
    if (map->type != YAML_MAPPING_NODE)
        return yerr(w, map, "'sweep.%s' must be a mapping of keys to lists of values%s", block,
                    NULL);
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yaml_document_get_node(w->doc, pr->key);
        yaml_node_t *v = yaml_document_get_node(w->doc, pr->value);
        char key[SIM_SWEEP_KEY_MAX];
        int rc = make_key(w, k, prefix, key);
        if (rc) return rc;
        if (!known_key(key) && v->type == YAML_MAPPING_NODE && is_section(key)) {
            if ((rc = walk_axes(w, v, key, arr, n, block))) return rc;
            continue;
        }
        if (!known_key(key))
            return unknown_key(w->err, w->path, (int)k->start_mark.line + 1,
                               (int)k->start_mark.column + 1, key);
        for (size_t i = 0; i < *n; i++)
            if (!strcmp((*arr)[i].key, key)) return yerr(w, k, "'%s' is given twice%s", key, NULL);
        if (v->type != YAML_SEQUENCE_NODE ||
            v->data.sequence.items.top == v->data.sequence.items.start)
            return yerr(w, v, "'%s': expected a non-empty list of values, e.g. [32, 64]%s", key,
                        NULL);
        sim_sweep_axis *a = new_axis(arr, n, key);
        if (!a) return sim_err_set(w->err, SIM_ENOMEM, w->path, 0, 0, "out of memory");
        a->line = (int)v->start_mark.line + 1;
        a->col = (int)v->start_mark.column + 1;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++) {
            yaml_node_t *item = yaml_document_get_node(w->doc, *it);
            const char *val = scalar(item);
            if (!val)
                return yerr(w, item, "'%s': each value must be a single value, not a %s", key,
                            item->type == YAML_MAPPING_NODE ? "mapping" : "list");
            if (bad_value(val)) return yerr(w, item, "'%s': %s", key, bad_value(val));
            if (push_str(&a->values, &a->n, val))
                return sim_err_set(w->err, SIM_ENOMEM, w->path, 0, 0, "out of memory");
        }
    }
    return SIM_OK;
}

/* The assignments of one hardware set (nested sections allowed). */
static int walk_hwset(ywalk *w, yaml_node_t *map, const char *prefix, sim_sweep_hwset *h)
{
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yaml_document_get_node(w->doc, pr->key);
        yaml_node_t *v = yaml_document_get_node(w->doc, pr->value);
        char key[SIM_SWEEP_KEY_MAX];
        int rc = make_key(w, k, prefix, key);
        if (rc) return rc;
        if (!*prefix && !strcmp(key, "name")) continue; /* the set's own name, read by the caller */
        if (!known_key(key) && v->type == YAML_MAPPING_NODE && is_section(key)) {
            if ((rc = walk_hwset(w, v, key, h))) return rc;
            continue;
        }
        if (!known_key(key))
            return unknown_key(w->err, w->path, (int)k->start_mark.line + 1,
                               (int)k->start_mark.column + 1, key);
        const char *val = scalar(v);
        if (!val) return yerr(w, v, "'%s': expected a single value%s", key, NULL);
        if (bad_value(val)) return yerr(w, v, "'%s': %s", key, bad_value(val));
        size_t klen = strlen(key);
        for (size_t i = 0; i < h->n; i++)
            if (!strncmp(h->assign[i], key, klen) && h->assign[i][klen] == '=')
                return yerr(w, k, "'%s' is given twice%s", key, NULL);
        char *a = malloc(klen + strlen(val) + 2);
        if (!a) return sim_err_set(w->err, SIM_ENOMEM, w->path, 0, 0, "out of memory");
        sprintf(a, "%s=%s", key, val);
        char **na = realloc(h->assign, (h->n + 1) * sizeof *na);
        if (!na) {
            free(a);
            return sim_err_set(w->err, SIM_ENOMEM, w->path, 0, 0, "out of memory");
        }
        h->assign = na;
        h->assign[h->n++] = a;
    }
    return SIM_OK;
}

static int walk_hardware(ywalk *w, yaml_node_t *seq, sim_sweep_spec *s)
{
    if (seq->type != YAML_SEQUENCE_NODE ||
        seq->data.sequence.items.top == seq->data.sequence.items.start)
        return yerr(w, seq,
                    "'sweep.hardware' must be a non-empty list of sets, e.g. "
                    "[{name: a10-vm, system.gpu: a10}]%s%s",
                    "", NULL);
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++) {
        yaml_node_t *m = yaml_document_get_node(w->doc, *it);
        if (m->type != YAML_MAPPING_NODE)
            return yerr(w, m, "each hardware set must be a mapping with a 'name'%s%s", "", NULL);
        const char *name = NULL;
        yaml_node_t *name_node = m;
        for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top;
             pr++) {
            yaml_node_t *k = yaml_document_get_node(w->doc, pr->key);
            if (scalar(k) && !strcmp(scalar(k), "name")) {
                name_node = yaml_document_get_node(w->doc, pr->value);
                name = scalar(name_node);
            }
        }
        if (!name || !*name)
            return yerr(w, name_node, "a hardware set needs a 'name'%s%s", "", NULL);
        if (bad_value(name)) return yerr(w, name_node, "'name': %s%s", bad_value(name), NULL);
        for (size_t i = 0; i < s->n_hw; i++)
            if (!strcmp(s->hw[i].name, name))
                return yerr(w, name_node, "hardware set '%s' is given twice%s", name, NULL);
        sim_sweep_hwset *nh = realloc(s->hw, (s->n_hw + 1) * sizeof *nh);
        if (!nh) return sim_err_set(w->err, SIM_ENOMEM, w->path, 0, 0, "out of memory");
        s->hw = nh;
        sim_sweep_hwset *h = &s->hw[s->n_hw++];
        memset(h, 0, sizeof *h);
        if (!(h->name = strdup(name)))
            return sim_err_set(w->err, SIM_ENOMEM, w->path, 0, 0, "out of memory");
        int rc = walk_hwset(w, m, "", h);
        if (rc) return rc;
    }
    return SIM_OK;
}

static int walk_sweep(ywalk *w, yaml_node_t *block, sim_sweep_spec *s)
{
    if (block->type == YAML_SCALAR_NODE && !*block->data.scalar.value)
        return SIM_OK; /* `sweep:` with nothing under it */
    if (block->type != YAML_MAPPING_NODE)
        return yerr(w, block, "'sweep' must be a mapping with grid, zip and/or hardware%s%s", "",
                    NULL);
    for (yaml_node_pair_t *pr = block->data.mapping.pairs.start; pr < block->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yaml_document_get_node(w->doc, pr->key);
        yaml_node_t *v = yaml_document_get_node(w->doc, pr->value);
        const char *name = scalar(k);
        int rc;
        if (name && !strcmp(name, "grid"))
            rc = walk_axes(w, v, "", &s->grid, &s->n_grid, "grid");
        else if (name && !strcmp(name, "zip"))
            rc = walk_axes(w, v, "", &s->zip, &s->n_zip, "zip");
        else if (name && !strcmp(name, "hardware"))
            rc = walk_hardware(w, v, s);
        else
            rc = yerr(w, k, "unknown key 'sweep.%s' (the sweep block takes grid, zip and hardware)",
                      name ? name : "?", NULL);
        if (rc) return rc;
    }
    /* Zip lists must be of one length: name the first list that differs, at its position. */
    for (size_t i = 1; i < s->n_zip; i++)
        if (s->zip[i].n != s->zip[0].n)
            return sim_err_set(w->err, SIM_EINVAL, w->path, s->zip[i].line, s->zip[i].col,
                               "zip: '%s' has %zu values but '%s' has %zu", s->zip[i].key,
                               s->zip[i].n, s->zip[0].key, s->zip[0].n);
    return SIM_OK;
}

int sim_sweep_spec_load(sim_sweep_spec *s, const char *path, sim_err *err)
{
    yaml_document_t doc;
    int rc = cfg_yaml_load_file(path, &doc, err);
    if (rc) return rc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root && root->type == YAML_MAPPING_NODE) {
        ywalk w = {.doc = &doc, .path = path, .err = err};
        for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
             pr < root->data.mapping.pairs.top && !rc; pr++) {
            yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
            if (scalar(k) && !strcmp(scalar(k), "sweep"))
                rc = walk_sweep(&w, yaml_document_get_node(&doc, pr->value), s);
        }
    }
    yaml_document_delete(&doc);
    return rc;
}

/* ---- the command line ---- */

int sim_sweep_spec_add(sim_sweep_spec *s, const char *arg, int zip, sim_err *err)
{
    char where[SIM_ERR_WHERE_MAX];
    snprintf(where, sizeof where, "%s %s", zip ? "--zip" : "--sweep", arg);
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return sim_err_set(err, SIM_EINVAL, where, 0, 0, "expected KEY=V1,V2,...");
    size_t klen = (size_t)(eq - arg);
    if (klen >= SIM_SWEEP_KEY_MAX)
        return sim_err_set(err, SIM_EINVAL, where, 0, 0, "key is too long");
    char key[SIM_SWEEP_KEY_MAX];
    memcpy(key, arg, klen);
    key[klen] = 0;
    if (!known_key(key)) return unknown_key(err, where, 0, 0, key);
    if (bad_value(eq + 1))
        return sim_err_set(err, SIM_EINVAL, where, 0, 0, "%s", bad_value(eq + 1));
    sim_sweep_axis **arr = zip ? &s->zip : &s->grid;
    size_t *n = zip ? &s->n_zip : &s->n_grid;
    sim_sweep_axis *a = NULL;
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*arr)[i].key, key)) {
            if (zip) return sim_err_set(err, SIM_EINVAL, where, 0, 0, "'%s' is zipped twice", key);
            a = &(*arr)[i]; /* the command line replaces the file's values */
            free_strs(a->values, a->n);
            a->values = NULL;
            a->n = 0;
        }
    if (!a && !(a = new_axis(arr, n, key)))
        return sim_err_set(err, SIM_ENOMEM, where, 0, 0, "out of memory");
    const char *p = eq + 1;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char *v = strndup(p, len);
        if (!v) return sim_err_set(err, SIM_ENOMEM, where, 0, 0, "out of memory");
        char **nv = realloc(a->values, (a->n + 1) * sizeof *nv);
        if (!nv) {
            free(v);
            return sim_err_set(err, SIM_ENOMEM, where, 0, 0, "out of memory");
        }
        a->values = nv;
        a->values[a->n++] = v;
        if (!comma) break;
        p = comma + 1;
    }
    return SIM_OK;
}

/* The sampled mode's key: it decides which columns every row has, so one sweep cannot vary it. */
#define SAMPLED_KEY "run.sampled_pct"

static int sampled_varies(sim_err *err)
{
    return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                       "'" SAMPLED_KEY "' cannot vary within a sweep (sampled rows have more "
                       "columns): give it to the whole sweep with --sampled or --set");
}

int sim_sweep_spec_check(const sim_sweep_spec *s, sim_err *err)
{
    for (size_t i = 1; i < s->n_zip; i++)
        if (s->zip[i].n != s->zip[0].n)
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                               "zip: '%s' has %zu values but '%s' has %zu", s->zip[i].key,
                               s->zip[i].n, s->zip[0].key, s->zip[0].n);
    for (size_t i = 0; i < s->n_grid; i++)
        for (size_t j = 0; j < s->n_zip; j++)
            if (!strcmp(s->grid[i].key, s->zip[j].key))
                return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                                   "'%s' is both a grid key and a zipped key", s->grid[i].key);
    for (size_t h = 0; h < s->n_hw; h++)
        for (size_t a = 0; a < s->hw[h].n; a++) {
            const char *as = s->hw[h].assign[a];
            size_t klen = (size_t)(strchr(as, '=') - as);
            for (size_t c = 0; c < s->n_grid + s->n_zip; c++) {
                const char *key = c < s->n_grid ? s->grid[c].key : s->zip[c - s->n_grid].key;
                if (strlen(key) == klen && !strncmp(key, as, klen))
                    return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                                       "'%s' is both swept and set by hardware set '%s'", key,
                                       s->hw[h].name);
            }
        }
    for (size_t c = 0; c < sim_sweep_spec_columns(s); c++)
        if (!strcmp(sim_sweep_spec_column(s, c), SAMPLED_KEY)) return sampled_varies(err);
    for (size_t h = 0; h < s->n_hw; h++)
        for (size_t a = 0; a < s->hw[h].n; a++)
            if (!strncmp(s->hw[h].assign[a], SAMPLED_KEY "=", strlen(SAMPLED_KEY) + 1))
                return sampled_varies(err);
    if (sim_sweep_spec_points(s) > SIM_SWEEP_MAX_POINTS)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "the sweep has more than %llu points",
                           (unsigned long long)SIM_SWEEP_MAX_POINTS);
    return SIM_OK;
}

/* ---- points ---- */

uint64_t sim_sweep_spec_points(const sim_sweep_spec *s)
{
    uint64_t n = 1;
    for (size_t i = 0; i < s->n_grid; i++) {
        if (n > SIM_SWEEP_MAX_POINTS)
            return SIM_SWEEP_MAX_POINTS + 1; /* saturate instead of overflowing */
        n *= s->grid[i].n;
    }
    if (s->n_zip) n *= s->zip[0].n;
    if (s->n_hw) n *= s->n_hw;
    return n > SIM_SWEEP_MAX_POINTS ? SIM_SWEEP_MAX_POINTS + 1 : n;
}

size_t sim_sweep_spec_columns(const sim_sweep_spec *s)
{
    return s->n_grid + s->n_zip + (s->n_hw ? 1 : 0);
}

const char *sim_sweep_spec_column(const sim_sweep_spec *s, size_t i)
{
    if (i < s->n_grid) return s->grid[i].key;
    if (i < s->n_grid + s->n_zip) return s->zip[i - s->n_grid].key;
    return "hardware";
}

void sim_sweep_spec_point(const sim_sweep_spec *s, uint64_t index, sim_sweep_point *p,
                          const char **values)
{
    p->index = index;
    p->values = values;
    p->hw = NULL;
    uint64_t rest = index; /* mixed radix, the last part fastest */
    if (s->n_hw) {
        p->hw = &s->hw[rest % s->n_hw];
        values[s->n_grid + s->n_zip] = p->hw->name;
        rest /= s->n_hw;
    }
    if (s->n_zip) {
        size_t z = (size_t)(rest % s->zip[0].n);
        for (size_t i = 0; i < s->n_zip; i++)
            values[s->n_grid + i] = s->zip[i].values[z];
        rest /= s->zip[0].n;
    }
    for (size_t i = s->n_grid; i-- > 0;) {
        values[i] = s->grid[i].values[rest % s->grid[i].n];
        rest /= s->grid[i].n;
    }
}

uint64_t sim_sweep_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t sim_sweep_seed(uint64_t base_seed, uint64_t assign_hash)
{
    return sim_sweep_mix(base_seed ^ sim_sweep_mix(assign_hash)) >> 11;
}

uint64_t sim_sweep_replication_seed(uint64_t point_seed, int r)
{
    if (r == 0) return point_seed;
    return sim_sweep_mix(point_seed ^ sim_sweep_mix((uint64_t)r)) >> 11;
}

uint64_t sim_sweep_fnv1a(const char *s, uint64_t h)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

/* Applies `key=value` to x and writes its canonical form `key=CANON` (the value as the config
 * table prints it) into buf; a value that does not apply stays as written. */
static int canon_one(const char *key, const char *value, sim_experiment *x, cfg_experiment_set *set,
                     char *buf, size_t size, sim_err *err)
{
    int len = snprintf(buf, size, "%s=%s", key, value);
    if (len < 0 || (size_t)len >= size)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "'%s': value is too long", key);
    int rc = cfg_experiment_apply(buf, x, set, err);
    if (!rc) {
        const cfg_field *f = cfg_table_find(cfg_experiment_table(), key, NULL);
        char canon[1024];
        cfg_table_format(f, x, canon, sizeof canon);
        snprintf(buf, size, "%s=%s", key, canon);
    }
    return rc;
}

/* Called with each canonical assignment of a point, in column order then hardware-set order. */
typedef void assign_fn(const char *key, const char *canon, void *arg);

/* Applies every assignment of p to x, handing each canonical form to fn. Every assignment is
 * applied even after a failure, so that what fn sees does not depend on errors; the first error
 * is the one reported (err NULL: none). */
static int apply_point(const sim_sweep_spec *s, const sim_sweep_point *p, sim_experiment *x,
                       cfg_experiment_set *set, assign_fn *fn, void *arg, sim_err *err)
{
    char buf[SIM_SWEEP_KEY_MAX + 1024];
    int first_rc = SIM_OK;
    sim_err scratch;
    size_t n_cols = s->n_grid + s->n_zip, n_hw = p->hw ? p->hw->n : 0;
    for (size_t i = 0; i < n_cols + n_hw; i++) {
        char key[SIM_SWEEP_KEY_MAX];
        const char *value;
        if (i < n_cols) {
            snprintf(key, sizeof key, "%s", sim_sweep_spec_column(s, i));
            value = p->values[i];
        } else {
            const char *as = p->hw->assign[i - n_cols];
            const char *eq = strchr(as, '=');
            size_t klen = (size_t)(eq - as);
            memcpy(key, as, klen);
            key[klen] = 0;
            value = eq + 1;
        }
        int rc = canon_one(key, value, x, set, buf, sizeof buf, first_rc || !err ? &scratch : err);
        if (rc && !first_rc) first_rc = rc;
        fn(key, buf, arg);
    }
    return first_rc;
}

/* Adds one canonical assignment to the order-independent hash of the seed. */
static void hash_assign(const char *key, const char *canon, void *arg)
{
    if (strcmp(key, "seed") != 0) /* the seed is the base, not part of the point's identity */
        *(uint64_t *)arg += sim_sweep_mix(sim_sweep_fnv1a(canon, SIM_SWEEP_FNV_BASIS));
}

int sim_sweep_point_apply(const sim_sweep_spec *s, const sim_sweep_point *p, sim_experiment *x,
                          cfg_experiment_set *set, uint64_t *seed_out, sim_err *err)
{
    uint64_t hash = 0;
    int rc = apply_point(s, p, x, set, hash_assign, &hash, err);
    uint64_t seed = sim_sweep_seed(x->seed, hash);
    x->seed = seed;
    if (seed_out) *seed_out = seed;
    if (rc && err) err->where[0] = 0; /* the row names the key; "--set k=v" would mislead */
    return rc;
}

/* The canonical assignments of one point, collected for sorting. */
typedef struct assign_list {
    char **v;
    size_t n, bytes;
    bool oom;
} assign_list;

static void collect_assign(const char *key, const char *canon, void *arg)
{
    assign_list *l = arg;
    (void)key;
    char *c = l->oom ? NULL : strdup(canon);
    if (!c) {
        l->oom = true;
        return;
    }
    l->v[l->n++] = c;
    l->bytes += strlen(c) + 1;
}

static size_t key_len(const char *assign)
{
    return strcspn(assign, "=");
}

/* By key alone: "a.b=1" before "a.b.c=1", which comparing whole texts would reverse. */
static int by_key(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    size_t lx = key_len(x), ly = key_len(y);
    int c = memcmp(x, y, lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

char *sim_sweep_point_key(const sim_sweep_spec *s, const sim_sweep_point *p,
                          const sim_experiment *base, const cfg_experiment_set *base_set)
{
    size_t cap = s->n_grid + s->n_zip + (p->hw ? p->hw->n + 1 : 0);
    assign_list l = {.v = calloc(cap + 1, sizeof *l.v)};
    char *key = NULL;
    if (!l.v) return NULL;
    sim_experiment x = *base;
    cfg_experiment_set set = *base_set;
    apply_point(s, p, &x, &set, collect_assign, &l, NULL);
    if (p->hw && !l.oom) { /* the set's name tells apart sets that assign the same values */
        size_t len = strlen("hardware=") + strlen(p->hw->name) + 1;
        if ((l.v[l.n] = malloc(len))) {
            snprintf(l.v[l.n], len, "hardware=%s", p->hw->name);
            l.bytes += len;
            l.n++;
        } else {
            l.oom = true;
        }
    }
    if (!l.oom && (key = malloc(l.bytes + 1))) {
        qsort(l.v, l.n, sizeof *l.v, by_key);
        size_t pos = 0;
        for (size_t i = 0; i < l.n; i++)
            pos += (size_t)sprintf(key + pos, "%s%s", i ? ";" : "", l.v[i]);
        key[pos] = 0;
    }
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i]);
    free(l.v);
    return key;
}
