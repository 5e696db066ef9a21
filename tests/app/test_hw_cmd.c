/* test_hw_cmd.c — runs the real `epochsim hw` binary (EPOCHSIM_BINARY) and checks its tables,
 * its JSON (parsed back with yajl) and its exit codes for good and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#define CATALOG EPOCHSIM_SOURCE_DIR "/configs/hardware"
#define TEST_CATALOG EPOCHSIM_SOURCE_DIR "/tests/data/catalog"

typedef struct run_result {
    int status; /* exit code */
    char *out;  /* stdout (and stderr when the command merges it), malloc'd */
} run_result;

/* Runs `epochsim ARGS` with the catalog pinned by --catalog or the environment; captures stdout. */
static run_result run(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "EPOCHSIM_CATALOG='%s' '%s' %s", CATALOG, EPOCHSIM_BINARY, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (len + 1 == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    buf[len] = 0;
    int st = pclose(p);
    run_result r = {WIFEXITED(st) ? WEXITSTATUS(st) : -1, buf};
    return r;
}

static void assert_contains(const char *haystack, const char *needle)
{
    if (!strstr(haystack, needle)) fail_msg("expected '%s' in output:\n%s", needle, haystack);
}

/* Runs `epochsim ARGS`, which must succeed and print JSON; returns the parsed tree. */
static yajl_val run_json(const char *args)
{
    run_result r = run(args);
    assert_int_equal(r.status, 0);
    char errbuf[256];
    yajl_val root = yajl_tree_parse(r.out, errbuf, sizeof errbuf);
    if (!root) fail_msg("invalid JSON from '%s': %s", args, errbuf);
    free(r.out);
    return root;
}

static double json_number(yajl_val root, const char *a, const char *b, const char *c)
{
    const char *path[] = {a, b, c, NULL};
    yajl_val v = yajl_tree_get(root, path, yajl_t_number);
    if (!v) fail_msg("no number at %s.%s.%s", a, b ? b : "", c ? c : "");
    return YAJL_GET_DOUBLE(v);
}

static void test_hw_cmd_list_gpus_table(void **state)
{
    (void)state;
    run_result r = run("hw list gpus");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "gpus (");
    assert_contains(r.out, "fp16_tflops");
    assert_contains(r.out, "a100-sxm4-80gb");
    assert_contains(r.out, "rtx-pro-6000-blackwell-max-q");
    assert_null(strstr(r.out, "epyc-7742")); /* only the kind asked for */
    free(r.out);
}

static void test_hw_cmd_list_all_kinds(void **state)
{
    (void)state;
    run_result r = run("hw list");
    assert_int_equal(r.status, 0);
    const char *heads[] = {"gpus (", "cpus (", "storage (", "links (", "systems ("};
    for (size_t i = 0; i < 5; i++)
        assert_contains(r.out, heads[i]);
    assert_contains(r.out, "dgx-a100");
    free(r.out);
}

static void test_hw_cmd_list_json_parses(void **state)
{
    (void)state;
    yajl_val root = run_json("hw list cpus --json");
    const char *path[] = {"cpus", NULL};
    yajl_val cpus = yajl_tree_get(root, path, yajl_t_array);
    assert_non_null(cpus);
    assert_true(cpus->u.array.len >= 8);
    int found = 0;
    for (size_t i = 0; i < cpus->u.array.len; i++) {
        yajl_val e = cpus->u.array.values[i];
        const char *np[] = {"name", NULL}, *sp[] = {"single_thread", NULL};
        const char *name = YAJL_GET_STRING(yajl_tree_get(e, np, yajl_t_string));
        yajl_val st = yajl_tree_get(e, sp, yajl_t_number);
        assert_non_null(name);
        assert_non_null(st);
        if (!strcmp(name, "epyc-7742")) {
            assert_true(YAJL_GET_DOUBLE(st) == 1.0);
            found = 1;
        }
    }
    assert_true(found);
    yajl_tree_free(root);
}

static void test_hw_cmd_show_gpu_table(void **state)
{
    (void)state;
    run_result r = run("hw show a100-sxm4-80gb");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "a100-sxm4-80gb (gpus)");
    assert_contains(r.out, "mem_bw_gbps");
    assert_contains(r.out, "GB/s"); /* units */
    assert_contains(r.out, "TFLOP/s");
    assert_contains(r.out, "[S7]"); /* the line's source comment */
    assert_contains(r.out, "sources:");
    assert_contains(r.out, "glennklockwood.com"); /* the citation itself */
    assert_contains(r.out, "compute_capability    8.0");
    free(r.out);
}

/* The MIG profiles with each instance's figures: 1g.10gb is 14 SMs, 80 / 8 GB, 2039 / 8 GB/s. */
static void test_hw_cmd_show_gpu_mig_profiles(void **state)
{
    (void)state;
    run_result r = run("hw show a100-sxm4-80gb");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "MIG: 7 compute x 8 memory slices");
    assert_contains(r.out,
                    "1g.10gb       1/7   14    10.0       255    5.0   1    7  0,1,2,3,4,5,6");
    assert_contains(r.out, "7g.80gb       7/7   98    80.0      2039   40.0   7    1  0");
    free(r.out);
    r = run("hw show t4");
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.out, "memory slices"));
    free(r.out);
}

static void test_hw_cmd_show_json_values(void **state)
{
    (void)state;
    yajl_val root = run_json("hw show a100-sxm4-80gb --json");
    const char *kp[] = {"kind", NULL};
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(root, kp, yajl_t_string)), "gpus");
    /* numbers come back exactly as the catalog writes them */
    assert_true(json_number(root, "entry", "fp16_tflops", NULL) == 312);
    assert_true(json_number(root, "entry", "nvml_window_ms", NULL) == 166.7);
    assert_true(json_number(root, "entry", "sms", NULL) == 108);
    const char *up[] = {"units", "mem_bw_gbps", NULL};
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(root, up, yajl_t_string)), "GB/s");
    const char *sp[] = {"sources", "S7", NULL};
    assert_non_null(yajl_tree_get(root, sp, yajl_t_string));
    const char *cp[] = {"entry", "eff_tensor", NULL}; /* not given: null, the model default */
    assert_non_null(yajl_tree_get(root, cp, yajl_t_null));
    /* the SXM4 is its chip's power reference: it holds boost */
    assert_true(json_number(root, "clock_factor", NULL, NULL) == 1);
    yajl_tree_free(root);
    /* the A10 holds cbrt((150 W / 72 SMs) / (350 W / 82 SMs)) of boost against the RTX 3090 */
    root = run_json("hw show a10 --json");
    assert_true(fabs(json_number(root, "clock_factor", NULL, NULL) - 0.7874) < 1e-4);
    /* and cbrt(0.4880 / 2.005) = 0.624 while its full-rate tensor cores are busy */
    assert_true(fabs(json_number(root, "clock_factor_tensor", NULL, NULL) - 0.6244) < 1e-4);
    yajl_tree_free(root);
    /* the T4 states its measured clocks: 799 of 1,590 MHz, 1,336 on the tensor cores, and says
     * where they are from */
    root = run_json("hw show t4 --json");
    assert_true(fabs(json_number(root, "clock_factor", NULL, NULL) - 799.0 / 1590) < 1e-12);
    assert_true(fabs(json_number(root, "clock_factor_tensor", NULL, NULL) - 1336.0 / 1590) < 1e-12);
    yajl_tree_free(root);
    run_result r = run("hw show t4");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "sustained clock: 0.503 of boost, 799 MHz; 0.840, 1336 MHz while");
    assert_contains(r.out, "measured: sustained_mhz, sustained_tensor_mhz");
    free(r.out);
}

static void test_hw_cmd_show_system_resolves_parts(void **state)
{
    (void)state;
    run_result r = run("hw show aws-g5-2xlarge");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "parts:");
    assert_contains(r.out, "epyc-7r32 (AMD EPYC 7R32");
    free(r.out);
    /* a desktop leaves cpu_cores to the CPU: JSON null, table "-" */
    yajl_val root = run_json("hw show desktop-4090 --json");
    const char *p[] = {"entry", "cpu_cores", NULL};
    assert_non_null(yajl_tree_get(root, p, yajl_t_null));
    yajl_tree_free(root);
}

static void test_hw_cmd_show_system_links(void **state)
{
    (void)state;
    /* 24 lanes of a Ryzen 9 7950X less 4 for the boot drive: x8 x4 x4 x4; GeForce: no P2P */
    run_result r = run("hw show desktop-4x4090");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "4 GPUs: x8 x4 x4 x4");
    assert_contains(r.out, "P2P      no");
    assert_contains(r.out, "slowest hop host");
    free(r.out);
    r = run("hw show dgx-a100");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "NVLink   nvswitch, 12 links per GPU at 20.0 GB/s");
    assert_contains(r.out, "slowest hop nvlink at 240.00 GB/s");
    free(r.out);
    yajl_val root = run_json("hw show desktop-4x4090 --json");
    const char *lanes[] = {"links", "pcie_lanes", NULL};
    yajl_val arr = yajl_tree_get(root, lanes, yajl_t_array);
    assert_non_null(arr);
    assert_int_equal(YAJL_GET_ARRAY(arr)->len, 4);
    const int want[] = {8, 4, 4, 4};
    for (int i = 0; i < 4; i++)
        assert_int_equal(YAJL_GET_INTEGER(YAJL_GET_ARRAY(arr)->values[i]), want[i]);
    /* x4 at 25 GB/s per x16 x the host bounce share (sim/core/topo.h) */
    assert_true(fabs(json_number(root, "links", "ring_bw_gbps", NULL) - 25.0 / 4 * 0.33) < 1e-9);
    yajl_tree_free(root);
}

/* The row of SIZE in an all_reduce_perf-style table: its busbw column. */
static double table_busbw(const char *out, const char *size)
{
    char key[64];
    snprintf(key, sizeof key, "\n %12s ", size);
    const char *row = strstr(out, key);
    if (!row) fail_msg("no row for %s in:\n%s", size, out);
    double b, count, t, alg, bus;
    char type[16], op[16];
    if (sscanf(row, " %lf %lf %15s %15s %lf %lf %lf", &b, &count, type, op, &t, &alg, &bus) != 7)
        fail_msg("bad row for %s", size);
    assert_true(fabs(alg * 1e3 * t - b) < 1e-2 * b); /* algbw = size / time, as printed */
    return bus;
}

static void test_hw_cmd_allreduce_table_and_json(void **state)
{
    (void)state;
    run_result r = run("hw allreduce dgx-a100 --bytes 1M:4G");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "algbw");
    /* 8 GPUs on NVSwitch: 12 links x 20 GB/s; at 4 GiB latency fades, below the link always */
    double big = table_busbw(r.out, "4294967296");
    assert_true(big > 235 && big < 240);
    assert_true(table_busbw(r.out, "1048576") < big); /* latency costs small messages */
    free(r.out);
    yajl_val root =
        run_json("hw allreduce server-4x-a100-pcie --gpus 2 --bytes 1G --set system.nvlink=bridge "
                 "--set system.nvlink_links=12 --json -");
    const char *res[] = {"results", NULL};
    yajl_val arr = yajl_tree_get(root, res, yajl_t_array);
    assert_non_null(arr);
    assert_int_equal(YAJL_GET_ARRAY(arr)->len, 1);
    yajl_val row = YAJL_GET_ARRAY(arr)->values[0];
    double bus = json_number(row, "busbw_gbps", NULL, NULL);
    double alg = json_number(row, "algbw_gbps", NULL, NULL);
    assert_true(fabs(bus - alg) < 1e-9); /* two GPUs: busbw = algbw x 2 (2 - 1) / 2 */
    assert_true(bus > 230 && bus < 240);
    yajl_tree_free(root);
}

/* 8 H100s on NVSwitch with the default PyTorch (NCCL 2.18+): NVLink SHARP at 4 GiB,
 * busbw = 370.8 GB/s x 0.85 x 8/9 x 14/8 = 490 less the 25 us latency (the closed form is
 * tests/core/test_topo.c's); system.nvls=off (NCCL_NVLS_ENABLE=0) leaves the ring's 370. */
static void test_hw_cmd_allreduce_nvls(void **state)
{
    (void)state;
    run_result r = run("hw allreduce dgx-h100 --bytes 4G");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "NVLS: the NVSwitches reduce");
    assert_contains(r.out, "nvls  Simple");
    double bus = table_busbw(r.out, "4294967296");
    assert_true(bus > 488 && bus < 490);
    free(r.out);
    r = run("hw allreduce dgx-h100 --bytes 4G --set system.nvls=off");
    assert_int_equal(r.status, 0);
    assert_true(strstr(r.out, "NVLS") == NULL);
    bus = table_busbw(r.out, "4294967296");
    assert_true(bus > 369 && bus < 370.8); /* the ring, below its 18 x 20.6 GB/s */
    free(r.out);
    r = run("hw allreduce dgx-h100 --set system.nvls=maybe 2>&1"); /* a config error */
    assert_int_equal(r.status, 1);
    assert_contains(r.out, "system.nvls");
    free(r.out);
}

static void test_hw_cmd_allreduce_bad_input(void **state)
{
    (void)state;
    const char *usage[] = {"hw allreduce",
                           "hw allreduce dgx-a100 --bytes 0",
                           "hw allreduce dgx-a100 --bytes 8G:1K",
                           "hw allreduce dgx-a100 --gpus 1",
                           "hw allreduce dgx-a100 --wat",
                           "hw allreduce desktop-4090"};
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "%s 2>&1", usage[i]);
        run_result r = run(args);
        if (r.status != 2) fail_msg("'%s' exited %d, expected 2 (usage)", usage[i], r.status);
        free(r.out);
    }
    /* An A100 has 600 GB/s of NVLink, not 16 links x 20 GB/s x 2; a 4090 has no NVLink at all:
     * errors naming the key
     */
    run_result r = run("hw allreduce server-4x-a100-pcie --set system.nvlink=bridge "
                       "--set system.nvlink_links=16 2>&1");
    assert_int_equal(r.status, 1);
    assert_contains(r.out, "system.nvlink_links 16");
    free(r.out);
    r = run("hw allreduce desktop-4x4090 --set system.nvlink=nvswitch 2>&1");
    assert_int_equal(r.status, 1);
    assert_contains(r.out, "has no NVLink");
    free(r.out);
}

static void test_hw_cmd_catalog_flag_overrides_env(void **state)
{
    (void)state;
    run_result r = run("hw list gpus --catalog '" TEST_CATALOG "'");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "test-gpu");
    assert_null(strstr(r.out, "a100-sxm4-80gb"));
    free(r.out);
}

static void test_hw_cmd_unknown_name_is_error(void **state)
{
    (void)state;
    run_result r = run("hw show a100 2>&1");
    assert_int_equal(r.status, 1);
    assert_contains(r.out, "no catalog entry named 'a100'");
    assert_contains(r.out, "a100-sxm4-80gb"); /* suggestions */
    free(r.out);
}

static void test_hw_cmd_bad_usage_exits_2(void **state)
{
    (void)state;
    const char *bad[] = {"hw",
                         "hw list bogus",
                         "hw frobnicate",
                         "hw show",
                         "hw show t4 extra",
                         "hw list --kind",
                         "hw list --wat",
                         "hw show t4 --kind nonsense"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "%s 2>&1", bad[i]);
        run_result r = run(args);
        if (r.status != 2) fail_msg("'%s' exited %d, expected 2 (usage)", bad[i], r.status);
        assert_true(strlen(r.out) > 0); /* says why */
        free(r.out);
    }
}

static void test_hw_cmd_help_has_examples(void **state)
{
    (void)state;
    run_result r = run("hw --help");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "examples:");
    assert_contains(r.out, "epochsim hw show");
    free(r.out);
    r = run("--help");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "hw ");
    free(r.out);
}

static void test_hw_cmd_broken_entry_is_reported(void **state)
{
    (void)state;
    /* A catalog with one malformed GPU: list reports file:line:col and exits 1. */
    char dir[] = "/tmp/epochsim-hw-cli-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[512];
    snprintf(path, sizeof path, "%s/gpus", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/gpus/bad-gpu.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("name: bad-gpu\nsms: many\n", f);
    fclose(f);
    char args[600];
    snprintf(args, sizeof args, "hw list gpus --catalog '%s' 2>&1", dir);
    run_result r = run(args);
    assert_int_equal(r.status, 1);
    assert_contains(r.out, "bad-gpu.yaml:2:6");
    free(r.out);
    remove(path);
    snprintf(path, sizeof path, "%s/gpus", dir);
    rmdir(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hw_cmd_list_gpus_table),
        cmocka_unit_test(test_hw_cmd_list_all_kinds),
        cmocka_unit_test(test_hw_cmd_list_json_parses),
        cmocka_unit_test(test_hw_cmd_show_gpu_table),
        cmocka_unit_test(test_hw_cmd_show_gpu_mig_profiles),
        cmocka_unit_test(test_hw_cmd_show_json_values),
        cmocka_unit_test(test_hw_cmd_show_system_resolves_parts),
        cmocka_unit_test(test_hw_cmd_show_system_links),
        cmocka_unit_test(test_hw_cmd_allreduce_table_and_json),
        cmocka_unit_test(test_hw_cmd_allreduce_nvls),
        cmocka_unit_test(test_hw_cmd_allreduce_bad_input),
        cmocka_unit_test(test_hw_cmd_catalog_flag_overrides_env),
        cmocka_unit_test(test_hw_cmd_unknown_name_is_error),
        cmocka_unit_test(test_hw_cmd_bad_usage_exits_2),
        cmocka_unit_test(test_hw_cmd_help_has_examples),
        cmocka_unit_test(test_hw_cmd_broken_entry_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
