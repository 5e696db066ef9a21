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

/* Fills count[] (LEN_MAX zeroed entries would be 128 MiB, so two passes: the longest length
 * first, then the table). */
static int fill(const plt_csv *t, const char *path, int lc, int cc, double **count, int *max_len,
                sim_err *err)
{
    long longest = 0;
    for (size_t r = 0; r < t->n_rows; r++) {
        long l;
        double c;
        if (parse_length(plt_csv_cell(t, r, lc), &l))
            return bad_cell(path, r, "length", "not a whole number from 1 to 16777216", err);
        if (parse_count(plt_csv_cell(t, r, cc), &c))
            return bad_cell(path, r, "count", "not a finite number >= 0", err);
        if (c > 0 && l > longest) longest = l;
    }
    if (!longest)
        return sim_err_set(err, SIM_EFORMAT, path, 0, 0,
                           "no length has a count above 0: the histogram holds no sequences");
    double *v = calloc((size_t)longest, sizeof *v);
    bool *seen = calloc((size_t)longest, sizeof *seen);
    if (!v || !seen) {
        free(v);
        free(seen);
        return sim_err_set(err, SIM_ENOMEM, path, 0, 0, "out of memory");
    }
    for (size_t r = 0; r < t->n_rows; r++) { /* every cell parsed in the first pass */
        long l = 0;
        double c = 0;
        parse_length(plt_csv_cell(t, r, lc), &l);
        parse_count(plt_csv_cell(t, r, cc), &c);
        if (l > longest) continue; /* a zero count past the longest */
        if (seen[l - 1]) {
            free(v);
            free(seen);
            return bad_cell(path, r, "length", "given twice", err);
        }
        seen[l - 1] = true;
        v[l - 1] = c;
    }
    free(seen);
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

int cfg_seq_mix(const sim_experiment *x, int seq_len, mdl_seq_mix *mix, sim_err *err)
{
    memset(mix, 0, sizeof *mix);
    if (!x->workload.seq_lengths[0]) return SIM_OK;
    return cfg_seq_mix_file(x->workload.seq_lengths, seq_len, x->workload.seq_bin,
                            x->workload.seq_align, x->loader.batch_size, x->workload.accum_steps,
                            mix, err);
}
