/* test_bad_input.c — bad input through the epochsim binary, as a user meets it: experiment YAML,
 * --set, catalog files, native msgpack traces and Kineto JSON. Each row writes its input into a
 * fresh folder, runs the command there and asserts the exit code, that stdout stayed empty (data
 * only goes there on success) and a piece of the message, with file:line:col where the input has
 * lines. Runs under ASan/UBSan with the rest of the suite. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* after the headers it needs */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SRC EPOCHSIM_SOURCE_DIR
#define TRACE_GZ                                                                                   \
    SRC "/tests/data/validation-traces/kineto/resnet50_num_workers_0/"                             \
        "worker0.1623143089861.pt.trace.json.gz"

typedef struct bad_case {
    const char *file;    /* input written into the case's folder, NULL for none */
    const char *content; /* its text */
    const char *args;    /* space-separated, after any NAME=VALUE words for the environment; {D}
                            is the folder, {C} a copy of the catalog whose gpus/bad.yaml is
                            t4.yaml with `from` replaced by `to` */
    const char *from, *to;
    int rc;
    const char *message; /* expected in stderr */
} bad_case;

#define RUN "run x.yaml --set training.max_steps=1"
#define Y(text, rc, msg)                                                                           \
    {                                                                                              \
        "x.yaml", text, RUN, NULL, NULL, rc, msg                                                   \
    }
#define SET(arg, rc, msg)                                                                          \
    {                                                                                              \
        NULL, NULL, "run --set " arg, NULL, NULL, rc, msg                                          \
    }
#define CAT(from, to, msg)                                                                         \
    {                                                                                              \
        NULL, NULL, "run --catalog {C} --set system.gpu=bad --set training.max_steps=1", from, to, \
            1, msg                                                                                 \
    }
#define KINETO(text, msg)                                                                          \
    {                                                                                              \
        "k.json", text, "import kineto k.json -o out.trace", NULL, NULL, 1, msg                    \
    }

static const bad_case cases[] = {
    /* experiment YAML: syntax and structure */
    Y("loader:\n  num_worker: 4\n", 1,
      "x.yaml:2:3: error: unknown key 'loader.num_worker' (did you mean 'loader.num_workers'?)"),
    Y("loader:\n  batch_size: 4\n  batch_size: 8\n", 1,
      "x.yaml:3:3: error: duplicate key 'batch_size' (first given on line 2)"),
    Y("seed: 1\n---\nseed: 2\n", 1, "x.yaml:2:1: error: a second YAML document starts here"),
    Y("seed: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]"
      "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
      1, "x.yaml:1:70: error: nested more than 64 levels deep"),
    Y("loader: 5\n", 1, "x.yaml:1:9: error: 'loader' is a section"),
    Y("loader: [1, 2\n", 1, "x.yaml:2:1: error: malformed YAML"),
    Y("loader:\n\tbatch_size: 4\n", 1, "x.yaml:2:1: error: malformed YAML"),
    Y("", 1, "x.yaml:1:1: error: the file is empty"),
    Y("- a\n- b\n", 1, "x.yaml:1:1: error: expected a mapping of keys"),
    Y("? [a, b]\n: 1\n", 1, "x.yaml:1:3: error: keys must be plain names"),
    Y("loader:\n  batch_size: {a: 1}\n", 1,
      "x.yaml:2:15: error: 'loader.batch_size': expected a single value, not a mapping"),
    Y("loader:\n  batch_size: [1, 2]\n", 1,
      "x.yaml:2:15: error: 'loader.batch_size': expected a single value, not a list"),
    Y("\x01\x02\x03\n", 1, "x.yaml:1:1: error: malformed YAML: control characters are not allowed"),
    /* experiment YAML: values */
    Y("loader:\n  batch_size: abc\n", 1,
      "x.yaml:2:15: error: 'loader.batch_size' expected an integer, got 'abc'"),
    Y("loader:\n  batch_size: 2.5\n", 1,
      "x.yaml:2:15: error: 'loader.batch_size' expected an integer, got '2.5'"),
    Y("loader:\n  batch_size: 32x\n", 1,
      "x.yaml:2:15: error: 'loader.batch_size' expected an integer, got '32x'"),
    Y("loader:\n  batch_size: 0\n", 1,
      "x.yaml:2:15: error: 'loader.batch_size' must be between 1 and"),
    Y("loader:\n  num_workers: -1\n", 1,
      "x.yaml:2:16: error: 'loader.num_workers' must be between 0 and 4096"),
    Y("loader:\n  drop_last: maybe\n", 1,
      "x.yaml:2:14: error: 'loader.drop_last' expected true or false, got 'maybe'"),
    Y("dataset:\n  decode_us: nan\n", 1,
      "x.yaml:2:14: error: 'dataset.decode_us' expected a number, got 'nan'"),
    Y("dataset:\n  sample_bytes: inf\n", 1,
      "x.yaml:2:17: error: 'dataset.sample_bytes' expected a number, got 'inf'"),
    Y("dataset:\n  decode_cv: 11\n", 1,
      "x.yaml:2:14: error: 'dataset.decode_cv' must be between 0 and 10"),
    Y("dataset:\n  location: disk\n", 1,
      "x.yaml:2:13: error: 'dataset.location' unknown value 'disk' (storage, memory)"),
    /* a dataset in memory that does not fit in host RAM beside the OS and the processes */
    Y("system:\n  host_memory_gb: 16\ndataset:\n  location: memory\n  samples: 1000000\n"
      "  sample_bytes: 10000\n",
      1, "x.yaml:4:13: error: dataset.location memory: the dataset takes 10 GB of host RAM"),
    /* two jobs whose datasets fit one at a time but not together */
    Y("system:\n  host_memory_gb: 64\ndataset:\n  location: memory\n  samples: 3000000\n"
      "  sample_bytes: 10000\nloader:\n  num_workers: 0\njobs:\n  - name: a\n  - name: b\n",
      1, "error: the jobs' datasets in memory (dataset.location memory) take 60 GB"),
    Y("seed: -1\n", 1, "x.yaml:1:7: error: 'seed' must be between 0 and"),
    Y("system:\n  mem_copy_efficiency: 0\n", 1,
      "x.yaml:2:24: error: 'system.mem_copy_efficiency' must be between 0.01 and 1"),
    Y("system:\n  host_memory_gb: 0.1\n", 1,
      "x.yaml:2:19: error: 'system.host_memory_gb' must be between 0.5 and 65536"),
    Y("training:\n  ddp_bucket_mb: 0\n", 1,
      "x.yaml:2:18: error: 'training.ddp_bucket_mb' must be between 0.001 and 65536"),
    Y("system:\n  gpu_count: 0\n", 1,
      "x.yaml:2:14: error: 'system.gpu_count' must be between 1 and 1024"),
    Y("system:\n  cpu_cores: 5000\n", 1,
      "x.yaml:2:14: error: 'system.cpu_cores' must be between 0 and 1024"),
    Y("system:\n  cpu_cores: 999\n", 1,
      "x.yaml:2:14: error: system.cpu_threads (128) is below system.cpu_cores (999)"),
    Y("system:\n  pcie_gen: 7\n", 1,
      "x.yaml:2:13: error: 'system.pcie_gen' must be between 0 and 5"),
    Y("system:\n  nvlink: true\n", 1,
      "x.yaml:2:11: error: 'system.nvlink' unknown value 'true' (none, bridge, nvswitch, mesh)"),
    Y("system:\n  nvlink_links: 99\n", 1,
      "x.yaml:2:17: error: 'system.nvlink_links' must be between 0 and 64"),
    /* topology relations, pointed at their key */
    Y("system:\n  gpu: rtx-4090\n  nvlink: bridge\n  nvlink_links: 4\n", 1,
      "x.yaml:3:11: error: system.nvlink is bridge but the rtx-4090 has no NVLink"),
    Y("system:\n  gpu: a100-pcie-80gb\n  nvlink: bridge\n", 1,
      "x.yaml:3:11: error: system.nvlink_links 0: with system.nvlink bridge give the links per"),
    Y("system:\n  cpu: ryzen-9-7950x\n  gpu_count: 6\n", 1,
      "x.yaml:3:14: error: system.gpu_count 6: each GPU needs an x4 slot at least, but 1 x "
      "ryzen-9-7950x gives 20 lanes"),
    Y("training:\n  epochs: 0\n", 1,
      "x.yaml:2:11: error: 'training.epochs' must be between 1 and 10000"),
    Y("training:\n  epochs: 20000\n", 1,
      "x.yaml:2:11: error: 'training.epochs' must be between 1 and 10000"),
    Y("workload:\n  kernels_per_step: 0\n", 1,
      "x.yaml:2:21: error: 'workload.kernels_per_step' must be between 1 and"),
    Y("workload:\n  accum_steps: 0\n", 1,
      "x.yaml:2:16: error: 'workload.accum_steps' must be between 1 and"),
    Y("workload:\n  precision: fp64\n", 1,
      "x.yaml:2:14: error: 'workload.precision' unknown precision 'fp64'"),
    Y("workload:\n  mode: eval\n", 1,
      "x.yaml:2:9: error: 'workload.mode' unknown value 'eval' (train, inference)"),
    Y("workload:\n  optimizer: sgdd\n", 1,
      "x.yaml:2:14: error: 'workload.optimizer' unknown value 'sgdd' (sgd, adam, adamw, bertadam, "
      "none)"),
    Y("system:\n  gpu: "
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
      1, "x.yaml:2:8: error: 'system.gpu' is longer than 63 characters"),
    /* experiment YAML: names, relations and resource bombs, pointed at their key */
    Y("system:\n  gpu: rtx-4900\n", 1,
      "x.yaml:2:8: error: system.gpu: unknown gpus 'rtx-4900' in catalog"),
    Y("system:\n  gpu: rtx-4900\n", 1, "(did you mean 'rtx-4090'?"),
    Y("system:\n  gpu: a100-sxm4-80gb\nplacement:\n  mig: 1g.5gb\n", 1,
      "x.yaml:4:8: error: placement.mig: unknown MIG profile '1g.5gb' on a100-sxm4-80gb (did you "
      "mean '1g.10gb'?"),
    Y("system:\n  gpu: t4\nplacement:\n  mig: 1g.5gb\n", 1,
      "x.yaml:4:8: error: placement.mig: t4 has no MIG"),
    /* several jobs: the list, its items and the keys they bring */
    Y("system:\n  gpu_sharing: mpss\n", 1,
      "x.yaml:2:16: error: 'system.gpu_sharing' unknown value 'mpss' (time_slice, mps)"),
    Y("system:\n  gpu_timeslice_us: 0\n", 1,
      "x.yaml:2:21: error: 'system.gpu_timeslice_us' must be between 10 and"),
    Y("placement:\n  gpus: [0]\n", 1,
      "x.yaml:2:9: error: placement.gpus places an item of a `jobs:` list"),
    Y("jobs:\n  - name: a\n    placement: {gpus: [0, x]}\n", 1,
      "x.yaml:3:23: error: 'placement.gpus' expected an integer, got 'x'"),
    Y("jobs:\n  - name: a\n    placement: {gpus: [3]}\n", 1,
      "x.yaml:3:23: error: job 'a': placement.gpus lists GPU 3, but the system has 1 (0 .. 0)"),
    Y("jobs:\n  - name: a\n    system: {cpu: epyc-7742}\n", 1,
      "x.yaml:3:19: error: job 'a': 'system.cpu': the system is shared by all jobs"),
    Y("jobs:\n  - name: a\n    experiment: missing.yaml\n", 1, "missing.yaml: error: cannot open"),
    Y("jobs:\n  - name: a\n    workload: {model: resnet5}\n", 1,
      "x.yaml:3:23: error: job 'a': workload.model: unknown model 'resnet5'"),
    {"x.yaml", "jobs:\n  - name: a\n", "run x.yaml --sampled", NULL, NULL, 2,
     "epochsim run: --sampled does not support jobs: yet (run.sampled_pct 0.5 for job 'a')"},
    Y("jobs:\n  - name: a\n  - name: b\n    run: {sampled_pct: 1}\n", 2,
      "epochsim run: --sampled does not support jobs: yet (run.sampled_pct 1 for job 'b')"),
    Y("system:\n  cpu: epyc-7743\n", 1,
      "x.yaml:2:8: error: system.cpu: unknown cpus 'epyc-7743' in catalog"),
    Y("system:\n  storage: nvme-gen9\n", 1,
      "x.yaml:2:12: error: system.storage: unknown storage 'nvme-gen9'"),
    Y("system:\n  name: dgx-a10\n", 1,
      "x.yaml:2:9: error: system.name: unknown systems 'dgx-a10' in catalog"),
    Y("system:\n  gpu: ../etc/passwd\n", 1,
      "x.yaml:2:8: error: system.gpu: '../etc/passwd' is not a valid catalog name"),
    Y("workload:\n  model: resnet5\n", 1,
      "x.yaml:2:10: error: workload.model: unknown model 'resnet5' (did you mean 'resnet50'?"),
    Y("loader:\n  num_workers: 0\n  prefetch_factor: 4\n", 1,
      "x.yaml:3:20: error: loader.prefetch_factor needs loader.num_workers > 0"),
    Y("dataset:\n  samples: 10\nloader:\n  batch_size: 32\n  drop_last: true\n", 1,
      "x.yaml:5:14: error: loader.drop_last with loader.batch_size 32 > dataset.samples 10 leaves "
      "no batch"),
    Y("report:\n  util_window_ns: 1\n", 1,
      "x.yaml:2:19: error: report.util_window_ns must be 0 (the GPU's NVML window) or at least "
      "1000000"),
    Y("report:\n  util_window_ns: 9000000000000\n", 1,
      "x.yaml:2:19: error: 'report.util_window_ns' must be between 0 and"),
    Y("run:\n  sampled_pct: 12\n", 1,
      "x.yaml:2:16: error: 'run.sampled_pct' must be between 0 and 10"),
    Y("run:\n  sampled_pct: half\n", 1,
      "x.yaml:2:16: error: 'run.sampled_pct' expected a number, got 'half'"),
    Y("system:\n  gpu_count: 2\ndataset:\n  samples: 1000000000\n", 1,
      "x.yaml:4:12: error: dataset.samples 1000000000 on 2 GPUs needs 7.45 GiB of per-sample "
      "state, over the 4 GiB budget"),
    Y("dataset:\n  samples: 2000000000\n", 1,
      "x.yaml:2:12: error: 'dataset.samples' must be between 1 and"),
    Y("workload:\n  trace: nope.json\n", 1,
      "nope.json: error: workload.trace: cannot read 'nope.json'"),
    Y("workload:\n  trace: " TRACE_GZ "\n  trace_gpu: v100-sxm3\n", 1,
      "x.yaml:3:14: error: workload.trace_gpu: unknown gpus 'v100-sxm3'"),
    {NULL, NULL, "run {D}", NULL, NULL, 1, ": error: is a directory, not a YAML file"},
    {NULL, NULL, "run missing.yaml", NULL, NULL, 1,
     "missing.yaml: error: cannot open: No such file or directory"},
    /* 100 epochs of 1000 samples: ~50 s simulated, 50,000 windows of 1 ms; the budget holds 3,355
     */
    {"x.yaml",
     "report:\n  util_window_ns: 1000000\ndataset:\n  samples: 1000\ntraining:\n  epochs: 100\n",
     "EPOCHSIM_MEMORY_BUDGET_GB=0.0001 run x.yaml", NULL, NULL, 1,
     "x.yaml:2:19: error: report.util_window_ns 1000000: the GPU-Util series of this run grows "
     "past "
     "the 0.0001 GiB memory budget (3355 windows)"},
    /* --set */
    SET("foo", 1, "--set foo: error: expected key.path=value"),
    SET("foo.bar=1", 1, "--set foo.bar=1: error: unknown key 'foo.bar'"),
    SET("loader=5", 1, "--set loader=5: error: 'loader' is a section: set one of its keys"),
    SET("loader.batch_size=", 1,
        "--set loader.batch_size=: error: 'loader.batch_size' expected an integer, got nothing"),
    SET("system.gpu=rtx-4900", 1,
        "--set system.gpu=rtx-4900: error: system.gpu: unknown gpus 'rtx-4900'"),
    SET("workload.precision=fp64", 1,
        "--set workload.precision=fp64: error: 'workload.precision' unknown precision 'fp64'"),
    SET("loader.pin_memory=2", 1,
        "--set loader.pin_memory=2: error: 'loader.pin_memory' expected true or false, got '2'"),
    SET("loader.num_worker=2", 1, "(did you mean 'loader.num_workers'?)"),
    /* usage */
    {NULL, NULL, "run --bogus", NULL, NULL, 2, "epochsim run: bad option '--bogus'"},
    {NULL, NULL, "bogus", NULL, NULL, 2, "epochsim: unknown command 'bogus'"},
    {NULL, NULL, "run a.yaml b.yaml", NULL, NULL, 2, "epochsim run: one experiment file at most"},
    /* catalog files */
    CAT("sms: 40", "sms: many",
        "/gpus/bad.yaml:6:6: error: system.gpu: 'sms' expected an integer, got 'many'"),
    CAT("sms: 40", "smz: 40",
        "/gpus/bad.yaml:6:1: error: system.gpu: unknown key 'smz' (did you mean 'sms'?)"),
    CAT("name: t4", "name: t5",
        "/gpus/bad.yaml: error: system.gpu: name 't5' does not match the file name"),
    CAT("mem_bw_gbps: 320", "mem_bw_gbps: -5",
        "/gpus/bad.yaml:17:14: error: system.gpu: 'mem_bw_gbps' must be at least 1"),
    CAT("ecc_reserve: 0.0625", "ecc_reserve: 0.9",
        "/gpus/bad.yaml:15:14: error: system.gpu: 'ecc_reserve' must be between 0 and 0.5"),
    CAT("eff_mem: [[3.25, 0.040], [4.25,", "eff_mem: [[3.25, 0.040], [3.0,",
        "/gpus/bad.yaml:32:26: error: system.gpu: 'eff_mem': x values must ascend"),
    CAT("eff_mem: [[3.25, 0.040]", "eff_mem: [[3.25, 1.5]",
        "/gpus/bad.yaml:32:11: error: system.gpu: 'eff_mem': efficiency must be in (0, 1]"),
    CAT("sms: 40", "sms: 40\nsms: 41",
        "/gpus/bad.yaml:7:1: error: system.gpu: duplicate key 'sms' (first given on line 6)"),
    CAT("sms: 40", "sms: 40\npower_ref: rtx-4900",
        "/gpus/bad.yaml: error: system.gpu: power_ref 'rtx-4900': unknown gpus 'rtx-4900'"),
    CAT("sms: 40", "sms: 40\npower_ref: a10",
        "/gpus/bad.yaml: error: system.gpu: power_ref 'a10' must be a card of the same arch "
        "(turing) without a power_ref or sustained_mhz of its own"),
    CAT("sms: 40", "sms: 40\npower_ref: rtx-2080-ti",
        "/gpus/bad.yaml: error: system.gpu: sustained_mhz and power_ref both set: give the "
        "measured clock or the card it is derived from, not both"),
    CAT("sustained_mhz: 799", "sustained_mhz: 0",
        "/gpus/bad.yaml: error: system.gpu: sustained_tensor_mhz without sustained_mhz: the "
        "tensor cores' measured clock goes with the measured SIMT one"),
    /* native msgpack traces */
    {"r.trace", "\x93\xa5hello\x01\x02", "trace show r.trace", NULL, NULL, 1,
     "r.trace: at byte 0: error: not an epochsim trace"},
    {"e.trace", "", "trace show e.trace", NULL, NULL, 1,
     "e.trace: at byte 0: error: not an epochsim trace: the file is empty"},
    {NULL, NULL, "trace show missing.trace", NULL, NULL, 1,
     "missing.trace: error: cannot open the trace: No such file or directory"},
    {"r.trace", "garbage", "run x.yaml", NULL, NULL, 1,
     "error: workload.trace: not an epochsim trace"},
    /* sequence-length histograms (workload.seq_lengths) */
    {"h.csv", "length,count\n1,2\n0,3\n",
     "run --set workload.model=bert-base --set workload.seq_lengths=h.csv", NULL, NULL, 1,
     "h.csv:3: error: workload.seq_lengths: column length: not a whole number"},
    {"h.csv", "length,count\n600,3\n",
     "run --set workload.model=bert-base --set workload.seq_lengths=h.csv", NULL, NULL, 1,
     "h.csv: error: workload.seq_lengths: holds sequences of 600 tokens, longer than the model's "
     "128"},
    /* Kineto JSON */
    KINETO("not json", "k.json:1:2: at byte 1: error: not valid JSON"),
    KINETO("{\"a\": 1}",
           "k.json: error: not a PyTorch profiler trace: the JSON has no 'traceEvents' list"),
    KINETO("{\"traceEvents\": 5}", "k.json: error: no GPU kernels in the trace"),
    KINETO(
        "",
        "k.json:1:1: at byte 0: error: truncated JSON: the trace ends inside an unfinished value"),
    KINETO("{\"traceEvents\": [", "k.json:1:18: at byte 17: error: truncated JSON: the trace ends "
                                  "inside an open object or list"),
    {NULL, NULL, "import kineto missing.json -o o.trace", NULL, NULL, 1,
     "missing.json: error: cannot open the trace"},
};

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* text with its first `from` replaced by `to` (text unchanged when from is absent). */
static void replace(char *text, size_t size, const char *from, const char *to)
{
    char *at = strstr(text, from);
    if (!at) return;
    char rest[65536];
    snprintf(rest, sizeof rest, "%s", at + strlen(from));
    snprintf(at, size - (size_t)(at - text), "%s%s", to, rest);
}

/* A copy of the catalog in dir/cat whose gpus/bad.yaml is t4.yaml with `from` replaced by `to`
 * (and its name made "bad", as the file name requires, unless the case changed the name). */
static void make_catalog(const char *dir, const char *from, const char *to)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp -r '%s/configs/hardware' '%s/cat'", SRC, dir);
    assert_int_equal(system(cmd), 0);
    static char text[65536];
    snprintf(text, sizeof text, "%s", read_all(SRC "/configs/hardware/gpus/t4.yaml"));
    assert_non_null(strstr(text, from));
    replace(text, sizeof text, from, to);
    replace(text, sizeof text, "name: t4\n", "name: bad\n");
    char path[512];
    snprintf(path, sizeof path, "%s/cat/gpus/bad.yaml", dir);
    write_file(path, text);
}

/* Splits args at spaces into argv (after the binary), expanding {D} and {C}. */
static int split_args(const char *args, const char *dir, char store[][600], const char **argv)
{
    int n = 0;
    argv[n++] = EPOCHSIM_BINARY;
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", args);
    for (char *save = NULL, *tok = strtok_r(copy, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save)) {
        if (n == 1 && strchr(tok, '=') && tok[0] >= 'A' && tok[0] <= 'Z') {
            snprintf(store[31], 600, "%s", tok); /* the child puts it in its environment */
            continue;
        }
        if (!strcmp(tok, "{D}"))
            snprintf(store[n], 600, "%s", dir);
        else if (!strcmp(tok, "{C}"))
            snprintf(store[n], 600, "%s/cat", dir);
        else
            snprintf(store[n], 600, "%s", tok);
        argv[n] = store[n];
        n++;
    }
    argv[n] = NULL;
    return n;
}

/* Runs one case in its own folder; returns the exit code, stdout and stderr in files there. */
static int run_case(const bad_case *c, const char *dir)
{
    if (c->file) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, c->file);
        write_file(path, c->content);
    }
    if (c->file && strstr(c->file, ".trace") && strstr(c->args, "x.yaml")) {
        char path[512];
        snprintf(path, sizeof path, "%s/x.yaml", dir);
        write_file(path, "workload:\n  trace: r.trace\n");
    }
    if (c->from) make_catalog(dir, c->from, c->to);
    static char store[32][600];
    const char *argv[32];
    store[31][0] = 0;
    split_args(c->args, dir, store, argv);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char out[512], err[512];
        snprintf(out, sizeof out, "%s/stdout", dir);
        snprintf(err, sizeof err, "%s/stderr", dir);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        char *eq = strchr(store[31], '=');
        if (eq) *eq = 0;
        if (o < 0 || e < 0 || chdir(dir) != 0 || (eq && setenv(store[31], eq + 1, 1) != 0))
            _exit(127);
        dup2(o, STDOUT_FILENO);
        dup2(e, STDERR_FILENO);
        execv(EPOCHSIM_BINARY, (char *const *)argv);
        _exit(127);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st)) fail_msg("'%s' died with signal %d", c->args, WTERMSIG(st));
    return WEXITSTATUS(st);
}

static void every_bad_input_is_a_clear_error(void **state)
{
    (void)state;
    size_t n = sizeof cases / sizeof cases[0];
    assert_true(n >= 60);
    for (size_t i = 0; i < n; i++) {
        char dir[] = "/tmp/epochsim-bad-input-XXXXXX";
        assert_non_null(mkdtemp(dir));
        int rc = run_case(&cases[i], dir);
        char path[512];
        snprintf(path, sizeof path, "%s/stderr", dir);
        const char *err = read_all(path);
        if (rc != cases[i].rc || !strstr(err, cases[i].message))
            fail_msg("case %zu '%s': exit %d (want %d), stderr:\n%s\nwanted: %s", i, cases[i].args,
                     rc, cases[i].rc, err, cases[i].message);
        snprintf(path, sizeof path, "%s/stdout", dir);
        if (read_all(path)[0])
            fail_msg("case %zu '%s': wrote to stdout on a failure", i, cases[i].args);
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
    }
    printf("%zu bad inputs, each a clear error\n", n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_bad_input_is_a_clear_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
