/* test_seqmix.c — the padded lengths of a step's micro-batches (models/seqmix.h) against answers
 * worked out by hand: one length, the expected longest of a batch from a uniform histogram,
 * bins shared out over the micro-batches, the one mean length when there are too few, and the
 * inputs it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "models/seqmix.h"

#include <math.h>
#include <string.h>

#define LEN 512

static double hist[LEN];

/* Group i of a plan runs `u` micro-batches padded to `s` tokens (a macro: failures name the
 * caller's line). */
#define assert_group(m, i, s, u)                                                                   \
    do {                                                                                           \
        assert_int_equal((m).seq[i], s);                                                           \
        assert_int_equal((m).micro[i], u);                                                         \
    } while (0)

static void only(int len, double n)
{
    memset(hist, 0, sizeof hist);
    hist[len - 1] = n;
}

/* Every sequence of one length: every batch is that length, rounded up to the alignment. */
static void test_one_length(void **state)
{
    (void)state;
    only(100, 7);
    mdl_seq_mix mix;
    sim_err err;
    assert_int_equal(mdl_seq_mix_plan(hist, 100, 0, 8, 32, 4, &mix, &err), SIM_OK);
    assert_int_equal(mix.n, 1);
    assert_group(mix, 0, 104, 4);
    assert_false(mix.averaged);
    assert_int_equal(mdl_seq_mix_mean(&mix), 104);
}

/* Lengths 1..64 once each, no alignment: the longest of a batch of 2 is l with probability
 * (l^2 - (l-1)^2) / 64^2, so E = sum l (2l - 1) / 4096 = (2 sum l^2 - sum l) / 4096
 * = (2 x 89,440 - 2,080) / 4096 = 43.164; one group at 43 (rounded to the nearest token). A
 * batch of 1 is the mean, 32.5, which rounds to 33. */
static void test_expected_longest_of_a_uniform_batch(void **state)
{
    (void)state;
    memset(hist, 0, sizeof hist);
    for (int l = 1; l <= 64; l++)
        hist[l - 1] = 1;
    mdl_seq_mix mix;
    sim_err err;
    assert_int_equal(mdl_seq_mix_plan(hist, 64, 0, 1, 2, 1, &mix, &err), SIM_OK);
    assert_int_equal(mix.n, 1);
    assert_int_equal(mix.seq[0], 43);
    assert_int_equal(mdl_seq_mix_plan(hist, 64, 0, 1, 1, 1, &mix, &err), SIM_OK);
    assert_int_equal(mix.seq[0], 33);
    /* a large batch almost surely holds a 64: 1 - (63/64)^4096 rounds to 1 */
    assert_int_equal(mdl_seq_mix_plan(hist, 64, 0, 8, 4096, 1, &mix, &err), SIM_OK);
    assert_int_equal(mix.seq[0], 64);
}

/* Three quarters of the sequences at 10 tokens, a quarter at 200, bins of 64: with 4 micro-
 * batches 3 run at 16 (10 aligned to 8) and 1 at 200; with 1 micro-batch the one length is the
 * mean, 0.75 x 16 + 0.25 x 200 = 62, rounded up to 64, and the plan says it averaged. */
static void test_bins_shared_over_micro_batches(void **state)
{
    (void)state;
    memset(hist, 0, sizeof hist);
    hist[10 - 1] = 3;
    hist[200 - 1] = 1;
    mdl_seq_mix mix;
    sim_err err;
    assert_int_equal(mdl_seq_mix_plan(hist, 200, 64, 8, 16, 4, &mix, &err), SIM_OK);
    assert_int_equal(mix.n, 2);
    assert_group(mix, 0, 16, 3);
    assert_group(mix, 1, 200, 1);
    assert_false(mix.averaged);
    assert_int_equal(mdl_seq_mix_plan(hist, 200, 64, 8, 16, 1, &mix, &err), SIM_OK);
    assert_int_equal(mix.n, 1);
    assert_group(mix, 0, 64, 1);
    assert_true(mix.averaged);
    /* without bins a batch of 16 almost surely holds a 200: 1 - 0.75^16 = 0.99 -> 198.2 -> 200 */
    assert_int_equal(mdl_seq_mix_plan(hist, 200, 0, 8, 16, 4, &mix, &err), SIM_OK);
    assert_int_equal(mix.n, 1);
    assert_int_equal(mix.seq[0], 200);
}

/* Three equal bins over 4 micro-batches: 1 each, and the remainder to the shortest (largest
 * remainder, ties to the shorter bin); 64 groups at most. */
static void test_largest_remainder(void **state)
{
    (void)state;
    memset(hist, 0, sizeof hist);
    hist[8 - 1] = hist[72 - 1] = hist[136 - 1] = 5;
    mdl_seq_mix mix;
    sim_err err;
    assert_int_equal(mdl_seq_mix_plan(hist, 136, 64, 8, 8, 4, &mix, &err), SIM_OK);
    assert_int_equal(mix.n, 3);
    assert_int_equal(mix.micro[0], 2);
    assert_int_equal(mix.micro[1], 1);
    assert_group(mix, 2, 136, 1);
    for (int l = 1; l <= LEN; l++)
        hist[l - 1] = 1;
    assert_int_equal(mdl_seq_mix_plan(hist, LEN, 1, 1, 1, 512, &mix, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "more than 64 padded lengths"));
    assert_int_equal(mix.n, 0);
}

static void test_refuses_bad_input(void **state)
{
    (void)state;
    mdl_seq_mix mix;
    sim_err err;
    only(10, 1);
    hist[3] = -1;
    assert_int_equal(mdl_seq_mix_plan(hist, 10, 0, 8, 1, 1, &mix, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "length 4"));
    hist[3] = NAN;
    assert_int_equal(mdl_seq_mix_plan(hist, 10, 0, 8, 1, 1, &mix, &err), SIM_EINVAL);
    memset(hist, 0, sizeof hist);
    assert_int_equal(mdl_seq_mix_plan(hist, 10, 0, 8, 1, 1, &mix, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "no sequences"));
    only(10, 1);
    assert_int_equal(mdl_seq_mix_plan(hist, 10, -1, 8, 1, 1, &mix, &err), SIM_EINVAL);
    assert_int_equal(mdl_seq_mix_plan(hist, 10, 0, 0, 1, 1, &mix, &err), SIM_EINVAL);
    assert_int_equal(mdl_seq_mix_plan(hist, 10, 0, 8, 0, 1, &mix, &err), SIM_EINVAL);
    assert_int_equal(mdl_seq_mix_plan(hist, 10, 0, 8, 1, 0, &mix, &err), SIM_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_length),
        cmocka_unit_test(test_expected_longest_of_a_uniform_batch),
        cmocka_unit_test(test_bins_shared_over_micro_batches),
        cmocka_unit_test(test_largest_remainder),
        cmocka_unit_test(test_refuses_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
