/* test_demo.c — every classroom demo keeps its lesson: its "after" run is faster than its
 * "before" run by the factor the demo table claims (bounds and their reason in
 * sim/app/demo.c), or, for the out-of-memory demo, "before" does not fit and "after" does. Also
 * the command's list, a run, an unknown name and a bad option. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/app/demo.h"
#include "sim/app/demo_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/configs/hardware"
#define EXPERIMENTS EPOCHSIM_SOURCE_DIR "/configs/experiments"

static void test_demo_lessons_hold(void **state)
{
    (void)state;
    size_t n;
    const sim_demo *d = sim_demo_table(&n);
    assert_true(n >= 10);
    int broken = 0;
    for (size_t i = 0; i < n; i++) {
        sim_demo_side s[2];
        sim_err err;
        sim_err_clear(&err);
        if (sim_demo_run(&d[i], EXPERIMENTS, CATALOG, s, &err))
            fail_msg("demo %s: %s: %s", d[i].name, err.where, err.msg);
        double gain = sim_demo_gain(s);
        bool ok = d[i].max_gain > 0 ? gain >= d[i].min_gain && gain <= d[i].max_gain
                                    : s[0].oom && !s[1].oom;
        printf("%-16s gain %.3f (claims %.2f-%.2f: %s) %s -> %s\n", d[i].name, gain, d[i].min_gain,
               d[i].max_gain, d[i].bounds_why, s[0].bottleneck, s[1].bottleneck);
        broken += !ok;
    }
    assert_int_equal(broken, 0);
}

static int cmd(const char *a, const char *b)
{
    char *argv[] = {"demo", (char *)a, (char *)b, NULL};
    return sim_demo_cmd(b ? 3 : 2, argv);
}

static void test_demo_cmd(void **state)
{
    (void)state;
    assert_int_equal(cmd("list", NULL), 0);
    assert_int_equal(cmd("launch-bound", NULL), 0);
    assert_int_equal(cmd("launch-bund", NULL), 2); /* unknown: did-you-mean, usage error */
    assert_int_equal(cmd("--no-such-option", NULL), 2);
    assert_int_equal(cmd("list", "extra"), 2);
    assert_non_null(sim_demo_find("oom"));
    assert_null(sim_demo_find("nope"));
}

int main(void)
{
    setenv("EPOCHSIM_CATALOG", CATALOG, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demo_lessons_hold),
        cmocka_unit_test(test_demo_cmd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
