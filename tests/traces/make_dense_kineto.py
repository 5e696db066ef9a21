#!/usr/bin/env python3
"""Writes a dense Kineto trace for measuring the importer's memory: new schema, STEPS
ProfilerStep#N annotations, each holding ops that launch one kernel apiece; about 150 bytes of
JSON per event (three times the events per MB of a real trace, so the importer's tables are large
for the file's size). Events are written as Kineto writes them (CPU side first, the GPU's in
batches), one at a time, so this script's own memory stays small.

usage: make_dense_kineto.py OUT.json [STEPS]     (320 steps: 59 MB, 384,320 events)
"""
import json
import sys

OPS_PER_STEP = 400


def events(steps):
    """The trace's events, in the order Kineto writes them: CPU side first, then the GPU."""
    t = 1_000_000.0
    corr = 1
    gpu = []
    for step in range(steps):
        step_ts = t
        cpu = []
        for k in range(OPS_PER_STEP):
            cpu.append({"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 1, "tid": 1,
                        "ts": t, "dur": 8.0, "args": {"Input Dims": [[32, 64], [32, 64]],
                                                      "Input type": ["float", "float"]}})
            cpu.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                        "pid": 1, "tid": 1, "ts": t + 2.0, "dur": 4.0,
                        "args": {"correlation": corr}})
            gpu.append({"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel",
                        "pid": 0, "tid": 7, "ts": t + 10.0, "dur": 6.0,
                        "args": {"correlation": corr, "stream": 7, "device": 0,
                                 "grid": [64, 1, 1]}})
            corr += 1
            t += 10.0
        yield {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step,
               "pid": 1, "tid": 1, "ts": step_ts, "dur": t - step_ts + 5.0}
        yield from cpu
        t += 20.0
        if step % 8 == 7:  # Kineto flushes the GPU buffer now and then
            yield from gpu
            gpu = []
    yield from gpu


def main():
    path = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 320
    with open(path, "w") as out:
        out.write('{"deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", '
                  '"numSms": 108, "computeMajor": 8, "computeMinor": 0, '
                  '"totalGlobalMem": 42505273344}],\n"traceEvents": [\n')
        sep = ""
        for e in events(steps):
            out.write(sep + json.dumps(e, separators=(",", ":")))
            sep = ",\n"
        out.write("\n]}\n")


if __name__ == "__main__":
    main()
