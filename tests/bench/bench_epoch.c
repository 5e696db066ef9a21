/* bench_epoch.c — speed of one full ImageNet-sized epoch (epoch_scenario.h). Prints events/s
 * and wall time. Usage: bench_epoch [REPEATS] (from the build folder; the source path is built in).
 */
#include "epoch_scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 3;
    sim_err err;
    sim_scenario sc;
    if (bench_epoch_scenario(&sc, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    double best = 1e30;
    for (int r = 0; r < repeats; r++) {
        sim_result res;
        double t0 = now_s();
        if (sim_run(&sc, &res, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
        double wall = now_s() - t0;
        if (wall < best) best = wall;
        printf("run %d: %llu events, %lld steps, wall %.3f s, %.2f M events/s "
               "(simulated epoch %.1f s, GPU-Util %.1f %%)\n",
               r + 1, (unsigned long long)res.events, (long long)res.steps, wall,
               (double)res.events / wall / 1e6, res.mean.time_s, res.mean.gpu_util_pct);
        sim_result_free(&res);
    }
    printf("best wall time: %.3f s\n", best);
    sim_scenario_free(&sc);
    return 0;
}
