/* test_engine.c — the event engine alone, against a recording neighbour: events fire in time
 * order and, at equal times, in the order they were scheduled, whether due now, later or set on
 * a timer (which fires once, where it was last set); stop and fail end the run with
 * the first error; a run in slices (sim_engine_run_some) gives the same sequence as one run;
 * the observer sees each observation once, at the time it is made, and only once it is set; an
 * event passed on (sim_engine_pass_on) runs at once when it is next, and in random runs gives the
 * sequence that sim_engine_after(e, 0, ...) gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include "recorder.h"
#include "sim/base/err.h"
#include "sim/core/pipeline.h"

/* The recorder saw exactly the n kinds of want, in that order. */
static void assert_kinds(const recorder *r, const uint32_t *want, int n)
{
    assert_int_equal(r->n, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(r->kind[i], want[i]);
}

static void time_then_insertion_order(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder r;
    recorder_attach(&r, e);
    sim_engine_at(e, 30, r.id, 3, 0);
    sim_engine_at(e, 10, r.id, 1, 0);
    sim_engine_at(e, 20, r.id, 2, 0);
    sim_engine_at(e, 20, r.id, 4, 0); /* same time as kind 2, scheduled after it */
    assert_int_equal(sim_engine_run(e), 0);
    const uint32_t want[] = {1, 2, 4, 3};
    assert_kinds(&r, want, 4);
    assert_int_equal(r.t[3], 30);
    assert_int_equal(sim_engine_now(e), 30);
    assert_int_equal(sim_engine_events(e), 4);
    sim_engine_destroy(e);
}

/* Each event schedules the next 7 ns later until 100 have fired; kind 99 stops at the 50th. */
static void chain(recorder *r, sim_engine *e, const sim_event *ev)
{
    if (ev->a == 50 && r->ctx)
        sim_engine_stop(e);
    else if (ev->a < 100)
        sim_engine_after(e, 7, r->id, 0, ev->a + 1);
}

static void stop_ends_the_run(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder r;
    recorder_attach(&r, e);
    r.react = chain;
    r.ctx = &r; /* stop at 50 */
    sim_engine_at(e, 0, r.id, 0, 1);
    assert_int_equal(sim_engine_run(e), 0);
    assert_int_equal(r.n, 50);
    assert_int_equal(sim_engine_now(e), 49 * 7);
    sim_engine_destroy(e);
}

static void failing(recorder *r, sim_engine *e, const sim_event *ev)
{
    (void)r;
    sim_engine_fail(e, ev->kind == 1 ? SIM_ENOMEM : SIM_EINVAL);
}

static void fail_reports_the_first_error(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder r;
    recorder_attach(&r, e);
    r.react = failing;
    sim_engine_at(e, 5, r.id, 1, 0);
    sim_engine_at(e, 6, r.id, 2, 0);
    assert_int_equal(sim_engine_run(e), SIM_ENOMEM);
    assert_int_equal(r.n, 1); /* the run stopped at the failure */
    sim_engine_destroy(e);
}

static void slices_give_the_same_run(void **state)
{
    (void)state;
    sim_engine *whole = sim_engine_create(), *sliced = sim_engine_create();
    recorder a, b;
    recorder_attach(&a, whole);
    recorder_attach(&b, sliced);
    a.react = b.react = chain;
    sim_engine_at(whole, 0, a.id, 0, 1);
    sim_engine_at(sliced, 0, b.id, 0, 1);
    assert_int_equal(sim_engine_run(whole), 0);
    bool finished = false;
    int slices = 0;
    while (!finished) {
        assert_int_equal(sim_engine_run_some(sliced, 13, &finished), 0);
        slices++;
    }
    assert_int_equal(a.n, 100);
    assert_int_equal(b.n, 100);
    for (int i = 0; i < 100; i++)
        assert_true(a.t[i] == b.t[i] && a.a[i] == b.a[i]);
    assert_int_equal(slices, 8); /* 100 events in slices of 13: 7 full, 1 that finds the end */
    assert_int_equal(sim_engine_events(sliced), 100);
    sim_engine_destroy(whole);
    sim_engine_destroy(sliced);
}

typedef struct seen {
    int n;
    int64_t t[4];
    int64_t a[4];
} seen;

static void observe(void *ctx, int64_t now_ns, const sim_observation *o)
{
    seen *s = ctx;
    if (s->n < 4) {
        s->t[s->n] = now_ns;
        s->a[s->n] = o->a;
    }
    s->n++;
}

static const sim_observer_ops watcher = {.name = "watcher", .observe = observe};

/* Each event reports its payload; the observer is set by the event at t = 20. */
static void report_payload(recorder *r, sim_engine *e, const sim_event *ev)
{
    if (ev->t_ns == 20) sim_engine_set_observer(e, &watcher, r->ctx);
    sim_engine_observe(e, &(sim_observation){.kind = SIM_OBS_STEP, .a = (int64_t)ev->a});
}

static void observer_sees_reports_once_set(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder r;
    seen s = {0};
    recorder_attach(&r, e);
    r.react = report_payload;
    r.ctx = &s;
    sim_engine_at(e, 10, r.id, 0, 1); /* no observer yet: nobody sees payload 1 */
    sim_engine_at(e, 20, r.id, 0, 2);
    sim_engine_at(e, 30, r.id, 0, 3);
    assert_int_equal(sim_engine_run(e), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.t[0], 20);
    assert_int_equal(s.a[0], 2);
    assert_int_equal(s.t[1], 30);
    assert_int_equal(s.a[1], 3);
    assert_int_equal(r.n, 3); /* observing schedules nothing */
    sim_engine_destroy(e);
}

/* At t = 10 (kind 1): schedules kind 5 for now, then kind 6 for 20; kind 2 was scheduled for 10
 * before the run. Kind 5, due now, fires after kind 2, which was scheduled first. */
static void now_and_later(recorder *r, sim_engine *e, const sim_event *ev)
{
    if (ev->kind != 1) return;
    sim_engine_after(e, 0, r->id, 5, 0);
    sim_engine_after(e, 10, r->id, 6, 0);
}

static void events_due_now_keep_the_order(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder r;
    recorder_attach(&r, e);
    r.react = now_and_later;
    sim_engine_at(e, 10, r.id, 1, 0);
    sim_engine_at(e, 10, r.id, 2, 0);
    sim_engine_at(e, 20, r.id, 3, 0); /* before kind 6, scheduled later for the same time */
    assert_int_equal(sim_engine_run(e), 0);
    const uint32_t want[] = {1, 2, 5, 3, 6};
    assert_kinds(&r, want, 5);
    sim_engine_destroy(e);
}

/* At t = 5 (kind 1) the timer moves from 50 to 20, where kind 2 was scheduled before it and
 * kind 4 is scheduled after it. */
static void move_timer(recorder *r, sim_engine *e, const sim_event *ev)
{
    int *timer = r->ctx;
    if (ev->kind != 1) return;
    sim_engine_timer_set(e, *timer, 20);
    sim_engine_at(e, 20, r->id, 4, 0);
}

static void a_moved_timer_fires_once_in_order(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder r;
    recorder_attach(&r, e);
    int timer = sim_engine_timer_add(e, r.id, 9);
    assert_true(timer >= 0);
    r.react = move_timer;
    r.ctx = &timer;
    sim_engine_timer_set(e, timer, 50);
    sim_engine_at(e, 5, r.id, 1, 0);
    sim_engine_at(e, 20, r.id, 2, 0);
    assert_int_equal(sim_engine_run(e), 0);
    const uint32_t want[] = {1, 2, 9, 4};
    assert_kinds(&r, want, 4);
    assert_int_equal(r.t[2], 20);
    assert_int_equal(sim_engine_now(e), 20); /* nothing left at 50 */
    assert_int_equal(sim_engine_events(e), 4);
    sim_engine_destroy(e);
}

/* Timers due at the same time fire in the order they were set, whatever their ids (the scan for
 * the first finds the lowest id at the earliest time, then looks for one set sooner). */
static void timers_due_together_fire_in_the_order_set(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder r;
    recorder_attach(&r, e);
    int a = sim_engine_timer_add(e, r.id, 1);
    int b = sim_engine_timer_add(e, r.id, 2);
    int c = sim_engine_timer_add(e, r.id, 3);
    assert_true(a >= 0 && b >= 0 && c >= 0);
    sim_engine_timer_set(e, c, 30);
    sim_engine_at(e, 30, r.id, 4, 0);
    sim_engine_timer_set(e, b, 30);
    sim_engine_timer_set(e, a, 30);
    sim_engine_at(e, 30, r.id, 5, 0);
    assert_int_equal(sim_engine_run(e), 0);
    const uint32_t want[] = {3, 4, 2, 1, 5};
    assert_kinds(&r, want, 5);
    sim_engine_destroy(e);
}

/* The armed-timer set names the first of one or two armed timers without a scan: two timers due
 * together still fire in the order set (b before a, whatever the ids), and a timer set to
 * INT64_MAX is disarmed, as its time says, and never fires. */
static void two_armed_timers_and_a_disarmed_one(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    recorder r;
    recorder_attach(&r, e);
    int a = sim_engine_timer_add(e, r.id, 1);
    int b = sim_engine_timer_add(e, r.id, 2);
    int c = sim_engine_timer_add(e, r.id, 3);
    assert_true(a >= 0 && b >= 0 && c >= 0);
    sim_engine_timer_set(e, c, 10);
    sim_engine_timer_set(e, c, INT64_MAX);
    sim_engine_timer_set(e, b, 30);
    sim_engine_timer_set(e, a, 30);
    assert_int_equal(sim_engine_run(e), 0);
    const uint32_t want[] = {2, 1};
    assert_kinds(&r, want, 2);
    assert_int_equal(sim_engine_now(e), 30);
    sim_engine_destroy(e);
    /* alone, the disarmed timer is no first timer at all */
    e = sim_engine_create();
    recorder_attach(&r, e);
    c = sim_engine_timer_add(e, r.id, 3);
    sim_engine_timer_set(e, c, 10);
    sim_engine_timer_set(e, c, INT64_MAX);
    sim_engine_at(e, 5, r.id, 4, 0);
    assert_int_equal(sim_engine_run(e), 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(sim_engine_now(e), 5);
    sim_engine_destroy(e);
}

/* At t = 10 (kind 1): passes kind 7 on, then notes how many events the recorder had seen. */
static void pass_on_then_count(recorder *r, sim_engine *e, const sim_event *ev)
{
    int *seen_after = r->ctx;
    if (ev->kind != 1) return;
    sim_engine_pass_on(e, r->id, 7, 0);
    *seen_after = r->n;
}

static void a_passed_on_event_runs_at_once_when_next(void **state)
{
    (void)state;
    for (int busy = 0; busy < 2; busy++) {
        sim_engine *e = sim_engine_create();
        recorder r;
        int seen_after = 0;
        recorder_attach(&r, e);
        r.react = pass_on_then_count;
        r.ctx = &seen_after;
        sim_engine_at(e, 10, r.id, 1, 0);
        if (busy) sim_engine_at(e, 10, r.id, 2, 0); /* due at 10 too, scheduled first */
        assert_int_equal(sim_engine_run(e), 0);
        if (busy) {
            const uint32_t want[] = {1, 2, 7};
            assert_kinds(&r, want, 3);
            assert_int_equal(seen_after, 1); /* kind 7 waited for kind 2 */
        } else {
            assert_int_equal(r.n, 2);
            assert_int_equal(r.kind[1], 7);
            assert_int_equal(seen_after, 2); /* kind 7 ran inside the call */
        }
        assert_int_equal(sim_engine_events(e), (uint64_t)r.n);
        sim_engine_destroy(e);
    }
}

/* A random run: each event schedules up to two more (due now or 1..3 ns later, or on a timer)
 * and then, as its last act, hands one on due now, by sim_engine_pass_on or by sim_engine_after;
 * the choices come from the event's payload, a number given in scheduling order. */
typedef struct script {
    bool pass_on;
    int timer;
    uint64_t first_id, next_id;
} script;

static void random_reaction(recorder *r, sim_engine *e, const sim_event *ev)
{
    script *s = r->ctx;
    uint64_t x = ev->a * 0x9E3779B97F4A7C15u + 12345;
    x ^= x >> 29;
    if (s->next_id - s->first_id >= (uint64_t)RECORDER_MAX - 8) return; /* all are recorded */
    for (int k = 0; k < (int)(x % 3); k++) {
        int64_t delay = (x >> (8 + 2 * k)) & 3;
        if ((int)((x >> 20) & 7) == k) {
            sim_engine_timer_set(e, s->timer, sim_engine_now(e) + delay + 1);
            s->next_id++; /* a number spent: the timer fires once per set at most */
        } else {
            sim_engine_after(e, delay, r->id, 1, s->next_id++);
        }
    }
    if ((x >> 16) & 1) {
        if (s->pass_on)
            sim_engine_pass_on(e, r->id, 2, s->next_id++);
        else
            sim_engine_after(e, 0, r->id, 2, s->next_id++);
    }
}

static void passed_on_events_keep_the_order(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 50; seed++) {
        recorder rec[3];
        script sc[3];
        for (int v = 0; v < 3; v++) { /* after(0); pass_on; pass_on run in slices of 5 */
            sim_engine *e = sim_engine_create();
            recorder_attach(&rec[v], e);
            sc[v] = (script){.pass_on = v > 0, .first_id = 1000 * seed, .next_id = 1000 * seed};
            sc[v].timer = sim_engine_timer_add(e, rec[v].id, 3);
            rec[v].react = random_reaction;
            rec[v].ctx = &sc[v];
            for (int i = 0; i < 4; i++)
                sim_engine_at(e, i % 2, rec[v].id, 1, sc[v].next_id++);
            bool finished = false;
            while (!finished)
                assert_int_equal(sim_engine_run_some(e, v == 2 ? 5 : UINT64_MAX, &finished), 0);
            assert_int_equal(sim_engine_events(e), (uint64_t)rec[v].n);
            sim_engine_destroy(e);
        }
        for (int v = 1; v < 3; v++) {
            assert_int_equal(rec[v].n, rec[0].n);
            for (int i = 0; i < rec[0].n; i++)
                assert_true(rec[v].t[i] == rec[0].t[i] && rec[v].kind[i] == rec[0].kind[i] &&
                            rec[v].a[i] == rec[0].a[i]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(time_then_insertion_order),
        cmocka_unit_test(stop_ends_the_run),
        cmocka_unit_test(fail_reports_the_first_error),
        cmocka_unit_test(slices_give_the_same_run),
        cmocka_unit_test(observer_sees_reports_once_set),
        cmocka_unit_test(events_due_now_keep_the_order),
        cmocka_unit_test(a_moved_timer_fires_once_in_order),
        cmocka_unit_test(timers_due_together_fire_in_the_order_set),
        cmocka_unit_test(two_armed_timers_and_a_disarmed_one),
        cmocka_unit_test(a_passed_on_event_runs_at_once_when_next),
        cmocka_unit_test(passed_on_events_keep_the_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
