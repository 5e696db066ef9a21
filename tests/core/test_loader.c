/* test_loader.c — the DataLoader alone (real CPU, storage and memory-bus servers; a recording main
 * thread that asks for each next batch as soon as it has the last): workers start, take batches
 * round-robin (batch i to worker i mod N), decode their samples one after another, and batches
 * reach the main thread in order; prefetch_factor x workers batches are in flight at once. Storage
 * and the memory bus are made so fast that the closed form is start-up + samples x decode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include "recorder.h"
#include "sim/core/pipeline.h"

#include <stdlib.h>

#define MS 1000000
#define BATCHES 4
/* Each read, collate and CPU job ends at the first whole ns after its exact finish: about ten of
 * them per batch, so 50 ns bounds the rounding. */
#define TOL_NS 50

typedef struct ask {
    sim_loader *l;
} ask;

/* The main thread: takes batch b and asks for the next one at once. */
static void take_and_ask(recorder *r, sim_engine *e, const sim_event *ev)
{
    (void)e;
    ask *k = r->ctx;
    if (ev->a + 1 < BATCHES) sim_loader_next(k->l, r->id, 0);
}

static void batches_in_order_from_round_robin_workers(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder main_thread;
    recorder_attach(&main_thread, e);
    sim_cpu_model box = {.cores = 8, .threads = 16, .smt_gain = 0.25, .single_thread = 1.0};
    sim_ps *cpu = sim_cpu_create(e, &box);
    sim_ps_config bus = {.name = "mem", .rate = 1e6, .per_job_max = 1e6, .busy_units = 1};
    sim_ps *mem = sim_ps_create(e, &bus);
    sim_storage_desc ram = {.read_mbps = 1e9, .latency_us = 0, .queue_depth = 64};
    sim_storage *disk = sim_storage_create(e, &ram);
    sim_loader_config c = {.batch_size = 4,
                           .num_workers = 2,
                           .prefetch_factor = 2,
                           .samples = 4 * BATCHES,
                           .dataset_samples = 4 * BATCHES,
                           .sample_bytes = 1000,
                           .decode_ref_ns = 1.0 * MS,
                           .input_bytes = 1000,
                           .worker_start_ref_ns = 1.0 * MS,
                           .seed = 1,
                           .cpu = cpu,
                           .mem = mem,
                           .storage = disk};
    int rc;
    sim_loader *l = sim_loader_create(e, &c, &rc);
    assert_non_null(l);
    assert_int_equal(sim_loader_begin_epoch(l, 0), 0);
    assert_int_equal(sim_loader_batches(l), BATCHES);
    ask k = {l};
    main_thread.react = take_and_ask;
    main_thread.ctx = &k;
    sim_loader_next(l, main_thread.id, 0);
    assert_int_equal(sim_engine_run(e), 0);
    assert_int_equal(main_thread.n, BATCHES);
    /* 2 workers on 8 cores run alone: start-up 1 ms, then 4 samples x 1 ms per batch; batches 0
     * and 1 (one per worker) at 5 ms, 2 and 3 at 9 ms, all four in flight from the start */
    const int64_t want[BATCHES] = {5 * MS, 5 * MS, 9 * MS, 9 * MS};
    for (int b = 0; b < BATCHES; b++) {
        assert_int_equal(main_thread.a[b], (uint64_t)b); /* in order */
        assert_true(llabs(main_thread.t[b] - want[b]) <= TOL_NS);
    }
    assert_int_equal(sim_loader_decodes(l), 4 * BATCHES);
    assert_true(sim_loader_each_sample_once(l));
    sim_loader_destroy(l);
    sim_storage_destroy(disk);
    sim_ps_destroy(mem);
    sim_ps_destroy(cpu);
    sim_engine_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batches_in_order_from_round_robin_workers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
