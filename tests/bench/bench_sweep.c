/* bench_sweep.c — speed of a 1,000-point sweep of a 200-step job (training.max_steps=200) of the
 * default synthetic ResNet-50-like workload: 10 batch sizes x 10 worker counts x 10 decode
 * variations, on the test catalog (round-number devices, so the figure does not move with catalog
 * edits). Rows go to /dev/null. Prints points/s, events/s and wall time.
 * Usage: bench_sweep [THREADS] [FORMAT csv|jsonl] [sampled] (from the build folder); `sampled`
 * runs every point in the sampled mode (run.sampled_pct=0.5, docs/sampled.md). */
#include "sim/app/sweep_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    sim_sweep_format format =
        argc > 2 && !strcmp(argv[2], "jsonl") ? SIM_SWEEP_JSONL : SIM_SWEEP_CSV;
    static const char *const sets[] = {
        "system.gpu=test-gpu",
        "system.cpu=test-cpu-8c",
        "system.storage=test-nvme",
        "training.max_steps=200",
    };
    static const char *const axes[] = {
        "loader.batch_size=16,32,48,64,96,128,160,192,224,256",
        "loader.num_workers=0,1,2,3,4,6,8,10,12,16",
        "dataset.decode_cv=0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9",
    };
    bool sampled = argc > 3 && !strcmp(argv[3], "sampled");
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err err;
    sim_err_clear(&err);
    sim_experiment_defaults(&x);
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (cfg_experiment_apply(sets[i], &x, &set, &err))
            return fprintf(stderr, "%s\n", err.msg), 1;
    if (sampled && cfg_experiment_apply("run.sampled_pct=0.5", &x, &set, &err))
        return fprintf(stderr, "%s\n", err.msg), 1;
    sim_sweep_spec spec;
    sim_sweep_spec_init(&spec);
    for (size_t i = 0; i < sizeof axes / sizeof axes[0]; i++)
        if (sim_sweep_spec_add(&spec, axes[i], 0, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    sim_sweep_opts o = {.out_path = "/dev/null",
                        .format = format,
                        .threads = threads,
                        .replications = 1,
                        .force = true,
                        .catalog_dir = EPOCHSIM_BENCH_CATALOG};
    sim_sweep_stats st;
    if (sim_sweep_run(&spec, &x, &set, &o, &st, &err)) {
        sim_err_print(&err, stderr);
        return 1;
    }
    printf("%s%llu points (%llu failed) on %d thread%s: wall %.3f s, %.0f points/s, "
           "%.2f M events/s (%llu events)\n",
           sampled ? "sampled: " : "", (unsigned long long)st.written,
           (unsigned long long)st.failed, threads, threads == 1 ? "" : "s", st.wall_s,
           (double)st.written / st.wall_s, (double)st.events / st.wall_s / 1e6,
           (unsigned long long)st.events);
    sim_sweep_spec_free(&spec);
    return st.failed ? 1 : 0;
}
