/* test_catalog_entries.c — loads every entry of the real catalog (configs/hardware/) through
 * cfg_catalog_list + cfg_catalog_load and checks that its numbers agree with each other, that the
 * parts a system names exist, and that every number in a file cites a source the file lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sim/setup/catalog.h"
#include "sim/core/hw.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/configs/hardware"

typedef union any_desc {
    sim_gpu_desc gpu;
    sim_cpu_desc cpu;
    sim_storage_desc storage;
    sim_link_desc link;
    sim_system_desc system;
} any_desc;

typedef void (*entry_fn)(const char *name, const any_desc *d);

static void load_or_fail(cfg_catalog_kind kind, const char *name, any_desc *d)
{
    sim_err err;
    sim_err_clear(&err);
    int rc = cfg_catalog_load(CATALOG, kind, name, d, &err);
    if (rc) {
        sim_err_print(&err, stdout);
        fail_msg("%s/%s does not load", cfg_catalog_kind_dir(kind), name);
    }
}

/* Calls fn for every entry of a kind; returns how many there are. */
static size_t for_each(cfg_catalog_kind kind, entry_fn fn)
{
    char **names = NULL;
    size_t n = 0;
    sim_err err;
    sim_err_clear(&err);
    assert_int_equal(cfg_catalog_list(CATALOG, kind, &names, &n, &err), 0);
    for (size_t i = 0; i < n; i++) {
        any_desc d;
        load_or_fail(kind, names[i], &d);
        if (fn) fn(names[i], &d);
    }
    cfg_catalog_names_free(names, n);
    return n;
}

static void assert_close(double got, double want, double rel, const char *what, const char *name)
{
    if (fabs(got - want) > rel * fabs(want))
        fail_msg("%s: %s = %g, expected %g within %.0f %%", name, what, got, want, rel * 100);
}

/* ---------------------------------------------------------------- presence */

static void test_catalog_entries_all_load(void **state)
{
    (void)state;
    size_t total = 0;
    for (int k = 0; k < CFG_CAT_COUNT; k++) {
        size_t n = for_each((cfg_catalog_kind)k, NULL);
        assert_true(n > 0);
        total += n;
    }
    printf("loaded %zu catalog entries\n", total);
}

/* The entries issue 3 and the default scenario (a100-box) name. */
static void test_catalog_entries_required_present(void **state)
{
    (void)state;
    static const struct {
        cfg_catalog_kind kind;
        const char *name;
    } required[] = {
        {CFG_CAT_GPU, "v100-sxm2-16gb"},
        {CFG_CAT_GPU, "v100-sxm2-32gb"},
        {CFG_CAT_GPU, "v100-pcie-16gb"},
        {CFG_CAT_GPU, "t4"},
        {CFG_CAT_GPU, "a100-sxm4-40gb"},
        {CFG_CAT_GPU, "a100-sxm4-80gb"},
        {CFG_CAT_GPU, "a100-pcie-40gb"},
        {CFG_CAT_GPU, "a100-pcie-80gb"},
        {CFG_CAT_GPU, "a10"},
        {CFG_CAT_GPU, "a30"},
        {CFG_CAT_GPU, "a40"},
        {CFG_CAT_GPU, "rtx-a5000"},
        {CFG_CAT_GPU, "rtx-a6000"},
        {CFG_CAT_GPU, "rtx-3060-ti"},
        {CFG_CAT_GPU, "rtx-3090"},
        {CFG_CAT_GPU, "rtx-4090"},
        {CFG_CAT_GPU, "rtx-6000-ada"},
        {CFG_CAT_GPU, "l4"},
        {CFG_CAT_GPU, "l40s"},
        {CFG_CAT_GPU, "h100-sxm5-80gb"},
        {CFG_CAT_GPU, "h100-pcie-80gb"},
        {CFG_CAT_GPU, "h200-sxm-141gb"},
        {CFG_CAT_GPU, "b200"},
        {CFG_CAT_GPU, "rtx-pro-6000-blackwell-workstation"},
        {CFG_CAT_GPU, "rtx-pro-6000-blackwell-max-q"},
        {CFG_CAT_CPU, "ryzen-9-7950x"},
        {CFG_CAT_CPU, "core-i9-13900k"},
        {CFG_CAT_CPU, "threadripper-pro-5955wx"},
        {CFG_CAT_CPU, "xeon-w-3335"},
        {CFG_CAT_CPU, "epyc-7742"},
        {CFG_CAT_CPU, "xeon-platinum-8480c"},
        {CFG_CAT_CPU, "xeon-e5-2698-v4"},
        {CFG_CAT_CPU, "epyc-7r32"},
        {CFG_CAT_CPU, "xeon-e5-2660-v2"},
        {CFG_CAT_STORAGE, "hdd-7200"},
        {CFG_CAT_STORAGE, "hdd-5400"},
        {CFG_CAT_STORAGE, "sata-ssd"},
        {CFG_CAT_STORAGE, "nvme-gen3"},
        {CFG_CAT_STORAGE, "nvme-gen4"},
        {CFG_CAT_STORAGE, "nvme-gen5"},
        {CFG_CAT_STORAGE, "nfs-10gbe"},
        {CFG_CAT_STORAGE, "ramdisk"},
        {CFG_CAT_LINK, "pcie-gen3"},
        {CFG_CAT_LINK, "pcie-gen4"},
        {CFG_CAT_LINK, "pcie-gen5"},
        {CFG_CAT_SYSTEM, "dgx-1"},
        {CFG_CAT_SYSTEM, "dgx-a100"},
        {CFG_CAT_SYSTEM, "dgx-h100"},
        {CFG_CAT_SYSTEM, "desktop-3060ti"},
        {CFG_CAT_SYSTEM, "desktop-4090"},
        {CFG_CAT_SYSTEM, "aws-g5-2xlarge"},
        {CFG_CAT_SYSTEM, "cloud-a5000-8vcpu"},
        {CFG_CAT_SYSTEM, "a5000-xeon-e5-2660v2"},
        {CFG_CAT_SYSTEM, "rtx-pro-6000-workstation"},
    };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        any_desc d;
        load_or_fail(required[i].kind, required[i].name, &d);
    }
}

/* ---------------------------------------------------------------- GPUs */

static void check_gpu(const char *name, const any_desc *any)
{
    const sim_gpu_desc *g = &any->gpu;
    /* Vendor peaks are rounded to 3 significant digits and boost clocks to the MHz (B200: 75 vs
     * 74.4 = 0.8 %); 3 % catches a wrong core count or clock, not rounding. */
    assert_close(g->fp32_tflops, g->cuda_cores * 2.0 * g->boost_mhz * 1e-6, 0.03,
                 "fp32_tflops vs cuda_cores x 2 x boost", name);
    int per_sm = g->cuda_cores / g->sms;
    if (g->cuda_cores % g->sms || (per_sm != 64 && per_sm != 128))
        fail_msg("%s: %d CUDA cores over %d SMs is not 64 or 128 per SM", name, g->cuda_cores,
                 g->sms);
    /* Every catalog GPU has tensor cores: the fp16 tensor rate beats the CUDA-core fp32 rate. */
    if (!(g->fp16_tflops >= g->fp32_tflops))
        fail_msg("%s: fp16 tensor %g < fp32 %g", name, g->fp16_tflops, g->fp32_tflops);
    if (g->bf16_tflops > 0)
        assert_close(g->bf16_tflops, g->fp16_tflops, 0.01, "bf16 vs fp16", name);
    if (g->tf32_tflops > 0)
        assert_close(g->tf32_tflops, g->fp16_tflops / 2, 0.03, "tf32 vs fp16 / 2", name);
    if (g->fp8_tflops > 0)
        assert_close(g->fp8_tflops, g->fp16_tflops * 2, 0.03, "fp8 vs fp16 x 2", name);
    bool pre_ampere = !strcmp(g->arch, "volta") || !strcmp(g->arch, "turing");
    if (pre_ampere && (g->bf16_tflops || g->tf32_tflops || g->fp8_tflops))
        fail_msg("%s: Volta/Turing have no bf16, tf32 or fp8 tensor path", name);
    if (!pre_ampere && !(g->bf16_tflops > 0 && g->tf32_tflops > 0))
        fail_msg("%s: Ampere and later have bf16 and tf32", name);
    bool has_fp8 =
        !strcmp(g->arch, "ada") || !strcmp(g->arch, "hopper") || !strcmp(g->arch, "blackwell");
    if (has_fp8 != (g->fp8_tflops > 0))
        fail_msg("%s: fp8 exists exactly on Ada, Hopper and Blackwell", name);
    assert_true(g->mem_gb > 0 && g->mem_bw_gbps > 0 && g->tdp_w > 0);
    assert_int_equal(g->pcie_lanes, 16);
    if (g->nvml_window_ms < 166 || g->nvml_window_ms > 1000)
        fail_msg("%s: nvml_window_ms %g outside NVML's 1/6 s .. 1 s", name, g->nvml_window_ms);
    assert_true(g->kernel_overhead_us > 0 && g->kernel_overhead_us < 20);
    assert_true(g->launch_queue_depth >= 1 && g->max_blocks_per_sm >= 1);
    if (g->mig_instances && g->mig_instances != 4 && g->mig_instances != 7)
        fail_msg("%s: MIG parts split 4 or 7 ways", name);
}

static void test_catalog_entries_gpus_consistent(void **state)
{
    (void)state;
    assert_true(for_each(CFG_CAT_GPU, check_gpu) >= 25);
}

/* Known figures that anchor the cost model: a change here must be deliberate. */
static void test_catalog_entries_gpu_anchor_figures(void **state)
{
    (void)state;
    any_desc d;
    load_or_fail(CFG_CAT_GPU, "a100-sxm4-80gb", &d);
    assert_int_equal(d.gpu.sms, 108);
    assert_close(d.gpu.fp16_tflops, 312, 1e-9, "fp16_tflops", "a100-sxm4-80gb");
    assert_close(d.gpu.mem_bw_gbps, 2039, 1e-9, "mem_bw_gbps", "a100-sxm4-80gb");
    load_or_fail(CFG_CAT_GPU, "rtx-4090", &d);
    /* GeForce: the fp32-accumulate rate, half the fp16-accumulate 330.3 */
    assert_close(d.gpu.fp16_tflops, 330.3 / 2, 0.001, "fp16_tflops", "rtx-4090");
    load_or_fail(CFG_CAT_GPU, "h100-sxm5-80gb", &d);
    assert_close(d.gpu.fp16_tflops, 989.4, 1e-9, "fp16_tflops (dense)", "h100-sxm5-80gb");
}

/* Power-limited clocks (catalog.c, cfg_gpu_resolve_clock): a card with a power_ref holds its boost
 * clock x cbrt(its watts per SM-GHz^3 / the reference's). Closed form on one pair: the A10 (150 W,
 * 72 SMs, 1.695 GHz) against the RTX 3090 (350 W, 82 SMs, 1.695 GHz), same GA102 chip: cbrt((150 /
 * 72) / (350 / 82)) = 0.787. Cards without one, and every reference, hold boost; no card is ever
 * faster than its boost clock. While the tensor cores are busy a card whose tensor math does more
 * work per SM clock than its reference's holds less (clock_factor_tensor): the A10 runs
 * FP32-accumulate math at 125 TFLOPS on 72 SMs, the 3090 at 71 on 82, both at 1.695 GHz, 2.005x the
 * work per SM clock, so cbrt(0.4880 / 2.005) = 0.624; on a chip whose cards share one rate per SM
 * clock (A100 PCIe against SXM4) the two factors are equal. A card with a measured sustained_mhz
 * holds exactly that share of boost on both, or on its tensor cores the share of a
 * sustained_tensor_mhz measured apart. */
static void check_clock(const char *name, const any_desc *any)
{
    const sim_gpu_desc *g = &any->gpu;
    if (g->sustained_mhz > 0) {
        /* measured: any share of boost a 70 W card may hold, both units alike unless the
         * tensor cores' clock was measured apart */
        double tensor_mhz =
            g->sustained_tensor_mhz > 0 ? g->sustained_tensor_mhz : g->sustained_mhz;
        if (!(g->clock_factor > 0.2 && g->clock_factor <= 1 &&
              g->clock_factor == fmin(1, g->sustained_mhz / g->boost_mhz) &&
              g->clock_factor_tensor == fmin(1, tensor_mhz / g->boost_mhz)))
            fail_msg("%s: sustained_mhz %g gives clock factors %g, %g", name, g->sustained_mhz,
                     g->clock_factor, g->clock_factor_tensor);
        return;
    }
    if (!(g->clock_factor > 0.5 && g->clock_factor <= 1))
        fail_msg("%s: clock_factor %g outside (0.5, 1]", name, g->clock_factor);
    if (!(g->clock_factor_tensor > 0.5 && g->clock_factor_tensor <= 1))
        fail_msg("%s: clock_factor_tensor %g outside (0.5, 1]", name, g->clock_factor_tensor);
    if (!g->power_ref[0] && (g->clock_factor != 1 || g->clock_factor_tensor != 1))
        fail_msg("%s: no power_ref but clock factors %g, %g", name, g->clock_factor,
                 g->clock_factor_tensor);
}

static void test_catalog_entries_power_limited_clocks(void **state)
{
    (void)state;
    for_each(CFG_CAT_GPU, check_clock);
    any_desc d;
    load_or_fail(CFG_CAT_GPU, "a10", &d);
    assert_close(d.gpu.clock_factor, cbrt((150.0 / 72) / (350.0 / 82)), 1e-9, "clock_factor",
                 "a10");
    double work = (125.0 / 72) / (71.0 / 82);
    assert_close(d.gpu.clock_factor_tensor, cbrt((150.0 / 72) / (350.0 / 82) / work), 1e-9,
                 "clock_factor_tensor", "a10");
    load_or_fail(CFG_CAT_GPU, "a100-pcie-40gb", &d);
    assert_true(d.gpu.clock_factor < 1 && d.gpu.clock_factor_tensor == d.gpu.clock_factor);
    load_or_fail(CFG_CAT_GPU, "rtx-3090", &d);
    assert_true(d.gpu.clock_factor == 1 && d.gpu.clock_factor_tensor == 1);
    load_or_fail(CFG_CAT_GPU, "t4", &d); /* measured: sustained_mhz over boost_mhz */
    assert_close(d.gpu.clock_factor, d.gpu.sustained_mhz / 1590, 1e-12, "clock_factor", "t4");
    assert_true(d.gpu.clock_factor < 0.6);
    /* and its tensor cores' clock apart, higher (configs/hardware/gpus/t4.yaml) */
    assert_close(d.gpu.clock_factor_tensor, d.gpu.sustained_tensor_mhz / 1590, 1e-12,
                 "clock_factor_tensor", "t4");
    assert_true(d.gpu.clock_factor_tensor > d.gpu.clock_factor);
    load_or_fail(CFG_CAT_GPU, "l4", &d); /* measured once, for both units */
    assert_true(d.gpu.sustained_tensor_mhz == 0 && d.gpu.clock_factor_tensor == d.gpu.clock_factor);
}

/* ---------------------------------------------------------------- CPUs */

static void check_cpu(const char *name, const any_desc *any)
{
    const sim_cpu_desc *c = &any->cpu;
    assert_int_equal(c->sockets, 1); /* parts as sold; systems give multi-socket counts */
    if (c->threads < c->cores || c->threads > 2 * c->cores)
        fail_msg("%s: %d threads for %d cores", name, c->threads, c->cores);
    if (!(c->single_thread > 0.3 && c->single_thread < 3))
        fail_msg("%s: single_thread %g outside (0.3, 3)", name, c->single_thread);
    if ((c->threads == c->cores) != (c->smt_gain == 0))
        fail_msg("%s: smt_gain must be 0 exactly when there is no SMT", name);
    assert_true(c->smt_gain >= 0 && c->smt_gain <= 0.5);
    assert_true(c->base_ghz > 0 && c->base_ghz <= c->boost_ghz);
    /* one thread's copy cannot beat the sockets's DRAM bandwidth */
    assert_true(c->memcpy_gbps > 0 && c->memcpy_gbps < c->mem_bw_gbps);
    assert_true(c->pcie_gen >= 3 && c->pcie_lanes >= 16);
}

static void test_catalog_entries_cpus_consistent(void **state)
{
    (void)state;
    assert_true(for_each(CFG_CAT_CPU, check_cpu) >= 8);
}

static void test_catalog_entries_reference_core_is_one(void **state)
{
    (void)state;
    any_desc d;
    load_or_fail(CFG_CAT_CPU, "epyc-7742", &d);
    assert_true(d.cpu.single_thread == 1.0); /* the definition of the reference core */
    /* Seed 003: the home box's "strong CPU" is faster per core than the DGX A100 host. */
    load_or_fail(CFG_CAT_CPU, "core-i9-13900k", &d);
    assert_true(d.cpu.single_thread > 1.5);
}

/* ---------------------------------------------------------------- storage and links */

static void check_storage(const char *name, const any_desc *any)
{
    const sim_storage_desc *s = &any->storage;
    assert_true(s->read_mbps > 0 && s->latency_us > 0 && s->queue_depth >= 1);
    if (!strncmp(name, "hdd-", 4)) assert_int_equal(s->queue_depth, 1); /* one head assembly */
}

static double storage_field(const char *name, size_t offset)
{
    any_desc d;
    load_or_fail(CFG_CAT_STORAGE, name, &d);
    return *(const double *)((const char *)&d.storage + offset);
}

static void test_catalog_entries_storage_ordered(void **state)
{
    (void)state;
    assert_true(for_each(CFG_CAT_STORAGE, check_storage) >= 8);
    size_t lat = offsetof(sim_storage_desc, latency_us);
    size_t bw = offsetof(sim_storage_desc, read_mbps);
    /* Seed 002: HDD -> SSD -> RAM each cut the per-read latency by an order of magnitude. */
    assert_true(storage_field("hdd-7200", lat) > 10 * storage_field("sata-ssd", lat));
    assert_true(storage_field("sata-ssd", lat) > storage_field("nvme-gen3", lat));
    assert_true(storage_field("nvme-gen4", lat) > 10 * storage_field("ramdisk", lat));
    assert_true(storage_field("hdd-5400", lat) > storage_field("hdd-7200", lat));
    assert_true(storage_field("nvme-gen3", bw) < storage_field("nvme-gen4", bw));
    assert_true(storage_field("nvme-gen4", bw) < storage_field("nvme-gen5", bw));
    assert_true(storage_field("sata-ssd", bw) < storage_field("nvme-gen3", bw));
}

static void test_catalog_entries_links_consistent(void **state)
{
    (void)state;
    double prev = 0;
    for (int gen = 3; gen <= 5; gen++) {
        char name[32];
        snprintf(name, sizeof name, "pcie-gen%d", gen);
        any_desc d;
        load_or_fail(CFG_CAT_LINK, name, &d);
        assert_int_equal(d.link.gen, gen);
        assert_int_equal(d.link.lanes, 16);
        assert_true(d.link.pinned_gbps > d.link.pageable_gbps);
        assert_true(d.link.pinned_gbps > prev);
        /* measured rates stay below the theoretical 0.985 GB/s per lane per GT/s/8 */
        assert_true(d.link.pinned_gbps < 16 * 0.985 * (1 << (gen - 3)));
        prev = d.link.pinned_gbps;
        sim_link_desc x8;
        sim_err err;
        sim_err_clear(&err);
        assert_int_equal(cfg_catalog_pcie(CATALOG, gen, 8, &x8, &err), 0);
        assert_close(x8.pinned_gbps, d.link.pinned_gbps / 2, 1e-12, "x8 pinned", name);
    }
}

/* ---------------------------------------------------------------- systems */

static void check_system(const char *name, const any_desc *any)
{
    const sim_system_desc *s = &any->system;
    any_desc gpu, cpu, st;
    if (!s->gpu[0] || !s->cpu[0] || !s->storage[0])
        fail_msg("%s: a catalog system names its GPU, CPU and storage", name);
    load_or_fail(CFG_CAT_GPU, s->gpu, &gpu);
    load_or_fail(CFG_CAT_CPU, s->cpu, &cpu);
    load_or_fail(CFG_CAT_STORAGE, s->storage, &st);
    assert_true(s->gpu_count >= 1 && s->host_memory_gb > 0);
    int cores = s->cpu_cores ? s->cpu_cores : cpu.cpu.cores;
    int threads = s->cpu_threads ? s->cpu_threads : cpu.cpu.threads;
    /* a VM gets part of one socket; a server gets whole sockets */
    if (cores > cpu.cpu.cores && cores % cpu.cpu.cores)
        fail_msg("%s: %d cores is neither part of one %s nor whole sockets", name, cores, s->cpu);
    /* the box keeps the CPU's threads-per-core ratio */
    if (threads * cpu.cpu.cores != cores * cpu.cpu.threads)
        fail_msg("%s: %d threads on %d cores, but %s has %d/%d", name, threads, cores, s->cpu,
                 cpu.cpu.threads, cpu.cpu.cores);
    int link_gen = gpu.gpu.pcie_gen < cpu.cpu.pcie_gen ? gpu.gpu.pcie_gen : cpu.cpu.pcie_gen;
    if (s->pcie_gen && s->pcie_gen > link_gen)
        fail_msg("%s: pcie_gen %d beyond what GPU and CPU both support (%d)", name, s->pcie_gen,
                 link_gen);
    if (s->nvlink && gpu.gpu.nvlink_gbps <= 0) fail_msg("%s: nvlink on a GPU without NVLink", name);
    if (s->gpu_count * gpu.gpu.mem_gb > 0 && s->host_memory_gb < gpu.gpu.mem_gb)
        fail_msg("%s: less host memory than one GPU's memory", name);
}

static void test_catalog_entries_system_parts_exist(void **state)
{
    (void)state;
    assert_true(for_each(CFG_CAT_SYSTEM, check_system) >= 8);
}

/* ---------------------------------------------------------------- citations */

#define MAX_KEYS 64

typedef struct keyset {
    int n;
    char key[MAX_KEYS][8];
} keyset;

static bool keyset_has(const keyset *k, const char *key)
{
    for (int i = 0; i < k->n; i++)
        if (!strcmp(k->key[i], key)) return true;
    return false;
}

static void keyset_add(keyset *k, const char *key)
{
    if (!keyset_has(k, key) && k->n < MAX_KEYS)
        snprintf(k->key[k->n++], sizeof k->key[0], "%s", key);
}

/* Adds the source keys ("S7", "C14") inside [...] groups of a text. */
static void cited_keys(const char *text, keyset *out)
{
    for (const char *p = strchr(text, '['); p; p = strchr(p + 1, '[')) {
        const char *end = strchr(p, ']');
        if (!end) return;
        for (const char *q = p + 1; q < end; q++) {
            if (*q >= 'A' && *q <= 'Z' && q[1] >= '0' && q[1] <= '9' &&
                (q == p + 1 || q[-1] == ' ' || q[-1] == ',')) {
                char key[8];
                size_t n = 0;
                key[n++] = *q;
                for (const char *r = q + 1; r < end && *r >= '0' && *r <= '9' && n < 6; r++)
                    key[n++] = *r;
                key[n] = 0;
                keyset_add(out, key);
            }
        }
    }
}

static bool is_number(const char *s)
{
    char *end = NULL;
    strtod(s, &end);
    return end != s && (*end == 0 || *end == ' ' || *end == '#' || *end == '\n');
}

/* Every number in the file carries a comment, every [key] a comment or the notes cite is listed
 * under `sources:`, and every listed source is cited. */
static void check_citations(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp) fail_msg("cannot open %s", path);
    keyset cited = {0}, listed = {0};
    enum { TOP, NOTES, SOURCES } section = TOP;
    char line[4096];
    int lineno = 0;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n') continue;
        if (line[0] != ' ') {
            section = !strncmp(line, "notes:", 6)     ? NOTES
                      : !strncmp(line, "sources:", 8) ? SOURCES
                                                      : TOP;
            if (section != TOP) continue;
            const char *colon = strchr(line, ':');
            assert_non_null(colon);
            const char *value = colon + 1;
            while (*value == ' ')
                value++;
            const char *comment = strstr(line, " #");
            if (is_number(value) && !comment)
                fail_msg("%s:%d: a number without a source comment", path, lineno);
            if (comment) cited_keys(comment, &cited);
        } else if (section == NOTES) {
            cited_keys(line, &cited);
        } else if (section == SOURCES) {
            char key[8];
            if (sscanf(line, " %7[A-Z0-9]:", key) == 1) keyset_add(&listed, key);
        }
    }
    fclose(fp);
    for (int i = 0; i < cited.n; i++)
        if (!keyset_has(&listed, cited.key[i]))
            fail_msg("%s: cites [%s] but does not list it under sources", path, cited.key[i]);
    for (int i = 0; i < listed.n; i++)
        if (!keyset_has(&cited, listed.key[i]))
            fail_msg("%s: lists source %s but never cites it", path, listed.key[i]);
}

static void test_catalog_entries_every_number_cited(void **state)
{
    (void)state;
    size_t files = 0;
    for (int k = 0; k < CFG_CAT_COUNT; k++) {
        char **names = NULL;
        size_t n = 0;
        assert_int_equal(cfg_catalog_list(CATALOG, (cfg_catalog_kind)k, &names, &n, NULL), 0);
        for (size_t i = 0; i < n; i++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s/%s.yaml", CATALOG,
                     cfg_catalog_kind_dir((cfg_catalog_kind)k), names[i]);
            check_citations(path);
            files++;
        }
        cfg_catalog_names_free(names, n);
    }
    assert_true(files > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalog_entries_all_load),
        cmocka_unit_test(test_catalog_entries_required_present),
        cmocka_unit_test(test_catalog_entries_gpus_consistent),
        cmocka_unit_test(test_catalog_entries_gpu_anchor_figures),
        cmocka_unit_test(test_catalog_entries_power_limited_clocks),
        cmocka_unit_test(test_catalog_entries_cpus_consistent),
        cmocka_unit_test(test_catalog_entries_reference_core_is_one),
        cmocka_unit_test(test_catalog_entries_storage_ordered),
        cmocka_unit_test(test_catalog_entries_links_consistent),
        cmocka_unit_test(test_catalog_entries_system_parts_exist),
        cmocka_unit_test(test_catalog_entries_every_number_cited),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
