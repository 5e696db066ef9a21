#!/usr/bin/python3
"""test_kernels_cpu.py - runs traces/capture/kernels.py on the CPU (Debian's python3-torch) at
tiny shapes and checks what it writes: the document's format and fields, one row per kernel
kind with its path and the bytes it must move for these shapes, times and bandwidths that agree,
the linear GEMMs with their FLOPs, the BertAdam loop over a DLE BERT's 391 parameter tensors,
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
LINEARS = {"proj": (H * D, H * D), "inter": (H * D, 4 * H * D), "out": (4 * H * D, H * D)}
for _name in LINEARS:
    for _kind in ("fwd", "dgrad", "wgrad"):
        PATHS["linear_%s_%s" % (_kind, _name)] = "gemm"


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
            if "flops" in r:  # a linear GEMM: tflops is FLOPs / time, rounded to 0.001
                self.assertAlmostEqual(r["tflops"], r["flops"] / r["median_us"] / 1e6,
                                       delta=0.001 + 1e-3 * r["tflops"])
                continue
            # gbps is bytes / time, rounded to 0.01 (times to 0.001 us)
            self.assertAlmostEqual(r["gbps"], r["bytes"] / r["median_us"] / 1e3,
                                   delta=0.01 + 1e-3 * r["gbps"])

    def test_linear_gemms_carry_their_flops(self):
        rows = {r["op"]: r for r in self.doc["rows"]}
        tokens = S * B
        for name, (k, n) in LINEARS.items():
            for kind in ("fwd", "dgrad", "wgrad"):
                r = rows["linear_%s_%s" % (kind, name)]
                self.assertEqual(r["flops"], 2 * tokens * k * n)
                # each operand read once, the result written once: x, w and dy in fp32
                self.assertEqual(r["bytes"], 4 * (tokens * k + k * n + tokens * n))

    def test_bertadam_loop_over_dle_bert_parameters(self):
        o = self.doc["optimizer_loop"]
        # 5 embedding tensors, 16 per layer, the QA head's 2: 391 for 24 layers; weights and
        # embedding tables decay (3 + 6 per layer + 1 = 148), the rest do not
        self.assertEqual((o["layers"], o["tensors"], o["decaying"]), (24, 391, 148))
        # epochsim's count: 7 kernels of the per-tensor clip, 11 with decay, 9 without
        self.assertEqual(o["ops"], 391 * 7 + 148 * 11 + (391 - 148) * 9)
        self.assertGreater(o["median_ms"], 0)
        self.assertAlmostEqual(o["us_per_op"], o["median_ms"] * 1e3 / o["ops"], delta=1e-3)

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
        for bad in (["--batch", "0"], ["--reps", "-1"], ["--precision", "fp8"], ["--layers", "0"]):
            p = run(["--out", os.path.join(self.tmp, "bad.json")] + TINY + bad)
            self.assertEqual(p.returncode, 2, bad)
            self.assertFalse(os.path.exists(os.path.join(self.tmp, "bad.json")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
