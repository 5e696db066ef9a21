/* demo.c — the demo table and the two runs of a demo (see demo.h). Each row's bounds are the
 * lesson's claim, written with the reason for them; tests/app/test_demo.c simulates every row
 * and fails when a claim no longer holds. */
#include "sim/app/demo.h"

#include "sim/core/run.h"
#include "sim/setup/advice.h"
#include "sim/setup/config.h"
#include "sim/setup/jobs.h"
#include "sim/setup/scenario.h"

#include <stdio.h>
#include <string.h>

static const sim_demo demos[] = {
    {.name = "storage-bound",
     .lesson = "a 7200 rpm disk starves an A100; an NVMe SSD (and the page cache) feed it",
     .file = "hdd-bound.yaml",
     .after = "system.storage=nvme-gen4",
     .explain = "Every JPEG read from the disk costs a seek, so the workers wait on the disk, "
                "not the CPU; the SSD answers in microseconds and the GPU sets the pace again.",
     .min_gain = 5,
     .max_gain = 20,
     .bounds_why = "the HDD's ~100-200 reads/s against ~2,400 images/s the GPU takes; the second "
                   "epoch comes from the page cache on both, which keeps the gain below 20x"},
    {.name = "page-cache",
     .lesson = "the first epoch reads the disk, later ones come from the page cache in RAM",
     .file = "hdd-bound.yaml",
     .before = "training.epochs=1",
     .after = "training.epochs=3",
     .explain = "Linux keeps the files it read in free RAM: with 64 GB of RAM for 14 GB of "
                "JPEGs, epochs 2 and 3 never touch the disk, so the mean epoch gets shorter.",
     .min_gain = 2,
     .max_gain = 3,
     .bounds_why = "the mean of 3 epochs is (disk epoch + 2 cached epochs) / 3; the cached ones "
                   "run at the GPU's pace, so the gain approaches but never reaches 3x"},
    {.name = "decode-bound",
     .lesson = "too few DataLoader workers to decode JPEGs: more workers, until the GPU is busy",
     .file = "decode-bound.yaml",
     .after = "loader.num_workers=16",
     .explain = "Each worker decodes one image at a time; 4 of them deliver fewer images per "
                "second than the GPU trains on, 16 deliver more, so the GPU becomes the limit.",
     .min_gain = 1.3,
     .max_gain = 2.5,
     .bounds_why = "4 workers deliver ~960 images/s; with 16 the GPU's own rate (~1,400/s here) "
                   "caps the gain well below 4x"},
    {.name = "main-thread",
     .lesson = "num_workers=0: the main process decodes every batch itself, between steps",
     .file = "decode-bound.yaml",
     .before = "loader.num_workers=0",
     .after = "loader.num_workers=4",
     .explain = "With no workers the training loop stops to read and decode each batch, so "
                "loading and GPU work take turns; workers load in parallel with the GPU.",
     .min_gain = 3,
     .max_gain = 6,
     .bounds_why = "4 workers decode 4 batches at once and overlap the GPU's step: about 4x the "
                   "decode rate plus the step time the main thread no longer waits out"},
    {.name = "prefetch",
     .lesson = "bursty loading: a deeper prefetch queue absorbs slow samples (prefetch_factor)",
     .file = "prefetch-bursty.yaml",
     .after = "loader.prefetch_factor=4",
     .explain = "On average the workers keep up, but a slow clip stalls the step unless batches "
                "are already waiting; PyTorch keeps prefetch_factor x num_workers in flight.",
     .min_gain = 1.15,
     .max_gain = 1.63,
     .bounds_why = "loading and the 20 ms step balance on average, so queueing is what is lost; "
                   "no queue makes the run shorter than its steps (1.63x here)"},
    {.name = "launch-bound",
     .lesson = "small kernels on a big GPU wait for the CPU to launch them; CUDA graphs",
     .file = "launch-bound.yaml",
     .after = "training.cuda_graphs=true",
     .explain = "The main thread spends 20 us of CPU per kernel that runs 8 us on the GPU; a "
                "CUDA graph launches the whole step at once, until the loader becomes the limit.",
     .min_gain = 1.3,
     .max_gain = 3,
     .bounds_why = "GPU-Util ~33 % before; the graph removes the per-kernel launches but the "
                   "loader then caps the step (storage-bound after)"},
    {.name = "pinned-memory",
     .lesson = "host-to-device copies from pageable memory; pin_memory=True",
     .file = "pageable-copy.yaml",
     .after = "loader.pin_memory=true",
     .explain = "A copy from pageable memory is staged through a pinned bounce buffer by the "
                "driver; pinned batches go straight over PCIe by DMA.",
     .min_gain = 1.05,
     .max_gain = 2,
     .bounds_why = "the copy is most of the step; pinned runs at the link's rate, pageable below "
                   "it, and the copy still shares the stream with the kernels"},
    {.name = "amp",
     .lesson = "a GPU-bound job: mixed precision is what helps, not more workers",
     .file = "gpu-bound-fp32.yaml",
     .after = "workload.precision=amp_fp16",
     .explain = "Half-precision tensor cores run twice the TF32 rate and halve the activation "
                "traffic; in NCHW the batch norms do not speed up, so the gain is below 2x.",
     .min_gain = 1.2,
     .max_gain = 2,
     .bounds_why = "Lambda's NCHW ResNet-50 runs gain 1.48-1.58x from AMP over TF32 on A100s "
                   "(tests/data/published/lambda.csv)"},
    {.name = "oom",
     .lesson = "out of memory at a batch that is too large; activation checkpointing",
     .file = "oom-batch.yaml",
     .after = "workload.checkpointing=true",
     .explain = "Backward needs every block's activations; checkpointing keeps only each "
                "block's input and recomputes the rest, trading a third more compute for memory.",
     .bounds_why = "the claim is fits / does not fit, not a speed"},
    {.name = "grad-accum",
     .lesson = "gradient accumulation: the batch of 48 that did not fit, as 3 steps of 16",
     .file = "oom-batch.yaml",
     .after = "loader.batch_size=16 workload.accum_steps=3",
     .explain = "Three micro-batches of 16 add their gradients before one optimizer step: the "
                "same update as a batch of 48, with the activations of 16 in memory.",
     .bounds_why = "the claim is fits / does not fit, not a speed"},
    {.name = "s4-mig",
     .lesson = "seed S4: one job on a quarter of an RTX PRO 6000 (MIG 1g.24gb) vs the whole GPU",
     .file = "s4-mig-pro6000-whole.yaml",
     .after = "placement.mig=1g.24gb",
     .explain = "A MIG instance owns a quarter of the SMs, memory and bandwidth; one job runs "
                "slower on it, but four such jobs would run at once, each on its own slice "
                "(nvidia-smi shows no GPU-Util on MIG: read SM active).",
     .min_gain = 0.22,
     .max_gain = 0.35,
     .bounds_why = "the instance has 46 of 188 SMs (24.5 %) and a quarter of the bandwidth; "
                   "kernels that do not fill the whole GPU lose less (part-empty last waves, "
                   "NCHW batch norm's block per channel), so ~32 %, never above 35 %"},
    {.name = "s5-nvlink",
     .lesson = "seed S5: two A100 PCIe cards all-reduce over PCIe; an NVLink bridge",
     .file = "s5-nvlink-vs-pcie.yaml",
     .before = "system.gpu_count=2",
     .after = "system.nvlink=bridge system.nvlink_links=12",
     .explain = "DDP sums the gradients of both GPUs in 25 MiB buckets while backward still "
                "runs; the bridge moves them ~10x faster, but over PCIe too backward hides "
                "most of them: only the last buckets are exposed.",
     .min_gain = 1.02,
     .max_gain = 1.15,
     .bounds_why = "over PCIe the ~54 ms of all-reduces per step overlap a ~70 ms backward and "
                   "~6 % of the step stays exposed; the bridge saves about that part (the upper "
                   "bound leaves room for the exposed share to double)"},
    {.name = "s9-lanes",
     .lesson = "seed S9: four RTX 4090s on a 24-lane desktop CPU vs a 128-lane workstation",
     .file = "s9-lane-budget.yaml",
     .after = "system.name=workstation-4x4090",
     .explain = "A desktop CPU splits its lanes x8/x4/x4/x4, and GeForce cards have no P2P, so "
                "the gradient ring crawls through the narrowest slot; x16 for every card is 4x "
                "wider.",
     .min_gain = 1.4,
     .max_gain = 2.5,
     .bounds_why = "the ring's slowest hop is 4x wider, and the all-reduce is about half of the "
                   "desktop's step"},
    {.name = "s1-small-batch",
     .lesson = "seed S1: at batch 1024 a 7x-faster GPU gives the same epoch",
     .file = "s1-contrastive-3060ti-vs-pro6000.yaml",
     .after = "system.name=rtx-pro-6000-workstation",
     .explain = "At a small batch the loader and the per-step launches set the pace on both "
                "boxes, so the faster GPU waits.",
     .min_gain = 0.8,
     .max_gain = 1.25,
     .bounds_why = "the seed measured 0.8-0.9 s per epoch on both boxes"},
    {.name = "s1-large-batch",
     .lesson = "seed S1: at batch 10240 the in-batch loss's b x b work lets the bigger GPU show",
     .file = "s1-contrastive-3060ti-vs-pro6000.yaml",
     .before = "loader.batch_size=10240",
     .after = "system.name=rtx-pro-6000-workstation",
     .explain = "An in-batch loss compares every pair of the batch: b x b work that grows 100x "
                "from batch 1024 to 10240 and keeps the GPU busy, so its speed counts.",
     .min_gain = 1.15,
     .max_gain = 2,
     .bounds_why = "the seed measured 2.2 s vs 1.55 s (1.42x); the model gives ~1.5x "
                   "(docs/kernel-cost.md)"},
    {.name = "s2-cpu-single-thread",
     .lesson = "seed S2: data in RAM, an RTX A5000 box (before) loses to an A10 box (after) "
               "whose CPU has the faster single core",
     .file = "s2-cpu-single-thread.yaml",
     .after = "system.name=aws-g5-2xlarge",
     .explain = "The data is already in RAM and each step is small, so the one Python main "
                "thread that launches every kernel sets the pace on both boxes (busy ~95 %); the "
                "A10 box's core is faster, and the A5000's faster GPU only waits longer. (The two "
                "CPUs are an example: the seed names neither.)",
     .min_gain = 1.25,
     .max_gain = 1.4,
     .bounds_why = "the main thread is ~95 % busy on both boxes, so the epoch follows its "
                   "single-core speed: 2,004 / 1,489 = 1.35 in PassMark (EPYC 7R32 / Xeon "
                   "E5-2660 v2); the seed measured 1.8-2x on CPUs it does not name"},
    {.name = "batch-size",
     .lesson = "a batch-size study: throughput and GPU-Util against the batch, until it stops "
               "paying and then does not fit",
     .file = "batch-size-sweep.yaml",
     .vary = "loader.batch_size=8,16,32,64,128,256,512,1024,2048",
     .explain = "A small batch's kernels are shorter than the CPU's work to launch them, so the "
                "GPU waits; once they are longer the GPU is busy and a larger batch only fills "
                "its kernels a little better, while the activations grow until they do not fit.",
     .min_gain = 3.5,
     .max_gain = 7,
     .bounds_why = "launch-bound at batch 8 (GPU-Util ~30 %, ~280 images/s: 34 us of CPU per "
                   "kernel against 11 us of GPU) against the GPU's own rate at the largest batch "
                   "that fits (~1,460/s): over 3x for the launches, the rest for fuller kernels"},
    {.name = "s6-cpu",
     .lesson = "seed S6: the same RTX 4090 behind a Xeon W-3335 and a Core i9-13900K",
     .file = "s6-cpu-choice.yaml",
     .after = "system.cpu=core-i9-13900k",
     .explain = "Every image is decoded and augmented on the CPU before the GPU trains on it; "
                "the i9's cores are 1.72x as fast, so the same 8 workers now keep up.",
     .min_gain = 1.1,
     .max_gain = 1.72,
     .bounds_why = "loader-bound on the Xeon (GPU-Util ~73 %), GPU-bound on the i9: the GPU's "
                   "rate caps the gain below the cores' single-thread ratio (4,598 / 2,673 = "
                   "1.72 in PassMark)"},
    {.name = "s7-prefetch",
     .lesson = "seed S7: prefetching hides bursts, not a slow loader (prefetch_factor 2 -> 8)",
     .file = "s7-prefetch-steady.yaml",
     .after = "loader.prefetch_factor=8",
     .explain = "The workers already load the next batches while the GPU computes; when they "
                "decode fewer images per second than the GPU takes, a longer queue stays empty "
                "and only more decode (more workers) helps.",
     .min_gain = 0.97,
     .max_gain = 1.03,
     .bounds_why = "the run's pace is the workers' mean decode rate, which queue depth does not "
                   "change; 3 % for the sampled decode times"},
    {.name = "s8-util",
     .lesson = "seed S8: at 50 % GPU-Util a run takes twice as long as at 100 %",
     .file = "s8-util-half.yaml",
     .after = "loader.num_workers=16",
     .explain = "The GPU does the same work per step either way; the run lasts that busy time "
                "over GPU-Util, so doubling the utilization halves the time.",
     .min_gain = 1.8,
     .max_gain = 2.1,
     .bounds_why = "GPU-Util ~49 % before and ~94 % after: the time ratio is the utilization "
                   "ratio, ~1.93 (checked to 2 % by test_demo_s8_time_follows_gpu_util)"},
    {.name = "s3-two-runs",
     .lesson = "seed S3: a second copy of a run on the same GPU costs almost nothing",
     .file = "s3-1-run.yaml",
     .after_file = "s3-2-runs.yaml",
     .explain = "Alone, the run keeps the A100 busy ~47 % of the time and waits for its loader "
                "the rest; the second copy's kernels run in that wait (time-slicing), so each "
                "run keeps its pace.",
     .min_gain = 0.9,
     .max_gain = 1.0,
     .bounds_why = "two runs want 2 x 47 % = 94 % of the GPU, within it, so neither waits long "
                   "for the other; some kernels still meet: ~3 % slower, never faster"},
    {.name = "s3-four-runs",
     .lesson = "seed S3: four copies of the same run on one GPU: each about 2x slower",
     .file = "s3-1-run.yaml",
     .after_file = "s3-4-runs.yaml",
     .explain = "Four runs want 4 x 47 % of the GPU: more than all of it, so each run's kernels "
                "wait for the others' time slices (the 'another_job' idle cause) and each run "
                "gets a quarter of the GPU.",
     .min_gain = 0.45,
     .max_gain = 0.6,
     .bounds_why = "a quarter of the GPU against the 47 % a run uses alone: 0.25 / 0.47 = 0.53, "
                   "less the context switches; N runs that each keep the GPU fully busy would "
                   "each slow by N (the seed's ~Nx from three on)"},
    {.name = "s4-mig-4way",
     .lesson = "seed S4: four jobs at once, each on a quarter of an RTX PRO 6000 (MIG), vs one "
               "job on the whole GPU",
     .file = "s4-mig-pro6000-whole.yaml",
     .after_file = "s4-mig-4way.yaml",
     .explain = "Each job gets a quarter of the SMs and of the bandwidth, so each runs at about a "
                "quarter of the whole GPU's pace, but the four run at once on one host: together "
                "they train more than one job on the whole card, as long as the CPU, the disk "
                "and the one PCIe link keep up.",
     .min_gain = 0.22,
     .max_gain = 0.33,
     .bounds_why = "46 of 188 SMs (24.5 %) and a quarter of the bandwidth per instance, kernels "
                   "that do not fill the whole GPU losing less (part-empty last waves; NCHW batch "
                   "norm's block per channel holds 64 or 128 of the 188 SMs: one job alone on an "
                   "instance 0.32x, demo s4-mig), less what the four share on one host (their 192 "
                   "workers on 128 hardware threads, the card's one PCIe link)"},
};

const sim_demo *sim_demo_table(size_t *n)
{
    *n = sizeof demos / sizeof demos[0];
    return demos;
}

const sim_demo *sim_demo_find(const char *name)
{
    for (size_t i = 0; i < sizeof demos / sizeof demos[0]; i++)
        if (!strcmp(demos[i].name, name)) return &demos[i];
    return NULL;
}

const char *sim_demo_dir(const char *catalog_dir, char *buf, size_t size)
{
    snprintf(buf, size, "%s/../experiments", catalog_dir);
    return buf;
}

/* The figures of a side from a run's result. */
static void side_figures(const sim_result *res, sim_demo_side *out)
{
    snprintf(out->message, sizeof out->message, "%s", res->verdict);
    snprintf(out->bottleneck, sizeof out->bottleneck, "%s", sim_bottleneck_name(res->bottleneck));
    out->samples_per_s = res->mean.samples_per_s;
    out->time_s = res->mean.time_s;
    out->gpu_util_pct = res->mean.gpu_util_pct;
    out->gpu_util_na = res->gpu_util_na;
    out->sm_active_pct = res->mean.sm_active_pct;
    out->main_busy_pct = res->mean.main_busy_pct;
}

/* A side whose experiment is a `jobs:` list: every job at once, the first job's figures, with
 * GPU-Util and SM active of its (first) GPU, or its own instance's SM active on MIG. */
static int jobs_side(const cfg_jobs *jobs, const sim_experiment *x, const cfg_experiment_set *set,
                     const char *catalog_dir, sim_demo_side *out, sim_err *err)
{
    sim_jobs_setup js;
    sim_jobs_result res;
    int rc = sim_jobs_build(jobs, x, set, catalog_dir, &js, err);
    if (!rc) rc = sim_run_jobs(&js.system, js.slot, js.n, &js.share, &res, err);
    if (!rc) {
        side_figures(&res.job[0], out);
        /* what nvidia-smi shows for the GPU: every job's kernels; on MIG it shows none, and
         * the job's own instance's SM active stands */
        const sim_gpu_figures *g = &res.gpu[js.slot[0].gpus[0]];
        if (!g->mig) {
            out->gpu_util_pct = g->gpu_util_pct;
            out->sm_active_pct = g->sm_active_pct;
        }
        sim_jobs_result_free(&res);
    }
    sim_jobs_setup_free(&js);
    return rc;
}

static const char *const demo_extra_keys[] = {"jobs", NULL};

/* One side: the experiment file (or, for the after run, after_file) with `before` and then
 * change (NULL: none) applied. */
static int run_side(const sim_demo *d, const char *dir, const char *catalog_dir, bool after,
                    const char *change, sim_demo_side *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, after && d->after_file ? d->after_file : d->file);
    sim_experiment x;
    sim_experiment_defaults(&x);
    cfg_experiment_set set = {0};
    cfg_jobs jobs = {0};
    int rc = cfg_experiment_load_with(path, demo_extra_keys, &x, &set, err);
    if (!rc && d->before) rc = sim_advice_apply(d->before, &x, &set, err);
    if (!rc && change) rc = sim_advice_apply(change, &x, &set, err);
    if (!rc) rc = cfg_jobs_load(path, &x, &set, &jobs, err);
    if (!rc && jobs.n) {
        rc = jobs_side(&jobs, &x, &set, catalog_dir, out, err);
        cfg_jobs_free(&jobs);
        return rc;
    }
    sim_scenario sc;
    memset(&sc, 0, sizeof sc);
    if (!rc) rc = sim_scenario_build(&x, &set, catalog_dir, &sc, err);
    sim_result res;
    if (!rc) rc = sim_run(&sc, &res, err);
    if (rc == SIM_EOOM && sc.memory.known) {
        out->oom = true;
        snprintf(out->message, sizeof out->message, "%s", err->msg);
        strcpy(out->bottleneck, "out_of_memory");
        sim_err_clear(err);
        rc = SIM_OK;
    } else if (!rc) {
        side_figures(&res, out);
        sim_result_free(&res);
    }
    sim_scenario_free(&sc);
    return rc;
}

int sim_demo_run(const sim_demo *d, const char *experiments_dir, const char *catalog_dir,
                 sim_demo_side out[2], sim_err *err)
{
    int rc = run_side(d, experiments_dir, catalog_dir, false, NULL, &out[0], err);
    if (!rc) rc = run_side(d, experiments_dir, catalog_dir, true, d->after, &out[1], err);
    return rc;
}

const char *sim_demo_change(const sim_demo *d, char *buf, size_t size)
{
    if (d->after_file)
        snprintf(buf, size, "configs/experiments/%s%s%s", d->after_file, d->after ? " with " : "",
                 d->after ? d->after : "");
    else
        snprintf(buf, size, "%s", d->after);
    return buf;
}

double sim_demo_gain(const sim_demo_side s[2])
{
    if (s[0].oom || s[1].oom || !(s[1].time_s > 0)) return 0;
    return s[0].time_s / s[1].time_s;
}

const char *sim_demo_study_value(const sim_demo *d, size_t i, char *buf, size_t size)
{
    const char *v = strchr(d->vary, '=');
    SIM_ASSERT(v);
    for (v++; i > 0 && v; i--) {
        v = strchr(v, ',');
        if (v) v++;
    }
    SIM_ASSERT(v);
    size_t len = strcspn(v, ",");
    snprintf(buf, size, "%.*s", (int)len, v);
    return buf;
}

int sim_demo_study(const sim_demo *d, const char *experiments_dir, const char *catalog_dir,
                   sim_demo_side out[SIM_DEMO_MAX_POINTS], size_t *n, sim_err *err)
{
    size_t points = 1, key_len = strcspn(d->vary, "=");
    for (const char *c = d->vary; *c; c++)
        points += *c == ',';
    SIM_ASSERT(d->vary[key_len] == '=' && points <= SIM_DEMO_MAX_POINTS);
    for (*n = 0; *n < points; ++*n) {
        char value[64], change[256];
        sim_demo_study_value(d, *n, value, sizeof value);
        snprintf(change, sizeof change, "%.*s=%s", (int)key_len, d->vary, value);
        int rc = run_side(d, experiments_dir, catalog_dir, false, change, &out[*n], err);
        if (rc) return rc;
    }
    return SIM_OK;
}

double sim_demo_study_gain(const sim_demo_side *s, size_t n)
{
    if (n == 0 || s[0].oom || !(s[0].samples_per_s > 0)) return 0;
    double best = 0;
    for (size_t i = 0; i < n; i++)
        if (!s[i].oom && s[i].samples_per_s > best) best = s[i].samples_per_s;
    return best / s[0].samples_per_s;
}
