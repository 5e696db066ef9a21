/* test_sweep_shard.c — shard assignment: FNV-1a test vectors, point keys in canonical form,
 * every point in exactly one shard, the same settings in the same shard whatever the order of
 * the sweep, a fingerprint that tells the orders apart, the shard line, and bad I/N texts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/app/sweep_shard.h"

#include <stdlib.h>
#include <string.h>

static void make_spec(sim_sweep_spec *s, const char *const *axes)
{
    sim_err err;
    sim_sweep_spec_init(s);
    for (const char *const *a = axes; *a; a++)
        if (sim_sweep_spec_add(s, *a, 0, &err)) fail_msg("%s: %s", *a, err.msg);
    assert_int_equal(sim_sweep_spec_check(s, &err), 0);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The key of every point of spec in shard sh (NULL-terminated, sorted, malloc'd), and the head. */
static char **shard_keys(const char *const *axes, sim_sweep_shard sh, sim_sweep_shard_head *head)
{
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_experiment_defaults(&x);
    sim_sweep_spec s;
    make_spec(&s, axes);
    sim_err err;
    sim_sweep_layout L;
    assert_int_equal(sim_sweep_layout_init(&L, &s, SIM_SWEEP_CSV, 1, false, &err), 0);
    uint64_t n = sim_sweep_spec_points(&s);
    unsigned char *member = malloc(n);
    char **keys = calloc(n + 1, sizeof *keys);
    const char *values[8];
    assert_int_equal(sim_sweep_shard_plan(&s, &x, &set, &L, sh, member, head, &err), 0);
    size_t k = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (!member[i]) continue;
        sim_sweep_point p;
        sim_sweep_spec_point(&s, i, &p, values);
        keys[k] = sim_sweep_point_key(&s, &p, &x, &set);
        assert_int_equal(sim_sweep_shard_of(keys[k], sh.count), sh.index);
        k++;
    }
    assert_int_equal(k, head->rows);
    qsort(keys, k, sizeof *keys, by_text);
    free(member);
    sim_sweep_layout_free(&L);
    sim_sweep_spec_free(&s);
    return keys;
}

static void free_keys(char **keys)
{
    for (char **k = keys; *k; k++)
        free(*k);
    free(keys);
}

static void test_sweep_shard_fnv1a_vectors(void **state)
{
    (void)state;
    /* The published FNV-1a 64 test vectors (draft-eastlake-fnv, appendix C). */
    assert_true(sim_sweep_fnv1a("", SIM_SWEEP_FNV_BASIS) == 0xcbf29ce484222325ULL);
    assert_true(sim_sweep_fnv1a("a", SIM_SWEEP_FNV_BASIS) == 0xaf63dc4c8601ec8cULL);
    assert_true(sim_sweep_fnv1a("foobar", SIM_SWEEP_FNV_BASIS) == 0x85944171f73967e8ULL);
}

static void test_sweep_shard_key_is_canonical_and_sorted(void **state)
{
    (void)state;
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_experiment_defaults(&x);
    sim_sweep_spec s;
    /* 0500 and 500 are the same setting; the keys come out sorted whatever the axis order. */
    make_spec(&s, (const char *const[]){"loader.num_workers=4", "dataset.decode_us=0500", NULL});
    const char *values[2];
    sim_sweep_point p;
    sim_sweep_spec_point(&s, 0, &p, values);
    char *key = sim_sweep_point_key(&s, &p, &x, &set);
    assert_string_equal(key, "dataset.decode_us=500;loader.num_workers=4");
    free(key);
    sim_sweep_spec_free(&s);
}

static const char *const forward[] = {"loader.batch_size=16,32,64,128,256",
                                      "loader.num_workers=0,1,2,4,8,16", "system.gpu=a10,t4", NULL};
/* The same points, the axes and their values in another order. */
static const char *const shuffled[] = {"system.gpu=t4,a10", "loader.num_workers=8,0,16,2,1,4",
                                       "loader.batch_size=64,256,16,128,32", NULL};

static void test_sweep_shard_stable_under_reordering(void **state)
{
    (void)state;
    const uint64_t N = 4;
    uint64_t total = 0;
    for (uint64_t i = 0; i < N; i++) {
        sim_sweep_shard_head ha, hb;
        char **a = shard_keys(forward, (sim_sweep_shard){i, N}, &ha);
        char **b = shard_keys(shuffled, (sim_sweep_shard){i, N}, &hb);
        assert_int_equal(ha.rows, hb.rows);
        for (size_t k = 0; a[k]; k++)
            assert_string_equal(a[k], b[k]);
        /* Same points in another order: another file, so another fingerprint. */
        assert_true(ha.fingerprint != hb.fingerprint);
        assert_int_equal(ha.points, 60);
        total += ha.rows;
        free_keys(a);
        free_keys(b);
    }
    assert_int_equal(total, 60); /* disjoint (each key checked above) and complete */
}

static void test_sweep_shard_fingerprint_same_across_shards(void **state)
{
    (void)state;
    sim_sweep_shard_head h0, h1;
    free_keys(shard_keys(forward, (sim_sweep_shard){0, 3}, &h0));
    free_keys(shard_keys(forward, (sim_sweep_shard){2, 3}, &h1));
    assert_true(h0.fingerprint == h1.fingerprint);
    assert_int_equal(h0.points, h1.points);
}

static void test_sweep_shard_line_round_trip(void **state)
{
    (void)state;
    sim_sweep_shard_head h = {.shard = {3, 8},
                              .rows = 12,
                              .points = 100,
                              .format = SIM_SWEEP_JSONL,
                              .fingerprint = 0x00c0ffee12345678ULL};
    size_t len;
    char *line = sim_sweep_shard_line(&h, &len);
    assert_string_equal(line, "# epochsim sweep shard 3/8: 12 of 100 points, jsonl, grid "
                              "fnv1a64:00c0ffee12345678\n");
    sim_sweep_shard_head back;
    assert_int_equal(sim_sweep_shard_line_parse(line, len - 1, &back), 0);
    assert_true(back.fingerprint == h.fingerprint);
    assert_int_equal(back.shard.index, 3);
    assert_int_equal(back.shard.count, 8);
    assert_int_equal(back.rows, 12);
    assert_int_equal(back.points, 100);
    assert_int_equal(back.format, SIM_SWEEP_JSONL);
    free(line);
    static const char *const bad[] = {
        "point,seed",
        "# epochsim sweep shard 8/8: 12 of 100 points, csv, grid fnv1a64:00c0ffee12345678",
        "# epochsim sweep shard 3/8: 120 of 100 points, csv, grid fnv1a64:00c0ffee12345678",
        "# epochsim sweep shard 3/2000000: 1 of 100 points, csv, grid fnv1a64:00c0ffee12345678",
        "# epochsim sweep shard 3/8: 12 of 100 points, tsv, grid fnv1a64:00c0ffee12345678",
        "# epochsim sweep shard 3/8: 12 of 100 points, csv, grid fnv1a64:00c0ffee12345678 x",
        NULL,
    };
    for (const char *const *b = bad; *b; b++)
        assert_int_equal(sim_sweep_shard_line_parse(*b, strlen(*b), &back), SIM_EFORMAT);
}

static void test_sweep_shard_parse(void **state)
{
    (void)state;
    sim_sweep_shard sh;
    sim_err err;
    assert_int_equal(sim_sweep_shard_parse("2/4", &sh, &err), 0);
    assert_int_equal(sh.index, 2);
    assert_int_equal(sh.count, 4);
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"4/4", "must be below N (0 to 3)"},
        {"1/0", "count N must be 1 to"},
        {"x", "is not I/N"},
        {"-1/4", "is not I/N"},
        {"1/4x", "is not I/N"},
        {"/4", "is not I/N"},
        {"1/", "is not I/N"},
        {"0/2000000", "count N must be 1 to"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(sim_sweep_shard_parse(bad[i].text, &sh, &err), SIM_EINVAL);
        assert_non_null(strstr(err.msg, bad[i].text));
        assert_non_null(strstr(err.msg, bad[i].says));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_shard_fnv1a_vectors),
        cmocka_unit_test(test_sweep_shard_key_is_canonical_and_sorted),
        cmocka_unit_test(test_sweep_shard_stable_under_reordering),
        cmocka_unit_test(test_sweep_shard_fingerprint_same_across_shards),
        cmocka_unit_test(test_sweep_shard_line_round_trip),
        cmocka_unit_test(test_sweep_shard_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
