/* test_seqlen.c — sequence-length histograms (sim/setup/seqlen.h): the CSV is read with its bad
 * cells named by line and column; the shipped Wikipedia histogram is the one its source
 * describes; a histogram longer than the model is refused; and a run whose every sequence has one
 * length is exactly the run at that sequence length, while LDDL-style bins over the Wikipedia
 * lengths make BERT-large's step shorter than padding to 512. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/setup/scenario.h"
#include "sim/setup/seqlen.h"
#include "tests/app/tmpdir_testkit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/configs/hardware"
#define WIKIPEDIA EPOCHSIM_SOURCE_DIR "/configs/datasets/wikipedia-512.csv"
#define SQUAD EPOCHSIM_SOURCE_DIR "/configs/datasets/squad-1.1-384.csv"

static int setup(void **state)
{
    (void)state;
    return tmpdir_make("/tmp/epochsim-seqlen-XXXXXX");
}

static void test_reads_columns_in_any_order(void **state)
{
    (void)state;
    const char *p = tmpdir_put("h.csv", "note,count,length\nx,2.5,3\n,0,900\ny,4,10\n");
    double *count;
    int max_len;
    sim_err err;
    assert_int_equal(cfg_seq_hist_read(p, &count, &max_len, &err), SIM_OK);
    assert_int_equal(max_len, 10); /* the zero count at 900 does not make the histogram longer */
    assert_true(count[2] == 2.5 && count[9] == 4 && count[0] == 0);
    free(count);
}

/* Each bad file: the error names the file's line and the column. */
static void test_bad_cells_name_line_and_column(void **state)
{
    (void)state;
    static const struct {
        const char *text, *line, *what;
    } bad[] = {
        {"length,count\n1,2\n0,3\n", ":3", "column length"},
        {"length,count\n1,2\n2.5,3\n", ":3", "column length"},
        {"length,count\n1,2\n2,-3\n", ":3", "column count"},
        {"length,count\n1,2\n2,nan\n", ":3", "column count"},
        {"length,count\n4,2\n4,3\n", ":3", "given twice"},
        {"length,n\n4,2\n", ":1", "no column 'count'"},
        {"length,count\n4,0\n", ":0", "no sequences"},
        {"length,count\n4,2,1\n", ":2", "fields"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *p = tmpdir_put("bad.csv", bad[i].text);
        double *count;
        int max_len;
        sim_err err;
        sim_err_clear(&err);
        assert_int_not_equal(cfg_seq_hist_read(p, &count, &max_len, &err), SIM_OK);
        char full[sizeof err.where + sizeof err.msg + 16];
        snprintf(full, sizeof full, "%s:%d %s", err.where, err.line, err.msg);
        if (!strstr(full, bad[i].line) || !strstr(full, bad[i].what) || !strstr(full, "bad.csv"))
            fail_msg("file %zu: '%s' lacks '%s' / '%s'", i, full, bad[i].line, bad[i].what);
        assert_null(count);
    }
}

/* Reads a shipped histogram, checks its longest length and returns its sequences; *tokens gets
 * their tokens unpadded. */
static double hist_sums(const char *path, int want_max_len, double *tokens)
{
    double *count;
    int max_len;
    sim_err err;
    assert_int_equal(cfg_seq_hist_read(path, &count, &max_len, &err), SIM_OK);
    assert_int_equal(max_len, want_max_len);
    double n = 0;
    *tokens = 0;
    for (int l = 1; l <= max_len; l++) {
        n += count[l - 1];
        *tokens += l * count[l - 1];
    }
    free(count);
    return n;
}

/* Graphcore's histogram of the MLPerf Wikipedia set at 512 (configs/datasets/README.md): over
 * 16 M sequences, and padding to 512 makes "in excess of 50 %" of the tokens padding (Krell et
 * al. 2021, abstract). Exact sums of the file. */
static void test_wikipedia_histogram_is_its_source(void **state)
{
    (void)state;
    double tokens;
    double n = hist_sums(WIKIPEDIA, 512, &tokens);
    assert_true(n == 16279552);
    double padding = 1 - tokens / (n * 512);
    assert_true(padding > 0.500 && padding < 0.501);
}

/* The SQuAD v1.1 histogram at 384 holds 88,641 features: the count DLE's run_squad.py makes of
 * the training set (the protocol of the Lambda rows, docs/accuracy.md), an independent check that
 * it counts what it says. */
static void test_squad_histogram_is_its_source(void **state)
{
    (void)state;
    double tokens;
    assert_true(hist_sums(SQUAD, 384, &tokens) == 88641);
}

static int build(const char *const *sets, sim_scenario *sc, sim_err *err)
{
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err_clear(err);
    sim_experiment_defaults(&x);
    for (const char *const *s = sets; *s; s++)
        if (cfg_experiment_apply(*s, &x, &set, err)) fail_msg("%s: %s", *s, err->msg);
    return sim_scenario_build(&x, &set, CATALOG, sc, err);
}

static int64_t step_gpu_ns(const char *const *sets)
{
    sim_scenario sc;
    sim_err err;
    if (build(sets, &sc, &err)) fail_msg("%s", err.msg);
    int64_t ns = sim_program_gpu_ns(&sc.program);
    sim_scenario_free(&sc);
    return ns;
}

static void test_too_long_and_not_a_language_model_refused(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_err err;
    char key[256];
    snprintf(key, sizeof key, "workload.seq_lengths=%s", WIKIPEDIA);
    assert_int_equal(
        build((const char *[]){"workload.model=bert-large", "workload.seq_len=384", key, NULL}, &sc,
              &err),
        SIM_EINVAL);
    assert_non_null(strstr(err.msg, "workload.seq_lengths"));
    assert_non_null(strstr(err.msg, "longer than the model's 384"));
    assert_int_equal(build((const char *[]){"workload.model=resnet50", key, NULL}, &sc, &err),
                     SIM_EINVAL);
    assert_non_null(strstr(err.msg, "no token sequences"));
}

/* One length for every sequence (120, aligned to 8: 120) is the plain run at seq_len 120, kernel
 * for kernel: the mix changes which lengths run, nothing else. */
static void test_one_length_is_the_plain_run(void **state)
{
    (void)state;
    char key[256];
    snprintf(key, sizeof key, "workload.seq_lengths=%s",
             tmpdir_put("one.csv", "length,count\n120,1000\n"));
    int64_t mixed =
        step_gpu_ns((const char *[]){"workload.model=bert-base", "workload.seq_len=512",
                                     "loader.batch_size=16", "workload.accum_steps=3", key, NULL});
    int64_t plain =
        step_gpu_ns((const char *[]){"workload.model=bert-base", "workload.seq_len=120",
                                     "loader.batch_size=16", "workload.accum_steps=3", NULL});
    assert_true(mixed == plain);
}

/* LDDL's 64-token bins over Wikipedia: the mean padded length of a batch of 32 is 279 tokens
 * (test_seqmix's rules on this file), so BERT-large's step costs between 279/512 of the padded
 * step (if all its work were linear in length) and that share squared (if all were attention):
 * the kernels are mostly linear, so the ratio sits in (0.30, 0.60). */
static void test_lddl_bins_shorten_bert_large(void **state)
{
    (void)state;
    char key[256];
    snprintf(key, sizeof key, "workload.seq_lengths=%s", WIKIPEDIA);
    const char *base[] = {"workload.model=bert-large",
                          "workload.seq_len=512",
                          "loader.batch_size=32",
                          "workload.accum_steps=16",
                          "workload.precision=amp_fp16",
                          NULL,
                          NULL,
                          NULL};
    int64_t padded = step_gpu_ns(base);
    base[5] = key;
    base[6] = "workload.seq_bin=64";
    int64_t binned = step_gpu_ns(base);
    double r = (double)binned / (double)padded;
    if (!(r > 0.30 && r < 0.60)) fail_msg("binned / padded = %.3f", r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_columns_in_any_order),
        cmocka_unit_test(test_bad_cells_name_line_and_column),
        cmocka_unit_test(test_wikipedia_histogram_is_its_source),
        cmocka_unit_test(test_squad_histogram_is_its_source),
        cmocka_unit_test(test_too_long_and_not_a_language_model_refused),
        cmocka_unit_test(test_one_length_is_the_plain_run),
        cmocka_unit_test(test_lddl_bins_shorten_bert_large),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
