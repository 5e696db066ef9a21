/* test_ps.c — the shared server against closed-form processor-sharing results, and random
 * arrivals on a CPU-like server (SMT capacity, over 64 jobs at once) against a fluid model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/core/pipeline.h"
#include "sim/core/ps.h"

#include <math.h>

/* A sink component that records when each job (payload = job number) finished. */
typedef struct sink {
    sim_engine *e;
    int64_t done_ns[16];
} sink;

static void sink_handle(sim_engine *e, void *self, const sim_event *ev)
{
    sink *s = self;
    s->done_ns[ev->a] = sim_engine_now(e);
}

static const sim_component_ops sink_ops = {.name = "sink", .handle = sink_handle};

typedef struct delayed {
    sim_ps *ps;
    double work;
    uint32_t sink_id;
} delayed;

static void submit_handle(sim_engine *e, void *self, const sim_event *ev)
{
    (void)e;
    delayed *d = self;
    sim_ps_submit(d->ps, d->work, d->sink_id, 0, ev->a);
}

static const sim_component_ops submit_ops = {.name = "submit", .handle = submit_handle};

static void test_ps_two_equal_jobs_share_the_rate(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    sink s = {.e = e};
    uint32_t id = (uint32_t)sim_engine_add(e, &sink_ops, &s);
    sim_ps_config cfg = {.name = "t", .rate = 2.0, .busy_units = 1};
    sim_ps *ps = sim_ps_create(e, &cfg);
    sim_ps_submit(ps, 1000, id, 0, 0);
    sim_ps_submit(ps, 1000, id, 0, 1);
    assert_int_equal(sim_engine_run(e), 0);
    /* Together they get 2 units/ns, 1 each: 1000 units take 1000 ns. */
    assert_int_equal(s.done_ns[0], 1000);
    assert_int_equal(s.done_ns[1], 1000);
    assert_true(sim_ps_busy_time(ps) == 1000.0);
    sim_ps_destroy(ps);
    sim_engine_destroy(e);
}

static void test_ps_staggered_arrival_matches_closed_form(void **state)
{
    (void)state;
    /* Rate 1. A (work 10) at t=0 runs alone to t=5 (5 done); then A and B share: A needs 5 more
     * at 0.5/ns -> t=15; B has 5 done then, alone again -> t=20. */
    sim_engine *e = sim_engine_create();
    sink s = {.e = e};
    uint32_t id = (uint32_t)sim_engine_add(e, &sink_ops, &s);
    sim_ps_config cfg = {.name = "t", .rate = 1.0, .busy_units = 1};
    sim_ps *ps = sim_ps_create(e, &cfg);
    delayed d = {ps, 10, id};
    uint32_t sub = (uint32_t)sim_engine_add(e, &submit_ops, &d);
    sim_ps_submit(ps, 10, id, 0, 0);
    sim_engine_at(e, 5, sub, 0, 1);
    assert_int_equal(sim_engine_run(e), 0);
    assert_int_equal(s.done_ns[0], 15);
    assert_int_equal(s.done_ns[1], 20);
    sim_ps_destroy(ps);
    sim_engine_destroy(e);
}

static void test_ps_per_job_cap_limits_a_lone_job(void **state)
{
    (void)state;
    sim_engine *e = sim_engine_create();
    sink s = {.e = e};
    uint32_t id = (uint32_t)sim_engine_add(e, &sink_ops, &s);
    /* 4 units/ns in total but a job may use 1: a lone job of 100 takes 100 ns, four take 100. */
    sim_ps_config cfg = {.name = "t", .rate = 4.0, .per_job_max = 1.0, .busy_units = 4};
    sim_ps *ps = sim_ps_create(e, &cfg);
    for (int i = 0; i < 4; i++)
        sim_ps_submit(ps, 100, id, 0, (uint64_t)i);
    assert_int_equal(sim_engine_run(e), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(s.done_ns[i], 100);
    assert_true(sim_ps_busy_integral(ps) == 400.0);
    sim_ps_destroy(ps);
    sim_engine_destroy(e);
}

static void test_cpu_capacity_counts_smt_as_a_fraction(void **state)
{
    (void)state;
    sim_cpu_model m = {.cores = 8, .threads = 16, .smt_gain = 0.25, .single_thread = 1.0};
    assert_true(sim_cpu_capacity(&m, 4) == 4.0);
    assert_true(sim_cpu_capacity(&m, 8) == 8.0);
    assert_true(sim_cpu_capacity(&m, 12) == 9.0);
    assert_true(sim_cpu_capacity(&m, 16) == 10.0);
    assert_true(sim_cpu_capacity(&m, 64) == 10.0);
}

#define RANDOM_JOBS 200

/* Records each job's finish (payload = job number). */
typedef struct finishes {
    int64_t done_ns[RANDOM_JOBS];
} finishes;

static void finishes_handle(sim_engine *e, void *self, const sim_event *ev)
{
    ((finishes *)self)->done_ns[ev->a] = sim_engine_now(e);
}

static const sim_component_ops finishes_ops = {.name = "finishes", .handle = finishes_handle};

typedef struct arrivals {
    sim_ps *ps;
    const double *work;
    uint32_t reply_to;
} arrivals;

static void arrivals_handle(sim_engine *e, void *self, const sim_event *ev)
{
    (void)e;
    arrivals *d = self;
    sim_ps_submit(d->ps, d->work[ev->a], d->reply_to, 0, ev->a);
}

static const sim_component_ops arrivals_ops = {.name = "arrivals", .handle = arrivals_handle};

/* Processor sharing as a fluid: between arrivals and departures every active job gets
 * min(capacity(n) / n, single_thread) per ns. Jobs arrive in index order. */
static void fluid(const sim_cpu_model *m, const int64_t *arrive, const double *work, double *done)
{
    double left[RANDOM_JOBS], t = 0;
    bool active[RANDOM_JOBS] = {0};
    int next = 0, finished = 0;
    while (finished < RANDOM_JOBS) {
        int n = 0;
        for (int i = 0; i < next; i++)
            n += active[i];
        if (n == 0) t = (double)arrive[next];
        while (next < RANDOM_JOBS && (double)arrive[next] <= t) {
            left[next] = work[next];
            active[next++] = true;
            n++;
        }
        double r = sim_cpu_capacity(m, n) * m->single_thread / n;
        r = r < m->single_thread ? r : m->single_thread;
        double first = INFINITY;
        for (int i = 0; i < next; i++)
            if (active[i] && left[i] < first) first = left[i];
        double dt = first / r;
        if (next < RANDOM_JOBS && (double)arrive[next] - t < dt) dt = (double)arrive[next] - t;
        t += dt;
        for (int i = 0; i < next; i++) {
            if (!active[i]) continue;
            left[i] -= r * dt;
            if (left[i] <= 1e-9 * work[i]) {
                active[i] = false;
                done[i] = t;
                finished++;
            }
        }
    }
}

static void test_ps_random_arrivals_match_a_fluid_model(void **state)
{
    (void)state;
    sim_cpu_model m = {.cores = 4, .threads = 8, .smt_gain = 0.3, .single_thread = 1.3};
    int64_t arrive[RANDOM_JOBS];
    double work[RANDOM_JOBS], want[RANDOM_JOBS];
    uint64_t x = 42;
    for (int i = 0; i < RANDOM_JOBS; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        /* jobs 100-179 arrive together at 60 us: 80 at once, past the server's rate table */
        arrive[i] = i < 100 ? i * 600 : i < 180 ? 60000 : 60000 + (i - 179) * 900;
        work[i] = 100 + (double)(x >> 40) / (double)(1 << 24) * 9000;
    }
    fluid(&m, arrive, work, want);
    sim_engine *e = sim_engine_create();
    finishes f = {{0}};
    sim_ps *ps = sim_cpu_create(e, &m);
    arrivals d = {ps, work, (uint32_t)sim_engine_add(e, &finishes_ops, &f)};
    uint32_t sub = (uint32_t)sim_engine_add(e, &arrivals_ops, &d);
    for (int i = 0; i < RANDOM_JOBS; i++)
        sim_engine_at(e, arrive[i], sub, 0, (uint64_t)i);
    assert_int_equal(sim_engine_run(e), 0);
    for (int i = 0; i < RANDOM_JOBS; i++) {
        int before = 0;
        for (int j = 0; j < RANDOM_JOBS; j++)
            before += want[j] < want[i];
        /* The server answers at whole ns, rounded up: a departure comes up to 1 ns late, and the
         * jobs beside it keep the lower rate that long, which delays them by less than 1 ns each
         * time. So a job ends no earlier than the fluid time (but for the sums' rounding) and at
         * most 1 ns per departure before it, plus its own, later. */
        double diff = (double)f.done_ns[i] - want[i];
        assert_true(diff > -1e-6 && diff <= before + 1.0);
    }
    sim_ps_destroy(ps);
    sim_engine_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ps_two_equal_jobs_share_the_rate),
        cmocka_unit_test(test_ps_staggered_arrival_matches_closed_form),
        cmocka_unit_test(test_ps_per_job_cap_limits_a_lone_job),
        cmocka_unit_test(test_ps_random_arrivals_match_a_fluid_model),
        cmocka_unit_test(test_cpu_capacity_counts_smt_as_a_fraction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
