/* test_windows.c — the time windows GPU-Util and the run's series share: counts and lengths with
 * a partial last window, an interval spread over the windows it overlaps, and the growable
 * array's zero fill and budget. Exact integer answers throughout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/base/err.h"
#include "sim/core/windows.h"

#include <stdlib.h>

static void test_windows_count_and_partial_last(void **state)
{
    (void)state;
    assert_int_equal(sim_windows_count(0, 100), 0);
    assert_int_equal(sim_windows_count(100, 100), 1);
    assert_int_equal(sim_windows_count(250, 100), 3);
    assert_int_equal(sim_windows_len(0, 250, 100), 100);
    assert_int_equal(sim_windows_len(1, 250, 100), 100);
    assert_int_equal(sim_windows_len(2, 250, 100), 50);  /* the last, partial window */
    assert_int_equal(sim_windows_len(1, 200, 100), 100); /* a whole last window */
}

/* [50, 320) over windows of 100: 50 in window 0, 100 in 1 and 2, 20 in 3. */
static void test_windows_add_spreads_an_interval(void **state)
{
    (void)state;
    int64_t acc[5] = {0};
    sim_windows_add(acc, 100, 50, 320);
    assert_int_equal(acc[0], 50);
    assert_int_equal(acc[1], 100);
    assert_int_equal(acc[2], 100);
    assert_int_equal(acc[3], 20);
    assert_int_equal(acc[4], 0);
    sim_windows_add(acc, 100, 310, 330); /* within one window */
    assert_int_equal(acc[3], 40);
}

static void test_windows_reserve_grows_zeroed_within_budget(void **state)
{
    (void)state;
    int64_t *a = NULL, cap = 0;
    assert_int_equal(sim_windows_reserve((void **)&a, sizeof *a, &cap, 10, 0), 0);
    assert_int_equal(cap, 1024); /* first allocation */
    a[1023] = 7;
    assert_int_equal(sim_windows_reserve((void **)&a, sizeof *a, &cap, 1025, 0), 0);
    assert_int_equal(cap, 2048); /* doubled, the old entries kept, the new ones zero */
    assert_int_equal(a[1023], 7);
    assert_int_equal(a[1024], 0);
    assert_int_equal(a[2047], 0);
    assert_int_equal(sim_windows_reserve((void **)&a, sizeof *a, &cap, 3000, 2500), SIM_EBUDGET);
    assert_int_equal(cap, 2048); /* unchanged on refusal */
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows_count_and_partial_last),
        cmocka_unit_test(test_windows_add_spreads_an_interval),
        cmocka_unit_test(test_windows_reserve_grows_zeroed_within_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
