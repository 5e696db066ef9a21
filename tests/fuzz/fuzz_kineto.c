/* fuzz_kineto.c — libFuzzer harness for the Kineto (PyTorch profiler) JSON importer: import the
 * input into a native trace as `epochsim import kineto` does, then read back what it wrote. */
#include "fuzz_input.h"

#include "traces/kineto.h"

#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = fuzz_input_file(data, size, ".json");
    const char *out = fuzz_output_path();
    sim_err err;
    if (trc_kineto_import(in, out, NULL, NULL, &err) == SIM_OK) {
        trc_reader *r;
        if (trc_reader_open(out, &r, &err) != SIM_OK)
            __builtin_trap(); /* what import writes, the reader must load */
        const trc_step *step;
        while (trc_reader_next_step(r, &step, &err) == 1) /* 0 = the end, < 0 = an error */
            ;
        trc_reader_close(r);
    }
    unlink(out);
    return 0;
}
