/* seqmix.h — the sequence lengths a step's micro-batches run at when the dataset's sequences vary
 * in length and each batch is padded only as far as it must be.
 *
 * Given how many sequences of the dataset have each length (a histogram), the collator's rule
 * (pad a batch to its longest sequence, rounded up to a multiple of `align`) and, optionally,
 * length bins (NVIDIA LDDL's `--bin-size`: every batch is drawn from one bin, a bin chosen in
 * proportion to its sequences), this gives each micro-batch of an optimizer step a padded length:
 * - a bin's padded length is the expected padded length of a batch of `batch` sequences drawn
 *   from it, E[align(max)], exact from the bin's own distribution (P(max <= l) = F(l)^batch),
 *   rounded to the nearest multiple of `align`;
 * - the step's accum_steps micro-batches are shared out over the bins by their shares (largest
 *   remainder), in ascending length;
 * - a step of fewer micro-batches than occupied bins cannot hold the mix, so every micro-batch
 *   then runs at the share-weighted mean of the bins' padded lengths (rounded up to a multiple of
 *   align), and `averaged` says so.
 * No bins (bin = 0) is one bin over every length: Hugging Face's DataCollatorWithPadding. */
#ifndef MDL_SEQMIX_H
#define MDL_SEQMIX_H

#include "sim/base/err.h"

#include <stdbool.h>

#define MDL_SEQ_MIX_MAX 64 /* distinct padded lengths in one step */

typedef struct mdl_seq_mix {
    int n;                      /* groups; 0 = every micro-batch at the model's sequence length */
    int seq[MDL_SEQ_MIX_MAX];   /* a group's padded length, tokens, ascending */
    int micro[MDL_SEQ_MIX_MAX]; /* micro-batches of the step at that length (sum: accum_steps) */
    bool averaged;              /* fewer micro-batches than bins: one mean length for all */
} mdl_seq_mix;

/* count[l - 1]: sequences of length l, for l = 1 .. max_len (finite, >= 0, some > 0).
 * bin: bin width in tokens (0 = no bins); align: padding multiple (>= 1); batch, accum_steps
 * >= 1. No padded length exceeds max_len rounded up to align. Returns 0 or SIM_EINVAL (with a
 * sentence naming the argument), leaving *mix empty. */
int mdl_seq_mix_plan(const double *count, int max_len, int bin, int align, int batch,
                     int accum_steps, mdl_seq_mix *mix, sim_err *err);

/* Tokens per sample of the step, padding included: sum(seq x micro) / accum_steps. */
double mdl_seq_mix_mean(const mdl_seq_mix *mix);

#endif
