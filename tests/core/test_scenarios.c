/* test_scenarios.c — whole runs against closed-form answers, on the made-up devices of
 * tests/data/catalog (round numbers: 8 cores / 16 threads at reference speed, SMT gain 0.25,
 * memcpy 10 GB/s; NVMe 50 us + 5 GB/s; HDD 8 ms + 200 MB/s, one request at a time; PCIe gen4
 * pinned 24 GB/s, pageable 12 GB/s). Each tolerance is written beside its check with the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/setup/scenario.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/tests/data/catalog"

/* Runs the defaults, then a small deterministic base, then the test's own settings. */
static void run(const char *const *sets, sim_scenario *sc, sim_result *res)
{
    static const char *const base[] = {
        "system.gpu=test-gpu",         "system.cpu=test-cpu-8c",
        "system.storage=test-nvme",    "system.host_memory_gb=64",
        "dataset.samples=2560",        "dataset.sample_bytes=1000",
        "dataset.decode_us=10",        "dataset.decode_cv=0",
        "dataset.input_bytes=1000",    "loader.batch_size=64",
        "loader.worker_start_ms=0",    "workload.kernels_per_step=10",
        "workload.kernel_us=1000",     "workload.dispatch_us=1",
        "workload.step_overhead_us=0", NULL,
    };
    sim_experiment x;
    cfg_experiment_set set = {0};
    sim_err err;
    sim_err_clear(&err);
    sim_experiment_defaults(&x);
    for (const char *const *s = base; *s; s++)
        assert_int_equal(cfg_experiment_apply(*s, &x, &set, &err), 0);
    for (const char *const *s = sets; s && *s; s++) {
        if (cfg_experiment_apply(*s, &x, &set, &err)) fail_msg("%s: %s", *s, err.msg);
    }
    if (sim_scenario_build(&x, &set, CATALOG, sc, &err)) fail_msg("build: %s", err.msg);
    if (sim_run(sc, res, &err)) fail_msg("run: %s", err.msg);
    /* Invariants of every run: GPU-Util in [0, 100] and busy + idle causes = wall time, where
     * busy is the compute stream's kernel time (GPU-Util less the NCCL kernels that ran while
     * the compute stream idled, which the stalls count). */
    for (int i = 0; i < res->n_epochs; i++) {
        const sim_epoch_result *e = &res->epochs[i];
        double sum = e->gpu_util_pct - e->comm_kernel_pct;
        for (int k = 0; k < SIM_STALL_COUNT; k++)
            sum += e->stall_pct[k];
        assert_true(e->gpu_util_pct >= 0 && e->gpu_util_pct <= 100);
        assert_true(fabs(sum - 100) < 1e-6);
        /* Every sample read and decoded once per epoch (the loader also asserts it per id): each
         * GPU's DistributedSampler shard of ceil(N / GPUs), or max_steps batches of it. */
        int64_t g = x.system.gpu_count;
        int64_t per_epoch = g * ((x.dataset.samples + g - 1) / g);
        if (x.training.max_steps) per_epoch = g * x.training.max_steps * x.loader.batch_size;
        assert_int_equal(e->samples, per_epoch);
        /* No epoch is shorter than the GPU's own work in it. */
        double gpu_s = (double)e->steps * sim_program_gpu_ns(&sc->program) / 1e9;
        assert_true(e->time_s >= gpu_s);
        /* Nor shorter than any other resource's total work: the PCIe link's copies (at the
         * pinned rate; pageable ones cost more), the device busy shares at most 100 %, and with
         * no decode variation the CPU's decode work over its largest capacity (cores + SMT gain
         * x extra threads, at the CPU's single-thread speed). */
        const sim_hardware *hw = &sc->hw;
        double h2d_s = (double)e->samples * x.dataset.input_bytes / (hw->link.pinned_gbps * 1e9);
        assert_true(e->time_s >= h2d_s);
        assert_true(e->storage_busy_pct <= 100 + 1e-9 && e->h2d_busy_pct <= 100 + 1e-9);
        if (x.dataset.decode_cv == 0) {
            double cores = hw->cpu.cores + hw->cpu.smt_gain * (hw->cpu.threads - hw->cpu.cores);
            double decode_s =
                (double)e->samples * x.dataset.decode_us * 1e-6 / (hw->cpu.single_thread * cores);
            assert_true(e->time_s >= decode_s);
        }
    }
}

static void near(double got, double want, double rel_tol, const char *what)
{
    if (fabs(got - want) > rel_tol * fabs(want))
        fail_msg("%s: got %.6g, want %.6g +- %.1f%%", what, got, want, rel_tol * 100);
}

static void test_scenario_gpu_bound(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_result r;
    run(NULL, &sc, &r);
    /* 40 steps x 10 kernels x 1 ms; the loader makes a batch in ~3.9 ms on 8 workers, so only
     * the first batch (~1 %) is waited for: 2 %. */
    near(r.mean.time_s, 0.400, 0.02, "epoch time");
    assert_true(r.mean.gpu_util_pct > 97);
    assert_int_equal(r.bottleneck, SIM_BN_GPU_COMPUTE);
    sim_result_free(&r);
    sim_scenario_free(&sc);
}

static void test_scenario_loader_bound_workers_within_cores(void **state)
{
    (void)state;
    static const char *const s[] = {"loader.num_workers=4",        "dataset.decode_us=10000",
                                    "dataset.samples=400",         "loader.batch_size=10",
                                    "workload.kernels_per_step=1", NULL};
    sim_scenario sc;
    sim_result r;
    run(s, &sc, &r);
    /* 4 workers on 8 free cores, 10 x (10 ms + 50.2 us) per batch: 40 batches in 10 rounds of
     * 100.5 ms, plus the last 1 ms kernel. 1 %: copies and dispatch are microseconds. */
    near(r.mean.time_s, 10 * 0.1005 + 0.001, 0.01, "epoch time");
    near(r.mean.samples_per_s, 400 / 1.006, 0.01, "samples/s");
    assert_int_equal(r.bottleneck, SIM_BN_DATA_LOADING);
    sim_result_free(&r);
    sim_scenario_free(&sc);
}

static void test_scenario_loader_bound_workers_beyond_cores_get_smt_gain_only(void **state)
{
    (void)state;
    static const char *const w8[] = {"loader.num_workers=8",        "dataset.decode_us=10000",
                                     "dataset.samples=1600",        "loader.batch_size=10",
                                     "workload.kernels_per_step=1", NULL};
    static const char *const w16[] = {"loader.num_workers=16",       "dataset.decode_us=10000",
                                      "dataset.samples=1600",        "loader.batch_size=10",
                                      "workload.kernels_per_step=1", NULL};
    sim_scenario sc8, sc16;
    sim_result r8, r16;
    run(w8, &sc8, &r8);
    run(w16, &sc16, &r16);
    /* 8 workers: 8 cores at full speed, 800 samples/s. 16 workers: 16 threads on 8 cores give
     * 8 + 0.25 x 8 = 10 cores: 995 samples/s (10.05 ms per sample). 3 %: the main and pin
     * threads take a little CPU from the workers at batch hand-over. */
    near(r8.mean.samples_per_s, 8 / 0.01005, 0.03, "8 workers samples/s");
    near(r16.mean.samples_per_s, 10 / 0.01005, 0.03, "16 workers samples/s");
    near(r16.mean.samples_per_s / r8.mean.samples_per_s, 1.25, 0.03, "SMT speed-up");
    assert_true(r16.mean.cpu_util_pct > 95);
    sim_result_free(&r8);
    sim_result_free(&r16);
    sim_scenario_free(&sc8);
    sim_scenario_free(&sc16);
}

static void test_scenario_num_workers_zero_is_serial(void **state)
{
    (void)state;
    static const char *const s[] = {"loader.num_workers=0",
                                    "dataset.decode_us=2000",
                                    "loader.batch_size=10",
                                    "dataset.samples=400",
                                    "workload.kernels_per_step=1",
                                    "workload.kernel_us=5000",
                                    NULL};
    sim_scenario sc;
    sim_result r;
    run(s, &sc, &r);
    /* Per step, one after the other on the main thread: 10 x (read 50.2 us + decode 2 ms),
     * collate and pin 1 us each, copy dispatch 1 us, kernel dispatch 1 us, kernel 5 ms, sync.
     * 0.5 %: only the 42 ns copies are left out. */
    double step = 10 * (50.2e-6 + 2e-3) + 1e-6 + 1e-6 + 1e-6 + 1e-6 + 5e-3;
    near(r.mean.time_s, 40 * step, 0.005, "epoch time");
    near(r.mean.gpu_util_pct, 100 * 5e-3 / step, 0.01, "GPU-Util");
    /* The main thread works all but the kernel's 5 ms, and the GPU waits on its loading: the
     * verdict names the main process, not workers. 1 %: as above. */
    near(r.mean.main_busy_pct, 100 * (step - 5e-3) / step, 0.01, "main thread busy");
    near(r.mean.stall_pct[SIM_STALL_MAIN], 100 * 10 * (50.2e-6 + 2e-3) / step, 0.01,
         "main-thread stall");
    assert_int_equal(r.n_workers, 0);
    assert_int_equal(r.bottleneck, SIM_BN_MAIN_THREAD);
    assert_null(strstr(r.verdict, "DataLoader worker"));
    sim_result_free(&r);
    sim_scenario_free(&sc);
}

static void test_scenario_launch_bound(void **state)
{
    (void)state;
    static const char *const s[] = {"workload.kernels_per_step=1000", "workload.kernel_us=10",
                                    "workload.dispatch_us=20", "dataset.samples=1280", NULL};
    sim_scenario sc;
    sim_result r;
    run(s, &sc, &r);
    /* Dispatch (20 us) outpaces the kernels (10 us): GPU-Util = kernel_us / dispatch_us = 50 %.
     * 3 %: the first batch and per-step copy add a little idle time. */
    near(r.mean.gpu_util_pct, 50, 0.03, "GPU-Util");
    assert_int_equal(r.bottleneck, SIM_BN_CPU_DISPATCH);
    /* CUDA graphs replace the 1000 dispatches by one launch: the GPU becomes the limit. */
    static const char *const g[] = {"workload.kernels_per_step=1000", "workload.kernel_us=10",
                                    "workload.dispatch_us=20",        "dataset.samples=1280",
                                    "training.cuda_graphs=true",      NULL};
    sim_scenario scg;
    sim_result rg;
    run(g, &scg, &rg);
    assert_true(rg.mean.gpu_util_pct > 95);
    assert_true(rg.mean.time_s < 0.55 * r.mean.time_s);
    sim_result_free(&rg);
    sim_scenario_free(&scg);
    sim_result_free(&r);
    sim_scenario_free(&sc);
}

static void test_scenario_storage_bound_hdd_and_page_cache(void **state)
{
    (void)state;
    static const char *const s[] = {"system.storage=test-hdd", "dataset.sample_bytes=110000",
                                    "dataset.decode_us=100",   "dataset.samples=400",
                                    "loader.batch_size=10",    "workload.kernels_per_step=1",
                                    "training.epochs=2",       NULL};
    sim_scenario sc;
    sim_result r;
    run(s, &sc, &r);
    /* The HDD serves one read at a time: 400 x (8 ms + 110 kB / 200 MB/s) = 3.42 s. 1 %: the
     * last batch's decode and kernel follow the last read. */
    near(r.epochs[0].time_s, 400 * (8e-3 + 0.55e-3), 0.01, "epoch 1 time");
    assert_true(r.epochs[0].storage_busy_pct > 99);
    assert_true(r.epochs[0].cache_hit_pct == 0);
    /* Epoch 2: the 44 MB dataset is in the page cache; reads are memcpys. */
    assert_true(r.epochs[1].cache_hit_pct == 100);
    assert_true(r.epochs[1].time_s < 0.05 * r.epochs[0].time_s);
    sim_result_free(&r);
    sim_scenario_free(&sc);

    static const char *const nocache[] = {
        "system.storage=test-hdd", "dataset.sample_bytes=110000", "dataset.decode_us=100",
        "dataset.samples=400",     "loader.batch_size=10",        "workload.kernels_per_step=1",
        "training.epochs=2",       "system.page_cache_gb=0",      NULL};
    run(nocache, &sc, &r);
    assert_int_equal(r.bottleneck, SIM_BN_STORAGE);
    near(r.epochs[1].time_s, r.epochs[0].time_s, 0.01, "epoch 2 without a page cache");
    sim_result_free(&r);
    sim_scenario_free(&sc);
}

/* A dataset in memory (a TensorDataset) is never read: on the same HDD that makes the run above
 * storage-bound, every epoch is only the workers' CPU work, samples x decode / workers. */
static void test_scenario_in_memory_dataset_skips_storage(void **state)
{
    (void)state;
    static const char *const s[] = {"system.storage=test-hdd",     "dataset.location=memory",
                                    "dataset.sample_bytes=110000", "dataset.decode_us=10000",
                                    "dataset.samples=400",         "loader.batch_size=10",
                                    "loader.num_workers=4",        "workload.kernels_per_step=1",
                                    "training.epochs=2",           NULL};
    sim_scenario sc;
    sim_result r;
    run(s, &sc, &r);
    /* 400 samples x 10 ms / 4 workers on 8 free cores = 1 s, plus the last 1 ms kernel; a read
     * per sample would add 8.55 ms each on this HDD (3.42 s). 1 %: collate and copies are
     * microseconds. */
    for (int i = 0; i < 2; i++) {
        near(r.epochs[i].time_s, 400 * 10e-3 / 4 + 0.001, 0.01, "epoch time in memory");
        assert_true(r.epochs[i].storage_busy_pct == 0); /* not a single read, not even a byte */
        assert_true(r.epochs[i].cache_hit_pct == 0);    /* nor through the page cache */
    }
    assert_int_equal(r.bottleneck, SIM_BN_DATA_LOADING);
    sim_result_free(&r);
    sim_scenario_free(&sc);
}

static void test_scenario_pageable_is_slower_than_pinned(void **state)
{
    (void)state;
    /* Two workers: their collates and the pin thread's copy (3 x 10 GB/s) stay below the host
     * memory bus (100 GB/s x 0.75 / 2 = 37.5 GB/s of copies), so each copy runs at one thread's
     * memcpy rate (the bus-bound case is its own test). */
    static const char *const pinned[] = {"dataset.input_bytes=1000000", "loader.num_workers=2",
                                         NULL};
    static const char *const pageable[] = {"dataset.input_bytes=1000000", "loader.num_workers=2",
                                           "loader.pin_memory=false", NULL};
    sim_scenario s1, s2;
    sim_result r1, r2;
    run(pinned, &s1, &r1);
    run(pageable, &s2, &r2);
    /* 64 MB per batch. Pinned: copy 64e6 / 24 GB/s = 2.67 ms, then 10 ms of kernels, in stream
     * order; the pin thread's 6.4 ms memcpy overlaps. Pageable: 5.33 ms through the staging
     * buffer, blocking the main thread, then 10 ms. Before the first step the pipeline fills:
     * 64 reads and decodes (64 x 60.2 us), the collate memcpy (6.4 ms) and, pinned, the pin
     * memcpy (6.4 ms). 1 %: dispatch and copy-issue microseconds. */
    double fill = 64 * 60.2e-6 + 64e6 / 10e9;
    near(r1.mean.time_s, fill + 64e6 / 10e9 + 40 * (64e6 / 24e9 + 0.010), 0.01, "pinned epoch");
    near(r2.mean.time_s, fill + 40 * (64e6 / 12e9 + 0.010), 0.01, "pageable epoch");
    assert_true(r2.mean.stall_pct[SIM_STALL_H2D] > r1.mean.stall_pct[SIM_STALL_H2D]);
    sim_result_free(&r1);
    sim_result_free(&r2);
    sim_scenario_free(&s1);
    sim_scenario_free(&s2);
}

static void test_scenario_host_memory_bus_bound(void **state)
{
    (void)state;
    /* 8 workers collate 64 MB batches and the pin thread copies each again. With the copy
     * efficiency at 0.2 the bus gives 100 GB/s x 0.2 / 2 = 10 GB/s of copies for all threads
     * together; each batch moves 128 MB through it, so the loader delivers one every 12.8 ms
     * while the GPU needs 2.67 ms (H2D) + 0.1 ms (kernels): the epoch is 40 x 12.8 ms plus the
     * last batch's copy and kernels. 3 %: the first round's reads and decodes (64 x 10 us per
     * worker, partly hidden behind the bus). */
    static const char *const narrow[] = {"dataset.input_bytes=1000000", "workload.kernel_us=10",
                                         "system.mem_copy_efficiency=0.2", NULL};
    sim_scenario sc;
    sim_result r;
    run(narrow, &sc, &r);
    near(r.mean.time_s, 40 * 128e6 / 10e9 + 64e6 / 24e9 + 10 * 10e-6, 0.03, "bus-bound epoch");
    /* At 0.75 the bus (37.5 GB/s) no longer binds: the single pin thread does, at its 10 GB/s
     * memcpy rate (6.4 ms a batch), so the epoch is at least 40 x 6.4 ms and far below the
     * bus-bound one. */
    static const char *const wide[] = {"dataset.input_bytes=1000000", "workload.kernel_us=10",
                                       NULL};
    sim_scenario sc2;
    sim_result r2;
    run(wide, &sc2, &r2);
    assert_true(r2.mean.time_s >= 40 * 64e6 / 10e9);
    assert_true(r2.mean.time_s < 0.6 * r.mean.time_s);
    sim_result_free(&r);
    sim_result_free(&r2);
    sim_scenario_free(&sc);
    sim_scenario_free(&sc2);
}

static void test_scenario_same_seed_same_result_other_seed_differs(void **state)
{
    (void)state;
    static const char *const s[] = {"dataset.decode_cv=0.5", "dataset.decode_us=2000",
                                    "loader.num_workers=4", "training.epochs=2", NULL};
    static const char *const s2[] = {"dataset.decode_cv=0.5",
                                     "dataset.decode_us=2000",
                                     "loader.num_workers=4",
                                     "training.epochs=2",
                                     "seed=7",
                                     NULL};
    sim_scenario a, b, c;
    sim_result ra, rb, rc;
    run(s, &a, &ra);
    run(s, &b, &rb);
    run(s2, &c, &rc);
    assert_memory_equal(ra.epochs, rb.epochs, sizeof *ra.epochs * (size_t)ra.n_epochs);
    assert_int_equal(ra.n_util, rb.n_util);
    assert_memory_equal(ra.util_series, rb.util_series, (size_t)ra.n_util);
    assert_int_equal(ra.events, rb.events);
    assert_true(ra.mean.time_s != rc.mean.time_s);
    near(rc.mean.time_s, ra.mean.time_s, 0.05, "another seed, same workload");
    sim_result_free(&ra);
    sim_result_free(&rb);
    sim_result_free(&rc);
    sim_scenario_free(&a);
    sim_scenario_free(&b);
    sim_scenario_free(&c);
}

static void test_scenario_data_parallel_gpus_share_the_host(void **state)
{
    (void)state;
    static const char *const one[] = {"loader.num_workers=4",        "dataset.decode_us=10000",
                                      "dataset.samples=1600",        "loader.batch_size=10",
                                      "workload.kernels_per_step=1", NULL};
    static const char *const four[] = {"loader.num_workers=4",
                                       "dataset.decode_us=10000",
                                       "dataset.samples=1600",
                                       "loader.batch_size=10",
                                       "workload.kernels_per_step=1",
                                       "system.gpu_count=4",
                                       NULL};
    sim_scenario s1, s4;
    sim_result r1, r4;
    run(one, &s1, &r1);
    run(four, &s4, &r4);
    /* Four GPUs bring 16 workers onto the same 8 cores / 16 threads: the host gives 10 cores,
     * not 16, so four GPUs are 2.5x faster than one (4 workers, 4 cores), not 4x. 400 samples
     * per GPU make 10 full rounds of 4 batches, so no round runs with fewer workers. 1 %: the
     * main and pin threads' hand-over work. */
    near(r4.mean.samples_per_s / r1.mean.samples_per_s, 2.5, 0.01, "4-GPU speed-up");
    /* Each GPU's loader has its own 4 workers, and each of the 16 holds a batch from its start
     * to its last one: busy > 97 % (what is left: the last batch's kernel and hand-over). */
    assert_int_equal(r4.n_worker_gpus, 4);
    assert_int_equal(r4.n_workers, 4);
    for (int i = 0; i < 16; i++) {
        assert_true(r4.worker_busy_pct[i] > 97);
    }
    sim_result_free(&r1);
    sim_result_free(&r4);
    sim_scenario_free(&s1);
    sim_scenario_free(&s4);
}

/* Several GPUs over several epochs, each epoch cut by max_steps: every rank ends an epoch on its
 * own and starts the next at once, so each loader's counts are taken at its own rank's epoch end
 * (a run once summed them when the last rank ended, reading the faster ranks' next epoch, and
 * stopped on its each-sample-once check). Epoch 1 reads 2 x 5 x 64 samples from the disk; epoch 2
 * draws another 320 of each 1280-sample shard: about a quarter are in the page cache. */
static void test_scenario_gpus_end_epochs_apart(void **state)
{
    (void)state;
    static const char *const sets[] = {"system.gpu_count=2",    "training.epochs=2",
                                       "training.max_steps=5",  "loader.num_workers=2",
                                       "dataset.decode_cv=0.5", NULL};
    sim_scenario sc;
    sim_result r;
    run(sets, &sc, &r);
    assert_int_equal(r.n_epochs, 2);
    assert_int_equal(r.epochs[0].samples, 640);
    assert_int_equal(r.epochs[1].samples, 640);
    assert_true(r.epochs[0].cache_hit_pct == 0);
    /* 320 of 1280 cached per shard: 25 % expected, +-10 points for a 320-sample draw */
    near(r.epochs[1].cache_hit_pct, 25, 0.4, "epoch-2 cache hits");
    sim_result_free(&r);
    sim_scenario_free(&sc);
}

/* E[max(c, X)] for X lognormal with mean 1 and coefficient of variation cv. */
static double mean_max_lognormal(double c, double cv)
{
    double s = sqrt(log1p(cv * cv)), z = (log(c) + s * s / 2) / s;
    return c * gsl_cdf_ugaussian_P(z) + gsl_cdf_ugaussian_P(s - z);
}

/* prefetch_factor x num_workers batches in flight, as PyTorch's _MultiProcessingDataLoaderIter
 * keeps them (it primes that many indices and sends one more per batch it yields). One worker,
 * one sample per batch, decode times lognormal (mean 10 ms, cv 1) against a 10 ms step with a
 * sync per step. Factor 1: the worker starts batch i + 1 only when batch i is taken, so each
 * step lasts max(step, load): E[max] is closed form. Deeper queues absorb the bursts: factor 2
 * and 4 are faster, and none beats the mean load or the step time. */
static void test_scenario_prefetch_absorbs_bursty_decode(void **state)
{
    (void)state;
    double t[3];
    const char *factors[3] = {"loader.prefetch_factor=1", "loader.prefetch_factor=2",
                              "loader.prefetch_factor=4"};
    for (int i = 0; i < 3; i++) {
        const char *s[] = {"loader.num_workers=1",
                           "loader.batch_size=1",
                           "dataset.samples=2000",
                           "dataset.decode_us=10000",
                           "dataset.decode_cv=1",
                           "workload.kernels_per_step=1",
                           "workload.kernel_us=10000",
                           "training.sync_every_step=true",
                           factors[i],
                           NULL};
        sim_scenario sc;
        sim_result r;
        run(s, &sc, &r);
        t[i] = r.mean.time_s;
        sim_result_free(&r);
        sim_scenario_free(&sc);
    }
    /* Load = read 50.2 us + collate and pin 0.2 us + 10 ms x X; step = 10 ms kernel + 2 us of
     * copy and op dispatch. 3 %: 2000 draws of X give E[max] to about 1 % (one standard
     * error), and the first batch's load is not overlapped. */
    double load_fixed = 50.4e-6, step = 10.002e-3;
    double per_step = load_fixed + 10e-3 * mean_max_lognormal((step - load_fixed) / 10e-3, 1.0);
    near(t[0], 2000 * per_step, 0.03, "prefetch 1");
    assert_true(t[1] < 0.97 * t[0]);
    assert_true(t[2] < t[1]);
    assert_true(t[2] > 2000 * step);
}

/* Each verdict category, in the one row that must name it and in every other row that must not:
 * the rows are the scenarios above (and a zoo model whose gradients cross PCIe), one per cause,
 * plus the one where GPU-Util is ~85 % with copies the largest idle cause (a GPU-bound run, not
 * a copy-bound one). */
static void test_scenario_verdict_names_the_largest_cause(void **state)
{
    (void)state;
    static const struct {
        sim_bottleneck want;
        const char *sets[9];
    } rows[] = {
        {SIM_BN_GPU_COMPUTE, {NULL}},
        /* pinned 2.67 ms copy + 10 x 1.5 ms kernels: GPU-Util 15 / 17.67 = 85 % */
        {SIM_BN_GPU_COMPUTE,
         {"dataset.input_bytes=1000000", "loader.num_workers=2", "workload.kernel_us=1500"}},
        {SIM_BN_STORAGE,
         {"system.storage=test-hdd", "dataset.sample_bytes=110000", "dataset.decode_us=100",
          "dataset.samples=400", "loader.batch_size=10", "workload.kernels_per_step=1",
          "system.page_cache_gb=0"}},
        {SIM_BN_DATA_LOADING,
         {"loader.num_workers=4", "dataset.decode_us=10000", "dataset.samples=400",
          "loader.batch_size=10", "workload.kernels_per_step=1"}},
        {SIM_BN_MAIN_THREAD,
         {"loader.num_workers=0", "dataset.decode_us=2000", "loader.batch_size=10",
          "dataset.samples=400", "workload.kernels_per_step=1", "workload.kernel_us=5000"}},
        /* pageable 5.33 ms blocking copy + 10 ms kernels: 35 % on copies */
        {SIM_BN_H2D,
         {"dataset.input_bytes=1000000", "loader.num_workers=2", "loader.pin_memory=false"}},
        {SIM_BN_CPU_DISPATCH,
         {"workload.kernels_per_step=1000", "workload.kernel_us=10", "workload.dispatch_us=20",
          "dataset.samples=1280"}},
        /* 335 M fp32 gradients (1.3 GB) in a 4-GPU ring over 24 GB/s PCIe: ~80 ms a step */
        {SIM_BN_COMMUNICATION,
         {"workload.model=bert-large", "system.gpu_count=4", "loader.batch_size=8",
          "training.max_steps=20"}},
    };
    bool seen[SIM_BN_COUNT] = {false};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        sim_scenario sc;
        sim_result r;
        run(rows[i].sets, &sc, &r);
        if (r.bottleneck != rows[i].want)
            fail_msg("row %zu: got %s, want %s (%s)", i, sim_bottleneck_name(r.bottleneck),
                     sim_bottleneck_name(rows[i].want), r.verdict);
        seen[r.bottleneck] = true;
        if (i == 1) { /* GPU-bound, naming the copies as the largest idle cause */
            assert_true(r.mean.gpu_util_pct > 80 && r.mean.gpu_util_pct < 90);
            assert_non_null(strstr(r.verdict, "largest idle cause, h2d"));
        }
        sim_result_free(&r);
        sim_scenario_free(&sc);
    }
    /* The contention categories need other jobs beside this one: tests/core/test_gpushare.c
     * has the runs that must name them (and these single runs, none of which does). */
    seen[SIM_BN_SHARED_GPU] = seen[SIM_BN_HOST_CPU] = true;
    for (int b = 0; b < SIM_BN_COUNT; b++)
        if (!seen[b]) fail_msg("no row names %s", sim_bottleneck_name((sim_bottleneck)b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenario_gpu_bound),
        cmocka_unit_test(test_scenario_loader_bound_workers_within_cores),
        cmocka_unit_test(test_scenario_loader_bound_workers_beyond_cores_get_smt_gain_only),
        cmocka_unit_test(test_scenario_num_workers_zero_is_serial),
        cmocka_unit_test(test_scenario_launch_bound),
        cmocka_unit_test(test_scenario_storage_bound_hdd_and_page_cache),
        cmocka_unit_test(test_scenario_in_memory_dataset_skips_storage),
        cmocka_unit_test(test_scenario_pageable_is_slower_than_pinned),
        cmocka_unit_test(test_scenario_host_memory_bus_bound),
        cmocka_unit_test(test_scenario_same_seed_same_result_other_seed_differs),
        cmocka_unit_test(test_scenario_data_parallel_gpus_share_the_host),
        cmocka_unit_test(test_scenario_gpus_end_epochs_apart),
        cmocka_unit_test(test_scenario_prefetch_absorbs_bursty_decode),
        cmocka_unit_test(test_scenario_verdict_names_the_largest_cause),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
