/* seqmix.c — padded lengths of a step's micro-batches from a length histogram (see seqmix.h). */
#include "models/seqmix.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BINS_MAX 4096 /* bins a histogram may be cut into */

typedef struct len_bin {
    double share;  /* of all sequences */
    double padded; /* expected padded length of a batch drawn from it */
} len_bin;

static int round_up(int n, int align)
{
    return (n + align - 1) / align * align;
}

/* E[align(max of `batch` draws)] over lengths lo..hi of count[] (n sequences in the range):
 * P(max <= l) = F(l)^batch, so each length l carries F(l)^batch - F(l - 1)^batch. */
static double expected_padded(const double *count, int lo, int hi, double n, int batch, int align)
{
    double cum = 0, below = 0, e = 0;
    for (int l = lo; l <= hi; l++) {
        cum += count[l - 1];
        double at_most = pow(cum / n, batch);
        e += (at_most - below) * round_up(l, align);
        below = at_most;
    }
    return e;
}

static int check(const double *count, int max_len, int bin, int align, int batch, int accum,
                 double *total, sim_err *err)
{
    if (max_len < 1 || max_len > 1 << 24)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "sequence lengths: longest %d out of range "
                           "(1..%d)",
                           max_len, 1 << 24);
    if (bin < 0 || (bin > 0 && (max_len + bin - 1) / bin > BINS_MAX))
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "sequence bins of %d tokens: %s", bin,
                           bin < 0 ? "negative" : "more than 4096 bins over the lengths");
    if (align < 1 || batch < 1 || accum < 1)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "sequence padding: align %d, batch %d and accumulation %d must be >= 1",
                           align, batch, accum);
    *total = 0;
    for (int l = 1; l <= max_len; l++) {
        if (!isfinite(count[l - 1]) || count[l - 1] < 0)
            return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                               "sequence lengths: the count of length %d is not a finite number "
                               ">= 0",
                               l);
        *total += count[l - 1];
    }
    if (!(*total > 0) || !isfinite(*total))
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "sequence lengths: the histogram holds no sequences");
    return SIM_OK;
}

/* Shares accum micro-batches over the bins by largest remainder (ties to the shorter bin). */
static void apportion(const len_bin *b, int nb, int accum, int *micro)
{
    int given = 0;
    for (int i = 0; i < nb; i++) {
        micro[i] = (int)floor(b[i].share * accum);
        given += micro[i];
    }
    for (; given < accum; given++) {
        int best = -1;
        double best_rem = -1;
        for (int i = 0; i < nb; i++) {
            double rem = b[i].share * accum - micro[i];
            if (rem > best_rem) {
                best_rem = rem;
                best = i;
            }
        }
        micro[best]++;
    }
}

/* Adds micro micro-batches at padded length seq, merging equal lengths (bins are ascending, so
 * equal lengths are adjacent). */
static int add_group(mdl_seq_mix *mix, int seq, int micro, sim_err *err)
{
    if (micro == 0) return SIM_OK;
    if (mix->n && mix->seq[mix->n - 1] == seq) {
        mix->micro[mix->n - 1] += micro;
        return SIM_OK;
    }
    if (mix->n == MDL_SEQ_MIX_MAX)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "sequence bins: more than %d padded lengths in one step; use wider "
                           "bins",
                           MDL_SEQ_MIX_MAX);
    mix->seq[mix->n] = seq;
    mix->micro[mix->n++] = micro;
    return SIM_OK;
}

int mdl_seq_mix_plan(const double *count, int max_len, int bin, int align, int batch,
                     int accum_steps, mdl_seq_mix *mix, sim_err *err)
{
    memset(mix, 0, sizeof *mix);
    double total = 0;
    int rc = check(count, max_len, bin, align, batch, accum_steps, &total, err);
    if (rc) return rc;
    int width = bin > 0 ? bin : max_len;
    int max_bins = (max_len + width - 1) / width;
    len_bin *bins = malloc((size_t)max_bins * sizeof *bins);
    int *micro = malloc((size_t)max_bins * sizeof *micro);
    if (!bins || !micro) {
        free(bins);
        free(micro);
        return sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    int nb = 0, occupied = 0;
    for (int lo = 1; lo <= max_len; lo += width) {
        int hi = lo + width - 1 < max_len ? lo + width - 1 : max_len;
        double n = 0;
        for (int l = lo; l <= hi; l++)
            n += count[l - 1];
        bins[nb].share = n / total;
        bins[nb].padded = n > 0 ? expected_padded(count, lo, hi, n, batch, align) : 0;
        occupied += n > 0;
        nb++;
    }
    if (accum_steps < occupied) { /* one mean length: the mix cannot be spread over the step */
        double mean = 0;
        for (int i = 0; i < nb; i++)
            mean += bins[i].share * bins[i].padded;
        mix->averaged = occupied > 1;
        rc = add_group(mix, round_up((int)ceil(mean - 1e-9), align), accum_steps, err);
    } else {
        apportion(bins, nb, accum_steps, micro);
        for (int i = 0; i < nb && !rc; i++) {
            int seq = (int)lround(bins[i].padded / align) * align;
            rc = add_group(mix, seq < align ? align : seq, micro[i], err);
        }
    }
    free(bins);
    free(micro);
    if (rc) memset(mix, 0, sizeof *mix);
    return rc;
}

double mdl_seq_mix_mean(const mdl_seq_mix *mix)
{
    double tokens = 0, micro = 0;
    for (int i = 0; i < mix->n; i++) {
        tokens += (double)mix->seq[i] * mix->micro[i];
        micro += mix->micro[i];
    }
    return micro > 0 ? tokens / micro : 0;
}
