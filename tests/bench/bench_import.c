/* bench_import.c — `epochsim import kineto` on a generated 1 GB trace: real trace 1 (ResNet-50,
 * tests/data/validation-traces) repeated COPIES times (default 30: 967 MB, 2.27 M events, 180
 * steps) by tests/traces/make_big_kineto.py into /tmp, then imported in this process. Prints the
 * machine, the JSON's MB/s by wall and by CPU time, the times, the peak resident set (getrusage
 * ru_maxrss; this process holds about 2 MiB before the import), the page faults and the wall
 * time of the parse and of the rest. The CPU time is the one to compare on a loaded machine. Not
 * a test: it asserts nothing, and generating the trace takes a minute or two (an existing
 * /tmp/epochsim-bench-import-COPIES.json is reused; --keep leaves it there for the next run).
 * Usage: bench_import [COPIES] [--keep] */
#include "bench_machine.h"
#include "traces/kineto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SRC EPOCHSIM_BENCH_DIR "/.."
#define TRACE1                                                                                     \
    SRC "/data/validation-traces/kineto/resnet50_num_workers_0/"                                   \
        "worker0.1623143089861.pt.trace.json.gz"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Generates the trace at path unless it is there; 0 or -1. */
static int make_trace(const char *path, int copies)
{
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size > 0) {
        printf("trace: %s (reused)\n", path);
        return 0;
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 %s/traces/make_big_kineto.py %s %s %d", SRC, TRACE1, path,
             copies);
    printf("trace: %s (generating %d copies of trace 1 ...)\n", path, copies);
    fflush(stdout);
    return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    int copies = 30, keep = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--keep"))
            keep = 1;
        else if ((copies = atoi(argv[i])) < 1)
            return fprintf(stderr, "usage: bench_import [COPIES] [--keep]\n"), 2;
    }
    bench_print_machine();
    char in[256], out[256];
    snprintf(in, sizeof in, "/tmp/epochsim-bench-import-%d.json", copies);
    snprintf(out, sizeof out, "/tmp/epochsim-bench-import-%ld.trace", (long)getpid());
    if (make_trace(in, copies)) return fprintf(stderr, "bench_import: no trace\n"), 1;
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    double wall0 = clock_s(CLOCK_MONOTONIC), cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    trc_kineto_summary sum;
    sim_err err;
    sim_err_clear(&err);
    int rc = trc_kineto_import(in, out, NULL, &sum, &err);
    double wall = clock_s(CLOCK_MONOTONIC) - wall0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    getrusage(RUSAGE_SELF, &r1);
    unlink(out);
    if (!keep) unlink(in);
    if (rc) return fprintf(stderr, "bench_import: %s\n", err.msg), 1;
    double mb = (double)sum.json_bytes / 1e6;
    printf("trace: %.1f MB of JSON, %lld events, %d steps kept\n", mb, (long long)sum.events,
           sum.steps_kept);
    printf("phases: parse %.2f s wall, linking and writing the steps %.2f s wall\n", sum.parse_s,
           sum.total_s - sum.parse_s);
    printf("import: wall %.2f s (%.1f MB/s), CPU %.2f s (%.1f MB/s; user %.2f, sys %.2f), "
           "peak RSS %.1f MiB, %ld page faults\n",
           wall, mb / wall, cpu, mb / cpu,
           (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) +
               (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1e6,
           (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
               (double)(r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6,
           (double)r1.ru_maxrss / 1024, r1.ru_minflt - r0.ru_minflt);
    trc_kineto_summary_free(&sum);
    return 0;
}
