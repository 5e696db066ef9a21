/* sweep_row.c — sweep columns, rows and their CSV/JSONL text (see sweep_row.h).
 * A row is first a list of typed cells (null, number, string, bool) in column order; the two
 * writers only differ in how they print a cell. */
#include "sim/app/sweep_row.h"

#include "sim/setup/config.h"
#include "sim/app/report.h"

#include <csv.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

void sim_sweep_format_num(double v, char *buf, size_t size)
{
    snprintf(buf, size, "%.15g", v);
    if (strtod(buf, NULL) != v) snprintf(buf, size, "%.17g", v);
}

void sim_sweep_figs_free(sim_sweep_fig *figs, size_t n)
{
    if (!figs) return;
    for (size_t i = 0; i < n; i++) {
        free(figs[i].name);
        free(figs[i].str);
    }
    free(figs);
}

typedef struct figlist {
    sim_sweep_fig *v;
    size_t n, cap;
} figlist;

static int add_fig(figlist *l, const char *prefix, const char *key, const yajl_val v)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        sim_sweep_fig *nv = realloc(l->v, cap * sizeof *nv);
        if (!nv) return SIM_ENOMEM;
        l->v = nv;
        l->cap = cap;
    }
    sim_sweep_fig *f = &l->v[l->n];
    memset(f, 0, sizeof *f);
    size_t len = strlen(prefix) + strlen(key) + 2;
    if (!(f->name = malloc(len))) return SIM_ENOMEM;
    snprintf(f->name, len, "%s%s%s", prefix, *prefix ? "." : "", key);
    l->n++;
    if (YAJL_IS_NUMBER(v)) {
        f->is_int = YAJL_IS_INTEGER(v);
        f->num = f->is_int ? (double)YAJL_GET_INTEGER(v) : YAJL_GET_DOUBLE(v);
        return SIM_OK;
    }
    if (YAJL_IS_NULL(v)) { /* a figure with no value here (GPU-Util on MIG): an empty cell */
        f->num = NAN;
        return SIM_OK;
    }
    f->is_str = true;
    const char *s = YAJL_IS_STRING(v)  ? YAJL_GET_STRING(v)
                    : YAJL_IS_TRUE(v)  ? "true"
                    : YAJL_IS_FALSE(v) ? "false"
                                       : "";
    if (!(f->str = strdup(s))) return SIM_ENOMEM;
    /* Rows are single lines. */
    for (char *p = f->str; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return SIM_OK;
}

static int walk_obj(figlist *l, const char *prefix, yajl_val obj)
{
    for (size_t i = 0; i < obj->u.object.len; i++) {
        const char *k = obj->u.object.keys[i];
        yajl_val v = obj->u.object.values[i];
        int rc;
        if (YAJL_IS_ARRAY(v)) continue; /* per-epoch figures: one run --json away */
        if (YAJL_IS_OBJECT(v)) {
            char sub[256];
            snprintf(sub, sizeof sub, "%s%s%s", prefix, *prefix ? "." : "", k);
            rc = walk_obj(l, sub, v);
        } else {
            rc = add_fig(l, prefix, k, v);
        }
        if (rc) return rc;
    }
    return SIM_OK;
}

int sim_sweep_flatten(const sim_result *res, sim_sweep_fig **figs, size_t *n, sim_err *err)
{
    *figs = NULL;
    *n = 0;
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g) return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    yajl_gen_map_open(g);
    sim_report_json_members(g, res);
    yajl_gen_map_close(g);
    const unsigned char *buf;
    size_t len;
    int rc = SIM_OK;
    figlist l = {0};
    char *text = NULL;
    yajl_val tree = NULL;
    if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok || !(text = malloc(len + 1))) {
        rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "cannot format the figures");
        goto done;
    }
    memcpy(text, buf, len);
    text[len] = 0;
    char why[256];
    tree = yajl_tree_parse(text, why, sizeof why);
    if (!tree || !YAJL_IS_OBJECT(tree)) {
        /* A figure that JSON cannot hold (NaN, infinity) leaves the document incomplete. */
        rc = sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "a figure is not a finite number");
        goto done;
    }
    if ((rc = walk_obj(&l, "", tree))) {
        sim_err_set(err, rc, NULL, 0, 0, "out of memory");
        sim_sweep_figs_free(l.v, l.n);
        goto done;
    }
    *figs = l.v;
    *n = l.n;
done:
    yajl_tree_free(tree);
    free(text);
    yajl_gen_free(g);
    return rc;
}

/* ---- layout ---- */

static const char *const tail_cols[] = {"oom", "memory.peak_gb", "memory.capacity_gb",
                                        "memory.max_batch", "error"};
#define N_TAIL (sizeof tail_cols / sizeof tail_cols[0])

void sim_sweep_layout_free(sim_sweep_layout *L)
{
    sim_sweep_figs_free(L->tmpl, L->n_figs);
    for (size_t i = 0; i < L->n_cols; i++)
        free(L->names[i]);
    free(L->names);
    memset(L, 0, sizeof *L);
}

static int add_name(sim_sweep_layout *L, const char *a, const char *b)
{
    size_t len = strlen(a) + strlen(b) + 1;
    char *s = malloc(len);
    if (!s) return SIM_ENOMEM;
    snprintf(s, len, "%s%s", a, b);
    L->names[L->n_cols++] = s;
    return SIM_OK;
}

int sim_sweep_layout_init(sim_sweep_layout *L, const sim_sweep_spec *s, sim_sweep_format format,
                          int replications, bool sampled, sim_err *err)
{
    memset(L, 0, sizeof *L);
    L->format = format;
    L->replications = replications;
    L->n_swept = sim_sweep_spec_columns(s);
    sim_result empty;
    memset(&empty, 0, sizeof empty);
    empty.window_steps = sampled; /* a sampled result has the `sampled` figures */
    empty.first_full = -1;
    int rc = sim_sweep_flatten(&empty, &L->tmpl, &L->n_figs, err);
    if (rc) return rc;
    size_t max = 2 + L->n_swept + 2 * L->n_figs + N_TAIL;
    if (!(L->names = calloc(max, sizeof *L->names))) goto oom;
    if (add_name(L, "point", "")) goto oom;
    for (size_t i = 0; i < L->n_swept; i++)
        if (add_name(L, sim_sweep_spec_column(s, i), "")) goto oom;
    L->seed_col = L->n_cols;
    if (add_name(L, "seed", "")) goto oom;
    for (size_t i = 0; i < L->n_figs; i++) {
        if (add_name(L, L->tmpl[i].name, "")) goto oom;
        if (replications > 1 && !L->tmpl[i].is_str && add_name(L, L->tmpl[i].name, "_ci95"))
            goto oom;
    }
    for (size_t i = 0; i < N_TAIL; i++)
        if (add_name(L, tail_cols[i], "")) goto oom;
    /* A swept key could shadow a figure only if they shared a name; they live in different
     * namespaces (experiment keys vs. report keys), but check rather than write a bad header. */
    for (size_t i = 1; i < L->n_cols; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(L->names[i], L->names[j])) {
                rc = sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "column '%s' appears twice",
                                 L->names[i]);
                sim_sweep_layout_free(L);
                return rc;
            }
    return SIM_OK;
oom:
    sim_sweep_layout_free(L);
    return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
}

/* ---- cells ---- */

typedef enum kind { K_NULL, K_NUM, K_STR, K_BOOL } kind;

typedef struct cell {
    kind k;
    char *text; /* malloc'd; NULL for K_NULL */
} cell;

typedef struct cells {
    cell *v;
    size_t n;
    bool oom;
} cells;

static void put(cells *c, kind k, const char *text)
{
    cell *x = &c->v[c->n++];
    x->k = text ? k : K_NULL;
    x->text = NULL;
    if (text && !(x->text = strdup(text))) c->oom = true;
}

static void put_num(cells *c, double v, bool is_int)
{
    char buf[64];
    if (!isfinite(v)) { /* no value (a null figure): an empty cell */
        put(c, K_NULL, NULL);
        return;
    }
    if (is_int)
        snprintf(buf, sizeof buf, "%.0f", v);
    else
        sim_sweep_format_num(v, buf, sizeof buf);
    put(c, K_NUM, buf);
}

/* JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool json_number(const char *s)
{
    if (*s == '-') s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return false;
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9')) return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!(*s >= '0' && *s <= '9')) return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == 0;
}

/* A swept value prints as a JSON number or bool when its key is numeric or boolean and the text
 * is one already; everything else (names, `1_000`) stays a string. */
static kind value_kind(const char *key, const char *v)
{
    const cfg_field *f = cfg_table_find(cfg_experiment_table(), key, NULL);
    if (!f) return K_STR;
    switch (f->type) {
    case CFG_T_INT:
    case CFG_T_INT64:
    case CFG_T_U64:
    case CFG_T_DOUBLE:
        return json_number(v) ? K_NUM : K_STR;
    case CFG_T_BOOL:
        return !strcmp(v, "true") || !strcmp(v, "false") ? K_BOOL : K_STR;
    default:
        return K_STR;
    }
}

static void build_cells(const sim_sweep_layout *L, const sim_sweep_outcome *o, cells *c)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->index);
    put(c, K_NUM, buf);
    for (size_t i = 0; i < L->n_swept; i++)
        put(c, value_kind(L->names[1 + i], o->values[i]), o->values[i]);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->seed);
    put(c, K_NUM, buf);
    int R = L->replications;
    double *data = R > 1 ? malloc((size_t)R * sizeof *data) : NULL;
    if (R > 1 && !data) c->oom = true;
    for (size_t i = 0; i < L->n_figs; i++) {
        const sim_sweep_fig *t = &L->tmpl[i];
        bool ran = o->status == SIM_SWEEP_RAN;
        if (t->is_str) {
            /* With replications, text figures (bottleneck, verdict) are those of the first. */
            put(c, K_STR, ran ? o->figs[0][i].str : NULL);
            continue;
        }
        if (!ran || R == 1 || !data) {
            if (ran)
                put_num(c, o->figs[0][i].num, o->figs[0][i].is_int);
            else
                put(c, K_NULL, NULL);
            if (R > 1) put(c, K_NULL, NULL);
            continue;
        }
        for (int r = 0; r < R; r++)
            data[r] = o->figs[r][i].num;
        double mean = gsl_stats_mean(data, 1, (size_t)R);
        double sd = gsl_stats_sd_m(data, 1, (size_t)R, mean);
        /* Student t: the half-width of the 95 % interval of the mean of R runs. */
        double half = gsl_cdf_tdist_Pinv(0.975, (double)(R - 1)) * sd / sqrt((double)R);
        put_num(c, mean, false);
        put_num(c, half, false);
    }
    free(data);
    const sim_memory_info *m = &o->memory;
    put(c, K_NUM, o->status == SIM_SWEEP_OOM ? "1" : o->status == SIM_SWEEP_RAN ? "0" : NULL);
    if (m->known) {
        put_num(c, m->peak_gb, false);
        put_num(c, m->capacity_gb, false);
        put_num(c, m->max_batch, true);
    } else {
        put(c, K_NULL, NULL);
        put(c, K_NULL, NULL);
        put(c, K_NULL, NULL);
    }
    if (o->status == SIM_SWEEP_FAILED) {
        char *e = strdup(o->error ? o->error : "failed");
        for (char *p = e; p && *p; p++)
            if (*p == '\n' || *p == '\r') *p = ' ';
        put(c, K_STR, e ? e : "failed");
        free(e);
    } else {
        put(c, K_NULL, NULL);
    }
}

/* ---- text ---- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    bool oom;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t len)
{
    if (b->oom) return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = 0;
}

/* A CSV field, quoted (libcsv) only when it must be: commas, quotes, spaces at the ends. */
static void csv_field(sbuf *b, const char *s)
{
    size_t len = strlen(s);
    bool quote = strpbrk(s, ",\"\r\n") || (len && (s[0] == ' ' || s[len - 1] == ' '));
    if (!quote) {
        sb_add(b, s, len);
        return;
    }
    size_t need = csv_write(NULL, 0, s, len);
    char *q = malloc(need);
    if (!q) {
        b->oom = true;
        return;
    }
    csv_write(q, need, s, len);
    sb_add(b, q, need);
    free(q);
}

char *sim_sweep_header(const sim_sweep_layout *L, size_t *len)
{
    sbuf b = {0};
    sb_add(&b, "", 0);
    if (L->format == SIM_SWEEP_CSV) {
        for (size_t i = 0; i < L->n_cols; i++) {
            if (i) sb_add(&b, ",", 1);
            csv_field(&b, L->names[i]);
        }
        sb_add(&b, "\n", 1);
    }
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    *len = b.n;
    return b.p;
}

static char *jsonl_row(const sim_sweep_layout *L, const cells *c, size_t *len)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g) return NULL;
    yajl_gen_map_open(g);
    for (size_t i = 0; i < c->n; i++) {
        const cell *x = &c->v[i];
        yajl_gen_string(g, (const unsigned char *)L->names[i], strlen(L->names[i]));
        switch (x->k) {
        case K_NULL:
            yajl_gen_null(g);
            break;
        case K_NUM:
            yajl_gen_number(g, x->text, strlen(x->text));
            break;
        case K_BOOL:
            yajl_gen_bool(g, !strcmp(x->text, "true"));
            break;
        case K_STR:
            yajl_gen_string(g, (const unsigned char *)x->text, strlen(x->text));
            break;
        }
    }
    yajl_gen_map_close(g);
    const unsigned char *buf;
    size_t n;
    char *out = NULL;
    if (yajl_gen_get_buf(g, &buf, &n) == yajl_gen_status_ok && (out = malloc(n + 2))) {
        memcpy(out, buf, n);
        out[n] = '\n';
        out[n + 1] = 0;
        *len = n + 1;
    }
    yajl_gen_free(g);
    return out;
}

char *sim_sweep_row(const sim_sweep_layout *L, const sim_sweep_outcome *o, size_t *len)
{
    cells c = {0};
    if (!(c.v = calloc(L->n_cols, sizeof *c.v))) return NULL;
    build_cells(L, o, &c);
    SIM_ASSERT(c.n == L->n_cols);
    char *out = NULL;
    if (!c.oom) {
        if (L->format == SIM_SWEEP_JSONL) {
            out = jsonl_row(L, &c, len);
        } else {
            sbuf b = {0};
            for (size_t i = 0; i < c.n; i++) {
                if (i) sb_add(&b, ",", 1);
                if (c.v[i].text) csv_field(&b, c.v[i].text);
            }
            sb_add(&b, "\n", 1);
            if (b.oom)
                free(b.p);
            else {
                out = b.p;
                *len = b.n;
            }
        }
    }
    for (size_t i = 0; i < c.n; i++)
        free(c.v[i].text);
    free(c.v);
    return out;
}

/* ---- reading rows back ---- */

typedef struct csv_read {
    char **fields;
    size_t n, cap;
    int rows;
    bool oom;
} csv_read;

static void on_field(void *s, size_t len, void *data)
{
    csv_read *r = data;
    if (r->oom) return;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        char **nf = realloc(r->fields, cap * sizeof *nf);
        if (!nf) {
            r->oom = true;
            return;
        }
        r->fields = nf;
        r->cap = cap;
    }
    char *f = malloc(len + 1);
    if (!f) {
        r->oom = true;
        return;
    }
    memcpy(f, s, len);
    f[len] = 0;
    r->fields[r->n++] = f;
}

static void on_row(int c, void *data)
{
    (void)c;
    ((csv_read *)data)->rows++;
}

void sim_sweep_values_free(char **values, size_t n)
{
    if (!values) return;
    for (size_t i = 0; i < n; i++)
        free(values[i]);
    free(values);
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!*s || *s == '-') return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end) return -1;
    *out = v;
    return 0;
}

static int identity_csv(const sim_sweep_layout *L, const char *line, size_t len, uint64_t *index,
                        uint64_t *seed, char ***values)
{
    struct csv_parser p;
    csv_read r = {0};
    int rc = SIM_EFORMAT;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI)) return SIM_ENOMEM;
    if (csv_parse(&p, line, len, on_field, on_row, &r) != len ||
        csv_fini(&p, on_field, on_row, &r) != 0)
        goto done;
    if (r.oom) {
        rc = SIM_ENOMEM;
        goto done;
    }
    if (r.rows != 1 || r.n != L->n_cols || parse_u64(r.fields[0], index) ||
        parse_u64(r.fields[L->seed_col], seed))
        goto done;
    /* Hand the swept values over; the rest is freed below. */
    char **v = calloc(L->n_swept + 1, sizeof *v);
    if (!v) {
        rc = SIM_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < L->n_swept; i++) {
        v[i] = r.fields[1 + i];
        r.fields[1 + i] = NULL;
    }
    *values = v;
    rc = SIM_OK;
done:
    csv_free(&p);
    for (size_t i = 0; i < r.n; i++)
        free(r.fields[i]);
    free(r.fields);
    return rc;
}

static int identity_jsonl(const sim_sweep_layout *L, const char *line, size_t len, uint64_t *index,
                          uint64_t *seed, char ***values)
{
    char *text = strndup(line, len);
    if (!text) return SIM_ENOMEM;
    yajl_val t = yajl_tree_parse(text, NULL, 0);
    free(text);
    int rc = SIM_EFORMAT;
    if (!t || !YAJL_IS_OBJECT(t) || t->u.object.len != L->n_cols) goto done;
    for (size_t i = 0; i < L->n_cols; i++)
        if (strcmp(t->u.object.keys[i], L->names[i])) goto done;
    yajl_val pi = t->u.object.values[0], ps = t->u.object.values[L->seed_col];
    if (!YAJL_IS_INTEGER(pi) || !YAJL_IS_INTEGER(ps) || YAJL_GET_INTEGER(pi) < 0 ||
        YAJL_GET_INTEGER(ps) < 0)
        goto done;
    *index = (uint64_t)YAJL_GET_INTEGER(pi);
    *seed = (uint64_t)YAJL_GET_INTEGER(ps);
    char **v = calloc(L->n_swept + 1, sizeof *v);
    if (!v) {
        rc = SIM_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < L->n_swept; i++) {
        yajl_val x = t->u.object.values[1 + i];
        const char *s = YAJL_IS_STRING(x)   ? YAJL_GET_STRING(x)
                        : YAJL_IS_NUMBER(x) ? YAJL_GET_NUMBER(x)
                        : YAJL_IS_TRUE(x)   ? "true"
                        : YAJL_IS_FALSE(x)  ? "false"
                                            : "";
        if (!(v[i] = strdup(s))) {
            sim_sweep_values_free(v, i);
            rc = SIM_ENOMEM;
            goto done;
        }
    }
    *values = v;
    rc = SIM_OK;
done:
    yajl_tree_free(t);
    return rc;
}

int sim_sweep_row_identity(const sim_sweep_layout *L, const char *line, size_t len, uint64_t *index,
                           uint64_t *seed, char ***values)
{
    *values = NULL;
    if (L->format == SIM_SWEEP_JSONL) return identity_jsonl(L, line, len, index, seed, values);
    return identity_csv(L, line, len, index, seed, values);
}

int sim_sweep_row_point(sim_sweep_format f, const char *line, size_t len, uint64_t *index)
{
    const char *prefix = f == SIM_SWEEP_JSONL ? "{\"point\":" : "";
    size_t pos = strlen(prefix), digits = 0;
    if (len < pos || memcmp(line, prefix, pos)) return SIM_EFORMAT;
    uint64_t v = 0;
    for (; pos < len && line[pos] >= '0' && line[pos] <= '9' && digits < 19; pos++, digits++)
        v = v * 10 + (uint64_t)(line[pos] - '0');
    if (!digits || pos >= len || line[pos] != ',') return SIM_EFORMAT;
    *index = v;
    return SIM_OK;
}
