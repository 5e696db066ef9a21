/* test_metrics.c — the metrics alone, driven by a scripted GPU and main thread: GPU-Util per
 * NVML window is the share of the window with a kernel running (the last, partial window over
 * its own length), SM-active weights kernels by their share of SMs, every idle GPU ns is
 * charged to what the main thread was doing (a batch wait to the cause the loader names), the
 * main thread is busy while it dispatches or loads by itself; past its window budget the run
 * fails, where the kernel that crosses it ends even when kernels run back to back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include "recorder.h"
#include "sim/base/err.h"
#include "sim/core/metrics.h"

#include <stdlib.h>

#define US 1000
#define WINDOW (100 * US)

/* The script: at each event, kind = what changes, a = the new state. */
enum { SET_GPU, SET_GPU_HALF_SMS, SET_MAIN, SET_CAUSE };

static void play(recorder *r, sim_engine *e, const sim_event *ev)
{
    (void)e;
    sim_metrics *m = r->ctx;
    if (ev->kind == SET_MAIN)
        sim_metrics_main(m, 0, (sim_main_state)ev->a);
    else if (ev->kind == SET_CAUSE)
        sim_metrics_data_cause(m, 0, (sim_stall)ev->a);
    else
        sim_metrics_gpu(m, 0, (sim_gpu_state)ev->a, ev->kind == SET_GPU_HALF_SMS ? 0.5f : 1.0f);
}

static void windows_and_stalls(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    sim_metrics *m = sim_metrics_create(e, 1, WINDOW, 0);
    recorder r;
    recorder_attach(&r, e);
    r.react = play;
    r.ctx = m;
    /* kernel 0-50 us (all SMs), idle 50-150 while the main thread waits for data (held by
     * decoding to 80 us, by a storage read to 120 us, then by its own loading), kernel 150-250
     * us on half the SMs, idle to 260 us while it syncs */
    sim_engine_at(e, 0, r.id, SET_MAIN, SIM_MAIN_DISPATCH);
    sim_engine_at(e, 0, r.id, SET_GPU, SIM_GPUST_KERNEL);
    sim_engine_at(e, 50 * US, r.id, SET_MAIN, SIM_MAIN_DATA);
    sim_engine_at(e, 50 * US, r.id, SET_GPU, SIM_GPUST_IDLE);
    sim_engine_at(e, 80 * US, r.id, SET_CAUSE, SIM_STALL_STORAGE);
    sim_engine_at(e, 120 * US, r.id, SET_CAUSE, SIM_STALL_MAIN);
    sim_engine_at(e, 150 * US, r.id, SET_MAIN, SIM_MAIN_DISPATCH);
    sim_engine_at(e, 150 * US, r.id, SET_GPU_HALF_SMS, SIM_GPUST_KERNEL);
    sim_engine_at(e, 250 * US, r.id, SET_MAIN, SIM_MAIN_SYNC);
    sim_engine_at(e, 250 * US, r.id, SET_GPU, SIM_GPUST_IDLE);
    sim_engine_at(e, 260 * US, r.id, SET_MAIN, SIM_MAIN_OTHER);
    assert_int_equal(sim_engine_run(e), 0);
    int64_t n;
    uint8_t *util = sim_metrics_util_series(m, &n);
    assert_non_null(util);
    /* [0,100): 50 us busy; [100,200): 50 us; [200,260): 50 of 60 us -> 83 % (rounded) */
    assert_int_equal(n, 3);
    assert_int_equal(util[0], 50);
    assert_int_equal(util[1], 50);
    assert_int_equal(util[2], 83);
    free(util);
    sim_gpu_totals t = sim_metrics_totals(m, 0);
    assert_true(t.kernel_ns == 150 * US);
    assert_true(t.sm_active_ns == 50 * US + 0.5 * 100 * US);
    assert_true(t.stall_ns[SIM_STALL_DECODE] == 30 * US);
    assert_true(t.stall_ns[SIM_STALL_STORAGE] == 40 * US);
    assert_true(t.stall_ns[SIM_STALL_MAIN] == 30 * US);
    assert_true(t.stall_ns[SIM_STALL_SYNC] == 10 * US);
    /* dispatching 0-50 and 150-250 us, loading itself 120-150 us */
    assert_true(t.main_busy_ns == 180 * US);
    sim_metrics_destroy(m);
    sim_engine_destroy(e);
}

static void window_budget_fails_the_run(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    sim_metrics *m = sim_metrics_create(e, 1, WINDOW, 2); /* room for 2 windows only */
    recorder r;
    recorder_attach(&r, e);
    r.react = play;
    r.ctx = m;
    sim_engine_at(e, 0, r.id, SET_GPU, SIM_GPUST_KERNEL);
    sim_engine_at(e, 350 * US, r.id, SET_GPU, SIM_GPUST_IDLE); /* a kernel over 4 windows */
    assert_int_equal(sim_engine_run(e), SIM_EBUDGET);
    sim_metrics_destroy(m);
    sim_engine_destroy(e);
}

/* n kernels of dur_ns back to back from 0, each window of `window_ns`, at most `budget` of them. */
static sim_metrics *back_to_back(sim_engine *e, recorder *r, int n, int64_t dur_ns,
                                 int64_t window_ns, int64_t budget)
{
    sim_metrics *m = sim_metrics_create(e, 1, window_ns, budget);
    recorder_attach(r, e);
    r->react = play;
    r->ctx = m;
    for (int k = 0; k < n; k++)
        sim_engine_at(e, k * dur_ns, r->id, k % 2 ? SET_GPU_HALF_SMS : SET_GPU, SIM_GPUST_KERNEL);
    sim_engine_at(e, n * dur_ns, r->id, SET_GPU, SIM_GPUST_IDLE);
    return m;
}

static void kernels_back_to_back_fill_windows(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder r;
    sim_metrics *m = back_to_back(e, &r, 5, 70 * US, WINDOW, 0);
    assert_int_equal(sim_engine_run(e), 0);
    int64_t n;
    uint8_t *util = sim_metrics_util_series(m, &n);
    assert_non_null(util);
    assert_int_equal(n, 4); /* [300, 350) us is the last, partial window */
    for (int w = 0; w < 4; w++)
        assert_int_equal(util[w], 100);
    free(util);
    sim_gpu_totals t = sim_metrics_totals(m, 0);
    assert_true(t.kernel_ns == 350 * US);
    assert_true(t.sm_active_ns == 210 * US + 0.5 * 140 * US);
    sim_metrics_destroy(m);
    sim_engine_destroy(e);
}

static void kernels_back_to_back_meet_the_budget(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder r;
    /* 30 ms kernels, 2,000 windows of 100 us: the windows grow in powers of two from 1,024 (at
     * the first kernel's end), to 2,048 at 120 ms; the kernel that ends at 210 ms is the first
     * to need more, and more than the budget */
    sim_metrics *m = back_to_back(e, &r, 10, 30000 * US, WINDOW, 2000);
    assert_int_equal(sim_engine_run(e), SIM_EBUDGET);
    assert_int_equal(sim_engine_now(e), 210000 * US);
    sim_metrics_destroy(m);
    sim_engine_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(windows_and_stalls),
        cmocka_unit_test(window_budget_fails_the_run),
        cmocka_unit_test(kernels_back_to_back_fill_windows),
        cmocka_unit_test(kernels_back_to_back_meet_the_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
