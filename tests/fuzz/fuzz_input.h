/* fuzz_input.h — what the three fuzz harnesses share: the parsers read files, so each input is
 * written to one temporary file per process (rewritten for every input), and out_path names a
 * second one for writers. */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

/* Writes data to this process's input file and returns its path ("suffix" is its extension, which
 * some readers look at: ".yaml", ".trace", ".json"). Aborts when the file cannot be written: a
 * broken harness must not look like a clean run. */
const char *fuzz_input_file(const uint8_t *data, size_t size, const char *suffix);

/* A path beside the input file for outputs (an imported trace). */
const char *fuzz_output_path(void);

/* The harness entry point, as libFuzzer calls it (and fuzz_replay.c for corpora). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
