/* fuzz_seqlen.c — libFuzzer harness for sequence-length histograms (workload.seq_lengths): read
 * the CSV as a run does, then plan it with and without bins, at a small and a large batch, with
 * and without gradient accumulation. Any outcome but a crash or a sanitizer report is fine: bad
 * input must come back as an error. */
#include "fuzz_input.h"

#include "models/seqmix.h"
#include "sim/setup/seqlen.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size, ".csv");
    double *count;
    int max_len;
    sim_err err;
    if (cfg_seq_hist_read(path, &count, &max_len, &err) != SIM_OK) return 0;
    static const int plans[][4] = {/* bin, align, batch, accum */
                                   {0, 8, 32, 1},
                                   {64, 8, 32, 128},
                                   {1, 1, 1, 3},
                                   {7, 3, 4096, 1024}};
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
        mdl_seq_mix mix;
        if (mdl_seq_mix_plan(count, max_len, plans[i][0], plans[i][1], plans[i][2], plans[i][3],
                             &mix, &err) == SIM_OK)
            (void)mdl_seq_mix_mean(&mix);
    }
    free(count);
    return 0;
}
