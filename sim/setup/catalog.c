/* catalog.c — loads configs/hardware/<kind>/<name>.yaml into the plain structs of hw.h.
 * Each kind is one field table: the YAML keys are the struct's field names, so the catalog,
 * `hw show` and the structs cannot drift apart. */
#include "sim/setup/catalog.h"

#include "sim/setup/cfgtable.h"
#include "sim/base/names.h"
#include "sim/core/topo.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define BIG 1e308
#define STR(T, f)                                                                                  \
    {                                                                                              \
#f, CFG_T_STR, offsetof(T, f), sizeof(((T *)0)->f), CFG_NO_RANGE, NULL, NULL               \
    }
#define NUM(T, f, lo, hi)                                                                          \
    {                                                                                              \
#f, CFG_T_DOUBLE, offsetof(T, f), 0, lo, hi, NULL, NULL                                    \
    }
#define INT(T, f, lo, hi)                                                                          \
    {                                                                                              \
#f, CFG_T_INT, offsetof(T, f), 0, lo, hi, NULL, NULL                                       \
    }
#define BOOL(T, f)                                                                                 \
    {                                                                                              \
#f, CFG_T_BOOL, offsetof(T, f), 0, CFG_NO_RANGE, NULL, NULL                                \
    }
#define ENUM(T, f, names)                                                                          \
    {                                                                                              \
#f, CFG_T_ENUM, offsetof(T, f), 0, CFG_NO_RANGE, NULL, names                               \
    }
#define CURVE(T, f)                                                                                \
    {                                                                                              \
#f, CFG_T_CURVE, offsetof(T, f), 0, CFG_NO_RANGE, NULL, NULL                               \
    }

static const cfg_field gpu_fields[] = {
    STR(sim_gpu_desc, name),
    STR(sim_gpu_desc, label),
    STR(sim_gpu_desc, arch),
    NUM(sim_gpu_desc, compute_capability, 1, 20),
    INT(sim_gpu_desc, sms, 1, 100000),
    INT(sim_gpu_desc, cuda_cores, 1, 10000000),
    NUM(sim_gpu_desc, boost_mhz, 100, 10000),
    NUM(sim_gpu_desc, fp32_tflops, 0.01, BIG),
    NUM(sim_gpu_desc, fp16_tflops, 0, BIG),
    NUM(sim_gpu_desc, bf16_tflops, 0, BIG),
    NUM(sim_gpu_desc, tf32_tflops, 0, BIG),
    NUM(sim_gpu_desc, fp8_tflops, 0, BIG),
    NUM(sim_gpu_desc, fp16_acc16_tflops, 0, BIG),
    NUM(sim_gpu_desc, mem_gb, 0.1, BIG),
    NUM(sim_gpu_desc, mem_bw_gbps, 1, BIG),
    NUM(sim_gpu_desc, l2_mb, 0, BIG),
    INT(sim_gpu_desc, pcie_gen, 1, 7),
    INT(sim_gpu_desc, pcie_lanes, 1, 32),
    NUM(sim_gpu_desc, nvlink_gbps, 0, BIG),
    BOOL(sim_gpu_desc, p2p),
    INT(sim_gpu_desc, mig_instances, 0, 64),
    NUM(sim_gpu_desc, tdp_w, 0, BIG),
    NUM(sim_gpu_desc, nvml_window_ms, 1, 10000),
    CURVE(sim_gpu_desc, eff_tensor),
    CURVE(sim_gpu_desc, eff_cuda),
    CURVE(sim_gpu_desc, eff_mem),
    NUM(sim_gpu_desc, kernel_overhead_us, 0, 1000),
    INT(sim_gpu_desc, launch_queue_depth, 1, 1000000),
    INT(sim_gpu_desc, max_blocks_per_sm, 1, 64),
    NUM(sim_gpu_desc, mem_latency_ns, 0, 100000),
    STR(sim_gpu_desc, power_ref),
    NUM(sim_gpu_desc, sustained_mhz, 0, 10000),
    NUM(sim_gpu_desc, sustained_tensor_mhz, 0, 10000),
    NUM(sim_gpu_desc, ecc_reserve, 0, 0.5),
    BOOL(sim_gpu_desc, ecc_default),
};

static const cfg_field cpu_fields[] = {
    STR(sim_cpu_desc, name),
    STR(sim_cpu_desc, label),
    STR(sim_cpu_desc, arch),
    INT(sim_cpu_desc, sockets, 1, 16),
    INT(sim_cpu_desc, cores, 1, 100000),
    INT(sim_cpu_desc, threads, 1, 100000),
    NUM(sim_cpu_desc, base_ghz, 0.1, 10),
    NUM(sim_cpu_desc, boost_ghz, 0.1, 10),
    NUM(sim_cpu_desc, l3_mb, 0, BIG),
    NUM(sim_cpu_desc, single_thread, 0.01, 100),
    NUM(sim_cpu_desc, smt_gain, 0, 1),
    NUM(sim_cpu_desc, mem_bw_gbps, 0.1, BIG),
    NUM(sim_cpu_desc, memcpy_gbps, 0.1, BIG),
    INT(sim_cpu_desc, pcie_gen, 1, 7),
    INT(sim_cpu_desc, pcie_lanes, 1, 1024),
};

static const cfg_field storage_fields[] = {
    STR(sim_storage_desc, name),
    STR(sim_storage_desc, label),
    NUM(sim_storage_desc, read_mbps, 0.001, BIG),
    NUM(sim_storage_desc, latency_us, 0, 1e8),
    INT(sim_storage_desc, queue_depth, 1, 1000000),
};

static const cfg_field link_fields[] = {
    STR(sim_link_desc, name),
    INT(sim_link_desc, gen, 1, 7),
    INT(sim_link_desc, lanes, 1, 32),
    NUM(sim_link_desc, pinned_gbps, 0.001, BIG),
    NUM(sim_link_desc, pageable_gbps, 0.001, BIG),
    NUM(sim_link_desc, copy_overhead_us, 0, 1e6),
};

static const cfg_field system_fields[] = {
    STR(sim_system_desc, name),
    STR(sim_system_desc, label),
    STR(sim_system_desc, gpu),
    INT(sim_system_desc, gpu_count, 1, 1024),
    STR(sim_system_desc, cpu),
    INT(sim_system_desc, cpu_cores, 1, 100000),
    INT(sim_system_desc, cpu_threads, 1, 100000),
    STR(sim_system_desc, storage),
    NUM(sim_system_desc, host_memory_gb, 0.1, BIG),
    INT(sim_system_desc, pcie_gen, 1, 7),
    ENUM(sim_system_desc, nvlink, sim_nvlink_names),
    INT(sim_system_desc, nvlink_links, 0, 64),
    INT(sim_system_desc, pcie_switch_gpus, 0, SIM_MAX_GPUS),
};

static const char *const extra_keys[] = {"sources", "notes", NULL};
static const char *const gpu_extra_keys[] = {"sources", "notes", "mig", NULL}; /* sim/setup/mig.h */

#define TABLE_X(a, x)                                                                              \
    {                                                                                              \
        a, sizeof a / sizeof a[0], x                                                               \
    }
#define TABLE(a) TABLE_X(a, extra_keys)
static const struct {
    const char *dir;
    cfg_table table;
    size_t size;
} kinds[CFG_CAT_COUNT] = {
    [CFG_CAT_GPU] = {"gpus", TABLE_X(gpu_fields, gpu_extra_keys), sizeof(sim_gpu_desc)},
    [CFG_CAT_CPU] = {"cpus", TABLE(cpu_fields), sizeof(sim_cpu_desc)},
    [CFG_CAT_STORAGE] = {"storage", TABLE(storage_fields), sizeof(sim_storage_desc)},
    [CFG_CAT_LINK] = {"links", TABLE(link_fields), sizeof(sim_link_desc)},
    [CFG_CAT_SYSTEM] = {"systems", TABLE(system_fields), sizeof(sim_system_desc)},
};

const char *cfg_catalog_kind_dir(cfg_catalog_kind kind)
{
    return (unsigned)kind < CFG_CAT_COUNT ? kinds[kind].dir : NULL;
}

const cfg_table *cfg_catalog_table(cfg_catalog_kind kind)
{
    return (unsigned)kind < CFG_CAT_COUNT ? &kinds[kind].table : NULL;
}

static bool valid_name(const char *name)
{
    if (!*name || strlen(name) >= SIM_NAME_MAX) return false;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
              *p == '.'))
            return false;
    return name[0] != '.';
}

/* Keys an entry of any kind may leave out: its label, its architecture, and the GPU keys whose
 * absence has a meaning (no power reference or measured clock: boost clock; no ECC keys: no
 * inline ECC; no FP16-accumulate rate: the FP32-accumulate one). */
static bool optional_key(const char *key)
{
    static const char *const keys[] = {
        "label",       "arch",        "power_ref",        "sustained_mhz", "sustained_tensor_mhz",
        "ecc_reserve", "ecc_default", "fp16_acc16_tflops"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strcmp(key, keys[i])) return true;
    return false;
}

/* Every field without a range default must be present: a catalog entry is complete or wrong. */
static int check_complete(cfg_catalog_kind kind, const bool *set, const char *path, sim_err *err)
{
    const cfg_table *t = &kinds[kind].table;
    for (size_t i = 0; i < t->n; i++) {
        const cfg_field *f = &t->fields[i];
        bool optional = f->type == CFG_T_CURVE || optional_key(f->key) ||
                        (kind == CFG_CAT_SYSTEM && strcmp(f->key, "name") != 0);
        if (!set[i] && !optional)
            return sim_err_set(err, SIM_EINVAL, path, 0, 0, "missing key '%s'", f->key);
    }
    return SIM_OK;
}

/* "unknown gpus 'x' in catalog DIR (did you mean 'y'?; known: a, b, ...)" */
static int unknown_name(const char *dir, cfg_catalog_kind kind, const char *name, sim_err *err)
{
    char **names = NULL;
    size_t n = 0;
    char known[1024] = "";
    const char *near = NULL;
    if (!cfg_catalog_list(dir, kind, &names, &n, NULL)) {
        size_t used = 0;
        for (size_t i = 0; i < n && used + 4 < sizeof known; i++)
            used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "",
                                     names[i]);
        near = sim_nearest_name(name, (const char *const *)names, n);
    }
    char hint[96] = "";
    if (near) snprintf(hint, sizeof hint, "did you mean '%.64s'?; ", near);
    int rc = sim_err_set(err, SIM_ENOENT, NULL, 0, 0, "unknown %s '%s' in catalog %s (%sknown: %s)",
                         kinds[kind].dir, name, dir, hint, known[0] ? known : "none");
    cfg_catalog_names_free(names, n);
    return rc;
}

/* Dynamic power of CMOS logic is C V^2 f, and along a GPU's DVFS curve the voltage rises about in
 * step with the clock, so the power one SM draws at full load grows as f^3. A board's power limit
 * (tdp_w) then caps the clock its SMs hold: cards of one chip differ in SMs, boost clock and
 * board power, and the one with the most watts per SM-GHz^3 (power_ref) is taken to hold its
 * boost clock. Another card of the chip holds boost x cbrt(its watts per SM-GHz^3 / the
 * reference's), at most boost. Memory bandwidth does not follow the SM clock.
 * The power per SM clock also grows with the work done per clock: a workstation or data-centre
 * part runs FP32-accumulate tensor math at twice a GeForce's rate per SM clock (the GA102 and
 * AD102 whitepapers), switching twice the datapath, so while its tensor cores are busy it draws
 * about twice the power per SM-GHz^3 of its GeForce reference and holds less of its clock
 * (clock_factor_tensor): cbrt(watts ratio / tensor-work ratio), at most boost. */
static double watts_per_sm_ghz3(const sim_gpu_desc *g)
{
    double ghz = g->boost_mhz / 1000;
    return g->tdp_w / (g->sms * ghz * ghz * ghz);
}

/* Tensor-core work per SM clock (dense half precision, FP32 accumulate), relative units; 0 for
 * a card without half-precision tensor cores. */
static double tensor_per_sm_clock(const sim_gpu_desc *g)
{
    return g->fp16_tflops > 0 ? g->fp16_tflops / (g->sms * g->boost_mhz) : 0;
}

/* The clock factors of g from its power_ref, by the rule above. */
static int power_ref_clock(const char *dir, sim_gpu_desc *g, const char *path, sim_err *err)
{
    sim_gpu_desc ref;
    sim_err inner;
    sim_err_clear(&inner);
    int rc = cfg_catalog_load(dir, CFG_CAT_GPU, g->power_ref, &ref, &inner);
    if (rc) return sim_err_set(err, rc, path, 0, 0, "power_ref '%s': %s", g->power_ref, inner.msg);
    if (ref.power_ref[0] || ref.sustained_mhz > 0 || strcmp(ref.arch, g->arch) != 0)
        return sim_err_set(err, SIM_EINVAL, path, 0, 0,
                           "power_ref '%s' must be a card of the same arch (%s) without a "
                           "power_ref or sustained_mhz of its own",
                           g->power_ref, g->arch);
    if (!(g->tdp_w > 0 && ref.tdp_w > 0))
        return sim_err_set(err, SIM_EINVAL, path, 0, 0, "power_ref needs tdp_w on both cards");
    double watts = watts_per_sm_ghz3(g) / watts_per_sm_ghz3(&ref);
    double mine = tensor_per_sm_clock(g), theirs = tensor_per_sm_clock(&ref);
    double work = mine > 0 && theirs > 0 ? mine / theirs : 1;
    g->clock_factor = fmin(1, cbrt(watts));
    g->clock_factor_tensor = fmin(1, cbrt(watts / work));
    return SIM_OK;
}

/* Or a clock measured under sustained GEMM load (sustained_mhz), for a card the rule does not
 * describe: the 70-72 W inference parts (T4, L4) hold about half of what the cube law gives them
 * against a GeForce card of their chip, as a DVFS curve does once the voltage sits at its floor
 * and power falls only in step with the clock. A card gives one or the other. The tensor cores
 * hold the same clock unless a second one was measured under tensor-core GEMMs
 * (sustained_tensor_mhz; docs/kernel-cost.md). */
int cfg_gpu_resolve_clock(const char *dir, sim_gpu_desc *g, const char *path, sim_err *err)
{
    g->clock_factor = g->clock_factor_tensor = 1;
    if (g->sustained_tensor_mhz > 0 && !(g->sustained_mhz > 0))
        return sim_err_set(err, SIM_EINVAL, path, 0, 0,
                           "sustained_tensor_mhz without sustained_mhz: the tensor cores' "
                           "measured clock goes with the measured SIMT one");
    if (g->power_ref[0]) {
        int rc = power_ref_clock(dir, g, path, err);
        if (!rc && g->sustained_mhz > 0)
            rc = sim_err_set(err, SIM_EINVAL, path, 0, 0,
                             "sustained_mhz and power_ref both set: give the measured clock or "
                             "the card it is derived from, not both");
        return rc;
    }
    if (g->sustained_mhz > 0)
        g->clock_factor = g->clock_factor_tensor = fmin(1, g->sustained_mhz / g->boost_mhz);
    if (g->sustained_tensor_mhz > 0)
        g->clock_factor_tensor = fmin(1, g->sustained_tensor_mhz / g->boost_mhz);
    return SIM_OK;
}

void cfg_gpu_apply_ecc(sim_gpu_desc *g, int mode)
{
    bool on = mode == SIM_ECC_ON || (mode == SIM_ECC_DEFAULT && g->ecc_default);
    if (on) g->mem_gb *= 1 - g->ecc_reserve;
}

int cfg_catalog_load(const char *dir, cfg_catalog_kind kind, const char *name, void *out,
                     sim_err *err)
{
    if ((unsigned)kind >= CFG_CAT_COUNT)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "unknown catalog kind");
    char path[SIM_ERR_WHERE_MAX];
    if (!valid_name(name)) {
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0,
                           "'%s' is not a valid catalog name (lower-case letters, digits, '-')",
                           name);
    }
    snprintf(path, sizeof path, "%s/%s/%s.yaml", dir, kinds[kind].dir, name);
    FILE *probe = fopen(path, "rb");
    if (!probe) return unknown_name(dir, kind, name, err);
    fclose(probe);
    const cfg_table *t = &kinds[kind].table;
    bool set[64] = {false};
    memset(out, 0, kinds[kind].size);
    int rc = cfg_table_load_file(t, path, out, set, NULL, err);
    if (rc) return rc;
    rc = check_complete(kind, set, path, err);
    if (rc) return rc;
    if (strcmp((const char *)out, name) != 0) /* `name` is the first field of every desc */
        return sim_err_set(err, SIM_EINVAL, path, 0, 0, "name '%s' does not match the file name",
                           (const char *)out);
    return kind == CFG_CAT_GPU ? cfg_gpu_resolve_clock(dir, out, path, err) : SIM_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cfg_catalog_list(const char *dir, cfg_catalog_kind kind, char ***names, size_t *n, sim_err *err)
{
    *names = NULL;
    *n = 0;
    if ((unsigned)kind >= CFG_CAT_COUNT)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "unknown catalog kind");
    char path[SIM_ERR_WHERE_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, kinds[kind].dir);
    DIR *d = opendir(path);
    if (!d)
        return sim_err_set(err, SIM_ENOENT, path, 0, 0, "cannot open catalog folder: %s",
                           strerror(errno));
    size_t cap = 0;
    char **list = NULL;
    struct dirent *e;
    int rc = SIM_OK;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".yaml") != 0 || e->d_name[0] == '.') continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 32;
            char **grown = realloc(list, cap * sizeof *grown);
            if (!grown) {
                rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
                break;
            }
            list = grown;
        }
        list[*n] = strndup(e->d_name, len - 5);
        if (!list[*n]) {
            rc = sim_err_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            break;
        }
        (*n)++;
    }
    closedir(d);
    if (rc) {
        cfg_catalog_names_free(list, *n);
        *n = 0;
        return rc;
    }
    if (*n) qsort(list, *n, sizeof *list, cmp_str);
    *names = list;
    return SIM_OK;
}

void cfg_catalog_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int cfg_catalog_pcie(const char *dir, int gen, int lanes, sim_link_desc *out, sim_err *err)
{
    char name[32];
    snprintf(name, sizeof name, "pcie-gen%d", gen);
    int rc = cfg_catalog_load(dir, CFG_CAT_LINK, name, out, err);
    if (rc) return rc;
    if (lanes <= 0 || lanes > 32)
        return sim_err_set(err, SIM_EINVAL, NULL, 0, 0, "invalid PCIe lane count %d", lanes);
    /* Measured rates are per x16 link; bandwidth scales with lanes, the per-call cost does not. */
    double scale = (double)lanes / out->lanes;
    out->pinned_gbps *= scale;
    out->pageable_gbps *= scale;
    out->lanes = lanes;
    return SIM_OK;
}
