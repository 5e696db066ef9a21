/* seqlen.c — sequence-length histograms (see seqlen.h). */
#include "sim/setup/seqlen.h"

#include "plots/plt_csv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LEN_MAX (1 << 24)

/* The data row r of t is on line r + 2 (the header is line 1; rows do not span lines). */
static int bad_cell(const char *path, size_t r, const char *col, const char *why, sim_err *err)
{
    return sim_err_set(err, SIM_EFORMAT, path, (int)(r + 2), 0, "column %s: %s", col, why);
}

static int parse_length(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < 1 || v > LEN_MAX) return -1;
    *out = v;
    return 0;
}

static int parse_count(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < 0) return -1;
    *out = v;
    return 0;
}

/* Parses and checks every row, then fills count[] up to the longest length with a count above 0
 * (a zero count past it needs no entry). */
static int fill(const plt_csv *t, const char *path, int lc, int cc, double **count, int *max_len,
                sim_err *err)
{
    long *len = malloc((t->n_rows + 1) * sizeof *len);
    double *n = malloc((t->n_rows + 1) * sizeof *n);
    double *v = NULL;
    bool *seen = NULL;
    int rc = len && n ? SIM_OK : sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    long longest = 0;
    for (size_t r = 0; r < t->n_rows && !rc; r++) {
        if (parse_length(plt_csv_cell(t, r, lc), &len[r]))
            rc = bad_cell(path, r, "length", "not a whole number from 1 to 16777216", err);
        else if (parse_count(plt_csv_cell(t, r, cc), &n[r]))
            rc = bad_cell(path, r, "count", "not a finite number >= 0", err);
        else if (n[r] > 0 && len[r] > longest)
            longest = len[r];
    }
    if (!rc && !longest)
        rc = sim_err_set(err, SIM_EFORMAT, path, 0, 0,
                         "no length has a count above 0: the histogram holds no sequences");
    if (!rc && (!(v = calloc((size_t)longest, sizeof *v)) ||
                !(seen = calloc((size_t)longest, sizeof *seen))))
        rc = sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    for (size_t r = 0; r < t->n_rows && !rc; r++) {
        if (len[r] > longest) continue;
        if (seen[len[r] - 1]) rc = bad_cell(path, r, "length", "given twice", err);
        seen[len[r] - 1] = true;
        v[len[r] - 1] = n[r];
    }
    free(len);
    free(n);
    free(seen);
    if (rc) {
        free(v);
        return rc;
    }
    *count = v;
    *max_len = (int)longest;
    return SIM_OK;
}

int cfg_seq_hist_read(const char *path, double **count, int *max_len, sim_err *err)
{
    *count = NULL;
    *max_len = 0;
    plt_csv t;
    int rc = plt_csv_read(path, &t, err);
    if (rc) return rc;
    int lc = plt_csv_col(&t, "length"), cc = plt_csv_col(&t, "count");
    if (lc < 0 || cc < 0)
        rc = sim_err_set(err, SIM_EFORMAT, path, 1, 0,
                         "the header has no column '%s' (a histogram has columns length, count)",
                         lc < 0 ? "length" : "count");
    else
        rc = fill(&t, path, lc, cc, count, max_len, err);
    plt_csv_free(&t);
    return rc;
}

int cfg_seq_mix_file(const char *path, int seq_len, int bin, int align, int batch, int accum_steps,
                     mdl_seq_mix *mix, sim_err *err)
{
    memset(mix, 0, sizeof *mix);
    double *count;
    int max_len;
    int rc = cfg_seq_hist_read(path, &count, &max_len, err);
    if (rc) return rc;
    if (max_len > seq_len)
        rc = sim_err_set(err, SIM_EINVAL, path, 0, 0,
                         "holds sequences of %d tokens, longer than the model's %d: lengths are "
                         "counted after truncation to the model's sequence length",
                         max_len, seq_len);
    else
        rc = mdl_seq_mix_plan(count, max_len, bin, align, batch, accum_steps, mix, err);
    free(count);
    return rc;
}
