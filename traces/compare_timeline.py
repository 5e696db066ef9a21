#!/usr/bin/env python3
"""compare_timeline.py — a recorded PyTorch-profiler (Kineto) trace and epochsim's timeline of its
replay, step by step, in numbers: what one sees when the two are opened side by side in Perfetto.

    python3 traces/compare_timeline.py RECORDED.json[.gz] SIMULATED.json [--check TOL]

For each file and each step (ProfilerStep#N windows in the recorded trace, `step N` spans on the
main-thread lane of the simulated one) it measures the step's wall time, the kernels and copies the
GPU ran inside the window, the GPU's busy time (union of its intervals), its idle gaps (count of
gaps > 50 us, total, longest) and the main thread's wait for data, then prints the median of each
figure for both files and their ratio. Windows are cut on the CPU timeline, so work the GPU runs
after its step's CPU part counts in the next window, the same way in both files.
With --check TOL the exit status is 1 when the median step time, GPU item count or GPU busy time
differ by more than TOL (e.g. 0.05) between the two.
"""
import gzip
import json
import statistics
import sys

GAP_US = 50.0


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def union(intervals):
    """Busy time and gaps of a set of [start, end) intervals inside a window."""
    intervals = sorted(intervals)
    busy, gaps, end = 0.0, [], None
    for s, e in intervals:
        if end is None or s > end:
            if end is not None:
                gaps.append(s - end)
            busy += e - s
            end = e
        elif e > end:
            busy += e - end
            end = e
    return busy, gaps


def windows_stats(windows, gpu, waits):
    rows = []
    for (s, e) in windows:
        inside = [(max(a, s), min(b, e)) for a, b in gpu if b > s and a < e]
        busy, gaps = union(inside)
        big = [g for g in gaps if g > GAP_US]
        wait = sum(min(b, e) - max(a, s) for a, b in waits if b > s and a < e)
        rows.append({
            "step_ms": (e - s) / 1e3,
            "gpu_items": len(inside),
            "gpu_busy_ms": busy / 1e3,
            "gaps_over_50us": len(big),
            "gap_total_ms": sum(big) / 1e3,
            "longest_gap_ms": max(big) / 1e3 if big else 0.0,
            "data_wait_ms": wait / 1e3,
        })
    return rows


def recorded(events):
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                   if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))
    gpu_cats = {"Kernel", "kernel", "Memcpy", "gpu_memcpy", "Memset", "gpu_memset"}
    gpu = [(e["ts"], e["ts"] + e["dur"]) for e in events
           if e.get("ph") == "X" and e.get("cat") in gpu_cats]
    waits = [(e["ts"], e["ts"] + e["dur"]) for e in events
             if e.get("ph") == "X" and ("DataLoader" in str(e.get("name", ""))
                                        and "__next__" in str(e.get("name", ""))
                                        or e.get("name") == "## wait_for_batch ##")]
    # a step's window runs to the next step's start (the last one to its own end)
    windows = [(s, steps[i + 1][0] if i + 1 < len(steps) else e) for i, (s, e) in enumerate(steps)]
    return windows_stats(windows, gpu, waits)


def simulated(events):
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    main = {k for k, v in names.items() if v == "main thread"}
    stream = {k for k, v in names.items() if "compute stream" in v}
    xs = [e for e in events if e.get("ph") == "X"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in xs
                   if (e["pid"], e["tid"]) in main and e["args"].get("kind") == "step")
    gpu = [(e["ts"], e["ts"] + e["dur"]) for e in xs if (e["pid"], e["tid"]) in stream]
    waits = [(e["ts"], e["ts"] + e["dur"]) for e in xs
             if (e["pid"], e["tid"]) in main and e["args"].get("kind") == "wait"
             and e["name"] == "wait for batch"]
    windows = [(s, steps[i + 1][0] if i + 1 < len(steps) else e) for i, (s, e) in enumerate(steps)]
    return windows_stats(windows, gpu, waits)


CHECKED = ("step_ms", "gpu_items", "gpu_busy_ms")


def main(argv):
    tol = None
    if len(argv) == 5 and argv[3] == "--check":
        tol = float(argv[4])
        argv = argv[:3]
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    rec, sim = recorded(load(argv[1])), simulated(load(argv[2]))
    if not rec or not sim:
        print("compare_timeline: no steps found in %s" % (argv[1] if not rec else argv[2]),
              file=sys.stderr)
        return 1
    print("%-16s %12s %12s %8s   (medians over %d recorded, %d simulated steps)"
          % ("figure", "recorded", "simulated", "ratio", len(rec), len(sim)))
    bad = []
    for k in rec[0]:
        a = statistics.median(r[k] for r in rec)
        b = statistics.median(r[k] for r in sim)
        ratio = "%8.3f" % (b / a) if a else "       -"
        print("%-16s %12.3f %12.3f %s" % (k, a, b, ratio))
        if tol is not None and k in CHECKED and (not a or abs(b / a - 1) > tol):
            bad.append(k)
    if bad:
        print("compare_timeline: beyond %.1f %%: %s" % (tol * 100, ", ".join(bad)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
