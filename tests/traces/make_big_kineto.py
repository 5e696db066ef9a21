#!/usr/bin/env python3
"""Makes a large Kineto trace for measuring the importer's memory and speed: the traceEvents of a
real trace repeated N times, each copy shifted in time by the trace's span and given fresh
correlation ids and ProfilerStep numbers, streamed out event by event.

usage: make_big_kineto.py IN.json[.gz] OUT.json COPIES
e.g.   make_big_kineto.py tests/data/validation-traces/kineto/resnet50_num_workers_0/*.gz \
           /tmp/big.json 30        # trace 1 x 30 = 1.05 GB, 180 steps
"""
import gzip
import json
import re
import sys


def main():
    src, dst, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt") as f:
        doc = json.load(f)
    events = doc.pop("traceEvents")
    xs = [e for e in events if e.get("ph") == "X" and isinstance(e.get("ts"), (int, float))]
    t0 = min(e["ts"] for e in xs)
    span = max(e["ts"] + e.get("dur", 0) for e in xs) - t0 + 1000
    steps = [int(e["name"].split("#")[1]) for e in xs if str(e.get("name", "")).startswith("ProfilerStep#")]
    nsteps = max(steps) - min(steps) + 1
    corr_step = 10 ** (len(str(max(e.get("args", {}).get("correlation", 0) for e in events))) + 1)
    with open(dst, "w") as out:
        head = json.dumps(doc)[:-1]  # the other top-level keys, object left open
        out.write(head + (", " if doc else "") + '"traceEvents": [\n')
        first = True
        for k in range(copies):
            for e in events:
                c = dict(e)
                if "ts" in c and isinstance(c["ts"], (int, float)):
                    c["ts"] = c["ts"] + k * span
                if c.get("ph") in ("s", "f") and isinstance(c.get("id"), int):
                    c["id"] = c["id"] + k * corr_step
                if isinstance(c.get("args"), dict) and "correlation" in c["args"]:
                    a = dict(c["args"])
                    a["correlation"] = a["correlation"] + k * corr_step
                    c["args"] = a
                name = c.get("name", "")
                if isinstance(name, str) and name.startswith("ProfilerStep#"):
                    c["name"] = "ProfilerStep#%d" % (int(name.split("#")[1]) + k * nsteps)
                out.write(("" if first else ",\n") + json.dumps(c))
                first = False
        out.write("\n]}\n")


if __name__ == "__main__":
    main()
