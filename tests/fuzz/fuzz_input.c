/* fuzz_input.c — per-process input and output files for the harnesses (see fuzz_input.h). */
#include "fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char in_path[512], out_path[512];

static const char *tmp_dir(void)
{
    const char *d = getenv("TMPDIR");
    return d && d[0] ? d : "/tmp";
}

const char *fuzz_input_file(const uint8_t *data, size_t size, const char *suffix)
{
    snprintf(in_path, sizeof in_path, "%s/epochsim-fuzz-%ld%s", tmp_dir(), (long)getpid(), suffix);
    FILE *f = fopen(in_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        perror(in_path);
        abort();
    }
    return in_path;
}

const char *fuzz_output_path(void)
{
    snprintf(out_path, sizeof out_path, "%s/epochsim-fuzz-%ld.out.trace", tmp_dir(),
             (long)getpid());
    return out_path;
}
