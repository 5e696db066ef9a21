#!/usr/bin/env python3
"""smoke.py - a couple of minutes on a new box before the grid: every feature of capture.py once
at tiny sizes (each precision, CUDA graphs, pinned and pageable, workers and none, file and RAM,
the profiler, the ResNets when torchvision is there), each output checked for what that feature
must show. Prints one line per run and exits 1 if anything is wrong.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

TINY = {"dataset.samples": 256, "dataset.sample_bytes": 4096, "dataset.input_bytes": 12288,
        "dataset.decode_us": 200, "loader.batch_size": 32, "training.epochs": 2}

CUDA_POINTS = [
    ("fp32 w2 pinned file +trace", {"workload.model": "mlp", "loader.num_workers": 2}, ["--profile-steps", "2"]),
    ("tf32 w0 pageable ram", {"workload.model": "mlp", "workload.precision": "tf32",
                              "loader.num_workers": 0, "loader.pin_memory": False}, ["--storage", "ram"]),
    ("amp_fp16 w2", {"workload.model": "mlp", "workload.precision": "amp_fp16",
                     "loader.num_workers": 2}, []),
    ("amp_bf16 graphs", {"workload.model": "mlp", "workload.precision": "amp_bf16",
                         "loader.num_workers": 2, "training.cuda_graphs": True}, []),
    ("fp16 w0", {"workload.model": "mlp", "workload.precision": "fp16", "loader.num_workers": 0}, []),
    ("bf16 persistent", {"workload.model": "triplet", "workload.precision": "bf16",
                         "loader.num_workers": 2, "loader.persistent_workers": True}, []),
    ("triplet graphs nosync", {"workload.model": "triplet", "training.cuda_graphs": True,
                               "training.sync_every_step": False, "loader.num_workers": 2}, []),
]
TV_POINTS = [
    ("resnet18 amp_fp16", {"workload.model": "resnet18", "workload.precision": "amp_fp16",
                           "dataset.input_bytes": 49152, "loader.num_workers": 2}, []),
    ("resnet50 strict fp32", {"workload.model": "resnet50", "capture.strict_fp32": True,
                              "dataset.input_bytes": 49152, "loader.num_workers": 2}, []),
]
CPU_POINTS = [
    ("cpu fp32 w2 +trace", {"workload.model": "mlp", "loader.num_workers": 2}, ["--profile-steps", "2"]),
    ("cpu amp_bf16 w0 ram", {"workload.model": "triplet", "workload.precision": "amp_bf16",
                             "loader.num_workers": 0}, ["--storage", "ram"]),
]


def check(d, over, cuda):
    """Problems with one run's JSON, as strings."""
    bad = []
    if d["status"] != "ok":
        return ["status %s: %s" % (d["status"], d["error"])]
    steps = d["applied"]["steps_per_epoch"]
    for e in d["epochs"]:
        if e["steps"] != steps or len(e["step_s"]) != steps:
            bad.append("epoch %d: %d steps, expected %d" % (e["index"], e["steps"], steps))
        if cuda and (e["gpu_step_s"] is None or len(e["gpu_step_s"]) != steps):
            bad.append("epoch %d: no CUDA-event step times" % e["index"])
    prec = over.get("workload.precision", "fp32")
    a = d["applied"]
    if a["grad_scaler"] != (prec == "amp_fp16"):
        bad.append("grad_scaler=%s with %s" % (a["grad_scaler"], prec))
    want_ac = {"amp_fp16": "float16", "amp_bf16": "bfloat16"}.get(prec)
    if a["autocast_dtype"] != want_ac:
        bad.append("autocast %s, expected %s" % (a["autocast_dtype"], want_ac))
    if a["cuda_graphs"] != bool(over.get("training.cuda_graphs")):
        bad.append("cuda_graphs not applied")
    if over.get("training.cuda_graphs") and d["warmup"]["graph_capture_s"] is None:
        bad.append("no graph capture time")
    if cuda:
        m = d["machine"]
        if m["gpu"] is None:
            bad.append("no machine.gpu")
        elif m["gpu"]["nvml"] is None:
            bad.append("no NVML/nvidia-smi: %s" % m["gpu"]["nvml_null_reason"])
        if d["gpu_util"]["source"] is None or not d["gpu_util"]["series"]:
            bad.append("no GPU-Util series: %s" % d["gpu_util"]["null_reason"])
        if d["calibration"]["transfer"] is None:
            bad.append("no transfer calibration")
        if d["gpu_memory"] is None:
            bad.append("no gpu_memory")
        if prec == "tf32" and m["gpu"] and float(m["gpu"]["compute_capability"]) >= 8 \
                and not a["tf32_matmul"]:
            bad.append("tf32 not applied")
        if a["pin_memory"] != over.get("loader.pin_memory", True):
            bad.append("pin_memory %s" % a["pin_memory"])
    if d["capture"]["profile_steps"]:
        p = d["profile"]
        if not p or not p["file"]:
            bad.append("no trace written")
        elif cuda and p["format"] != "kineto":
            bad.append("profiler without Kineto on a CUDA build")
    return bad


def main(argv=None):
    p = argparse.ArgumentParser(prog="smoke.py", description=__doc__.split("\n")[0])
    p.add_argument("--out", default="capture-smoke")
    p.add_argument("--device", default="auto")
    p.add_argument("--python", default=sys.executable)
    args = p.parse_args(argv)
    r = subprocess.run([args.python, "-c", "import torch; print(int(torch.cuda.is_available()))"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("smoke: torch is not importable by %s:\n%s" % (args.python, r.stderr), file=sys.stderr)
        return 1
    cuda = args.device != "cpu" and r.stdout.strip() == "1"
    points = list(CUDA_POINTS) if cuda else list(CPU_POINTS)
    if cuda:
        if importlib.util.find_spec("torchvision") is not None:
            points += TV_POINTS
        else:
            print("smoke: torchvision is not importable: the ResNet points are skipped",
                  file=sys.stderr)
    failures = 0
    for name, over, extra in points:
        cfg = dict(TINY, **over)
        if cfg.get("training.cuda_graphs"):
            cfg["loader.drop_last"] = True
        cmd = [args.python, os.path.join(HERE, "capture.py"), "--out", args.out, "--quiet",
               "--device", args.device] + extra
        for k, v in sorted(cfg.items()):
            cmd += ["--set", "%s=%s" % (k, json.dumps(v) if isinstance(v, bool) else v)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        path = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else None
        if r.returncode != 0 or not path or not os.path.exists(path):
            print("FAIL  %-28s exit %d: %s" % (name, r.returncode, r.stderr.strip()[-600:]))
            failures += 1
            continue
        with open(path) as f:
            d = json.load(f)
        bad = check(d, over, cuda)
        t = d["totals"] or {}
        print("%-5s %-28s epoch %.3f s  GPU-Util %s  job CPU %s%%  %s" % (
            "FAIL" if bad else "ok", name, t.get("epoch_last_s") or 0,
            "-" if t.get("gpu_util_mean_pct") is None else "%.0f%%" % t["gpu_util_mean_pct"],
            "-" if t.get("job_cpu_pct") is None else "%.0f" % t["job_cpu_pct"],
            "; ".join(bad + d["notes"])[:300]))
        failures += bool(bad)
    print("smoke: %d of %d runs wrong; outputs in %s" % (failures, len(points), args.out))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
