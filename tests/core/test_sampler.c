/* test_sampler.c — the sampled mode's statistics: window lengths in whole loader rounds, MSER
 * dropping a warm-up and refusing a drift, and the batch-means interval of the steps ahead
 * against its closed form (Student's t over the window means), widened when the windows are
 * positively correlated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/core/sampler.h"

#include <math.h>

/* Feeds `windows` windows whose steps all take means[i] ns. */
static void feed(sim_sampler *s, const double *means, int windows)
{
    for (int i = 0; i < windows; i++)
        for (int k = 0; k < s->window_steps; k++)
            assert_int_equal(sim_sampler_add(s, (int64_t)means[i]), k + 1 == s->window_steps);
}

static void test_sampler_window_steps(void **state)
{
    (void)state;
    assert_int_equal(sim_sampler_window_steps(200, 1), 5);     /* 200 / 40 */
    assert_int_equal(sim_sampler_window_steps(40, 1), 5);      /* at least 5 */
    assert_int_equal(sim_sampler_window_steps(100000, 1), 20); /* at most 20 */
    assert_int_equal(sim_sampler_window_steps(5005, 8), 24);   /* 20 up to whole rounds of 8 */
    assert_int_equal(sim_sampler_window_steps(1000, 3), 21);
    assert_int_equal(sim_sampler_window_steps(300, 48), 48); /* one round of 48 workers */
}

/* A constant step time: no estimate before 1 + SIM_SAMPLER_MIN_WINDOWS windows, then the first
 * window dropped and a zero-width interval. */
static void test_sampler_constant_steps(void **state)
{
    (void)state;
    sim_sampler s;
    sim_sampler_init(&s, 5);
    double m[9] = {100, 100, 100, 100, 100, 100, 100, 100, 100};
    sim_sampler_est est;
    feed(&s, m, 8);
    assert_false(sim_sampler_estimate(&s, &est));
    feed(&s, m, 1);
    assert_true(sim_sampler_estimate(&s, &est));
    assert_int_equal(est.warmup, 1);
    assert_int_equal(est.kept, 8);
    assert_true(est.mean_ns == 100);
    assert_true(est.window_var == 0);
    assert_true(sim_sampler_half_ahead(&s, &est, 1000) == 0);
    sim_sampler_reset(&s);
    assert_false(sim_sampler_estimate(&s, &est)); /* a new epoch starts empty */
    sim_sampler_free(&s);
}

/* Four slow windows (a warm-up), then 12 alternating 90 / 110: MSER drops the four; the kept
 * means have mean 100, sample variance 12 x 100 / 11 and a negative lag-1 correlation (no
 * widening); its 95 % upper limit is var x 11 / chi2(0.05, 11). 40 steps ahead (10 windows of
 * 4): t(0.975, 11) x sqrt(40^2 x high / 12 + 40 x 4 x high). */
static void test_sampler_drops_warmup_and_matches_closed_form(void **state)
{
    (void)state;
    sim_sampler s;
    sim_sampler_init(&s, 4);
    double m[16] = {400, 300, 250, 200};
    for (int i = 4; i < 16; i++)
        m[i] = i % 2 ? 110 : 90;
    feed(&s, m, 16);
    sim_sampler_est est;
    assert_true(sim_sampler_estimate(&s, &est));
    assert_int_equal(est.warmup, 4);
    assert_int_equal(est.kept, 12);
    assert_true(fabs(est.mean_ns - 100) < 1e-9);
    double var = 12 * 100.0 / 11;
    double t = 2.200985160082949; /* Student's t, 0.975, 11 degrees of freedom (tables) */
    /* 1e-9 relative: the same sums in another order */
    assert_true(fabs(est.t - t) < 1e-9 * t);
    assert_true(fabs(est.window_var - var) < 1e-9 * var);
    double high = var * 11 / 4.574813079322; /* chi-square 0.05 quantile, 11 d.f. (tables) */
    assert_true(fabs(est.window_var_high - high) < 1e-9 * high);
    double half = t * sqrt(40.0 * 40 * high / 12 + 40.0 * 4 * high);
    assert_true(fabs(sim_sampler_half_ahead(&s, &est, 40) - half) < 1e-9 * half);
    sim_sampler_free(&s);
}

/* A step time that keeps growing has no steady state: MSER's cut runs to the half-way limit. */
static void test_sampler_refuses_a_drift(void **state)
{
    (void)state;
    sim_sampler s;
    sim_sampler_init(&s, 5);
    double m[30];
    for (int i = 0; i < 30; i++)
        m[i] = 100 + 10 * i;
    feed(&s, m, 30);
    sim_sampler_est est;
    assert_false(sim_sampler_estimate(&s, &est));
    sim_sampler_free(&s);
}

/* Means in runs of four (90 90 90 90 110 110 110 110 ...) are positively correlated at lag 1
 * (r1 = 900 / 1600 = 0.5625): their variance counts (1 + r1) / (1 - r1) times. */
static void test_sampler_widens_for_correlated_windows(void **state)
{
    (void)state;
    sim_sampler s;
    sim_sampler_init(&s, 5);
    double m[17] = {500};
    for (int i = 1; i < 17; i++)
        m[i] = (i - 1) / 4 % 2 ? 110 : 90;
    feed(&s, m, 17);
    sim_sampler_est est;
    assert_true(sim_sampler_estimate(&s, &est));
    assert_int_equal(est.warmup, 1);
    assert_int_equal(est.kept, 16);
    double ss = 16 * 100.0, lag = 0;
    for (int i = 1; i + 1 < 17; i++)
        lag += (m[i] - 100) * (m[i + 1] - 100);
    double r1 = lag / ss;
    double plain = ss / 15; /* the window means' sample variance */
    assert_true(fabs(r1 - 0.5625) < 1e-12);
    double widened = plain * (1 + r1) / (1 - r1);
    assert_true(fabs(est.window_var - widened) < 1e-9 * widened);
    sim_sampler_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampler_window_steps),
        cmocka_unit_test(test_sampler_constant_steps),
        cmocka_unit_test(test_sampler_drops_warmup_and_matches_closed_form),
        cmocka_unit_test(test_sampler_refuses_a_drift),
        cmocka_unit_test(test_sampler_widens_for_correlated_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
