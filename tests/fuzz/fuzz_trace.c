/* fuzz_trace.c — libFuzzer harness for the native msgpack trace reader: open the input as a trace
 * and read every step to the end, as `epochsim trace show` does. */
#include "fuzz_input.h"

#include "traces/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(data, size, ".trace");
    trc_reader *r;
    sim_err err;
    if (trc_reader_open(path, &r, &err) != SIM_OK) return 0;
    const trc_step *step;
    while (trc_reader_next_step(r, &step, &err) == 1) /* 0 = the end, < 0 = an error */
        ;
    trc_reader_close(r);
    return 0;
}
