#!/usr/bin/env python3
"""capture.py - measures a real PyTorch training run the way its user sees it, as ground truth
for epochsim: epoch and step times, nvidia-smi's GPU-Util (NVML), CPU utilisation, an optional
Kineto trace, the machine, and the measured per-sample CPU cost. The workload is synthetic but
real (files read, CPU burnt decoding, tensors collated, pinned, copied, trained on), and every
knob has epochsim's experiment key name. Output: DIR/<run_id>.json and a row in DIR/summary.csv.
See traces/capture/README.md for the schema.
"""

import argparse
import contextlib
import datetime
import gc
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import cap_config as C  # noqa: E402
import cap_output as O  # noqa: E402
import cap_probe as P  # noqa: E402

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_OOM = 0, 1, 2, 3

EXAMPLES = """examples:
  # ResNet-50, AMP, batch 256, 8 workers, pinned, files on the local disk, 2 epochs of 100 steps
  capture.py --out runs --set workload.model=resnet50 --set workload.precision=amp_fp16 \\
      --set loader.batch_size=256 --set loader.num_workers=8 --set training.max_steps=100

  # the same knobs from an epochsim experiment file (hardware keys there are ignored)
  capture.py --config exp.yaml --out runs --profile-steps 5

  # CPU-only smoke run of the MLP with data held in RAM
  capture.py --device cpu --storage ram --set workload.model=mlp --set dataset.samples=256 \\
      --set dataset.input_bytes=3072 --set loader.batch_size=32

  # the busy-loop calibration of this CPU alone
  capture.py --calibrate-only

exit status: 0 ok, 1 error (JSON written with status=error once the run started),
             2 bad input, 3 out of GPU memory (JSON written with status=oom)

keys (--set KEY=VALUE, or nested in a YAML/JSON --config file; later wins):
"""


class Usage(Exception):
    pass


def log(quiet, msg):
    if not quiet:
        print("capture: " + msg, file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="capture.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Measure a real PyTorch training run as ground truth for epochsim.",
        epilog=EXAMPLES + C.describe_keys())
    p.add_argument("--config", action="append", default=[], metavar="FILE",
                   help="YAML (needs python3-yaml) or JSON experiment file; repeatable")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override one key; repeatable; applied after --config and the shortcuts")
    p.add_argument("--storage", choices=C.STORAGES, help="= --set capture.storage=...")
    p.add_argument("--data-dir", help="= --set capture.data_dir=...")
    p.add_argument("--device", help="= --set capture.device=... (auto, cpu, cuda, cuda:N)")
    p.add_argument("--warmup-steps", help="= --set capture.warmup_steps=...")
    p.add_argument("--profile-steps", help="= --set capture.profile_steps=...")
    p.add_argument("--util-period-ms", help="= --set capture.util_period_ms=...")
    p.add_argument("--out", default="capture-out", metavar="DIR",
                   help="output folder (default: capture-out)")
    p.add_argument("--run-id", help="file name stem (default: derived from the configuration)")
    p.add_argument("--tag", default=None,
                   help="free label stored in the JSON (e.g. the grid's regime), not in the id")
    p.add_argument("--print-config", action="store_true",
                   help="print the resolved configuration and run id as JSON, then stop")
    p.add_argument("--calibrate-only", action="store_true",
                   help="print the busy-loop calibration of this CPU as JSON, then stop")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return p.parse_args(argv)


def resolve_config(args):
    pairs = []
    for path in args.config:
        pairs.extend((k, v, path) for k, v in C.load_file(path))
    for flag, key in (("storage", "capture.storage"), ("data_dir", "capture.data_dir"),
                      ("device", "capture.device"), ("warmup_steps", "capture.warmup_steps"),
                      ("profile_steps", "capture.profile_steps"),
                      ("util_period_ms", "capture.util_period_ms")):
        v = getattr(args, flag)
        if v is not None:
            pairs.append((key, v, "--" + flag.replace("_", "-")))
    for s in args.set:
        k, v = C.parse_set(s)
        pairs.append((k, v, "--set"))
    return C.resolve(pairs)


def _git_commit():
    try:
        r = subprocess.run(["git", "-C", HERE, "rev-parse", "HEAD"], capture_output=True,
                           text=True, timeout=10)
        return r.stdout.strip() or None if r.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def _pkg_version(name):
    try:
        import importlib.metadata as md
        return md.version(name)
    except Exception:
        return None


def _pct(values, q):
    """Nearest-rank percentile Q (0..100) of VALUES."""
    if not values:
        return None
    s = sorted(values)
    return s[max(0, math.ceil(q / 100.0 * len(s)) - 1)]


def _r(x, nd=6):
    return None if x is None else round(x, nd)


_BURNER = None  # calibrated once per process (the grid's --in-process mode reuses it)


def get_burner(quiet):
    global _BURNER
    import cap_workload as W
    cached = _BURNER is not None
    if not cached:
        log(quiet, "calibrating the decode busy loop on this CPU")
        _BURNER = W.Burner().calibrate()
    return _BURNER, cached


def calibrate_only(quiet):
    burner, _ = get_burner(quiet)
    doc = {"format": "epochsim-capture-calibration/1", "cpu": P.cpu_info(),
           "busy_loop": burner.describe(),
           "busy_loop_check": burner.verify()}
    print(json.dumps(doc, indent=1))
    return EXIT_OK


# ---------------------------------------------------------------- the run
class Run:
    """One measured run. Fields fill in as it goes, so that a failure still leaves a record."""

    def __init__(self, cfg, ignored, args, run_id, quiet, command):
        self.cfg, self.ignored, self.args, self.run_id, self.quiet = cfg, ignored, args, run_id, quiet
        self.t0 = time.perf_counter()
        self.created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.notes = []
        self.warnings = []
        self.doc = {
            "format": O.FORMAT, "run_id": run_id, "tag": args.tag, "status": "running",
            "error": None,
            "created_utc": self.created, "command": command,
            "capture_commit": _git_commit(),
            "experiment": C.experiment_tree(cfg), "capture": C.capture_options(cfg),
            "ignored_keys": ignored, "applied": None, "machine": None, "calibration": None,
            "warmup": None, "epochs": [], "totals": None, "gpu_util": None, "cpu_util": None,
            "gpu_memory": None, "profile": None, "notes": self.notes, "warnings": self.warnings,
        }
        self.sampler = self.gpu = self.store = None
        self.cuda = False
        self.tf32_hw = False
        self._sys_ticks = []

    def now(self):
        return time.perf_counter() - self.t0

    def log(self, msg):
        log(self.quiet, msg)

    # -- device and machine
    def setup_device(self, torch):
        want = self.cfg["capture.device"]
        if want == "auto":
            want = "cuda" if torch.cuda.is_available() else "cpu"
        if want.startswith("cuda"):
            if not torch.cuda.is_available():
                raise Usage("capture.device=%s but torch.cuda.is_available() is false (torch %s, "
                            "built for CUDA %s)" % (want, torch.__version__, torch.version.cuda))
            dev = torch.device(want)
            if dev.index is not None and dev.index >= torch.cuda.device_count():
                raise Usage("capture.device=%s: only %d CUDA device(s) visible"
                            % (want, torch.cuda.device_count()))
            if dev.index is None:
                dev = torch.device("cuda", torch.cuda.current_device())
            torch.cuda.set_device(dev)
        else:
            dev = torch.device("cpu")
        self.dev = dev
        self.cuda = dev.type == "cuda"
        prec = self.cfg["workload.precision"]
        if not self.cuda:
            if self.cfg["training.cuda_graphs"]:
                raise Usage("training.cuda_graphs=true needs a CUDA device; this run is on the CPU")
            if prec in ("fp16", "amp_fp16"):
                raise Usage("workload.precision=%s needs a CUDA device (CPU autocast runs bf16 only)"
                            % prec)

    def describe_machine(self, torch):
        m = {"cpu": P.cpu_info(), "ram": P.ram_info(), "os": P.os_info(),
             "torch": {"version": torch.__version__, "cuda": torch.version.cuda,
                       "cudnn": (torch.backends.cudnn.version()
                                 if torch.backends.cudnn.is_available() else None),
                       "torchvision": _pkg_version("torchvision"),
                       "kineto": bool(torch.autograd.kineto_available()),
                       "intraop_threads": torch.get_num_threads(),
                       "mp_start_method": __import__("multiprocessing").get_start_method()},
             "env": {k: os.environ.get(k) for k in ("CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS",
                                                     "CUDA_DEVICE_ORDER")},
             "device": str(self.dev), "gpu": None, "gpu_null_reason": None, "storage": None}
        if self.cuda:
            props = torch.cuda.get_device_properties(self.dev)
            pci = None
            if all(hasattr(props, a) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
                pci = (props.pci_domain_id, props.pci_bus_id, props.pci_device_id)
            uuid = str(getattr(props, "uuid", "") or "").lower().replace("gpu-", "") or None
            self.gpu = P.GpuProbe(pci=pci, uuid=uuid, cuda_count=torch.cuda.device_count(),
                                  cuda_index=self.dev.index)
            g = {"name": props.name, "index": self.dev.index,
                 "compute_capability": "%d.%d" % (props.major, props.minor),
                 "sms": props.multi_processor_count, "total_memory_bytes": int(props.total_memory),
                 "l2_cache_bytes": getattr(props, "L2_cache_size", None),
                 "uuid": uuid, "pci": ("%04x:%02x:%02x" % pci) if pci else None,
                 "nvml": self.gpu.describe(), "nvml_null_reason": self.gpu.reason,
                 "under_load": None}
            m["gpu"] = g
        else:
            m["gpu_null_reason"] = ("the run is on the CPU (%s)" % (
                "no CUDA device visible to torch" if not torch.cuda.is_available()
                else "capture.device=cpu"))
        self.doc["machine"] = m

    # -- calibration of the per-sample CPU cost
    def calibrate(self, torch, W):
        burner, cached = get_burner(self.quiet)
        self.burner = burner
        self.doc["calibration"] = {"busy_loop": burner.describe(), "cached_in_process": cached,
                                   "busy_loop_check": burner.verify(), "dataset": None,
                                   "transfer": None}

    def measure_dataset(self, torch, ds, shape):
        from torch.utils.data import default_collate
        k = min(32, len(ds))
        read, burn, fill = [], [], []
        items = []
        for i in range(k):
            item, (a, b, c) = ds.timed_item(i)
            read.append(a), burn.append(b), fill.append(c)
            items.append(item)
        t = time.perf_counter()
        batch = default_collate(items)
        collate_us = (time.perf_counter() - t) * 1e6
        mb = batch[0].numel() * 4 / 1e6
        target = statistics.fmean(ds.cost_us[i] for i in range(k))
        d = {"samples_measured": k, "read_us_mean": _r(statistics.fmean(read), 3),
             "decode_us_mean": _r(statistics.fmean(burn), 3),
             "decode_target_us_mean": _r(target, 3),
             "tensor_us_mean": _r(statistics.fmean(fill), 3),
             "sample_us_mean": _r(statistics.fmean(read) + statistics.fmean(burn)
                                  + statistics.fmean(fill), 3),
             "collate_us": _r(collate_us, 3), "collate_batch": k,
             "collate_us_per_mb": _r(collate_us / mb, 3) if mb else None,
             "read_from": ("page cache (files just written or read)"
                           if self.store.kind == "file" else "RAM")}
        self.doc["calibration"]["dataset"] = d
        if self.cuda:
            self.doc["calibration"]["transfer"] = self.measure_transfer(torch, batch[0])

    def measure_transfer(self, torch, x):
        """Pin-memory copy cost and H2D bandwidth for one batch-sized tensor (median of 5)."""
        def med(fn):
            fn()
            ts = []
            for _ in range(5):
                torch.cuda.synchronize(self.dev)
                t = time.perf_counter()
                fn()
                torch.cuda.synchronize(self.dev)
                ts.append(time.perf_counter() - t)
            return statistics.median(ts)
        nbytes = x.numel() * x.element_size()
        pinned = x.pin_memory()
        t_pin = med(lambda: x.pin_memory())
        t_pinned = med(lambda: pinned.to(self.dev, non_blocking=True))
        t_pageable = med(lambda: x.to(self.dev, non_blocking=False))
        return {"bytes": nbytes, "pin_us": _r(t_pin * 1e6, 3),
                "pin_us_per_mb": _r(t_pin * 1e6 / (nbytes / 1e6), 3),
                "h2d_pinned_gbps": _r(nbytes / t_pinned / 1e9, 3),
                "h2d_pageable_gbps": _r(nbytes / t_pageable / 1e9, 3)}

    # -- the training step
    def build_training(self, torch, W, shape):
        cfg = self.cfg
        prec = cfg["workload.precision"]
        torch.manual_seed(cfg["seed"])
        model, kind = W.build_model(cfg["workload.model"], shape)
        self.loss_fn = W.LossFn(kind)
        self.cast = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(prec)
        self.amp = {"amp_fp16": torch.float16, "amp_bf16": torch.bfloat16}.get(prec)
        model = model.to(self.dev)
        if self.cast is not None:
            model = model.to(self.cast)
        # channels_last changes 4-d weights and image batches only (torch.channels_last)
        self.layout = (torch.channels_last if cfg["workload.memory_format"] == "channels_last"
                       else torch.contiguous_format)
        model = model.to(memory_format=self.layout)
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        self.scaler = None
        if prec == "amp_fp16":
            GS = getattr(torch.amp, "GradScaler", None)
            self.scaler = GS("cuda") if GS is not None else torch.cuda.amp.GradScaler()
            self.notes.append("amp_fp16 uses GradScaler, whose step() reads found_inf on the CPU: "
                              "every step synchronizes with the GPU whatever "
                              "training.sync_every_step says")
        # fp32 is what a user gets by default: matmul in fp32, cuDNN convolutions allowed TF32
        # (PyTorch's defaults since 1.12); capture.strict_fp32 turns the latter off too.
        # tf32 turns both on. Whether TF32 actually runs depends on the GPU (compute cap. >= 8).
        torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
        torch.backends.cudnn.allow_tf32 = prec == "tf32" or not cfg["capture.strict_fp32"]
        torch.backends.cudnn.benchmark = cfg["capture.cudnn_benchmark"]
        self.tf32_hw = self.cuda and torch.cuda.get_device_capability(self.dev)[0] >= 8
        if prec == "tf32" and not self.cuda:
            self.notes.append("workload.precision=tf32 on the CPU: the TF32 switches have no effect")
        elif prec == "tf32" and not self.tf32_hw:
            self.notes.append("workload.precision=tf32 on a GPU without TF32 (compute capability "
                              "< 8.0): it runs as fp32")
        self.nb = cfg["loader.non_blocking"]
        self.sync_every = cfg["training.sync_every_step"]
        self.params = sum(p.numel() for p in model.parameters())
        return kind

    def autocast(self, torch, graphs=False):
        if self.amp is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.dev.type, dtype=self.amp,
                              cache_enabled=not graphs)

    def eager_step(self, torch, x, y):
        x = x.to(self.dev, non_blocking=self.nb)
        y = y.to(self.dev, non_blocking=self.nb)
        if self.cast is not None:
            x = x.to(self.cast)
        if x.dim() == 4:
            x = x.contiguous(memory_format=self.layout)
        with self.autocast(torch):
            loss = self.loss_fn(self.model, x, y)
        self.opt.zero_grad(set_to_none=True)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            loss.backward()
            self.opt.step()
        if self.sync_every:
            loss.item()

    def capture_graph(self, torch, xb, yb):
        """Whole-step capture as in PyTorch's CUDA graphs notes: warm up on a side stream,
        capture forward+backward+step on static tensors, then replay per batch."""
        self.static_x = torch.empty(xb.shape, device=self.dev, dtype=self.cast or torch.float32,
                                    memory_format=self.layout if len(xb.shape) == 4
                                    else torch.contiguous_format)
        self.static_y = torch.empty(yb.shape, device=self.dev, dtype=yb.dtype)
        self.static_x.copy_(xb)
        self.static_y.copy_(yb)
        s = torch.cuda.Stream(self.dev)
        s.wait_stream(torch.cuda.current_stream(self.dev))
        with torch.cuda.stream(s):
            for _ in range(3):
                self.opt.zero_grad(set_to_none=True)
                with self.autocast(torch, graphs=True):
                    loss = self.loss_fn(self.model, self.static_x, self.static_y)
                loss.backward()
                self.opt.step()
        torch.cuda.current_stream(self.dev).wait_stream(s)
        self.graph = torch.cuda.CUDAGraph()
        self.opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(self.graph):
            with self.autocast(torch, graphs=True):
                self.static_loss = self.loss_fn(self.model, self.static_x, self.static_y)
            self.static_loss.backward()
            self.opt.step()
        torch.cuda.synchronize(self.dev)

    def graph_step(self, torch, x, y):
        self.static_x.copy_(x, non_blocking=self.nb)
        self.static_y.copy_(y, non_blocking=self.nb)
        self.graph.replay()
        if self.sync_every:
            self.static_loss.item()

    def sync(self, torch):
        if self.cuda:
            torch.cuda.synchronize(self.dev)

    # -- the loader
    def make_loader(self, torch, ds, pin):
        cfg = self.cfg
        g = torch.Generator()
        g.manual_seed(cfg["seed"])
        kw = dict(batch_size=cfg["loader.batch_size"], shuffle=cfg["capture.shuffle"],
                  num_workers=cfg["loader.num_workers"], pin_memory=pin,
                  drop_last=cfg["loader.drop_last"], generator=g)
        if cfg["loader.num_workers"] > 0:
            kw["prefetch_factor"] = cfg["loader.prefetch_factor"]
            kw["persistent_workers"] = cfg["loader.persistent_workers"]
        return torch.utils.data.DataLoader(ds, **kw)

    def run_epoch(self, torch, index, loader, step):
        cfg = self.cfg
        max_steps = cfg["training.max_steps"]
        self.sync(torch)
        sys0, job0 = P.system_cpu_ticks(), P.job_cpu_seconds()
        t_start = self.now()
        ev0 = None
        events = []
        if self.cuda:
            ev0 = torch.cuda.Event(enable_timing=True)
            ev0.record()
        step_s, wait_s, samples = [], [], 0
        prev = t_start
        # a plain `for` over the loader: the epoch ends in the final next(), which (without
        # persistent workers) shuts the workers down - as in a user's training loop
        for x, y in loader:
            t_got = self.now()
            step(torch, x, y)
            if self.cuda:
                ev = torch.cuda.Event(enable_timing=True)
                ev.record()
                events.append(ev)
            t_end = self.now()
            wait_s.append(t_got - prev)
            step_s.append(t_end - prev)
            samples += x.shape[0]
            prev = t_end
            if max_steps and len(step_s) >= max_steps:
                break
        self.sync(torch)
        t_stop = self.now()
        sys1, job1 = P.system_cpu_ticks(), P.job_cpu_seconds()
        wall = t_stop - t_start
        gpu_steps = None
        if self.cuda and events:
            gpu_steps, last = [], ev0
            for ev in events:
                gpu_steps.append(round(last.elapsed_time(ev) / 1000.0, 7))
                last = ev
        util, n_util = (self.sampler.gpu_mean(t_start, t_stop) if self.sampler else (None, 0))
        job_cpu = (job1 - job0) if job0 is not None and job1 is not None else None
        e = {"index": index, "t_start_s": _r(t_start), "t_end_s": _r(t_stop), "wall_s": _r(wall),
             "steps": len(step_s), "samples": samples,
             "samples_per_s": _r(samples / wall if wall > 0 else None, 3),
             "data_wait_s": _r(sum(wait_s)),
             "step_s": [round(v, 7) for v in step_s],
             "data_wait_step_s": [round(v, 7) for v in wait_s],
             "gpu_step_s": gpu_steps,
             "gpu_util_mean_pct": _r(util, 3), "gpu_util_samples": n_util,
             "cpu_system_pct": _r(P.util_pct(sys0, sys1), 3),
             "job_cpu_s": _r(job_cpu, 4),
             "job_cpu_pct": _r(100.0 * job_cpu / wall, 3) if job_cpu is not None and wall > 0 else None}
        self._sys_ticks.append((sys0, sys1))
        return e

    # -- the whole run
    def execute(self, torch):
        import cap_workload as W
        cfg = self.cfg
        self.setup_device(torch)
        shape = W.input_shape(cfg["dataset.input_bytes"])
        try:
            kind = self.build_training(torch, W, shape)
        except W.WorkloadError as e:
            raise Usage(str(e)) from None
        self.describe_machine(torch)
        period = cfg["capture.util_period_ms"] / 1000.0
        self.sampler = P.Sampler(period, self.gpu if (self.gpu and self.gpu.source) else None,
                                 self.t0)
        self.sampler.start()
        self.calibrate(torch, W)

        # data
        n = cfg["dataset.samples"]
        cost = W.lognormal_factors(n, cfg["dataset.decode_cv"], cfg["seed"])
        for i in range(n):
            cost[i] *= cfg["dataset.decode_us"]
        t = time.perf_counter()
        if cfg["capture.storage"] == "ram":
            self.store = W.RamStore(n, cfg["dataset.sample_bytes"], cfg["seed"])
            data_dir = None
        else:
            owned = not cfg["capture.data_dir"]
            data_dir = cfg["capture.data_dir"] or tempfile.mkdtemp(prefix="epochsim-capture-")
            try:
                self.store = W.FileStore(data_dir, n, cfg["dataset.sample_bytes"], cfg["seed"],
                                         owned)
            except W.WorkloadError as e:
                raise Usage(str(e)) from None
        prep_s = time.perf_counter() - t
        self.doc["machine"]["storage"] = P.storage_info(data_dir) if data_dir else None
        ds = W.SyntheticDataset(self.store, shape, cost, self.burner, cfg["seed"])
        self.measure_dataset(torch, ds, shape)

        pin = cfg["loader.pin_memory"] and self.cuda
        workers = cfg["loader.num_workers"]
        if cfg["loader.pin_memory"] and not self.cuda:
            self.notes.append("loader.pin_memory=true on the CPU: not applied (nothing to copy to)")
        if workers == 0 and cfg["loader.prefetch_factor"] != C.KEYS["loader.prefetch_factor"][1]:
            self.notes.append("loader.prefetch_factor has no effect with num_workers=0")
        if workers == 0 and cfg["loader.persistent_workers"]:
            self.notes.append("loader.persistent_workers has no effect with num_workers=0")
        spe = C.steps_per_epoch(cfg)
        full = C.steps_per_epoch(dict(cfg, **{"training.max_steps": 0}))
        if cfg["training.max_steps"] > full:
            self.notes.append("training.max_steps=%d is more than an epoch's %d steps: whole epochs"
                              % (cfg["training.max_steps"], full))
        graphs = cfg["training.cuda_graphs"]
        self.doc["applied"] = {
            "device": str(self.dev), "input_shape": list(shape), "input_dtype": "float32",
            "label_bytes": 8, "num_classes": W.NUM_CLASSES, "loss": kind,
            "model_parameters": self.params,
            "mlp_hidden": W.MLP_HIDDEN if cfg["workload.model"] == "mlp" else None,
            "triplet_dims": list(W.TRIPLET_DIMS) if cfg["workload.model"] == "triplet" else None,
            "optimizer": "SGD(lr=0.01, momentum=0.9)",
            "autocast_dtype": {None: None, torch.float16: "float16",
                               torch.bfloat16: "bfloat16"}[self.amp],
            "model_dtype": {None: "float32", torch.float16: "float16",
                            torch.bfloat16: "bfloat16"}[self.cast],
            "grad_scaler": self.scaler is not None,
            "tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32) and self.tf32_hw,
            "tf32_cudnn": bool(torch.backends.cudnn.allow_tf32) and self.tf32_hw,
            "tf32_switches": {"matmul": bool(torch.backends.cuda.matmul.allow_tf32),
                              "cudnn": bool(torch.backends.cudnn.allow_tf32)},
            "cudnn_benchmark": bool(torch.backends.cudnn.benchmark),
            "pin_memory": pin, "non_blocking": cfg["loader.non_blocking"] and self.cuda,
            "prefetch_factor": cfg["loader.prefetch_factor"] if workers > 0 else None,
            "persistent_workers": cfg["loader.persistent_workers"] and workers > 0,
            "shuffle": cfg["capture.shuffle"], "cuda_graphs": graphs,
            "steps_per_epoch": spe,
            "step_times_synchronized": bool(self.sync_every or self.scaler is not None),
            "data_prep_s": _r(prep_s, 4),
            "data_files_written": bool(getattr(self.store, "written", False)),
        }

        # warm-up: synthetic batches of the real shape, so the dataset files stay cold
        B = cfg["loader.batch_size"]
        xb = torch.zeros((B,) + tuple(shape), dtype=torch.float32)
        yb = torch.arange(B, dtype=torch.int64) % W.NUM_CLASSES
        if pin:
            xb, yb = xb.pin_memory(), yb.pin_memory()
        self.sync(torch)
        t = self.now()
        capture_s = None
        if graphs:
            self.capture_graph(torch, xb, yb)
            capture_s = self.now() - t
            step = Run.graph_step
        else:
            step = Run.eager_step
        for _ in range(cfg["capture.warmup_steps"]):
            step(self, torch, xb, yb)
        self.sync(torch)
        self.doc["warmup"] = {"steps": cfg["capture.warmup_steps"], "wall_s": _r(self.now() - t),
                              "graph_capture_s": _r(capture_s),
                              "batches": "synthetic zeros of the batch shape, not the dataset"}
        if self.cuda:
            torch.cuda.reset_peak_memory_stats(self.dev)

        evicted = None
        if cfg["capture.cold_cache"] and self.store.kind == "file":
            evicted = self.store.evict()
            if evicted is None:
                self.notes.append("capture.cold_cache: posix_fadvise unavailable, files may be cached")
        self.doc["applied"]["cache_evict_s"] = _r(evicted, 4)

        loader = self.make_loader(torch, ds, pin)
        bound = lambda torch_, x, y: step(self, torch_, x, y)  # noqa: E731
        for e in range(cfg["training.epochs"]):
            rec = self.run_epoch(torch, e + 1, loader, bound)
            self.doc["epochs"].append(rec)
            self.log("epoch %d/%d: %.3f s, %d steps, %.1f samples/s, GPU-Util %s, CPU %s%%" % (
                e + 1, cfg["training.epochs"], rec["wall_s"], rec["steps"], rec["samples_per_s"],
                "-" if rec["gpu_util_mean_pct"] is None else "%.0f%%" % rec["gpu_util_mean_pct"],
                "-" if rec["cpu_system_pct"] is None else "%.0f" % rec["cpu_system_pct"]))
        if self.cuda:
            self.doc["gpu_memory"] = {
                "peak_allocated_bytes": int(torch.cuda.max_memory_allocated(self.dev)),
                "peak_reserved_bytes": int(torch.cuda.max_memory_reserved(self.dev)),
                "total_bytes": int(torch.cuda.get_device_properties(self.dev).total_memory)}
        if cfg["capture.profile_steps"]:
            self.profile(torch, loader, bound, cfg["capture.profile_steps"])
        del loader

    def profile(self, torch, loader, step, n):
        """n traced steps after one skipped and one warm-up step, on a fresh pass of the loader;
        after the timed epochs so that tracing overhead cannot touch them."""
        from torch.profiler import ProfilerActivity, profile, schedule
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.cuda else [])
        out = os.path.join(self.args.out, self.run_id + ".trace.json.gz")
        tmp = os.path.join(self.args.out, ".%s.trace.%d.json" % (self.run_id, os.getpid()))
        written = []

        def ready(prof):
            prof.export_chrome_trace(tmp)
            O.gzip_file(tmp, out)
            written.append(out)
        t = self.now()
        done = 0
        with profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=n, repeat=1),
                     on_trace_ready=ready) as prof:
            while done < n + 2:
                got = 0
                for x, y in loader:
                    step(torch, x, y)
                    prof.step()
                    done += 1
                    got += 1
                    if done >= n + 2:
                        break
                if got == 0:
                    break
        self.sync(torch)
        self.doc["profile"] = {
            "file": os.path.basename(out) if written else None, "steps": n,
            "skipped_steps": 2, "t_start_s": _r(t), "t_end_s": _r(self.now()),
            "format": "kineto" if torch.autograd.kineto_available() else "legacy-autograd",
            "note": None if torch.autograd.kineto_available() else
            "this torch has no Kineto: CPU ops only, a JSON array instead of {traceEvents}"}

    def finish(self):
        """Totals, the sampled series, and cleanup; safe after a failure."""
        if self.sampler is not None:
            self.sampler.stop()
        ep = self.doc["epochs"]
        if ep:
            steps = [s for e in ep for s in e["step_s"]]
            walls = [e["wall_s"] for e in ep]
            jobs = [e["job_cpu_s"] for e in ep]
            busy = sum(b[0] - a[0] for a, b in self._sys_ticks if a and b)
            total = sum(b[1] - a[1] for a, b in self._sys_ticks if a and b)
            util_v = []
            if self.sampler is not None:
                for e in ep:
                    util_v += [s[1] for s in list(self.sampler.gpu_series)
                               if e["t_start_s"] <= s[0] <= e["t_end_s"]]
            last = ep[-1]
            self.doc["totals"] = {
                "epochs": len(ep), "wall_s": _r(sum(walls)), "steps": sum(e["steps"] for e in ep),
                "samples": sum(e["samples"] for e in ep),
                "epoch1_s": ep[0]["wall_s"], "epoch_last_s": last["wall_s"],
                "epoch_mean_s": _r(statistics.fmean(walls)),
                "samples_per_s_last": last["samples_per_s"],
                "step_p50_s": _r(_pct(steps, 50), 7), "step_p99_s": _r(_pct(steps, 99), 7),
                "gpu_util_mean_pct": _r(statistics.fmean(util_v), 3) if util_v else None,
                "gpu_util_last_pct": last["gpu_util_mean_pct"],
                "cpu_system_pct": _r(100.0 * busy / total, 3) if total > 0 else None,
                "job_cpu_pct": (_r(100.0 * sum(jobs) / sum(walls), 3)
                                if None not in jobs and sum(walls) > 0 else None)}
        if self.sampler is not None:
            gpu_src = self.gpu.source if (self.gpu and self.gpu.source) else None
            reason = None
            if gpu_src is None and not self.cuda:
                reason = (self.doc["machine"] or {}).get("gpu_null_reason")
            elif gpu_src is None:
                reason = self.gpu.reason if self.gpu else "the GPU was not probed"
            self.doc["gpu_util"] = {
                "source": gpu_src, "null_reason": reason,
                "period_ms": self.cfg["capture.util_period_ms"],
                "columns": ["t_s", "gpu_util_pct", "mem_util_pct", "sm_clock_mhz"],
                "series": list(self.sampler.gpu_series) if gpu_src else None,
                "error": self.sampler.error}
            self.doc["cpu_util"] = {"source": "/proc/stat", "period_ms":
                                    self.cfg["capture.util_period_ms"],
                                    "columns": ["t_s", "system_pct"],
                                    "series": list(self.sampler.cpu_series)}
            if self.doc["machine"] and self.doc["machine"]["gpu"] is not None:
                self.doc["machine"]["gpu"]["under_load"] = self.sampler.under_load
        if self.gpu is not None:
            self.gpu.close()
        if self.store is not None:
            self.store.close()
        self.doc["duration_s"] = _r(self.now(), 4)

    def csv_row(self):
        cfg, d = self.cfg, self.doc
        t = d["totals"] or {}
        m = d["machine"] or {}
        g = m.get("gpu") or {}
        row = {"run_id": self.run_id, "status": d["status"], "created_utc": self.created,
               "device": m.get("device"), "gpu_name": g.get("name"),
               "cpu_model": (m.get("cpu") or {}).get("model"),
               "steps_per_epoch": (d["applied"] or {}).get("steps_per_epoch"),
               "decode_unit_us": ((d["calibration"] or {}).get("busy_loop") or {}).get("unit_us"),
               "json_file": self.run_id + ".json"}
        for k in ("model", "precision"):
            row[k] = cfg["workload." + k]
        for k in ("batch_size", "num_workers", "prefetch_factor", "pin_memory", "non_blocking",
                  "persistent_workers", "drop_last"):
            row[k] = cfg["loader." + k]
        for k in ("samples", "sample_bytes", "decode_us", "decode_cv", "input_bytes"):
            row[k] = cfg["dataset." + k]
        for k in ("epochs", "max_steps", "sync_every_step", "cuda_graphs"):
            row[k] = cfg["training." + k]
        row["seed"] = cfg["seed"]
        row["storage"] = cfg["capture.storage"]
        for k in ("epoch1_s", "epoch_last_s", "epoch_mean_s", "samples_per_s_last", "step_p50_s",
                  "step_p99_s", "gpu_util_mean_pct", "gpu_util_last_pct", "cpu_system_pct",
                  "job_cpu_pct"):
            row[k] = t.get(k)
        return row


def _is_oom(torch, e):
    cls = getattr(torch.cuda, "OutOfMemoryError", None)
    return (cls is not None and isinstance(e, cls)) or "out of memory" in str(e).lower()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parse_args(argv)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    quiet = args.quiet
    try:
        cfg, ignored = resolve_config(args)
    except C.ConfigError as e:
        print("capture: error: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    rid = args.run_id or C.run_id(cfg)
    if args.print_config:
        print(json.dumps({"run_id": rid, "config": cfg, "ignored_keys": ignored}, indent=1))
        return EXIT_OK
    if not rid or "/" in rid or rid.startswith("."):
        print("capture: error: --run-id must be a plain file name stem, got %r" % rid,
              file=sys.stderr)
        return EXIT_USAGE
    try:
        import torch
    except ImportError as e:
        print("capture: error: cannot import torch (%s): install python3-torch (Debian) or "
              "PyTorch for %s" % (e, sys.executable), file=sys.stderr)
        return EXIT_ERROR
    if args.calibrate_only:
        return calibrate_only(quiet)
    try:
        C.check_resources(cfg)
    except C.ConfigError as e:
        print("capture: error: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    for i in ignored:
        log(quiet, "warning: %s describes simulated hardware; the real machine is measured "
                   "instead (ignored)" % i)
    os.makedirs(args.out, exist_ok=True)
    run = Run(cfg, ignored, args, rid, quiet, [sys.executable, os.path.abspath(__file__)] + argv)
    code = EXIT_OK
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            try:
                run.execute(torch)
            finally:
                for w in caught:  # e.g. DataLoader's "more workers than CPUs": keep it with the data
                    msg = "%s: %s" % (w.category.__name__, w.message)
                    if msg not in run.warnings:
                        run.warnings.append(msg)
                        log(quiet, "warning: " + msg)
        run.doc["status"] = "ok"
    except Usage as e:
        # bad input discovered once torch was there (device, model): nothing is written
        run.finish()
        print("capture: error: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    except (KeyboardInterrupt, SystemExit):  # ^C or SIGTERM (grid's budget): no JSON
        run.finish()
        raise
    except Exception as e:  # a failed measurement is still recorded
        oom = _is_oom(torch, e)
        run.doc["status"] = "oom" if oom else "error"
        run.doc["error"] = "%s: %s" % (type(e).__name__, e)
        if not oom:
            run.doc["traceback"] = traceback.format_exc()[-4000:]
        code = EXIT_OOM if oom else EXIT_ERROR
        print("capture: error: %s" % run.doc["error"], file=sys.stderr)
        if run.cuda:
            try:
                run.doc["gpu_memory"] = {
                    "peak_allocated_bytes": int(torch.cuda.max_memory_allocated(run.dev)),
                    "peak_reserved_bytes": int(torch.cuda.max_memory_reserved(run.dev)),
                    "total_bytes": int(torch.cuda.get_device_properties(run.dev).total_memory)}
            except Exception:
                pass
    finally:
        for a in ("model", "opt", "scaler", "graph", "static_x", "static_y", "static_loss"):
            if hasattr(run, a):
                delattr(run, a)
        gc.collect()
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.empty_cache()
    run.finish()
    path = os.path.join(args.out, rid + ".json")
    O.write_json(path, run.doc)
    O.append_csv(os.path.join(args.out, "summary.csv"), run.csv_row())
    print(path)
    return code


def _on_sigterm(signum, frame):
    raise SystemExit(128 + signum)  # unwinds through main(), which removes a temp data folder


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _on_sigterm)
    sys.exit(main())
