/* cfgtable.c — the YAML walker behind cfgtable.h.
 * The file is loaded as a libyaml document (nodes keep their marks), then walked: mappings extend
 * the dotted path, scalars and [x, y] lists are parsed by the row their full path names. */
#include "sim/setup/cfgtable.h"

#include "sim/core/hw.h"
#include "sim/base/names.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <yaml.h>

#define KEY_MAX 256

const cfg_field *cfg_table_find(const cfg_table *t, const char *key, size_t *index)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->fields[i].key, key) == 0) {
            if (index) *index = i;
            return &t->fields[i];
        }
    return NULL;
}

/* Compares the last path component too, so `loader.num_worker` and `num_workers` both match. */
const char *cfg_table_suggest(const cfg_table *t, const char *key)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    const char *key_leaf = strrchr(key, '.');
    key_leaf = key_leaf ? key_leaf + 1 : key;
    for (size_t i = 0; i < t->n; i++) {
        const char *cand = t->fields[i].key;
        const char *leaf = strrchr(cand, '.');
        leaf = leaf ? leaf + 1 : cand;
        size_t d = sim_edit_distance(key, cand);
        size_t dl = sim_edit_distance(key_leaf, leaf);
        if (dl < d) d = dl;
        if (d < best_d) {
            best_d = d;
            best = cand;
        }
    }
    size_t limit = strlen(key_leaf) / 3 + 1;
    return best_d <= limit ? best : NULL;
}

void cfg_mark_locate(const cfg_mark *mark, sim_err *err)
{
    if (!err || !mark || !mark->where[0] || err->where[0]) return;
    snprintf(err->where, sizeof err->where, "%s", mark->where);
    err->line = mark->line;
    err->col = mark->col;
}

static int range_error(const cfg_field *f, char *why, size_t why_size)
{
    if (f->min == (double)INT64_MIN || f->min <= -1e300)
        snprintf(why, why_size, "must be at most %g", f->max);
    else if (f->max >= 1e300)
        snprintf(why, why_size, "must be at least %g", f->min);
    else
        snprintf(why, why_size, "must be between %g and %g", f->min, f->max);
    return SIM_EINVAL;
}

static bool has_range(const cfg_field *f)
{
    return f->min <= f->max;
}

static int parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(s, yes[i])) {
            *out = true;
            return 0;
        }
        if (!strcasecmp(s, no[i])) {
            *out = false;
            return 0;
        }
    }
    return -1;
}

/* Integer fields (int, int64, u64) at p; on failure writes the reason into why. */
static int parse_integer(const cfg_field *f, const char *s, char *p, char *why, size_t why_size)
{
    if (!*s) {
        snprintf(why, why_size, "expected an integer, got nothing");
        return SIM_EINVAL;
    }
    /* Accept 1281167, 1e6 and 1_000_000 style only when they are exact integers. */
    char *end = NULL;
    errno = 0;
    long double v = strtold(s, &end);
    if (*end || errno || v != floorl(v) || fabsl(v) > 9.0e18L) {
        snprintf(why, why_size, "expected an integer, got '%s'", s);
        return SIM_EINVAL;
    }
    if (has_range(f) && (v < f->min || v > f->max)) return range_error(f, why, why_size);
    if (f->type == CFG_T_INT) {
        if (v < INT32_MIN || v > INT32_MAX) {
            snprintf(why, why_size, "'%s' is out of range", s);
            return SIM_EINVAL;
        }
        *(int *)p = (int)v;
    } else if (f->type == CFG_T_INT64) {
        *(int64_t *)p = (int64_t)v;
    } else {
        if (v < 0) {
            snprintf(why, why_size, "must not be negative");
            return SIM_EINVAL;
        }
        *(uint64_t *)p = (uint64_t)v;
    }
    return 0;
}

static int parse_double(const cfg_field *f, const char *s, char *p, char *why, size_t why_size)
{
    char *end = NULL;
    errno = 0;
    double v = *s ? strtod(s, &end) : NAN;
    if (!*s || *end || errno || !isfinite(v)) {
        snprintf(why, why_size, "expected a number, got '%s'", s);
        return SIM_EINVAL;
    }
    if (has_range(f) && (v < f->min || v > f->max)) return range_error(f, why, why_size);
    *(double *)p = v;
    return 0;
}

/* A list of distinct integers, "[0, 1]" or "0,1", each in the field's range. */
static int parse_list(const cfg_field *f, const char *s, char *p, char *why, size_t why_size)
{
    sim_int_list l = {0};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s + (*s == '['));
    char *close = strrchr(buf, ']');
    if (close) *close = 0;
    cfg_field one = *f;
    one.type = CFG_T_INT;
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        if (l.n == SIM_INT_LIST_MAX) {
            snprintf(why, why_size, "has more than %d values", SIM_INT_LIST_MAX);
            return SIM_EINVAL;
        }
        int v;
        if (parse_integer(&one, t, (char *)&v, why, why_size)) return SIM_EINVAL;
        for (int i = 0; i < l.n; i++)
            if (l.v[i] == v) {
                snprintf(why, why_size, "lists %d twice", v);
                return SIM_EINVAL;
            }
        l.v[l.n++] = v;
    }
    if (l.n == 0) {
        snprintf(why, why_size, "expected a list of integers such as [0, 1], got '%s'", s);
        return SIM_EINVAL;
    }
    memcpy(p, &l, sizeof l);
    return 0;
}

/* One of f->names, stored as its index; the error lists them. */
static int parse_enum(const cfg_field *f, const char *s, char *p, char *why, size_t why_size)
{
    size_t used = (size_t)snprintf(why, why_size, "unknown value '%s' (", s);
    for (int i = 0; f->names[i]; i++) {
        if (!strcmp(s, f->names[i])) {
            *(int *)p = i;
            return 0;
        }
        if (used < why_size)
            used +=
                (size_t)snprintf(why + used, why_size - used, "%s%s", i ? ", " : "", f->names[i]);
    }
    if (used < why_size) snprintf(why + used, why_size - used, ")");
    return SIM_EINVAL;
}

/* Parses one scalar into the field; on failure writes the reason into why. */
static int parse_scalar(const cfg_field *f, const char *s, void *base, char *why, size_t why_size)
{
    char *p = (char *)base + f->offset;
    switch (f->type) {
    case CFG_T_INT:
    case CFG_T_INT64:
    case CFG_T_U64:
        return parse_integer(f, s, p, why, why_size);
    case CFG_T_DOUBLE:
        return parse_double(f, s, p, why, why_size);
    case CFG_T_BOOL:
        if (parse_bool(s, (bool *)p)) {
            snprintf(why, why_size, "expected true or false, got '%s'", s);
            return SIM_EINVAL;
        }
        return 0;
    case CFG_T_STR:
        if (strlen(s) >= f->size) {
            snprintf(why, why_size, "is longer than %zu characters", f->size - 1);
            return SIM_EINVAL;
        }
        memcpy(p, s, strlen(s) + 1);
        return 0;
    case CFG_T_PREC:
        if (sim_precision_parse(s, (sim_precision *)p)) {
            snprintf(why, why_size,
                     "unknown precision '%s' (fp32, tf32, fp16, bf16, amp_fp16, amp_bf16)", s);
            return SIM_EINVAL;
        }
        return 0;
    case CFG_T_CURVE:
        snprintf(why, why_size, "expected a list of [x, y] pairs");
        return SIM_EINVAL;
    case CFG_T_ENUM:
        return parse_enum(f, s, p, why, why_size);
    case CFG_T_LIST:
        return parse_list(f, s, p, why, why_size);
    }
    snprintf(why, why_size, "unsupported field type");
    return SIM_EINVAL;
}

void cfg_table_format(const cfg_field *f, const void *base, char *buf, size_t size)
{
    const char *p = (const char *)base + f->offset;
    switch (f->type) {
    case CFG_T_INT:
        snprintf(buf, size, "%d", *(const int *)p);
        break;
    case CFG_T_INT64:
        snprintf(buf, size, "%lld", (long long)*(const int64_t *)p);
        break;
    case CFG_T_U64:
        snprintf(buf, size, "%llu", (unsigned long long)*(const uint64_t *)p);
        break;
    case CFG_T_DOUBLE:
        snprintf(buf, size, "%.17g", *(const double *)p);
        break;
    case CFG_T_BOOL:
        snprintf(buf, size, "%s", *(const bool *)p ? "true" : "false");
        break;
    case CFG_T_STR:
        snprintf(buf, size, "%s", p);
        break;
    case CFG_T_PREC: {
        const char *n = sim_precision_name(*(const sim_precision *)p);
        snprintf(buf, size, "%s", n ? n : "?");
        break;
    }
    case CFG_T_CURVE: {
        const sim_curve *c = (const sim_curve *)p;
        size_t used = (size_t)snprintf(buf, size, "[");
        for (int i = 0; i < c->n && used < size; i++)
            used += (size_t)snprintf(buf + used, size - used, "%s[%g, %g]", i ? ", " : "", c->x[i],
                                     c->y[i]);
        if (used < size) snprintf(buf + used, size - used, "]");
        break;
    }
    case CFG_T_ENUM:
        snprintf(buf, size, "%s", f->names[*(const int *)p]);
        break;
    case CFG_T_LIST: {
        const sim_int_list *l = (const sim_int_list *)p;
        size_t used = (size_t)snprintf(buf, size, "[");
        for (int i = 0; i < l->n && used < size; i++)
            used += (size_t)snprintf(buf + used, size - used, "%s%d", i ? ", " : "", l->v[i]);
        if (used < size) snprintf(buf + used, size - used, "]");
        break;
    }
    }
}

typedef struct walk {
    const cfg_table *t;
    yaml_document_t *doc;
    const char *path;
    void *base;
    bool *set;
    cfg_mark *marks;
    sim_err *err;
} walk;

static int node_error(walk *w, const yaml_node_t *n, const char *fmt, const char *a, const char *b)
{
    char msg[2 * SIM_ERR_MSG_MAX + 64]; /* key and reason, cut to size by sim_err_set */
    snprintf(msg, sizeof msg, fmt, a, b ? b : "");
    return sim_err_set(w->err, SIM_EINVAL, w->path, (int)n->start_mark.line + 1,
                       (int)n->start_mark.column + 1, "%s", msg);
}

static int parse_curve(walk *w, const cfg_field *f, const char *key, yaml_node_t *n)
{
    sim_curve c = {0};
    if (n->type != YAML_SEQUENCE_NODE)
        return node_error(w, n, "'%s': expected a list of [x, y] pairs", key, NULL);
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        yaml_node_t *pair = yaml_document_get_node(w->doc, *it);
        if (c.n == SIM_CURVE_MAX) return node_error(w, pair, "'%s': at most 12 points", key, NULL);
        if (pair->type != YAML_SEQUENCE_NODE ||
            pair->data.sequence.items.top - pair->data.sequence.items.start != 2)
            return node_error(w, pair, "'%s': each point must be a pair [x, y]", key, NULL);
        double xy[2];
        for (int k = 0; k < 2; k++) {
            yaml_node_t *v = yaml_document_get_node(w->doc, pair->data.sequence.items.start[k]);
            char *end = NULL;
            const char *s = v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : "";
            xy[k] = strtod(s, &end);
            if (!*s || *end || !isfinite(xy[k]))
                return node_error(w, v, "'%s': expected a number, got '%s'", key, s);
        }
        if (c.n > 0 && xy[0] <= c.x[c.n - 1])
            return node_error(w, pair, "'%s': x values must ascend", key, NULL);
        if (xy[1] <= 0 || xy[1] > 1)
            return node_error(w, pair, "'%s': efficiency must be in (0, 1]", key, NULL);
        c.x[c.n] = xy[0];
        c.y[c.n] = xy[1];
        c.n++;
    }
    memcpy((char *)w->base + f->offset, &c, sizeof c);
    return 0;
}

/* A YAML list of integers: its items joined with commas, then parsed as the scalar form. */
static int parse_list_node(walk *w, const cfg_field *f, const char *key, yaml_node_t *n)
{
    char joined[256] = "";
    size_t used = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
        yaml_node_t *v = yaml_document_get_node(w->doc, *it);
        if (v->type != YAML_SCALAR_NODE)
            return node_error(w, v, "'%s': expected a list of integers such as [0, 1]", key, NULL);
        used += (size_t)snprintf(joined + used, used < sizeof joined ? sizeof joined - used : 0,
                                 "%s%s", used ? "," : "", (const char *)v->data.scalar.value);
        if (used >= sizeof joined) return node_error(w, n, "'%s': the list is too long", key, NULL);
    }
    char why[256];
    if (parse_scalar(f, joined, w->base, why, sizeof why))
        return node_error(w, n, "'%s' %s", key, why);
    return 0;
}

static bool is_extra_key(const cfg_table *t, const char *key)
{
    for (const char *const *k = t->extra_keys; k && *k; k++)
        if (!strcmp(*k, key)) return true;
    return false;
}

/* For a section such as `loader` (a prefix of some keys), the first key in it; else NULL. */
static const char *section_first_key(const cfg_table *t, const char *key)
{
    size_t klen = strlen(key);
    for (size_t i = 0; i < t->n; i++)
        if (!strncmp(t->fields[i].key, key, klen) && t->fields[i].key[klen] == '.')
            return t->fields[i].key;
    return NULL;
}

static int walk_mapping(walk *w, yaml_node_t *map, const char *prefix)
{
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yaml_document_get_node(w->doc, pr->key);
        yaml_node_t *v = yaml_document_get_node(w->doc, pr->value);
        if (k->type != YAML_SCALAR_NODE)
            return node_error(w, k, "keys must be plain names%s%s", "", NULL);
        char key[KEY_MAX];
        int len = snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "",
                           (const char *)k->data.scalar.value);
        if (len < 0 || (size_t)len >= sizeof key)
            return node_error(w, k, "key '%s' is too long%s", (const char *)k->data.scalar.value,
                              NULL);
        if (!*prefix && is_extra_key(w->t, key)) continue;
        size_t index = 0;
        const cfg_field *f = cfg_table_find(w->t, key, &index);
        const char *first = f ? NULL : section_first_key(w->t, key);
        if (first && v->type != YAML_MAPPING_NODE)
            return node_error(w, v, "'%s' is a section: give its keys as a mapping (e.g. %s)", key,
                              first);
        if (first) {
            int rc = walk_mapping(w, v, key);
            if (rc) return rc;
            continue;
        }
        if (!f) {
            const char *near = cfg_table_suggest(w->t, key);
            if (near) return node_error(w, k, "unknown key '%s' (did you mean '%s'?)", key, near);
            return node_error(w, k, "unknown key '%s'%s", key, NULL);
        }
        if (f->type == CFG_T_CURVE) {
            int rc = parse_curve(w, f, key, v);
            if (rc) return rc;
        } else if (f->type == CFG_T_LIST && v->type == YAML_SEQUENCE_NODE) {
            int rc = parse_list_node(w, f, key, v);
            if (rc) return rc;
        } else {
            if (v->type != YAML_SCALAR_NODE)
                return node_error(w, v, "'%s': expected a single value, not a %s", key,
                                  v->type == YAML_MAPPING_NODE ? "mapping" : "list");
            char why[256];
            if (parse_scalar(f, (const char *)v->data.scalar.value, w->base, why, sizeof why))
                return node_error(w, v, "'%s' %s", key, why);
        }
        if (w->set) w->set[index] = true;
        if (w->marks) {
            cfg_mark *m = &w->marks[index];
            snprintf(m->where, sizeof m->where, "%.159s", w->path);
            m->line = (int)v->start_mark.line + 1;
            m->col = (int)v->start_mark.column + 1;
        }
    }
    return 0;
}

/* Nesting deeper than this is refused before the document is built. Our files nest at most
 * three levels (a catalog curve: mapping, list, pair); 64 leaves room for any hand-written file
 * while bounding the parser's work on a hostile one (40,000 levels took seconds to load). */
#define YAML_DEPTH_MAX 64

static int yaml_syntax_error(const yaml_parser_t *p, const char *path, sim_err *err)
{
    return sim_err_set(err, SIM_EINVAL, path, (int)p->problem_mark.line + 1,
                       (int)p->problem_mark.column + 1, "malformed YAML: %s%s%s",
                       p->problem ? p->problem : "syntax error", p->context ? " " : "",
                       p->context ? p->context : "");
}

/* One pass over the parser's events before loading: the nesting depth stays within
 * YAML_DEPTH_MAX and the file holds one document (a second one would be silently ignored). */
static int prescan(FILE *fp, const char *path, sim_err *err)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "cannot start the YAML parser");
    yaml_parser_set_input_file(&parser, fp);
    int rc = SIM_OK, depth = 0, documents = 0;
    for (int done = 0; !done && !rc;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = yaml_syntax_error(&parser, path, err);
            break;
        }
        int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
        switch (ev.type) {
        case YAML_DOCUMENT_START_EVENT:
            if (++documents > 1)
                rc = sim_err_set(err, SIM_EINVAL, path, line, col,
                                 "a second YAML document starts here; an experiment, catalog "
                                 "or sweep file holds one (remove the '---' line)");
            break;
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT:
            if (++depth > YAML_DEPTH_MAX)
                rc = sim_err_set(err, SIM_EINVAL, path, line, col,
                                 "nested more than %d levels deep", YAML_DEPTH_MAX);
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            depth--;
            break;
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    return rc;
}

static int compare_key_nodes(const void *a, const void *b)
{
    const yaml_node_t *x = *(yaml_node_t *const *)a, *y = *(yaml_node_t *const *)b;
    int c = strcmp((const char *)x->data.scalar.value, (const char *)y->data.scalar.value);
    if (c) return c;
    return (x->start_mark.index > y->start_mark.index) -
           (x->start_mark.index < y->start_mark.index);
}

/* A key given twice in one mapping is an error naming both lines (YAML 1.2 requires unique
 * keys; libyaml keeps both and the second would silently win). */
static int check_unique_keys(yaml_document_t *doc, const yaml_node_t *map, const char *path,
                             sim_err *err)
{
    size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    if (n < 2) return SIM_OK;
    yaml_node_t **keys = malloc(n * sizeof *keys);
    if (!keys) return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    size_t m = 0;
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = yaml_document_get_node(doc, pr->key);
        if (k && k->type == YAML_SCALAR_NODE) keys[m++] = k;
    }
    if (m > 1) qsort(keys, m, sizeof *keys, compare_key_nodes);
    int rc = SIM_OK;
    for (size_t i = 1; i < m && !rc; i++)
        if (!strcmp((const char *)keys[i]->data.scalar.value,
                    (const char *)keys[i - 1]->data.scalar.value))
            rc = sim_err_set(
                err, SIM_EINVAL, path, (int)keys[i]->start_mark.line + 1,
                (int)keys[i]->start_mark.column + 1, "duplicate key '%s' (first given on line %d)",
                (const char *)keys[i]->data.scalar.value, (int)keys[i - 1]->start_mark.line + 1);
    free(keys);
    return rc;
}

static int check_document(yaml_document_t *doc, const char *path, sim_err *err)
{
    for (yaml_node_t *n = doc->nodes.start; n < doc->nodes.top; n++)
        if (n->type == YAML_MAPPING_NODE) {
            int rc = check_unique_keys(doc, n, path, err);
            if (rc) return rc;
        }
    return SIM_OK;
}

static int load_document(FILE *fp, const char *path, yaml_document_t *doc, sim_err *err)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "cannot start the YAML parser");
    yaml_parser_set_input_file(&parser, fp);
    int rc = SIM_OK;
    if (!yaml_parser_load(&parser, doc))
        rc = parser.error == YAML_MEMORY_ERROR
                 ? sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory")
                 : yaml_syntax_error(&parser, path, err);
    yaml_parser_delete(&parser);
    if (!rc && (rc = check_document(doc, path, err))) yaml_document_delete(doc);
    return rc;
}

int cfg_yaml_load_file(const char *path, yaml_document_t *doc, sim_err *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return sim_err_set(err, SIM_ENOENT, path, 0, 0, "cannot open: %s", strerror(errno));
    struct stat st;
    int rc = SIM_OK;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode))
        rc = sim_err_set(err, SIM_EINVAL, path, 0, 0, "is a directory, not a YAML file");
    else if (!(rc = prescan(fp, path, err))) {
        rewind(fp);
        rc = load_document(fp, path, doc, err);
    }
    fclose(fp);
    return rc;
}

int cfg_table_load_file(const cfg_table *t, const char *path, void *base, bool *set,
                        cfg_mark *marks, sim_err *err)
{
    yaml_document_t doc;
    int rc = cfg_yaml_load_file(path, &doc, err);
    if (rc) return rc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) {
        rc = sim_err_set(err, SIM_EINVAL, path, 1, 1, "the file is empty");
    } else {
        rc = cfg_table_load_node(t, &doc, root, path, base, set, marks, err);
    }
    yaml_document_delete(&doc);
    return rc;
}

int cfg_table_load_node(const cfg_table *t, yaml_document_t *doc, yaml_node_t *map,
                        const char *path, void *base, bool *set, cfg_mark *marks, sim_err *err)
{
    if (map->type != YAML_MAPPING_NODE)
        return sim_err_set(err, SIM_EINVAL, path, (int)map->start_mark.line + 1,
                           (int)map->start_mark.column + 1, "expected a mapping of keys");
    walk w = {
        .t = t, .doc = doc, .path = path, .base = base, .set = set, .marks = marks, .err = err};
    return walk_mapping(&w, map, "");
}

int cfg_table_set(const cfg_table *t, const char *assignment, void *base, bool *set,
                  cfg_mark *marks, sim_err *err)
{
    char where[SIM_ERR_WHERE_MAX];
    snprintf(where, sizeof where, "--set %s", assignment);
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return sim_err_set(err, SIM_EINVAL, where, 0, 0, "expected key.path=value");
    char key[KEY_MAX];
    size_t klen = (size_t)(eq - assignment);
    if (klen >= sizeof key) return sim_err_set(err, SIM_EINVAL, where, 0, 0, "key is too long");
    memcpy(key, assignment, klen);
    key[klen] = 0;
    size_t index = 0;
    const cfg_field *f = cfg_table_find(t, key, &index);
    const char *first = f ? NULL : section_first_key(t, key);
    if (first)
        return sim_err_set(err, SIM_EINVAL, where, 0, 0,
                           "'%s' is a section: set one of its keys (e.g. %s=...)", key, first);
    if (!f) {
        const char *near = cfg_table_suggest(t, key);
        return sim_err_set(err, SIM_EINVAL, where, 0, 0, "unknown key '%s'%s%s%s", key,
                           near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
    }
    if (f->type == CFG_T_CURVE)
        return sim_err_set(err, SIM_EINVAL, where, 0, 0, "'%s' cannot be set from the command line",
                           key);
    char why[256];
    if (parse_scalar(f, eq + 1, base, why, sizeof why))
        return sim_err_set(err, SIM_EINVAL, where, 0, 0, "'%s' %s", key, why);
    if (set) set[index] = true;
    if (marks) {
        snprintf(marks[index].where, sizeof marks[index].where, "%.159s", where);
        marks[index].line = marks[index].col = 0;
    }
    return SIM_OK;
}
