/* plt_csv.c — CSV reading on libcsv's push parser (see plt_csv.h): fields are collected into the
 * current row and the row is checked against the header when libcsv reports its end. */
#include "plots/plt_csv.h"

#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
    plt_csv *t;
    char **row;
    int n_row, cap_row;
    size_t cap_cells;
    long line;
    int rc;
    sim_err *err;
    const char *path;
} reader;

static void on_field(void *s, size_t len, void *data)
{
    reader *r = data;
    if (r->rc) return;
    if (r->n_row == r->cap_row) {
        int cap = r->cap_row ? 2 * r->cap_row : 16;
        char **p = realloc(r->row, (size_t)cap * sizeof *p);
        if (!p) {
            r->rc = sim_err_set(r->err, SIM_ENOMEM, r->path, 0, 0, "out of memory");
            return;
        }
        r->row = p;
        r->cap_row = cap;
    }
    char *c = malloc(len + 1);
    if (!c) {
        r->rc = sim_err_set(r->err, SIM_ENOMEM, r->path, 0, 0, "out of memory");
        return;
    }
    if (len) memcpy(c, s, len);
    c[len] = 0;
    r->row[r->n_row++] = c;
}

static void drop_row(reader *r)
{
    for (int i = 0; i < r->n_row; i++)
        free(r->row[i]);
    r->n_row = 0;
}

static void on_row(int term, void *data)
{
    (void)term;
    reader *r = data;
    r->line++;
    if (r->rc) {
        drop_row(r);
        return;
    }
    plt_csv *t = r->t;
    if (!t->cols) { /* the header */
        t->cols = r->row;
        t->n_cols = r->n_row;
        r->row = NULL;
        r->n_row = r->cap_row = 0;
        return;
    }
    if (r->n_row != t->n_cols) {
        r->rc = sim_err_set(r->err, SIM_EFORMAT, r->path, (int)r->line, 0,
                            "%d fields, but the header has %d", r->n_row, t->n_cols);
        drop_row(r);
        return;
    }
    size_t need = (t->n_rows + 1) * (size_t)t->n_cols;
    if (need > r->cap_cells) {
        size_t cap = r->cap_cells ? 2 * r->cap_cells : 1024;
        while (cap < need)
            cap *= 2;
        char **p = realloc(t->cells, cap * sizeof *p);
        if (!p) {
            r->rc = sim_err_set(r->err, SIM_ENOMEM, r->path, 0, 0, "out of memory");
            drop_row(r);
            return;
        }
        t->cells = p;
        r->cap_cells = cap;
    }
    memcpy(t->cells + t->n_rows * (size_t)t->n_cols, r->row, (size_t)t->n_cols * sizeof *r->row);
    t->n_rows++;
    r->n_row = 0;
}

int plt_csv_read(const char *path, plt_csv *t, sim_err *err)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f)
        return sim_err_set(err, errno == ENOENT ? SIM_ENOENT : SIM_EIO, path, 0, 0,
                           "cannot open: %s", strerror(errno));
    struct csv_parser p;
    if (csv_init(&p, CSV_APPEND_NULL) != 0) {
        fclose(f);
        return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    reader r = {.t = t, .err = err, .path = path};
    char buf[65536];
    size_t n;
    while (!r.rc && (n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (csv_parse(&p, buf, n, on_field, on_row, &r) != n && !r.rc)
            r.rc = sim_err_set(err, SIM_EFORMAT, path, (int)r.line + 1, 0, "%s",
                               csv_strerror(csv_error(&p)));
    }
    if (!r.rc && ferror(f)) r.rc = sim_err_set(err, SIM_EIO, path, 0, 0, "read error");
    if (!r.rc) csv_fini(&p, on_field, on_row, &r);
    csv_free(&p);
    fclose(f);
    drop_row(&r);
    free(r.row);
    if (!r.rc && !t->cols)
        r.rc = sim_err_set(err, SIM_EFORMAT, path, 0, 0, "empty file: no header row");
    if (r.rc) plt_csv_free(t);
    return r.rc;
}

void plt_csv_free(plt_csv *t)
{
    for (int i = 0; i < t->n_cols; i++)
        free(t->cols[i]);
    free(t->cols);
    for (size_t i = 0; i < t->n_rows * (size_t)t->n_cols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

int plt_csv_col(const plt_csv *t, const char *name)
{
    for (int i = 0; i < t->n_cols; i++)
        if (!strcmp(t->cols[i], name)) return i;
    return -1;
}

const char *plt_csv_cell(const plt_csv *t, size_t r, int c)
{
    return t->cells[r * (size_t)t->n_cols + (size_t)c];
}
