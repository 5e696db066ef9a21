/* test_storage.c — the storage device alone, against a recording neighbour, with closed-form
 * finish times: a read costs the access latency plus bytes / bandwidth; an HDD (one service
 * slot) serves reads one after another; an NVMe (many slots) overlaps their latencies and shares
 * its bandwidth among the transfers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include "recorder.h"
#include "sim/core/pipeline.h"

#include <math.h>
#include <stdlib.h>

/* 1000 MB/s = 1 byte per ns, 100 us latency: a 1 MB read takes 100,000 + 1,000,000 ns. */
#define LAT_NS 100000
#define MB 1000000.0

/* The shared server ends a transfer at the first whole ns at or after its exact finish. */
#define TOL_NS 2

static sim_storage *device(sim_engine *e, int queue_depth)
{
    sim_storage_desc d = {
        .read_mbps = 1000, .latency_us = LAT_NS / 1000.0, .queue_depth = queue_depth};
    sim_storage *s = sim_storage_create(e, &d);
    assert_non_null(s);
    return s;
}

static void one_read_is_latency_plus_transfer(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder r;
    recorder_attach(&r, e);
    sim_storage *s = device(e, 4);
    sim_storage_read(s, MB, r.id, 7, 42);
    assert_int_equal(sim_engine_run(e), 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.kind[0], 7);
    assert_int_equal(r.a[0], 42);
    assert_true(llabs(r.t[0] - (LAT_NS + 1000000)) <= TOL_NS);
    assert_true(fabs(sim_storage_busy_ns(s) - (LAT_NS + 1000000)) <= TOL_NS);
    sim_storage_destroy(s);
    sim_engine_destroy(e);
}

static void hdd_serves_one_at_a_time(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder r;
    recorder_attach(&r, e);
    sim_storage *s = device(e, 1);
    for (int i = 0; i < 3; i++)
        sim_storage_read(s, MB, r.id, 0, (uint64_t)i);
    assert_int_equal(sim_engine_run(e), 0);
    assert_int_equal(r.n, 3);
    for (int i = 0; i < 3; i++) { /* in order, each a full latency + transfer after the last */
        assert_int_equal(r.a[i], (uint64_t)i);
        assert_true(llabs(r.t[i] - (i + 1) * (LAT_NS + 1000000)) <= TOL_NS * (i + 1));
    }
    sim_storage_destroy(s);
    sim_engine_destroy(e);
}

static void nvme_overlaps_latency_and_shares_bandwidth(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder r;
    recorder_attach(&r, e);
    sim_storage *s = device(e, 32);
    for (int i = 0; i < 4; i++)
        sim_storage_read(s, MB, r.id, 0, (uint64_t)i);
    assert_int_equal(sim_engine_run(e), 0);
    assert_int_equal(r.n, 4);
    /* one latency for all, then four transfers sharing 1 B/ns: all end at LAT + 4 MB / bw */
    for (int i = 0; i < 4; i++)
        assert_true(llabs(r.t[i] - (LAT_NS + 4000000)) <= TOL_NS);
    sim_storage_destroy(s);
    sim_engine_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_read_is_latency_plus_transfer),
        cmocka_unit_test(hdd_serves_one_at_a_time),
        cmocka_unit_test(nvme_overlaps_latency_and_shares_bandwidth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
