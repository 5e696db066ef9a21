/* test_collective.c — the all-reduce alone, against recording GPUs: it is a barrier (nobody
 * proceeds before the last GPU joins) followed by the reduction, so everyone is answered at the
 * last join + the all-reduce time of sim_topo_allreduce (its closed form: tests/core/test_topo.c),
 * and the collective counts that time as busy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include "recorder.h"
#include "sim/core/pipeline.h"

#include <stdlib.h>

#define N 4
#define BYTES 1e8    /* 100 MB of gradients */
#define BUS_GBPS 100 /* 100 GB/s = 100 bytes per ns per direction */

typedef struct join_plan {
    sim_collective *c;
    recorder *gpus;
} join_plan;

/* A GPU's own event (kind 1) makes it join; the collective answers with kind 2. */
static void join_on_cue(recorder *r, sim_engine *e, const sim_event *ev)
{
    (void)e;
    join_plan *p = r->ctx;
    if (ev->kind == 1) sim_collective_join(p->c, (int)(r - p->gpus), BYTES, r->id, 2);
}

static void barrier_then_ring(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder gpus[N];
    sim_ring ring = {.n = N, .bw_gbps = BUS_GBPS, .path = SIM_PATH_NVLINK};
    sim_collective *c = sim_collective_create(e, N, &ring);
    assert_non_null(c);
    join_plan plan = {c, gpus};
    for (int i = 0; i < N; i++) {
        recorder_attach(&gpus[i], e);
        gpus[i].react = join_on_cue;
        gpus[i].ctx = &plan;
        sim_engine_at(e, 10000 * i, gpus[i].id, 1, 0); /* GPU i is ready at 10 us x i */
    }
    assert_int_equal(sim_engine_run(e), 0);
    /* last join at 30 us; the ring moves 2 x 3/4 x 1e8 B at 100 B/ns = 1.5e6 ns, plus latency */
    sim_allreduce ar;
    sim_topo_allreduce(&ring, BYTES, &ar);
    assert_true(ar.time_us * 1e3 > 1.5e6 && ar.time_us * 1e3 < 1.5e6 + 1e5);
    int64_t dur = (int64_t)(ar.time_us * 1e3);
    int64_t want = 30000 + dur;
    for (int i = 0; i < N; i++) {
        assert_int_equal(gpus[i].n, 2);
        assert_int_equal(gpus[i].kind[1], 2);
        assert_int_equal(gpus[i].t[1], want);
    }
    assert_true(sim_collective_busy_ns(c) == (double)dur); /* the barrier wait is not busy */
    sim_collective_destroy(c);
    sim_engine_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(barrier_then_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
