#!/usr/bin/python3
"""test_kernels_cpu.py - runs traces/capture/kernels.py on the CPU (Debian's python3-torch) at
tiny shapes and checks what it writes: the document's format and fields, one row per kernel
kind with its path and the bytes it must move for these shapes, times and bandwidths that agree,
the layer trace, and the refusal of bad arguments. The figures themselves mean something only
on a GPU; this checks that the script a GPU session runs works and writes what it says.
"""

import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
KERNELS = os.path.join(ROOT, "traces", "capture", "kernels.py")
PY = sys.executable

# batch 2, seq 16, heads 2, head_dim 8: hidden 16, scores 2 x 2 x 16 x 16 = 1024 elements
B, S, H, D = 2, 16, 2, 8
TINY = ["--batch", str(B), "--seq", str(S), "--heads", str(H), "--head-dim", str(D),
        "--reps", "2", "--warmup", "1", "--precision", "fp32", "--device", "cpu"]
PATHS = {"copy": "vectorized", "scale": "vectorized", "add": "vectorized",
         "mask_add_broadcast": "legacy", "transpose_copy": "legacy", "softmax_fwd": "row",
         "softmax_bwd": "row", "dropout_fwd": "vectorized", "dropout_bwd": "vectorized",
         "layernorm_fwd": "row", "gelu_fwd": "vectorized", "bmm_qk": "gemm", "bmm_pv": "gemm"}


def run(args):
    return subprocess.run([PY, KERNELS] + args, capture_output=True, text=True, timeout=240)


class KernelsCpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="kernels-test-")
        cls.out = os.path.join(cls.tmp, "k.json")
        cls.trace_dir = os.path.join(cls.tmp, "traces")
        p = run(["--out", cls.out, "--trace", cls.trace_dir, "--trace-steps", "1"] + TINY)
        if p.returncode != 0:
            raise AssertionError("kernels.py failed:\n" + p.stdout + p.stderr)
        with open(cls.out) as f:
            cls.doc = json.load(f)

    def test_document(self):
        d = self.doc
        self.assertEqual(d["format"], "epochsim-kernels/1")
        self.assertEqual(d["device"]["type"], "cpu")
        self.assertEqual(d["shape"], {"batch": B, "seq": S, "heads": H, "head_dim": D})
        self.assertEqual((d["reps"], d["warmup"]), (2, 1))
        self.assertEqual(d["traces"], ["layer-fp32.trace.json.gz"])

    def test_one_row_per_kernel_kind(self):
        rows = self.doc["rows"]
        self.assertEqual({r["op"]: r["path"] for r in rows}, PATHS)
        for r in rows:
            self.assertEqual(r["precision"], "fp32")
            self.assertGreater(r["median_us"], 0)
            # gbps is bytes / time, rounded to 0.01 (times to 0.001 us)
            self.assertAlmostEqual(r["gbps"], r["bytes"] / r["median_us"] / 1e3,
                                   delta=0.01 + 1e-3 * r["gbps"])

    def test_bytes_are_the_operands_read_once_and_the_result_written_once(self):
        rows = {r["op"]: r for r in self.doc["rows"]}
        hidden, scores = H * D, B * H * S * S
        self.assertEqual(rows["copy"]["bytes"], 2 * 4 * S * B * hidden)
        self.assertEqual(rows["add"]["bytes"], 3 * 4 * S * B * hidden)
        self.assertEqual(rows["mask_add_broadcast"]["bytes"], 2 * 4 * scores + 4 * B * S)
        self.assertEqual(rows["softmax_bwd"]["bytes"], 3 * 4 * scores)
        self.assertEqual(rows["dropout_fwd"]["bytes"], 2 * 4 * scores + scores)  # bool mask
        self.assertEqual(rows["gelu_fwd"]["bytes"], 2 * 4 * S * B * 4 * hidden)
        self.assertEqual(rows["scale"]["elements"], scores)

    def test_layer_trace_is_written_whole(self):
        path = os.path.join(self.trace_dir, "layer-fp32.trace.json.gz")
        with gzip.open(path, "rt") as f:
            events = json.load(f)
        events = events["traceEvents"] if isinstance(events, dict) else events
        names = {e.get("name") for e in events}
        self.assertIn("aten::bmm", names)
        self.assertEqual([n for n in os.listdir(self.trace_dir) if n.startswith(".")], [])

    def test_bad_arguments_are_refused(self):
        for bad in (["--batch", "0"], ["--reps", "-1"], ["--precision", "fp8"]):
            p = run(["--out", os.path.join(self.tmp, "bad.json")] + TINY + bad)
            self.assertEqual(p.returncode, 2, bad)
            self.assertFalse(os.path.exists(os.path.join(self.tmp, "bad.json")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
