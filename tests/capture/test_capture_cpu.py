#!/usr/bin/python3
"""test_capture_cpu.py - runs traces/capture/capture.py on the CPU (Debian's python3-torch) for a
few steps and checks what it writes against the schema in traces/capture/README.md: every field
present with its type and a sane value, step counts, the CSV summary, the busy loop really burning
CPU (in the workers too), input validation, and the grid's resumable plan. Tiny sizes: the whole
file runs in ~30 s on 2 slow cores.
"""

import csv
import gzip
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CAPTURE = os.path.join(ROOT, "traces", "capture", "capture.py")
GRID = os.path.join(ROOT, "traces", "capture", "grid.py")
PY = sys.executable

# The documented CSV header (README.md, "summary.csv"), spelled out here on purpose: a column
# renamed in the code without the README is a failure.
CSV_COLUMNS = [
    "run_id", "status", "created_utc", "device", "gpu_name", "cpu_model",
    "model", "precision", "batch_size", "num_workers", "prefetch_factor", "pin_memory",
    "non_blocking", "persistent_workers", "drop_last", "storage", "samples", "sample_bytes",
    "decode_us", "decode_cv", "input_bytes", "epochs", "max_steps", "sync_every_step",
    "cuda_graphs", "seed",
    "steps_per_epoch", "epoch1_s", "epoch_last_s", "epoch_mean_s", "samples_per_s_last",
    "step_p50_s", "step_p99_s", "gpu_util_mean_pct", "gpu_util_last_pct", "cpu_system_pct",
    "job_cpu_pct", "decode_unit_us", "json_file",
]

# tiny: 3x16x16 float32 inputs, 1 KiB files, 2 ms of decode per sample
TINY = ["--device", "cpu", "--warmup-steps", "1",
        "--set", "dataset.samples=48", "--set", "dataset.sample_bytes=1024",
        "--set", "dataset.input_bytes=3072", "--set", "dataset.decode_us=2000",
        "--set", "dataset.decode_cv=0.3", "--set", "loader.batch_size=16",
        "--set", "training.epochs=2", "--util-period-ms", "50"]


def setUpModule():
    r = subprocess.run([PY, "-c", "import torch"], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(
            "%s cannot import torch, so the capture harness cannot be tested: install "
            "python3-torch (apt-get install python3-torch).\n%s" % (PY, r.stderr[-2000:]))


def run_capture(args, timeout=120):
    return subprocess.run([PY, CAPTURE] + args, capture_output=True, text=True, timeout=timeout)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


class CaptureRuns(unittest.TestCase):
    """Four real runs into one folder: {mlp, triplet} x {0, 2 workers} x {file, ram}."""

    RUNS = [
        # (model, workers, storage, extra args)
        ("mlp", 0, "file", ["--profile-steps", "2"]),
        ("mlp", 2, "ram", ["--set", "training.max_steps=2"]),
        ("triplet", 2, "file", ["--set", "loader.persistent_workers=true"]),
        ("triplet", 0, "ram", ["--set", "workload.precision=tf32"]),
    ]

    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp(prefix="capture-test-")
        cls.results = []
        for model, workers, storage, extra in cls.RUNS:
            args = TINY + ["--out", cls.out, "--storage", storage, "--quiet",
                           "--set", "workload.model=" + model,
                           "--set", "loader.num_workers=%d" % workers] + extra
            r = run_capture(args)
            cls.results.append((model, workers, storage, extra, r))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out, ignore_errors=True)

    def load(self, r):
        self.assertEqual(r.returncode, 0, "capture failed:\n" + r.stderr[-3000:])
        path = r.stdout.strip().splitlines()[-1]
        self.assertTrue(os.path.isfile(path), path)
        self.assertEqual(os.path.dirname(os.path.abspath(path)), os.path.abspath(self.out))
        with open(path) as f:
            return path, json.load(f)

    def test_capture_runs_write_the_documented_json(self):
        for model, workers, storage, extra, r in self.results:
            with self.subTest(model=model, workers=workers, storage=storage):
                path, d = self.load(r)
                self.check_doc(path, d, model, workers, storage, extra)

    def check_doc(self, path, d, model, workers, storage, extra):
        max_steps = 2 if "training.max_steps=2" in extra else 0
        steps = max_steps or 3  # 48 samples / batch 16
        self.assertEqual(d["format"], "epochsim-capture/1")
        self.assertEqual(d["run_id"] + ".json", os.path.basename(path))
        self.assertEqual(d["status"], "ok")
        self.assertIsNone(d["error"])
        self.assertRegex(d["created_utc"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertIsInstance(d["command"], list)
        self.assertIn("tag", d)
        self.assertTrue(d["capture_commit"] is None or re.match(r"^[0-9a-f]{40}$", d["capture_commit"]))
        # the experiment, in epochsim's key names, with the values that were set
        x = d["experiment"]
        self.assertEqual(sorted(x), ["dataset", "loader", "seed", "training", "workload"])
        self.assertEqual(x["dataset"], {"samples": 48, "sample_bytes": 1024, "decode_us": 2000.0,
                                        "decode_cv": 0.3, "input_bytes": 3072})
        self.assertEqual(x["loader"]["batch_size"], 16)
        self.assertEqual(x["loader"]["num_workers"], workers)
        for k in ("prefetch_factor", "pin_memory", "non_blocking", "persistent_workers",
                  "drop_last"):
            self.assertIn(k, x["loader"])
        self.assertEqual(x["training"], {"epochs": 2, "max_steps": max_steps,
                                         "sync_every_step": True, "cuda_graphs": False})
        self.assertEqual(x["workload"]["model"], model)
        self.assertIn(x["workload"]["precision"], ("fp32", "tf32"))
        self.assertIsInstance(x["seed"], int)
        self.assertEqual(d["capture"]["storage"], storage)
        self.assertEqual(d["capture"]["device"], "cpu")
        self.assertEqual(d["ignored_keys"], [])
        # what was applied
        a = d["applied"]
        self.assertEqual(a["device"], "cpu")
        self.assertEqual(a["input_shape"], [3, 16, 16])
        self.assertEqual(a["steps_per_epoch"], steps)
        self.assertFalse(a["pin_memory"])  # nothing to pin for on the CPU
        self.assertFalse(a["tf32_matmul"])
        self.assertFalse(a["cuda_graphs"])
        self.assertTrue(a["step_times_synchronized"])
        self.assertEqual(a["loss"], "triplet" if model == "triplet" else "classify")
        self.assertGreater(a["model_parameters"], 1000)
        self.assertEqual(a["persistent_workers"], "loader.persistent_workers=true" in extra)
        # the machine
        m = d["machine"]
        self.assertIsInstance(m["cpu"]["model"], str)
        self.assertGreaterEqual(m["cpu"]["logical_cpus"], 1)
        self.assertGreater(m["ram"]["total_bytes"], 0)
        self.assertIsInstance(m["torch"]["version"], str)
        self.assertIsInstance(m["torch"]["kineto"], bool)
        self.assertEqual(m["device"], "cpu")
        self.assertIsNone(m["gpu"])
        self.assertTrue(m["gpu_null_reason"])
        if storage == "file":
            self.assertIsInstance(m["storage"]["fstype"], str)
        else:
            self.assertIsNone(m["storage"])
        # the calibration of the busy loop on this CPU
        c = d["calibration"]
        self.assertEqual(c["busy_loop"]["method"], "zlib-inflate")
        self.assertTrue(is_num(c["busy_loop"]["unit_us"]) and c["busy_loop"]["unit_us"] > 0)
        checks = {row["decode_us"]: row for row in c["busy_loop_check"]}
        self.assertIn(1000.0, checks)
        for target, row in checks.items():
            # Behaviour, not speed: the check called the loop and measured it. How close the
            # burn comes to its target depends on what else the machine runs (a loaded CI box
            # stretches wall time 2x and more), so no timing bound is asserted here.
            self.assertGreater(row["calls"], 0)
            self.assertGreater(row["wall_us_mean"], 0)
            self.assertGreater(row["cpu_us_mean"], 0)
        ds = c["dataset"]
        for k in ("read_us_mean", "decode_us_mean", "decode_target_us_mean", "tensor_us_mean",
                  "sample_us_mean", "collate_us", "collate_us_per_mb"):
            self.assertTrue(is_num(ds[k]) and ds[k] >= 0, k)
        self.assertGreater(ds["samples_measured"], 0)
        self.assertIsNone(c["transfer"])  # no GPU
        self.assertEqual(d["warmup"]["steps"], 1)
        self.assertGreater(d["warmup"]["wall_s"], 0)
        # the epochs
        ep = d["epochs"]
        self.assertEqual(len(ep), 2)
        prev_end = 0.0
        for i, e in enumerate(ep):
            self.assertEqual(e["index"], i + 1)
            self.assertGreater(e["wall_s"], 0)
            self.assertGreaterEqual(e["t_start_s"], prev_end)
            self.assertAlmostEqual(e["t_end_s"] - e["t_start_s"], e["wall_s"], delta=2e-6)
            prev_end = e["t_end_s"]
            self.assertEqual(e["steps"], steps)
            self.assertEqual(e["samples"], 16 * steps)
            self.assertEqual(len(e["step_s"]), steps)
            self.assertEqual(len(e["data_wait_step_s"]), steps)
            self.assertTrue(all(is_num(s) and s > 0 for s in e["step_s"]))
            self.assertTrue(all(0 <= w <= s + 1e-6 for w, s in zip(e["data_wait_step_s"],
                                                                     e["step_s"])))
            # steps tile the epoch from its start: their sum cannot exceed it (rounding: 1e-5)
            self.assertLessEqual(sum(e["step_s"]), e["wall_s"] + 1e-5)
            self.assertIsNone(e["gpu_step_s"])
            self.assertIsNone(e["gpu_util_mean_pct"])
            self.assertEqual(e["gpu_util_samples"], 0)
            self.assertTrue(0 <= e["cpu_system_pct"] <= 100)
            self.assertTrue(is_num(e["job_cpu_s"]) and e["job_cpu_s"] >= 0)
            self.assertTrue(is_num(e["job_cpu_pct"]) and e["job_cpu_pct"] >= 0)
            self.assertAlmostEqual(e["samples_per_s"], e["samples"] / e["wall_s"], delta=0.01)
            if max_steps == 0:
                # every sample was decoded by the job (main thread or workers, which are its
                # children), so the job's CPU time is counted; how much depends on the load
                self.assertGreater(e["job_cpu_s"], 0)
        t = d["totals"]
        self.assertEqual(t["epochs"], 2)
        self.assertEqual(t["steps"], 2 * steps)
        self.assertEqual(t["samples"], 32 * steps)
        self.assertEqual(t["epoch1_s"], ep[0]["wall_s"])
        self.assertEqual(t["epoch_last_s"], ep[1]["wall_s"])
        self.assertAlmostEqual(t["epoch_mean_s"], (ep[0]["wall_s"] + ep[1]["wall_s"]) / 2, delta=2e-6)
        self.assertLessEqual(t["step_p50_s"], t["step_p99_s"])
        self.assertIsNone(t["gpu_util_mean_pct"])
        self.assertTrue(0 <= t["cpu_system_pct"] <= 100)
        self.assertGreater(t["job_cpu_pct"], 0)
        # sampled series
        g = d["gpu_util"]
        self.assertIsNone(g["source"])
        self.assertTrue(g["null_reason"])
        self.assertIsNone(g["series"])
        self.assertEqual(g["period_ms"], 50)
        cu = d["cpu_util"]
        self.assertEqual(cu["columns"], ["t_s", "system_pct"])
        self.assertGreater(len(cu["series"]), 0)
        for ts, pct in cu["series"]:
            self.assertTrue(ts >= 0 and 0 <= pct <= 100)
        self.assertIsNone(d["gpu_memory"])
        self.assertIsInstance(d["notes"], list)
        self.assertIsInstance(d["warnings"], list)
        self.assertGreater(d["duration_s"], t["wall_s"])
        if "--profile-steps" in extra:
            p = d["profile"]
            self.assertEqual(p["steps"], 2)
            trace = os.path.join(self.out, p["file"])
            with gzip.open(trace, "rt") as f:
                tr = json.load(f)
            events = tr["traceEvents"] if isinstance(tr, dict) else tr
            self.assertGreater(len(events), 10)
            self.assertTrue(any(str(ev.get("name", "")).startswith("aten::") for ev in events))
        else:
            self.assertIsNone(d["profile"])
        if x["workload"]["precision"] == "tf32":
            self.assertTrue(any("tf32" in n for n in d["notes"]))

    def test_capture_json_fields_are_all_documented(self):
        # every field these runs wrote must have a row in README.md's schema table
        with open(os.path.join(ROOT, "traces", "capture", "README.md")) as f:
            readme = f.read()
        schema = readme.split("### Output schema", 1)[1].split("\n### ", 1)[0]
        documented = set(re.findall(r"^\| `([^`]+)`", schema, re.M))
        self.assertGreater(len(documented), 100)
        csv_part = readme.split("### `summary.csv`", 1)[1].split("\n## ", 1)[0]
        for col in CSV_COLUMNS:
            self.assertRegex(csv_part, r"\b%s\b" % re.escape(col))

        def covered(path):
            return path in documented or any(
                d.endswith(".*") and path.startswith(d[:-1]) for d in documented)

        def walk(prefix, obj, out):
            if isinstance(obj, dict):
                for k, v in obj.items():
                    walk(prefix + "." + k if prefix else k, v, out)
            elif isinstance(obj, list) and obj and all(isinstance(o, dict) for o in obj):
                for o in obj:
                    walk(prefix + "[]", o, out)
            else:
                out.add(prefix)
        paths = set()
        for *_, r in self.results:
            walk("", self.load(r)[1], paths)
        missing = sorted(p for p in paths if not covered(p))
        self.assertEqual(missing, [], "fields missing from README.md's schema")

    def test_capture_summary_csv_has_one_header_and_a_row_per_run(self):
        with open(os.path.join(self.out, "summary.csv"), newline="") as f:
            rows = list(csv.reader(f))
        self.assertEqual(rows[0], CSV_COLUMNS)
        self.assertEqual(len(rows), 1 + len(self.RUNS))
        ids = set()
        for row in rows[1:]:
            self.assertEqual(len(row), len(CSV_COLUMNS))
            r = dict(zip(CSV_COLUMNS, row))
            ids.add(r["run_id"])
            self.assertEqual(r["status"], "ok")
            self.assertEqual(r["device"], "cpu")
            self.assertEqual(r["batch_size"], "16")
            self.assertGreater(float(r["epoch1_s"]), 0)
            self.assertGreater(float(r["decode_unit_us"]), 0)
            self.assertEqual(r["gpu_util_mean_pct"], "")
            self.assertTrue(os.path.isfile(os.path.join(self.out, r["json_file"])))
        self.assertEqual(len(ids), len(self.RUNS))


class CaptureInput(unittest.TestCase):
    """Bad input: a non-zero exit, a message naming the key, and nothing written."""

    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="capture-test-in-")

    def tearDown(self):
        shutil.rmtree(self.out, ignore_errors=True)

    def refused(self, args, *needles):
        r = run_capture(["--out", self.out, "--device", "cpu"] + args, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        for n in needles:
            self.assertIn(n, r.stderr)
        self.assertEqual(os.listdir(self.out), [])
        return r

    def test_capture_negative_batch_size_is_refused_naming_the_key(self):
        self.refused(["--set", "loader.batch_size=-4"], "loader.batch_size", "-4")

    def test_capture_unknown_key_is_refused_with_a_suggestion(self):
        self.refused(["--set", "loader.batchsize=4"], "unknown key 'loader.batchsize'",
                     "did you mean 'loader.batch_size'")

    def test_capture_bad_values_are_refused(self):
        self.refused(["--set", "dataset.input_bytes=3"], "dataset.input_bytes")
        self.refused(["--set", "loader.pin_memory=maybe"], "loader.pin_memory")
        self.refused(["--set", "workload.precision=fp8"], "workload.precision")
        self.refused(["--set", "dataset.decode_cv=-1"], "dataset.decode_cv")

    def test_capture_cuda_only_features_are_refused_on_cpu(self):
        self.refused(["--set", "workload.model=mlp", "--set", "training.cuda_graphs=true"],
                     "training.cuda_graphs", "CUDA")
        self.refused(["--set", "workload.model=mlp", "--set", "workload.precision=amp_fp16"],
                     "amp_fp16")

    def test_capture_reads_an_epochsim_yaml_file(self):
        if importlib.util.find_spec("yaml") is not None:
            ext, text = ".yaml", ("seed: 7\nsystem:\n  gpu: a100-sxm4-80gb\n"
                                  "loader:\n  batch_size: 8\n  num_workers: 0\n"
                                  "workload:\n  model: mlp\n")
        else:  # python3-yaml absent: the same keys as JSON
            ext, text = ".json", json.dumps({"seed": 7, "system": {"gpu": "a100-sxm4-80gb"},
                                             "loader": {"batch_size": 8, "num_workers": 0},
                                             "workload": {"model": "mlp"}})
        path = os.path.join(self.out, "exp" + ext)
        with open(path, "w") as f:
            f.write(text)
        r = run_capture(["--config", path, "--set", "seed=9", "--print-config"], timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["config"]["loader.batch_size"], 8)
        self.assertEqual(doc["config"]["seed"], 9)  # --set wins over the file
        self.assertEqual(doc["ignored_keys"], ["system.gpu"])
        self.assertTrue(doc["run_id"].startswith("mlp_fp32_b8_w0_"))
        with open(path, "w") as f:
            f.write(text.replace("batch_size: 8", "batch_size: -8")
                    .replace('"batch_size": 8', '"batch_size": -8'))
        r = run_capture(["--config", path, "--print-config"], timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("loader.batch_size", r.stderr)


FAKE_PYNVML = """
# a stand-in for nvidia-ml-py: two GPUs, the second at PCI 0000:3c:00 busy at 73 %
import types
NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0
def nvmlInit(): pass
def nvmlShutdown(): pass
def nvmlDeviceGetCount(): return 2
def nvmlDeviceGetHandleByIndex(i): return i
def nvmlDeviceGetPciInfo(h): return types.SimpleNamespace(domain=0, bus=0x3b + h, device=0)
def nvmlDeviceGetUUID(h): return "GPU-%08d-0000-0000-0000-000000000000" % h
def nvmlDeviceGetUtilizationRates(h): return types.SimpleNamespace(gpu=(5, 73)[h], memory=21)
def nvmlDeviceGetName(h): return b"Fake GPU %d" % h
def nvmlSystemGetDriverVersion(): return "999.1"
def nvmlDeviceGetClockInfo(h, c): return 1755 if c == NVML_CLOCK_SM else 2619
def nvmlDeviceGetMaxClockInfo(h, c): return 1980 if c == NVML_CLOCK_SM else 2619
def nvmlDeviceGetCurrPcieLinkGeneration(h): return 5
def nvmlDeviceGetCurrPcieLinkWidth(h): return 16
def nvmlDeviceGetMaxPcieLinkGeneration(h): return 5
def nvmlDeviceGetMaxPcieLinkWidth(h): return 16
def nvmlDeviceGetPowerManagementLimit(h): return 700000
def nvmlDeviceGetMemoryInfo(h): return types.SimpleNamespace(total=85899345920)
def nvmlDeviceGetMigMode(h): return (0, 0)
def nvmlDeviceGetPersistenceMode(h): raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")
def nvmlDeviceGetTemperature(h, s): return 41
"""

FAKE_SMI = """#!/usr/bin/python3
# a stand-in for nvidia-smi: the --query-gpu forms capture uses, for two GPUs
import datetime, sys, time
a = sys.argv[1:]
q = [x.split("=", 1)[1] for x in a if x.startswith("--query-gpu=")][0].split(",")
gpu = a[a.index("-i") + 1] if "-i" in a else None
if q == ["index", "pci.bus_id", "uuid"]:
    print("0, 00000000:3B:00.0, GPU-00000000-0000-0000-0000-000000000000")
    print("1, 00000000:3C:00.0, GPU-00000001-0000-0000-0000-000000000000")
    sys.exit(0)
if gpu != "00000000:3C:00.0":
    sys.exit(6)
if "-lms" in a:
    period = int(a[a.index("-lms") + 1]) / 1000.0
    while True:
        ts = datetime.datetime.now().strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        print("%s, 61, 12, 1410" % ts, flush=True)
        time.sleep(period)
vals = {"name": "Fake GPU 1", "driver_version": "999.1", "clocks.sm": "1410",
        "clocks.max.sm": "1410", "clocks.mem": "1215", "clocks.max.mem": "1215",
        "pcie.link.gen.current": "4", "pcie.link.width.current": "16",
        "pcie.link.gen.max": "4", "pcie.link.width.max": "16", "power.limit": "400.00",
        "memory.total": "81920", "mig.mode.current": "Disabled",
        "persistence_mode": "Enabled", "temperature.gpu": "[N/A]"}
print(", ".join(vals[f] for f in q))
"""

PROBE = """
import json, sys, time
sys.path.insert(0, %r)
import cap_probe as P
g = P.GpuProbe(pci=(0, 0x3c, 0), uuid=None, cuda_count=2, cuda_index=1)
d = g.describe()
t0 = time.perf_counter()
s = P.Sampler(0.02, g if g.source else None, t0)
s.start()
time.sleep(0.4)
s.stop()
mean, n = s.gpu_mean(0.0, 10.0)
g.close()
print(json.dumps({"source": g.source, "match": g.match, "reason": g.reason, "describe": d,
                  "mean": mean, "n": n, "series": s.gpu_series, "under_load": s.under_load,
                  "cpu": s.cpu_series, "elapsed": time.perf_counter() - t0}))
""" % os.path.join(ROOT, "traces", "capture")


class GpuProbeFakes(unittest.TestCase):
    """The NVML and nvidia-smi paths of the GPU probe and sampler, against stand-ins of
    nvidia-ml-py and nvidia-smi (no GPU here): device matching by PCI address, the machine
    description, and the GPU-Util series on the run's clock."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="capture-test-gpu-")
        self.mods = os.path.join(self.tmp, "mods")
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.mods)
        os.makedirs(self.bin)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def probe(self, pynvml_text, smi):
        with open(os.path.join(self.mods, "pynvml.py"), "w") as f:
            f.write(pynvml_text)
        path = os.environ.get("PATH", "")
        if smi:
            exe = os.path.join(self.bin, "nvidia-smi")
            with open(exe, "w") as f:
                f.write(FAKE_SMI)
            os.chmod(exe, 0o755)
            path = self.bin + os.pathsep + path
        else:  # hide any real nvidia-smi
            path = os.pathsep.join(p for p in path.split(os.pathsep)
                                   if not os.path.exists(os.path.join(p, "nvidia-smi")))
        env = dict(os.environ, PYTHONPATH=self.mods, PATH=path)
        env.pop("CUDA_VISIBLE_DEVICES", None)
        r = subprocess.run([PY, "-c", PROBE], capture_output=True, text=True, env=env,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_probe_nvml_matches_by_pci_and_samples_util(self):
        d = self.probe(FAKE_PYNVML, smi=False)
        self.assertEqual((d["source"], d["match"]), ("pynvml", "pci"))
        g = d["describe"]
        self.assertEqual(g["name"], "Fake GPU 1")  # bytes from old pynvml decoded
        self.assertEqual((g["pcie_gen_current"], g["pcie_width_current"]), (5, 16))
        self.assertEqual(g["power_limit_w"], 700.0)  # NVML reports mW
        self.assertEqual(g["sm_clock_max_mhz"], 1980)
        self.assertIs(g["mig_mode"], False)
        self.assertIsNone(g["persistence_mode"])  # a failing query is None, not a crash
        self.assertGreaterEqual(d["n"], 5)  # 0.4 s at 20 ms: ~20; 5 leaves room for a busy CI
        self.assertEqual(d["mean"], 73)  # the matched GPU's figure, not GPU 0's 5
        for t, util, mem, clk in d["series"]:
            self.assertTrue(0 <= t <= d["elapsed"] + 1e-3)
            self.assertEqual((util, mem, clk), (73, 21, 1755))
        self.assertEqual(d["under_load"]["pcie_gen_current"], 5)
        self.assertGreater(len(d["cpu"]), 0)

    def test_probe_nvidia_smi_fallback_parses_the_stream(self):
        d = self.probe("raise ImportError('no pynvml here')\n", smi=True)
        self.assertEqual((d["source"], d["match"]), ("nvidia-smi", "pci"))
        g = d["describe"]
        self.assertEqual(g["name"], "Fake GPU 1")
        self.assertEqual((g["pcie_gen_current"], g["pcie_width_current"]), (4, 16))
        self.assertEqual(g["memory_total_bytes"], 81920 * 1048576)
        self.assertIsNone(g["temperature_c"])  # "[N/A]"
        self.assertIs(g["persistence_mode"], True)
        self.assertGreaterEqual(d["n"], 3)
        self.assertEqual(d["mean"], 61)
        for t, util, mem, clk in d["series"]:
            # nvidia-smi's own timestamps (ms, local time) mapped onto the run clock
            self.assertTrue(-0.01 <= t <= d["elapsed"] + 0.01, (t, d["elapsed"]))
            self.assertEqual((util, mem, clk), (61, 12, 1410))
        self.assertEqual(d["under_load"]["pcie_gen_current"], 4)

    def test_probe_without_nvml_or_smi_says_why(self):
        d = self.probe("raise ImportError('no pynvml here')\n", smi=False)
        self.assertIsNone(d["source"])
        self.assertIn("pynvml", d["reason"])
        self.assertIn("nvidia-smi", d["reason"])
        self.assertIsNone(d["describe"])
        self.assertEqual(d["n"], 0)


class GridPlan(unittest.TestCase):
    """The grid's plan without running it: size, and resuming past finished points."""

    def test_grid_plans_the_issue_grid_and_skips_finished_points(self):
        out = tempfile.mkdtemp(prefix="capture-test-grid-")
        try:
            r = subprocess.run([PY, GRID, "--out", out, "--dry-run"], capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = [ln.split() for ln in r.stdout.splitlines()]
            # 3 batch sizes x 3 worker counts x 2 pin x 3 models x 2 precisions + 3 special
            self.assertEqual(len(lines), 3 * 3 * 2 * 3 * 2 + 3)
            self.assertEqual(sum(1 for ln in lines if ln[1] == "grid"), 108)
            self.assertEqual({ln[1] for ln in lines}, {"grid", "launch_bound", "loader_bound"})
            ids = [ln[2] for ln in lines]
            self.assertEqual(len(set(ids)), len(ids))
            with open(os.path.join(out, ids[5] + ".json"), "w") as f:
                json.dump({"format": "epochsim-capture/1", "status": "ok"}, f)
            r = subprocess.run([PY, GRID, "--out", out, "--dry-run"], capture_output=True,
                               text=True, timeout=60)
            lines = [ln.split() for ln in r.stdout.splitlines()]
            done = [ln for ln in lines if ln[0] != "pending"]
            self.assertEqual(done, [["done:ok", lines[5][1], ids[5]]])
            with open(os.path.join(out, "grid.json")) as f:
                self.assertEqual(len(json.load(f)["points"]), len(ids))
        finally:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
