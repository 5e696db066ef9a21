/* test_rng.c — sim_rng against GSL, bit for bit: the raw words of gsl_rng_mt19937 for several
 * seeds (0, which GSL takes as 4357, and one above 2^32), gsl_rng_uniform_int for bounds from 1
 * to 2^32 - 1, gsl_ran_lognormal for the loader's parameters, and a copied generator that goes
 * on with the same stream. Each stream runs past several regenerations of the state. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/base/rng.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>

#define DRAWS 5000 /* 8 regenerations of 624 words */

static void test_rng_words_match_gsl(void **state)
{
    (void)state;
    static const unsigned long seeds[] = {
        0, 1, 42, 4357, 123456789, 4294967295ul, 4294967296ul + 5};
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    assert_non_null(g);
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        sim_rng r;
        sim_rng_seed(&r, seeds[s]);
        gsl_rng_set(g, seeds[s]);
        for (int i = 0; i < DRAWS; i++)
            assert_int_equal(sim_rng_get(&r), gsl_rng_get(g));
    }
    gsl_rng_free(g);
}

static void test_rng_uniform_int_matches_gsl(void **state)
{
    (void)state;
    static const uint32_t bounds[] = {
        1, 2, 3, 7, 1000, 1281167, 1u << 31, (1u << 31) + 1, UINT32_MAX - 1, UINT32_MAX};
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    assert_non_null(g);
    sim_rng r;
    sim_rng_seed(&r, 7);
    gsl_rng_set(g, 7);
    for (int i = 0; i < DRAWS; i++) {
        uint32_t n = bounds[i % (sizeof bounds / sizeof bounds[0])];
        assert_int_equal(sim_rng_uniform_int(&r, n), gsl_rng_uniform_int(g, n));
    }
    for (uint32_t n = 1281167; n > 1281167 - DRAWS; n--) /* the shuffle's falling bounds */
        assert_int_equal(sim_rng_uniform_int(&r, n), gsl_rng_uniform_int(g, n));
    gsl_rng_free(g);
}

static void test_rng_lognormal_matches_gsl(void **state)
{
    (void)state;
    static const double cvs[] = {0.1, 0.3, 1.0, 1.5};
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    assert_non_null(g);
    for (size_t c = 0; c < sizeof cvs / sizeof cvs[0]; c++) {
        double s2 = log1p(cvs[c] * cvs[c]), mu = -s2 / 2, sigma = sqrt(s2);
        sim_rng r;
        sim_rng_seed(&r, 2024 + c);
        gsl_rng_set(g, 2024 + c);
        for (int i = 0; i < DRAWS; i++) {
            double a = sim_rng_lognormal(&r, mu, sigma), b = gsl_ran_lognormal(g, mu, sigma);
            assert_memory_equal(&a, &b, sizeof a);
        }
    }
    gsl_rng_free(g);
}

static void test_rng_copy_goes_on_with_the_stream(void **state)
{
    (void)state;
    sim_rng r, copy;
    sim_rng_seed(&r, 99);
    for (int i = 0; i < 1000; i++)
        sim_rng_get(&r);
    copy = r;
    for (int i = 0; i < DRAWS; i++)
        assert_int_equal(sim_rng_get(&copy), sim_rng_get(&r));
    assert_memory_equal(&copy, &r, sizeof r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rng_words_match_gsl),
        cmocka_unit_test(test_rng_uniform_int_matches_gsl),
        cmocka_unit_test(test_rng_lognormal_matches_gsl),
        cmocka_unit_test(test_rng_copy_goes_on_with_the_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
