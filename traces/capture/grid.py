#!/usr/bin/env python3
"""grid.py - runs issue 6's ground-truth grid with capture.py: batch {32,128,512} x num_workers
{0,2,8} x pin_memory {on,off} x {resnet18, resnet50, mlp} x {fp32, amp_fp16}, plus launch-bound
and loader-bound points. Resumable: a point whose DIR/<run_id>.json exists is skipped, so a run cut
short by --budget-s (or a lost machine) continues where it stopped when started again.
"""

import argparse
import contextlib
import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import cap_config as C  # noqa: E402
import cap_output as O  # noqa: E402

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_PENDING = 0, 1, 2, 4

BATCHES = (32, 128, 512)
WORKERS = (0, 2, 8)
PINS = (True, False)
MODELS = ("resnet18", "resnet50", "mlp")
PRECISIONS = ("fp32", "amp_fp16")

# The dataset of the main grid: ImageNet-like samples. decode_us=1000 makes one worker deliver
# roughly 1 k samples/s, which is expected (not measured: no GPU when this was written) to fall
# between the GPU rates of these models, so that the grid spans GPU-bound and loader-bound points;
# the regime of each point is measured, not assumed.
BASE = {
    "dataset.sample_bytes": 110000, "dataset.decode_us": 1000.0, "dataset.decode_cv": 0.3,
    "dataset.input_bytes": 602112, "loader.prefetch_factor": 2, "loader.non_blocking": True,
    "loader.persistent_workers": False, "loader.drop_last": False, "training.epochs": 2,
    "training.max_steps": 0, "training.sync_every_step": True, "training.cuda_graphs": False,
    "seed": 1,
}

# The special points. Launch-bound: a tiny model at batch 32 with cheap samples held in RAM, so
# that the main thread's per-kernel dispatch, not the GPU or the loader, sets the pace (seed 003:
# the contrastive triplet net). Loader-bound: an expensive per-sample decode and 2 workers.
SPECIAL = (
    ("launch_bound", {"workload.model": "triplet", "workload.precision": "fp32",
                      "loader.batch_size": 32, "loader.num_workers": 4, "loader.pin_memory": True,
                      "dataset.samples": 8192, "dataset.sample_bytes": 12288,
                      "dataset.input_bytes": 12288, "dataset.decode_us": 0.0,
                      "dataset.decode_cv": 0.0, "capture.storage": "ram"}),
    ("launch_bound", {"workload.model": "mlp", "workload.precision": "fp32",
                      "loader.batch_size": 32, "loader.num_workers": 4, "loader.pin_memory": True,
                      "dataset.samples": 8192, "dataset.sample_bytes": 12288,
                      "dataset.input_bytes": 12288, "dataset.decode_us": 0.0,
                      "dataset.decode_cv": 0.0, "capture.storage": "ram"}),
    ("loader_bound", {"workload.model": "resnet18", "workload.precision": "amp_fp16",
                      "loader.batch_size": 128, "loader.num_workers": 2, "loader.pin_memory": True,
                      "dataset.samples": 1024, "dataset.decode_us": 8000.0}),
)

# Grid points that also get a Kineto trace when --profile-steps is given (with all specials):
# one per model, at a middle setting.
PROFILED = (("resnet18", "fp32", 128, 8, True), ("resnet50", "amp_fp16", 128, 8, True),
            ("mlp", "fp32", 512, 2, True))


def points(args):
    """[(tag, config dict, profile?)] in run order: the special points, then the grid."""
    common = dict(BASE)
    common["capture.storage"] = args.storage
    common["capture.device"] = args.device
    common["capture.warmup_steps"] = args.warmup_steps
    if args.epochs is not None:
        common["training.epochs"] = args.epochs
    out = []
    for tag, over in SPECIAL:
        out.append((tag, dict(common, **over), True))
    grid = []
    for model in MODELS:
        for prec in PRECISIONS:
            for b in BATCHES:
                for w in WORKERS:
                    for pin in PINS:
                        samples = args.samples or max(args.base_samples, args.min_steps * b)
                        cfg = dict(common, **{
                            "workload.model": model, "workload.precision": prec,
                            "loader.batch_size": b, "loader.num_workers": w,
                            "loader.pin_memory": pin, "dataset.samples": samples})
                        grid.append(("grid", cfg, (model, prec, b, w, pin) in PROFILED))
    if args.order == "shuffled":
        # a fixed shuffle: a grid cut short by the budget still covers every axis evenly
        random.Random(0).shuffle(grid)
    out.extend(grid)
    return out


def resolve(cfg, extra, data_root):
    pairs = [(k, v, "grid") for k, v in cfg.items()] + [(k, v, "--set") for k, v in extra]
    full, _ = C.resolve(pairs)
    if full["capture.storage"] == "file":
        # one data folder per dataset, shared by every point that reads the same files
        full["capture.data_dir"] = os.path.join(
            data_root, "n%d_b%d_s%d" % (full["dataset.samples"], full["dataset.sample_bytes"],
                                        full["seed"]))
    return full


def _argv(full, out, rid, tag, profile_steps, quiet):
    a = ["--out", out, "--run-id", rid, "--tag", tag]
    for k in sorted(full):
        if k == "capture.profile_steps":
            continue
        v = full[k]
        a += ["--set", "%s=%s" % (k, json.dumps(v) if isinstance(v, bool) else v)]
    a += ["--set", "capture.profile_steps=%d" % profile_steps]
    if quiet:
        a.append("--quiet")
    return a


def status_of(path):
    try:
        with open(path) as f:
            return json.load(f).get("status")
    except (OSError, ValueError):
        return None


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="grid.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run the ground-truth grid of issue 6 with capture.py (resumable).",
        epilog="""examples:
  # everything, on the GPU, into groundtruth/ (run again to continue after a stop)
  grid.py --out groundtruth --budget-s 540 --profile-steps 3

  # list the points and which are done, without running anything
  grid.py --out groundtruth --dry-run

  # only ResNet-18 points, in one Python process (faster start, less isolation)
  grid.py --out groundtruth --only '^resnet18_' --in-process

exit status: 0 all points done, 1 some point failed (status=error), 2 bad input,
             4 points left because of --budget-s (run again to continue)""")
    p.add_argument("--out", default="groundtruth", help="output folder (default: groundtruth)")
    p.add_argument("--budget-s", type=float, default=0,
                   help="start no run that would likely end after this many seconds (0 = none)")
    p.add_argument("--dry-run", action="store_true", help="list the points and their state")
    p.add_argument("--only", metavar="REGEX", help="only run ids matching REGEX (re.search)")
    p.add_argument("--device", default="auto", help="capture.device for every point")
    p.add_argument("--storage", default="file", choices=C.STORAGES,
                   help="capture.storage of the main grid (default: file)")
    p.add_argument("--samples", type=int, default=0,
                   help="dataset.samples of every grid point (default: max(base, min-steps x batch))")
    p.add_argument("--base-samples", type=int, default=2048)
    p.add_argument("--min-steps", type=int, default=8, help="steps per epoch at least (default 8)")
    p.add_argument("--epochs", type=int, default=None, help="training.epochs (default 2)")
    p.add_argument("--warmup-steps", type=int, default=3)
    p.add_argument("--profile-steps", type=int, default=0,
                   help="Kineto-trace this many steps of the special and a few grid points")
    p.add_argument("--order", choices=("shuffled", "nested"), default="shuffled")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="applied to every point after the grid's own values")
    p.add_argument("--in-process", action="store_true",
                   help="run the points in this process (saves the start-up of Python, torch and "
                        "CUDA per point; the points then share a process)")
    p.add_argument("--data-root", default=os.path.join(tempfile.gettempdir(),
                                                        "epochsim-capture-grid-data"),
                   help="where the sample files are written, one folder per dataset, kept for "
                        "reuse (default: %(default)s; outside the output so it is never committed)")
    p.add_argument("--python", default=sys.executable, help="interpreter for the runs")
    p.add_argument("--redo-errors", action="store_true", help="rerun points with status=error")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        extra = [C.parse_set(s) for s in args.set]
        only = re.compile(args.only) if args.only else None
        if args.samples < 0 or args.base_samples < 1 or args.min_steps < 1:
            raise C.ConfigError("--samples, --base-samples and --min-steps must be positive")
        plan = []
        for tag, cfg, prof in points(args):
            full = resolve(cfg, extra, args.data_root)
            rid = C.run_id(full)
            if only and not only.search(rid):
                continue
            plan.append((tag, full, prof, rid))
    except (C.ConfigError, re.error) as e:
        print("grid: error: %s" % e, file=sys.stderr)
        return EXIT_USAGE

    os.makedirs(args.out, exist_ok=True)
    O.write_json(os.path.join(args.out, "grid.json"), {
        "format": "epochsim-capture-grid/1",
        "points": [{"run_id": rid, "tag": tag, "profiled": prof} for tag, _, prof, rid in plan]})

    todo = []
    for tag, full, prof, rid in plan:
        st = status_of(os.path.join(args.out, rid + ".json"))
        if st is not None and not (st == "error" and args.redo_errors):
            state = "done:" + st
        else:
            state = "pending"
            todo.append((tag, full, prof, rid))
        if args.dry_run:
            print("%-13s %-12s %s" % (state, tag, rid))
    if args.dry_run:
        print("grid: %d points, %d pending" % (len(plan), len(todo)), file=sys.stderr)
        return EXIT_OK

    start = time.monotonic()
    durations = {}
    failed = 0
    left = list(todo)
    if args.in_process:
        import capture
    while left:
        tag, full, prof, rid = left[0]
        model = full["workload.model"]
        elapsed = time.monotonic() - start
        est = durations.get(model, max(durations.values()) if durations else 0.0)
        if args.budget_s and elapsed + est * 1.2 > args.budget_s:
            break
        left.pop(0)
        argv_ = _argv(full, args.out, rid, tag, args.profile_steps if prof else 0, args.quiet)
        if not args.quiet:
            print("grid: [%d/%d] %s" % (len(todo) - len(left), len(todo), rid), file=sys.stderr,
                  flush=True)
        t = time.monotonic()
        if args.in_process:
            with contextlib.redirect_stdout(io.StringIO()):  # capture prints the JSON path
                code = capture.main(argv_)
        else:
            timeout = (args.budget_s - elapsed) if args.budget_s else None
            proc = subprocess.Popen([args.python, os.path.join(HERE, "capture.py")] + argv_,
                                    start_new_session=True, stdout=subprocess.DEVNULL)
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                # SIGTERM to capture alone: it unwinds, shuts its workers down, writes nothing;
                # whatever is left of its process group after 30 s is killed
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
                print("grid: %s stopped at the budget; it will run again next time" % rid,
                      file=sys.stderr)
                left.insert(0, (tag, full, prof, rid))
                break
        durations[model] = max(durations.get(model, 0.0), time.monotonic() - t)
        if code == 2:
            print("grid: %s was refused as bad input (see above)" % rid, file=sys.stderr)
            failed += 1
        elif code not in (0, 3):
            failed += 1
    done = len(todo) - len(left)
    print("grid: ran %d, %d failed, %d left, %.0f s" % (done, failed, len(left),
                                                        time.monotonic() - start))
    if failed:
        return EXIT_FAILED
    return EXIT_PENDING if left else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
