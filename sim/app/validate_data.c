/* validate_data.c — reading the published table (validate.h): libcsv through plt_csv, then each
 * row's columns checked and converted, errors naming file:line and the column. */
#include "sim/app/validate.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const columns[] = {"id",       "group",    "role",   "metric",    "value",
                                      "gpu",      "gpus",     "model",  "precision", "batch",
                                      "settings", "software", "source", "notes"};
enum {
    C_ID,
    C_GROUP,
    C_ROLE,
    C_METRIC,
    C_VALUE,
    C_GPU,
    C_GPUS,
    C_MODEL,
    C_PREC,
    C_BATCH,
    C_SETTINGS,
    C_SOFTWARE,
    C_SOURCE,
    C_NOTES,
    C_COUNT
};

static const char *const role_names[] = {"fit", "check"};
static const char *const metric_names[] = {
    "samples_per_s", "step_ms",      "gpu_util_pct", "h2d_gbps",   "max_batch",
    "gemm_tflops",   "mem_bw_gbps",  "launch_us",    "busbw_gbps", "gemm_share_pct",
    "colocated_pct", "inference_ms", "conv_us",      "rowwise_us"};

const char *sim_val_role_name(sim_val_role r)
{
    return r < SIM_VAL_ROLES ? role_names[r] : "?";
}

const char *sim_val_metric_name(sim_val_metric m)
{
    return m < SIM_VAL_METRICS ? metric_names[m] : "?";
}

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], s)) return i;
    return -1;
}

/* The header must be exactly the documented columns, in order. */
static int check_header(const plt_csv *c, const char *path, sim_err *err)
{
    for (int i = 0; i < C_COUNT; i++)
        if (i >= c->n_cols || strcmp(c->cols[i], columns[i]))
            return sim_err_set(err, SIM_EFORMAT, path, 1, i + 1,
                               "column %d must be '%s' (the header is: " SIM_VAL_COLUMNS ")", i + 1,
                               columns[i]);
    if (c->n_cols != C_COUNT)
        return sim_err_set(err, SIM_EFORMAT, path, 1, C_COUNT + 1,
                           "%d columns, expected %d: " SIM_VAL_COLUMNS, c->n_cols, C_COUNT);
    return SIM_OK;
}

static int bad(sim_err *err, const char *path, int line, int col, const char *what,
               const char *cell)
{
    return sim_err_set(err, SIM_EFORMAT, path, line, col + 1, "%s: %s, not '%s'", columns[col],
                       what, cell);
}

static int whole(const char *s, int min, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > 1000000000) return -1;
    *out = (int)v;
    return 0;
}

/* Fills r from row i of c (line = its line in the file). */
static int parse_row(const plt_csv *c, size_t i, const char *path, sim_val_row *r, sim_err *err)
{
    const char *f[C_COUNT];
    for (int k = 0; k < C_COUNT; k++)
        f[k] = plt_csv_cell(c, i, k);
    int line = (int)i + 2;
    memset(r, 0, sizeof *r);
    *r = (sim_val_row){.file = path,
                       .line = line,
                       .id = f[C_ID],
                       .group = f[C_GROUP],
                       .gpu = f[C_GPU],
                       .model = f[C_MODEL],
                       .precision = f[C_PREC],
                       .settings = f[C_SETTINGS],
                       .software = f[C_SOFTWARE],
                       .source = f[C_SOURCE],
                       .predicted = NAN};
    const int text[] = {C_ID, C_GROUP, C_GPU, C_MODEL, C_PREC, C_SOURCE};
    for (size_t k = 0; k < sizeof text / sizeof text[0]; k++)
        if (!f[text[k]][0]) return bad(err, path, line, text[k], "must not be empty", "");
    int role = lookup(role_names, SIM_VAL_ROLES, f[C_ROLE]);
    if (role < 0) return bad(err, path, line, C_ROLE, "fit or check", f[C_ROLE]);
    int metric = lookup(metric_names, SIM_VAL_METRICS, f[C_METRIC]);
    if (metric < 0)
        return bad(err, path, line, C_METRIC, "an epochsim validate metric", f[C_METRIC]);
    r->role = (sim_val_role)role;
    r->metric = (sim_val_metric)metric;
    char *end;
    r->value = strtod(f[C_VALUE], &end);
    if (end == f[C_VALUE] || *end || !isfinite(r->value) || r->value <= 0)
        return bad(err, path, line, C_VALUE, "a positive number", f[C_VALUE]);
    if (whole(f[C_GPUS], 1, &r->gpus))
        return bad(err, path, line, C_GPUS, "a whole number >= 1", f[C_GPUS]);
    if (!strcmp(f[C_BATCH], "-"))
        r->batch = 0;
    else if (whole(f[C_BATCH], 1, &r->batch))
        return bad(err, path, line, C_BATCH, "a whole number >= 1 or -", f[C_BATCH]);
    return SIM_OK;
}

static int grow(sim_val_table *t, size_t more)
{
    if (t->n + more <= t->cap) return SIM_OK;
    size_t cap = t->cap ? t->cap : 64;
    while (cap < t->n + more)
        cap *= 2;
    sim_val_row *p = realloc(t->rows, cap * sizeof *p);
    if (!p) return SIM_ENOMEM;
    t->rows = p;
    t->cap = cap;
    return SIM_OK;
}

/* Keeps the file's name and cells in t; the rows point into them. */
static int keep_file(sim_val_table *t, const char *path, plt_csv *c)
{
    char **files = realloc(t->files, (t->n_files + 1) * sizeof *files);
    if (files) t->files = files;
    plt_csv *csv = realloc(t->csv, (t->n_files + 1) * sizeof *csv);
    if (csv) t->csv = csv;
    char *name = strdup(path);
    if (!files || !csv || !name) {
        free(name);
        return SIM_ENOMEM;
    }
    t->files[t->n_files] = name;
    t->csv[t->n_files++] = *c;
    return SIM_OK;
}

int sim_val_read_file(sim_val_table *t, const char *path, sim_err *err)
{
    plt_csv c;
    int rc = plt_csv_read(path, &c, err);
    if (rc) return rc;
    if ((rc = check_header(&c, path, err)) || (rc = keep_file(t, path, &c))) {
        if (rc == SIM_ENOMEM) sim_err_set(err, rc, path, 0, 0, "out of memory");
        plt_csv_free(&c);
        return rc;
    }
    const char *name = t->files[t->n_files - 1];
    if (grow(t, c.n_rows)) return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    for (size_t i = 0; i < c.n_rows; i++) {
        if ((rc = parse_row(&c, i, name, &t->rows[t->n], err))) return rc;
        for (size_t j = 0; j < t->n; j++)
            if (!strcmp(t->rows[j].id, t->rows[t->n].id))
                return sim_err_set(err, SIM_EFORMAT, name, (int)i + 2, 1,
                                   "id: '%s' is already used at %s:%d", t->rows[j].id,
                                   t->rows[j].file, t->rows[j].line);
        t->n++;
    }
    return SIM_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_table(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".csv") && strcmp(name, "recorded.csv");
}

int sim_val_read_dir(sim_val_table *t, const char *dir, sim_err *err)
{
    struct dirent **list;
    int n = scandir(dir, &list, NULL, NULL);
    if (n < 0)
        return sim_err_set(err, errno == ENOENT ? SIM_ENOENT : SIM_EIO, dir, 0, 0,
                           "cannot read the folder: %s", strerror(errno));
    char **names = calloc((size_t)n + 1, sizeof *names);
    int m = 0, rc = names ? SIM_OK : SIM_ENOMEM;
    for (int i = 0; i < n; i++) {
        if (!rc && is_table(list[i]->d_name)) names[m++] = list[i]->d_name;
    }
    if (names) qsort(names, (size_t)m, sizeof *names, by_name);
    char path[4096];
    for (int i = 0; !rc && i < m; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = sim_val_read_file(t, path, err);
    }
    if (!rc && m == 0)
        rc = sim_err_set(err, SIM_ENOENT, dir, 0, 0, "no *.csv table in this folder");
    if (rc == SIM_ENOMEM && err && !err->msg[0]) sim_err_set(err, rc, dir, 0, 0, "out of memory");
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
    free(names);
    return rc;
}

void sim_val_table_free(sim_val_table *t)
{
    for (size_t i = 0; i < t->n_files; i++) {
        free(t->files[i]);
        plt_csv_free(&t->csv[i]);
    }
    free(t->files);
    free(t->csv);
    free(t->rows);
    memset(t, 0, sizeof *t);
}
