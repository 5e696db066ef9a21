/* test_plot_cmd.c — `epochsim plot` and `epochsim run --plot` end to end through the CLI binary and
 * a real gnuplot: PNG files start with the PNG signature, SVG files hold an <svg element, the
 * dumb terminal prints a plot on stdout; a missing gnuplot (PATH of an empty folder) is a clear
 * error with exit 1 and no file; bad columns list the file's columns. Also the CSV reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/app/plot_cmd.h"
#include "plots/plt_csv.h"
#include "tmpdir_testkit.h"
#include "plots/plt_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SWEEP EPOCHSIM_SOURCE_DIR "/tests/data/sweep/small-sweep.csv"
/* A small, fast job on the round-number test catalog. */
#define RUN_ARGS                                                                                   \
    " run --quiet --catalog " EPOCHSIM_SOURCE_DIR "/tests/data/catalog"                            \
    " --set system.gpu=test-gpu --set system.cpu=test-cpu-8c --set system.storage=test-nvme"       \
    " --set dataset.samples=2560 --set loader.batch_size=64 --set loader.num_workers=2"            \
    " --set workload.kernels_per_step=10 --set workload.kernel_us=1000"                            \
    " --set report.util_window_ns=20000000"

static int setup(void **state)
{
    (void)state;
    return tmpdir_make("/tmp/epochsim-plots-XXXXXX");
}

/* Runs a shell command line; returns the exit status, stdout and stderr in files of dir. */
static int sh(const char *fmt, ...)
{
    char args[2048], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s >'%s/out' 2>'%s/err'", args, dir, dir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *name, size_t *len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void assert_png(const char *name)
{
    size_t n = 0;
    char *b = slurp(name, &n);
    if (!b) fail_msg("%s was not written", name);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    assert_true(n > 1000);
    assert_memory_equal(b, sig, 8);
    free(b);
}

static void assert_svg(const char *name)
{
    size_t n = 0;
    char *b = slurp(name, &n);
    if (!b) fail_msg("%s was not written", name);
    assert_non_null(strstr(b, "<svg"));
    assert_non_null(strstr(b, "</svg>"));
    free(b);
}

static void assert_err_has(const char *text)
{
    size_t n;
    char *b = slurp("err", &n);
    assert_non_null(b);
    if (!strstr(b, text)) fail_msg("stderr lacks '%s':\n%s", text, b);
    free(b);
}

static bool exists(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void test_plots_sweep_png_svg_dumb(void **state)
{
    (void)state;
    assert_int_equal(sh("'%s' plot '%s' --x loader.batch_size --y samples_per_s --by "
                        "loader.num_workers -o '%s/a.png' --logx",
                        EPOCHSIM_BINARY, SWEEP, dir),
                     0);
    assert_png("a.png");
    /* The failed rows were skipped with a note: two errors and one oom. */
    assert_err_has("3 rows skipped");
    assert_err_has("out of GPU memory");
    assert_int_equal(sh("'%s' plot '%s' --x loader.batch_size --y epoch_time_s -o '%s/b.svg' "
                        "--title 'Epoch time'",
                        EPOCHSIM_BINARY, SWEEP, dir),
                     0);
    assert_svg("b.svg");
    size_t n;
    char *svg = slurp("b.svg", &n);
    assert_non_null(strstr(svg, "Epoch time"));       /* the title */
    assert_non_null(strstr(svg, "epoch_time_s [s]")); /* the y label with its unit */
    free(svg);
    assert_int_equal(sh("'%s' plot '%s' --x system.gpu --y gpu_util_pct --by loader.batch_size "
                        "--term dumb",
                        EPOCHSIM_BINARY, SWEEP, dir),
                     0);
    char *out = slurp("out", &n);
    assert_non_null(out);
    assert_true(n > 200);
    assert_non_null(strstr(out, "gpu_util_pct vs system.gpu")); /* the default title */
    assert_non_null(strstr(out, "a100-sxm4-80gb"));             /* a category tic */
    free(out);
}

static void test_plots_missing_gnuplot(void **state)
{
    (void)state;
    char empty[128];
    snprintf(empty, sizeof empty, "%s/empty", dir);
    assert_int_equal(mkdir(empty, 0755), 0);
    assert_int_equal(sh("PATH='%s' '%s' plot '%s' --x loader.batch_size --y samples_per_s "
                        "-o '%s/c.png'",
                        empty, EPOCHSIM_BINARY, SWEEP, dir),
                     1);
    assert_err_has("gnuplot not found: install the Debian package gnuplot-nox");
    assert_false(exists("c.png"));
    assert_int_equal(
        sh("PATH='%s' '%s'" RUN_ARGS " --plot '%s/util.png'", empty, EPOCHSIM_BINARY, dir), 1);
    assert_err_has("gnuplot-nox");
    assert_false(exists("util.png"));
}

static void test_plots_bad_input(void **state)
{
    (void)state;
    assert_int_equal(
        sh("'%s' plot '%s' --x batch --y samples_per_s -o '%s/d.png'", EPOCHSIM_BINARY, SWEEP, dir),
        1);
    assert_err_has("no column 'batch'");
    assert_err_has("loader.batch_size, loader.num_workers"); /* the list of columns */
    assert_false(exists("d.png"));
    /* y must be numeric. */
    assert_int_equal(sh("'%s' plot '%s' --x loader.batch_size --y system.gpu --term dumb",
                        EPOCHSIM_BINARY, SWEEP, dir),
                     1);
    assert_err_has("not a number");
    /* Usage errors: no --y, an unknown format, png without a file, a missing file. */
    assert_int_equal(sh("'%s' plot '%s' --x loader.batch_size", EPOCHSIM_BINARY, SWEEP), 2);
    assert_int_equal(sh("'%s' plot '%s' --x loader.batch_size --y samples_per_s -o x.jpg",
                        EPOCHSIM_BINARY, SWEEP),
                     2);
    assert_int_equal(sh("'%s' plot '%s' --x loader.batch_size --y samples_per_s --term png",
                        EPOCHSIM_BINARY, SWEEP),
                     2);
    assert_int_equal(sh("'%s' plot /nonexistent.csv --x a --y b", EPOCHSIM_BINARY), 1);
    assert_int_equal(sh("'%s' plot --help", EPOCHSIM_BINARY), 0);
}

static void test_plots_run_util_and_timeline(void **state)
{
    (void)state;
    assert_int_equal(sh("cd '%s' && '%s'" RUN_ARGS " --plot util.png --plot timeline-a.svg "
                        "--plot timeline:gantt.png --plot util:u.svg --timeline t.json "
                        "--timeline-steps 3",
                        dir, EPOCHSIM_BINARY),
                     0);
    assert_png("util.png");
    assert_svg("timeline-a.svg");
    assert_png("gantt.png");
    assert_svg("u.svg");
    size_t n;
    char *svg = slurp("timeline-a.svg", &n);
    assert_non_null(strstr(svg, "GPU 0 compute stream")); /* a lane label */
    assert_non_null(strstr(svg, "GPU stream idle"));      /* the legend */
    assert_non_null(strstr(svg, "time since the run started [ms]"));
    free(svg);
    svg = slurp("u.svg", &n);
    assert_non_null(strstr(svg, "loader queue depth"));
    assert_non_null(strstr(svg, "utilization [%]"));
    free(svg);
    assert_true(exists("t.json"));
    /* A name that says no kind, and an unknown format, are usage errors. */
    assert_int_equal(sh("'%s'" RUN_ARGS " --plot '%s/x.png'", EPOCHSIM_BINARY, dir), 2);
    assert_int_equal(sh("'%s'" RUN_ARGS " --plot util.pdf", EPOCHSIM_BINARY), 2);
    assert_int_equal(sh("'%s'" RUN_ARGS " --timeline x.json --timeline-steps 0", EPOCHSIM_BINARY),
                     2);
}

static void test_plots_parse_run_plot(void **state)
{
    (void)state;
    plt_run_plot p;
    assert_int_equal(plt_run_plot_parse("out/util-1.png", &p, NULL), 0);
    assert_int_equal(p.kind, PLT_RUN_UTIL);
    assert_int_equal(p.term, PLT_TERM_PNG);
    assert_int_equal(plt_run_plot_parse("timeline:my.svg", &p, NULL), 0);
    assert_int_equal(p.kind, PLT_RUN_TIMELINE);
    assert_int_equal(p.term, PLT_TERM_SVG);
    assert_string_equal(p.path, "my.svg");
    assert_int_equal(plt_run_plot_parse("util:", &p, NULL), SIM_EUSAGE);
    assert_int_equal(plt_run_plot_parse("dir/utilization/a.png", &p, NULL), SIM_EUSAGE);
    assert_string_equal(plt_unit_of("epoch_time_s"), "s");
    assert_string_equal(plt_unit_of("samples_per_s"), "1/s");
    assert_string_equal(plt_unit_of("gpu_util_pct"), "%");
    assert_string_equal(plt_unit_of("step_time_ms_p50"), "count"); /* no unit suffix at the end */
    assert_string_equal(plt_unit_of("loader.batch_size"), "count");
}

static void test_plots_csv_reader(void **state)
{
    (void)state;
    plt_csv t;
    sim_err err;
    assert_int_equal(plt_csv_read(SWEEP, &t, &err), 0);
    assert_int_equal(t.n_cols, 10);
    assert_int_equal(t.n_rows, 11);
    assert_int_equal(plt_csv_col(&t, "error"), 9);
    assert_int_equal(plt_csv_col(&t, "nope"), -1);
    assert_string_equal(plt_csv_cell(&t, 1, 1), "32");
    plt_csv_free(&t);
    char path[128];
    snprintf(path, sizeof path, "%s/bad.csv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("a,b\n1,2\n\"x,y\",3\n4\n", f);
    fclose(f);
    assert_int_equal(plt_csv_read(path, &t, &err), SIM_EFORMAT);
    assert_int_equal(err.line, 4);
    assert_int_equal(plt_csv_read("/nonexistent.csv", &t, &err), SIM_ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plots_sweep_png_svg_dumb),
        cmocka_unit_test(test_plots_missing_gnuplot),
        cmocka_unit_test(test_plots_bad_input),
        cmocka_unit_test(test_plots_run_util_and_timeline),
        cmocka_unit_test(test_plots_parse_run_plot),
        cmocka_unit_test(test_plots_csv_reader),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
