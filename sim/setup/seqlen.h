/* seqlen.h — an experiment's sequence-length histogram (workload.seq_lengths) read and turned into
 * the padded lengths of a step's micro-batches (models/seqmix.h).
 * The file is a CSV with a header row holding the columns `length` (tokens, a whole number from 1,
 * each at most once) and `count` (sequences of that length, a number >= 0); other columns are
 * ignored. docs/sequence-lengths.md describes the format and the padding rules. */
#ifndef CFG_SEQLEN_H
#define CFG_SEQLEN_H

#include "models/seqmix.h"
#include "sim/base/err.h"

/* Reads path into *count (count[l - 1]: sequences of length l, l = 1 .. *max_len, the longest
 * length with a count above 0; malloc'ed, the caller frees). A bad cell is an error naming the
 * file, its line and the column. Returns 0, SIM_ENOENT/SIM_EIO, SIM_EFORMAT or SIM_ENOMEM. */
int cfg_seq_hist_read(const char *path, double **count, int *max_len, sim_err *err);

/* Reads the histogram at path and plans it (mdl_seq_mix_plan) for a model of seq_len tokens.
 * A file with longer sequences is an error (the collator truncates at max_length first, so such
 * a file does not describe what the model is fed). workload.seq_lengths, seq_bin and seq_align
 * and `model show --seq-lengths` come here. */
int cfg_seq_mix_file(const char *path, int seq_len, int bin, int align, int batch, int accum_steps,
                     mdl_seq_mix *mix, sim_err *err);

#endif
