/* bench_compare.c — epochsim beside two references, in one invocation on one machine: the default
 * epoch of bench_epoch (epoch_scenario.h); a bare C binary heap doing as many hold operations
 * (pop the earliest, push it again later) as the epoch has events, the floor of an event loop
 * that does no work; and pipeline_heapq.py, the same pipeline in plain Python on heapq, the model a
 * user would write. Wall and CPU time are both printed: the CPU time is the one to compare on a
 * loaded machine. Not a test (it asserts nothing and takes a minute).
 * Usage: bench_compare [REPEATS [PYTHON_SAMPLES]] (defaults 3 and 128,000). */
#include "bench_machine.h"
#include "epoch_scenario.h"
#include "sim/core/heap.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HELD 64 /* events held in the bare heap: the order of the epoch's queue */

typedef struct timing {
    uint64_t events;
    double wall_s, cpu_s; /* the best of the repeats */
} timing;

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void keep_best(timing *t, double wall0, double cpu0)
{
    double wall = clock_s(CLOCK_MONOTONIC) - wall0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    if (t->wall_s == 0 || wall < t->wall_s) t->wall_s = wall;
    if (t->cpu_s == 0 || cpu < t->cpu_s) t->cpu_s = cpu;
}

static int time_epoch(int repeats, timing *t, double *simulated_s)
{
    sim_err err;
    sim_scenario sc;
    if (bench_epoch_scenario(&sc, &err)) return fprintf(stderr, "%s\n", err.msg), -1;
    for (int r = 0; r < repeats; r++) {
        sim_result res;
        double wall0 = clock_s(CLOCK_MONOTONIC), cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        if (sim_run(&sc, &res, &err)) return fprintf(stderr, "%s\n", err.msg), -1;
        keep_best(t, wall0, cpu0);
        t->events = res.events;
        *simulated_s = res.mean.time_s;
        sim_result_free(&res);
    }
    sim_scenario_free(&sc);
    return 0;
}

typedef struct held {
    int64_t t_ns;
    uint64_t seq;
} held;

static int held_before(const held *a, const held *b)
{
    return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->seq < b->seq);
}

SIM_HEAP_DEFINE(heap, held, held_before)

/* The hold model: pop the earliest of HELD events and push it again 1 to 1024 ns later (a
 * xorshift draws the delay), n times, with the engine's heap code (sim/core/heap.h) and nothing
 * else. Returns the last time, so that the work cannot be left out. */
static int64_t hold(uint64_t n)
{
    held h[HELD];
    size_t m = 0;
    uint64_t x = 88172645463325252u, seq = 0;
    for (int i = 0; i < HELD; i++)
        heap_push(h, &m, (held){i, seq++});
    for (uint64_t k = 0; k < n; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        held top = heap_pop(h, &m);
        heap_push(h, &m, (held){top.t_ns + 1 + (int64_t)(x & 1023), seq++});
    }
    return h[0].t_ns;
}

static void time_hold(int repeats, uint64_t n, timing *t)
{
    t->events = n;
    for (int r = 0; r < repeats; r++) {
        double wall0 = clock_s(CLOCK_MONOTONIC), cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        volatile int64_t last = hold(n);
        (void)last;
        keep_best(t, wall0, cpu0);
    }
}

/* Runs the Python model once; its own timer excludes the interpreter's start. */
static int time_python(long samples, timing *t, double *simulated_s)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 '%s/pipeline_heapq.py' %ld", EPOCHSIM_BENCH_DIR, samples);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    long got = 0, steps = 0;
    int n =
        fscanf(p, "samples=%ld steps=%ld events=%" SCNu64 " wall_s=%lf cpu_s=%lf simulated_s=%lf",
               &got, &steps, &t->events, &t->wall_s, &t->cpu_s, simulated_s);
    int rc = pclose(p);
    return n == 6 && rc == 0 ? 0 : -1;
}

static void print_row(const char *name, const timing *t)
{
    printf("%-44s %11" PRIu64 " %8.3f %8.3f %10.2f\n", name, t->events, t->wall_s, t->cpu_s,
           (double)t->events / t->cpu_s / 1e6);
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 3;
    long py_samples = argc > 2 ? atol(argv[2]) : 128000;
    if (repeats < 1 || py_samples < 256 || py_samples > BENCH_EPOCH_SAMPLES)
        return fprintf(stderr, "usage: bench_compare [REPEATS [PYTHON_SAMPLES <= %d]]\n",
                       BENCH_EPOCH_SAMPLES),
               2;
    bench_print_machine();
    timing ep = {0}, bare = {0}, py = {0};
    double ep_sim_s = 0, py_sim_s = 0;
    if (time_epoch(repeats, &ep, &ep_sim_s)) return 1;
    time_hold(repeats, ep.events, &bare);
    if (time_python(py_samples, &py, &py_sim_s))
        return fprintf(stderr, "bench_compare: python3 pipeline_heapq.py failed\n"), 1;
    printf("%-44s %11s %8s %8s %10s\n", "", "events", "wall s", "CPU s", "M ev/CPU s");
    print_row("epochsim: default epoch (best of repeats)", &ep);
    print_row("bare C binary heap, 64 held, same holds", &bare);
    char name[64];
    snprintf(name, sizeof name, "python3 heapq model, %ld samples", py_samples);
    print_row(name, &py);
    double scale = (double)BENCH_EPOCH_SAMPLES / (double)py_samples;
    printf("epoch simulated: epochsim %.1f s, python model %.1f s (x%.2f to the whole epoch)\n",
           ep_sim_s, py_sim_s * scale, scale);
    printf("epochsim CPU per event: %.1f x the bare heap's per hold\n",
           (ep.cpu_s / (double)ep.events) / (bare.cpu_s / (double)bare.events));
    printf("python model, whole epoch at its measured speed: %.1f CPU s = %.0f x epochsim's; "
           "per event %.0f x\n",
           py.cpu_s * scale, py.cpu_s * scale / ep.cpu_s,
           (py.cpu_s / (double)py.events) / (ep.cpu_s / (double)ep.events));
    return 0;
}
