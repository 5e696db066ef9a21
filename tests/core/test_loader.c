/* test_loader.c — the DataLoader alone (real CPU, storage and memory-bus servers; a recording main
 * thread that asks for each next batch as soon as it has the last): workers start, take batches
 * round-robin (batch i to worker i mod N), decode their samples one after another, and batches
 * reach the main thread in order; prefetch_factor x workers batches are in flight at once. Storage
 * and the memory bus are made so fast that the closed form is start-up + samples x decode; a
 * dataset in memory gets the same answer on an HDD, since it reads nothing. */
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

/* Two workers, prefetch 2, four batches of 4 samples of 1 ms of CPU each, on `device`. */
typedef struct bench {
    sim_engine *e;
    recorder main_thread;
    sim_ps *cpu, *mem;
    sim_storage *disk;
    sim_loader *l;
    ask k;
} bench;

static void bench_run(bench *b, const sim_storage_desc *device, bool in_memory)
{
    b->e = sim_engine_create();
    recorder_attach(&b->main_thread, b->e);
    sim_cpu_model box = {.cores = 8, .threads = 16, .smt_gain = 0.25, .single_thread = 1.0};
    b->cpu = sim_cpu_create(b->e, &box);
    sim_ps_config bus = {.name = "mem", .rate = 1e6, .per_job_max = 1e6, .busy_units = 1};
    b->mem = sim_ps_create(b->e, &bus);
    b->disk = sim_storage_create(b->e, device);
    sim_loader_config c = {.batch_size = 4,
                           .num_workers = 2,
                           .prefetch_factor = 2,
                           .samples = 4 * BATCHES,
                           .dataset_samples = 4 * BATCHES,
                           .sample_bytes = 1000,
                           .decode_ref_ns = 1.0 * MS,
                           .input_bytes = 1000,
                           .in_memory = in_memory,
                           .worker_start_ref_ns = 1.0 * MS,
                           /* a dataset in memory ignores the page cache: nothing is read */
                           .cached_samples = in_memory ? 4 * BATCHES : 0,
                           .seed = 1,
                           .cpu = b->cpu,
                           .mem = b->mem,
                           .storage = b->disk};
    int rc;
    b->l = sim_loader_create(b->e, &c, &rc);
    assert_non_null(b->l);
    assert_int_equal(sim_loader_begin_epoch(b->l, 0), 0);
    assert_int_equal(sim_loader_batches(b->l), BATCHES);
    b->k.l = b->l;
    b->main_thread.react = take_and_ask;
    b->main_thread.ctx = &b->k;
    sim_loader_next(b->l, b->main_thread.id, 0);
    assert_int_equal(sim_engine_run(b->e), 0);
    assert_int_equal(b->main_thread.n, BATCHES);
    /* 2 workers on 8 cores run alone: start-up 1 ms, then 4 samples x 1 ms per batch; batches 0
     * and 1 (one per worker) at 5 ms, 2 and 3 at 9 ms, all four in flight from the start */
    const int64_t want[BATCHES] = {5 * MS, 5 * MS, 9 * MS, 9 * MS};
    for (int i = 0; i < BATCHES; i++) {
        assert_int_equal(b->main_thread.a[i], (uint64_t)i); /* in order */
        assert_true(llabs(b->main_thread.t[i] - want[i]) <= TOL_NS);
    }
    assert_int_equal(sim_loader_decodes(b->l), 4 * BATCHES);
    assert_true(sim_loader_each_sample_once(b->l));
}

static void bench_free(bench *b)
{
    sim_loader_destroy(b->l);
    sim_storage_destroy(b->disk);
    sim_ps_destroy(b->mem);
    sim_ps_destroy(b->cpu);
    sim_engine_destroy(b->e);
}

/* Storage as fast as RAM: the closed form is start-up + samples x decode. */
static void batches_in_order_from_round_robin_workers(void **state)
{
    (void)state;
    bench b;
    sim_storage_desc ram = {.read_mbps = 1e9, .latency_us = 0, .queue_depth = 64};
    bench_run(&b, &ram, false);
    assert_true(sim_storage_busy_ns(b.disk) > 0);
    bench_free(&b);
}

/* A dataset in memory on an HDD (8 ms a read, one at a time): the same closed form, since no
 * sample touches the device, not even for a byte, nor the page cache. */
static void in_memory_dataset_never_reads(void **state)
{
    (void)state;
    bench b;
    sim_storage_desc hdd = {.read_mbps = 200, .latency_us = 8000, .queue_depth = 1};
    bench_run(&b, &hdd, true);
    assert_true(sim_storage_busy_ns(b.disk) == 0);
    assert_int_equal(sim_loader_cache_hits(b.l), 0);
    bench_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batches_in_order_from_round_robin_workers),
        cmocka_unit_test(in_memory_dataset_never_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
