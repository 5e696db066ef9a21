/* test_whatif.c — `epochsim run --vary` and a `sweep:` block under `run`, end to end through the
 * CLI binary: one row per point of the grid product, the same figures `epochsim sweep` writes
 * for the same points (both go through the sweep driver and its seeds), the curve drawn in the
 * same command, and the outputs of a single run refused with a usage error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "plots/plt_csv.h"
#include "tmpdir_testkit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* A small, fast job on the round-number test catalog. */
#define BASE                                                                                       \
    " --quiet --catalog " EPOCHSIM_SOURCE_DIR "/tests/data/catalog"                                \
    " --set system.gpu=test-gpu --set system.cpu=test-cpu-8c --set system.storage=test-nvme"       \
    " --set dataset.samples=1280 --set workload.kernels_per_step=10"                               \
    " --set workload.kernel_us=1000"

static int setup(void **state)
{
    (void)state;
    return tmpdir_make("/tmp/epochsim-whatif-test-XXXXXX");
}

/* Runs `epochsim ARGS` with stdout and stderr into dir/out and dir/err; returns the exit code. */
static int epochsim(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s/out' 2>'%s/err'", EPOCHSIM_BINARY, args, dir, dir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The lines of dir/out, at most max; returns how many. */
static int out_lines(char lines[][512], int max)
{
    char path[128];
    snprintf(path, sizeof path, "%s/out", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int n = 0;
    while (n < max && fgets(lines[n], sizeof lines[n], f))
        n++;
    fclose(f);
    return n;
}

static void test_whatif_vary_grid_matches_sweep_and_plots(void **state)
{
    (void)state;
    char args[2048], lines[8][512];
    snprintf(args, sizeof args,
             "run" BASE " --vary loader.batch_size=32,64 --vary loader.num_workers=1,4 "
             "--plot '%s/curve.png'",
             dir);
    assert_int_equal(epochsim(args), 0);
    assert_int_equal(out_lines(lines, 8), 5); /* the header and 2 x 2 points */
    snprintf(args, sizeof args,
             "sweep" BASE " --sweep loader.batch_size=32,64 --sweep loader.num_workers=1,4 "
             "-o '%s/sweep.csv'",
             dir);
    assert_int_equal(epochsim(args), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    plt_csv t;
    sim_err err;
    assert_int_equal(plt_csv_read(path, &t, &err), 0);
    assert_int_equal(t.n_rows, 4);
    for (size_t r = 0; r < 4; r++) {
        /* Row r of the table: batch, workers, then epoch_time_s as %.4g. */
        char want[64];
        snprintf(want, sizeof want, "%.4g",
                 atof(plt_csv_cell(&t, r, plt_csv_col(&t, "epoch_time_s"))));
        int bs, nw;
        char got[64];
        assert_int_equal(sscanf(lines[r + 1], "%d %d %63s", &bs, &nw, got), 3);
        assert_int_equal(bs, atoi(plt_csv_cell(&t, r, plt_csv_col(&t, "loader.batch_size"))));
        assert_int_equal(nw, atoi(plt_csv_cell(&t, r, plt_csv_col(&t, "loader.num_workers"))));
        assert_string_equal(got, want);
    }
    plt_csv_free(&t);
    snprintf(path, sizeof path, "%s/curve.png", dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char sig[4] = {0};
    assert_int_equal(fread(sig, 1, 4, f), 4);
    fclose(f);
    assert_memory_equal(sig, "\x89PNG", 4);
}

static void test_whatif_sweep_block_accepted_by_run(void **state)
{
    (void)state;
    char path[128], args[1024], lines[8][512];
    snprintf(path, sizeof path, "%s/exp.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("loader:\n  num_workers: 2\nsweep:\n  grid:\n    loader.batch_size: [16, 32, 64]\n", f);
    fclose(f);
    snprintf(args, sizeof args, "run '%s'" BASE, path);
    assert_int_equal(epochsim(args), 0);
    assert_int_equal(out_lines(lines, 8), 4);
    assert_non_null(strstr(lines[0], "loader.batch_size"));
    assert_int_equal(atoi(lines[3]), 64);
}

static void test_whatif_single_run_outputs_refused(void **state)
{
    (void)state;
    assert_int_equal(epochsim("run" BASE " --vary loader.batch_size=32,64 --json -"), 2);
    assert_int_equal(epochsim("run" BASE " --vary loader.batch_sise=32,64"), 1);
    char path[128], msg[1024] = "";
    snprintf(path, sizeof path, "%s/err", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(msg, 1, sizeof msg - 1, f);
    msg[n] = 0;
    fclose(f);
    if (!strstr(msg, "--vary loader.batch_sise=32,64") || !strstr(msg, "'loader.batch_size'"))
        fail_msg("the error names neither the argument nor the key it meant:\n%s", msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whatif_vary_grid_matches_sweep_and_plots),
        cmocka_unit_test(test_whatif_sweep_block_accepted_by_run),
        cmocka_unit_test(test_whatif_single_run_outputs_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
