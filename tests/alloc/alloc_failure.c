/* alloc_failure.c — allocation-failure injection, as SQLite and Lua test theirs: for N = 1, 2, ...
 * the Nth allocation the project makes fails, and the operation must come back cleanly: an error
 * code (or success where the allocation was optional), no crash, and every block it allocated
 * freed. Operations: a run of the default scenario, a model-zoo run, a Kineto import read back,
 * and a two-point sweep. The project's calls to malloc, calloc, realloc, free, strdup and strndup
 * are routed here by the linker (--wrap, tests/alloc/extra.cmake). Libraries' own allocations
 * (libyaml, yajl, msgpack-c, zlib) are not failed: they are the libraries' to handle, and yajl
 * 2.1 cannot (yajl_alloc and its buffers use malloc's result unchecked). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include "sim/setup/config.h"
#include "sim/setup/scenario.h"
#include "sim/app/sweep_run.h"
#include "sim/app/sweep_spec.h"
#include "traces/kineto.h"
#include "traces/trace.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/configs/hardware"

/* ---- the test allocator --------------------------------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long countdown;   /* fail the allocation that brings it to 0; < 0 = never */
static int injected;     /* an allocation was failed */
static long allocations; /* counted since the last reset */

/* Live blocks the project allocated, so that leaks show: an open-addressing set of pointers. */
#define LIVE_SLOTS (1u << 22)
static void **live;
static long n_live;

static size_t slot_of(const void *p)
{
    return ((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 42 & (LIVE_SLOTS - 1);
}

static void live_add(void *p)
{
    size_t i = slot_of(p);
    while (live[i] && live[i] != (void *)1)
        i = (i + 1) & (LIVE_SLOTS - 1);
    live[i] = p;
    n_live++;
}

static void live_remove(void *p)
{
    for (size_t i = slot_of(p); live[i]; i = (i + 1) & (LIVE_SLOTS - 1))
        if (live[i] == p) {
            live[i] = (void *)1; /* a tombstone keeps later probes going */
            n_live--;
            return;
        }
}

/* Whether this allocation is the one to fail (called with the lock held). */
static int should_fail(void)
{
    allocations++;
    if (countdown > 0 && --countdown == 0) {
        injected = 1;
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t n)
{
    pthread_mutex_lock(&lock);
    void *p = should_fail() ? NULL : __real_malloc(n);
    if (p && live) live_add(p);
    pthread_mutex_unlock(&lock);
    return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
    pthread_mutex_lock(&lock);
    void *p = should_fail() ? NULL : __real_calloc(n, size);
    if (p && live) live_add(p);
    pthread_mutex_unlock(&lock);
    return p;
}

void *__wrap_realloc(void *old, size_t n)
{
    pthread_mutex_lock(&lock);
    void *p = should_fail() ? NULL : __real_realloc(old, n);
    if (p && live) {
        if (old) live_remove(old);
        live_add(p);
    }
    pthread_mutex_unlock(&lock);
    return p;
}

void __wrap_free(void *p)
{
    if (!p) return;
    pthread_mutex_lock(&lock);
    if (live) live_remove(p);
    pthread_mutex_unlock(&lock);
    __real_free(p);
}

char *__wrap_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = __wrap_malloc(n);
    return p ? memcpy(p, s, n) : NULL;
}

char *__wrap_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = __wrap_malloc(len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = 0;
    }
    return p;
}

/* ---- the operations ------------------------------------------------------------------------- */

typedef int (*operation)(void);

static int simulate(const char *const *sets)
{
    sim_experiment x;
    sim_experiment_defaults(&x);
    cfg_experiment_set set;
    memset(&set, 0, sizeof set);
    sim_err err;
    for (; *sets; sets++)
        if (cfg_experiment_apply(*sets, &x, &set, &err)) return err.code ? err.code : SIM_EINVAL;
    sim_scenario sc;
    int rc = sim_scenario_build(&x, &set, CATALOG, &sc, &err);
    if (!rc) {
        sim_result res;
        memset(&res, 0, sizeof res);
        rc = sim_run(&sc, &res, &err);
        sim_result_free(&res);
    }
    sim_scenario_free(&sc);
    return rc;
}

static int run_default(void)
{
    static const char *const sets[] = {"training.max_steps=3", "dataset.samples=20000", NULL};
    return simulate(sets);
}

static int run_zoo(void)
{
    static const char *const sets[] = {"workload.model=resnet18", "loader.batch_size=16",
                                       "training.max_steps=2", "dataset.samples=4000", NULL};
    return simulate(sets);
}

static int import_kineto(void)
{
    char out[64];
    snprintf(out, sizeof out, "/tmp/epochsim-alloc-%ld.trace", (long)getpid());
    sim_err err;
    int rc = trc_kineto_import(EPOCHSIM_SOURCE_DIR "/tests/data/kineto/new_schema.json", out, NULL,
                               NULL, &err);
    if (!rc) {
        trc_reader *r;
        if (!(rc = trc_reader_open(out, &r, &err))) {
            const trc_step *s;
            int got;
            while ((got = trc_reader_next_step(r, &s, &err)) == 1)
                ;
            rc = got < 0 ? got : 0;
            trc_reader_close(r);
        }
    }
    unlink(out);
    return rc;
}

static int sweep(void)
{
    sim_experiment x;
    sim_experiment_defaults(&x);
    cfg_experiment_set set;
    memset(&set, 0, sizeof set);
    sim_err err;
    int rc = cfg_experiment_apply("training.max_steps=2", &x, &set, &err);
    if (!rc) rc = cfg_experiment_apply("dataset.samples=4000", &x, &set, &err);
    sim_sweep_spec spec;
    sim_sweep_spec_init(&spec);
    if (!rc) rc = sim_sweep_spec_add(&spec, "loader.num_workers=2,4", 0, &err);
    if (!rc) rc = sim_sweep_spec_check(&spec, &err);
    char out[64];
    snprintf(out, sizeof out, "/tmp/epochsim-alloc-%ld.csv", (long)getpid());
    sim_sweep_opts o = {
        .out_path = out, .threads = 1, .replications = 1, .force = true, .catalog_dir = CATALOG};
    sim_sweep_stats st = {0};
    if (!rc) rc = sim_sweep_run(&spec, &x, &set, &o, &st, &err);
    sim_sweep_spec_free(&spec);
    unlink(out);
    /* a point that fails is a row with its error (the sweep goes on): that is the report */
    return rc ? rc : st.failed ? SIM_ENOMEM : SIM_OK;
}

/* ---- the injection loop --------------------------------------------------------------------- */

/* Runs op with the Nth allocation failing, for N = 1, 2, ... until a run makes no failure
 * happen; each run must return (no crash) and free all it allocated. */
static void fail_each_allocation(operation op, const char *name)
{
    pthread_mutex_lock(&lock);
    countdown = -1;
    pthread_mutex_unlock(&lock);
    assert_int_equal(op(), 0); /* a clean run first: it must work, and warms one-time caches */
    long failures = 0, n;
    for (n = 1;; n++) {
        pthread_mutex_lock(&lock);
        countdown = n;
        injected = 0;
        allocations = 0;
        long before = n_live;
        pthread_mutex_unlock(&lock);
        int rc = op();
        pthread_mutex_lock(&lock);
        int hit = injected;
        long leaked = n_live - before;
        countdown = -1;
        pthread_mutex_unlock(&lock);
        if (leaked)
            fail_msg("%s: failing allocation %ld leaked %ld block%s", name, n, leaked,
                     leaked == 1 ? "" : "s");
        if (!hit) break; /* the operation makes fewer than n allocations: every one was tried */
        /* success despite a failed allocation would be a run with a hole in it (this found step
         * times of 0 ms and a missing GPU-Util series): every failure must be reported */
        if (!rc)
            fail_msg("%s: failing allocation %ld was swallowed: the operation reported success",
                     name, n);
        failures++;
    }
    printf("%s: %ld allocations failed one at a time: %ld clean errors, no crash, no leak\n", name,
           n - 1, failures);
}

static void test_run(void **state)
{
    (void)state;
    fail_each_allocation(run_default, "run (default scenario)");
}

static void test_zoo(void **state)
{
    (void)state;
    fail_each_allocation(run_zoo, "run (resnet18 from the zoo)");
}

static void test_import(void **state)
{
    (void)state;
    fail_each_allocation(import_kineto, "import kineto + read back");
}

static void test_sweep(void **state)
{
    (void)state;
    fail_each_allocation(sweep, "sweep (2 points)");
}

int main(void)
{
    live = __real_calloc(LIVE_SLOTS, sizeof *live);
    if (!live) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run),
        cmocka_unit_test(test_import),
        cmocka_unit_test(test_zoo),
        cmocka_unit_test(test_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
