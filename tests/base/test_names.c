/* test_names.c — "did you mean": a word that abbreviates a catalog name gets that name (the
 * longest shared prefix), a typo gets the nearest name by edit distance, and a word far from
 * every name gets none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/base/names.h"

static const char *const gpus[] = {"a10", "a100-pcie-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb",
                                   "rtx-4090"};
#define N_GPUS (sizeof gpus / sizeof gpus[0])

static void test_names_abbreviation_gets_the_longer_name(void **state)
{
    (void)state;
    assert_string_equal(sim_nearest_name("a100", gpus, N_GPUS), "a100-pcie-40gb");
    assert_string_equal(sim_nearest_name("a100x", gpus, N_GPUS), "a100-pcie-40gb");
    assert_string_equal(sim_nearest_name("a100-sxm", gpus, N_GPUS), "a100-sxm4-80gb");
    assert_string_equal(sim_nearest_name("h100", gpus, N_GPUS), "h100-sxm5-80gb");
}

static void test_names_typo_gets_the_nearest(void **state)
{
    (void)state;
    assert_string_equal(sim_nearest_name("rtx-4909", gpus, N_GPUS), "rtx-4090");
    assert_string_equal(sim_nearest_name("a1", gpus, N_GPUS), "a10");
    assert_int_equal(sim_edit_distance("batch_sise", "batch_size"), 1);
}

static void test_names_far_word_gets_none(void **state)
{
    (void)state;
    assert_null(sim_nearest_name("tpu-v4", gpus, N_GPUS));
    assert_null(sim_nearest_name("zz", gpus, N_GPUS));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_abbreviation_gets_the_longer_name),
        cmocka_unit_test(test_names_typo_gets_the_nearest),
        cmocka_unit_test(test_names_far_word_gets_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
