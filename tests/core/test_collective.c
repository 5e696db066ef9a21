/* test_collective.c — the all-reduce alone, against recording GPUs: it is a barrier (nobody
 * proceeds before the last GPU joins) followed by a ring all-reduce of 2 (n - 1) / n of the
 * buffer over each link, so everyone is answered at last join + that / bus bandwidth. */
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
    sim_collective *c = sim_collective_create(e, N, BUS_GBPS);
    assert_non_null(c);
    join_plan plan = {c, gpus};
    for (int i = 0; i < N; i++) {
        recorder_attach(&gpus[i], e);
        gpus[i].react = join_on_cue;
        gpus[i].ctx = &plan;
        sim_engine_at(e, 10000 * i, gpus[i].id, 1, 0); /* GPU i is ready at 10 us x i */
    }
    assert_int_equal(sim_engine_run(e), 0);
    /* last join at 30 us; ring: 2 x 3/4 x 1e8 B / 100 B/ns = 1.5e6 ns */
    int64_t want = 30000 + (int64_t)(2.0 * (N - 1) / N * BYTES / BUS_GBPS);
    for (int i = 0; i < N; i++) {
        assert_int_equal(gpus[i].n, 2);
        assert_int_equal(gpus[i].kind[1], 2);
        assert_true(llabs(gpus[i].t[1] - want) <= 1); /* the ring time rounds to a whole ns */
    }
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
