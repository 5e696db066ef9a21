#!/usr/bin/env python3
"""kernels.py - times the single kernels epochsim prices one by one, at the shapes of a BERT step.

The BERT rows of the accuracy table (docs/accuracy.md, Known gaps) are over-predicted on HBM GPUs
and the excess grows from the A100 to the B200; a whole-step time cannot say which kernels carry
it. This script times each kernel kind of NVIDIA's BERT layer (DeepLearningExamples modeling.py,
zoo model bert-*-nvidia) alone, with CUDA events, in fp16 and fp32: TensorIterator's vectorized
loop (a scale, a same-shape add, a copy), its legacy loop for non-contiguous operands (the
broadcast attention-mask add, the context's transpose copy), the row kernels (softmax forward and
backward, LayerNorm), dropout forward and backward, GELU, and the two attention batched matmuls on
DLE's strided head-split views. Each row records the bytes the kernel must move (every operand
read once, the result written once) and so its achieved bandwidth.

It also times the layer's linear GEMMs (forward, input gradient and weight gradient of the
q/k/v/output projections and of the two feed-forward matmuls: their achieved TFLOP/s by shape,
and whether a long reduction with a small output, the weight gradient, pays for its waves), and
DLE's BertAdam step (optimization.py): a Python loop over every parameter tensor of a DLE BERT of
--layers layers, each clipped alone and updated by 9 or 11 ops, fp32. Its time per step and per
launched op is the CPU cost per op that epochsim's `opt_loop_op_ns` stands for, on this host.

With --trace it also profiles one DLE-style encoder layer, forward and backward, per precision
with torch.profiler and writes the Kineto trace (`epochsim import kineto` reads it), so every
kernel of the layer is timed in context as well.

Runs on the CPU too (tiny shapes, perf_counter timing), which is what the ctest checks; the
figures that matter come from a GPU. Output: one JSON document (format "epochsim-kernels/1"),
written whole. Leaves the GPU's settings as found.

    python3 kernels.py --out kernels.json                 # BERT-large, batch 32, seq 384
    python3 kernels.py --out k.json --batch 64 --trace traces/
"""

import argparse
import datetime
import math
import os
import platform
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cap_output  # noqa: E402

FORMAT = "epochsim-kernels/1"
DTYPES = {"fp16": torch.float16, "fp32": torch.float32}


class Timer:
    """Median time of a callable: CUDA events on a GPU, perf_counter on the CPU."""

    def __init__(self, device, warmup, reps):
        self.device, self.warmup, self.reps = device, warmup, reps

    def median_us(self, fn):
        for _ in range(self.warmup):
            fn()
        times = []
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            for _ in range(self.reps):
                a = torch.cuda.Event(enable_timing=True)
                b = torch.cuda.Event(enable_timing=True)
                a.record()
                fn()
                b.record()
                b.synchronize()
                times.append(a.elapsed_time(b) * 1e3)
        else:
            for _ in range(self.reps):
                t = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t) * 1e6)
        return statistics.median(times)


def nbytes(*tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def probes(shape, dtype, device):
    """(name, path, fn, bytes moved, elements written) for each kernel kind of a DLE BERT layer.

    DLE keeps activations as (seq, batch, hidden); q, k, v are head-split views of them that
    torch.bmm reads in place, the scores are a (batch x heads, seq, seq) bmm output viewed as
    (batch, heads, seq, seq), and the mask is (batch, 1, 1, seq).
    """
    b, s, h, d = shape
    hidden, bh = h * d, b * h
    g = torch.Generator(device=device).manual_seed(0)

    def rnd(*size):
        return torch.randn(*size, generator=g, device=device, dtype=dtype)

    x, y = rnd(s, b, hidden), rnd(s, b, hidden)
    inter = rnd(s, b, 4 * hidden)
    scores = rnd(b, h, s, s)
    mask = rnd(b, 1, 1, s)
    probs = scores.softmax(-1)
    grad = rnd(b, h, s, s)
    _, dmask = torch.native_dropout(scores, 0.1, True)
    ctx = rnd(bh, s, d)
    q = x.view(s, bh, d).transpose(0, 1)          # DLE transpose_for_scores
    k = y.view(s, bh, d).permute(1, 2, 0)         # DLE transpose_key_for_scores
    v = y.view(s, bh, d).transpose(0, 1)
    p3 = probs.view(bh, s, s)
    w, bias = rnd(hidden), rnd(hidden)
    return [
        ("copy", "vectorized", lambda: x.clone(), 2 * nbytes(x), x.numel()),
        ("scale", "vectorized", lambda: scores / 8.0, 2 * nbytes(scores), scores.numel()),
        ("add", "vectorized", lambda: x + y, 3 * nbytes(x), x.numel()),
        ("mask_add_broadcast", "legacy", lambda: scores + mask,
         2 * nbytes(scores) + nbytes(mask), scores.numel()),
        ("transpose_copy", "legacy", lambda: ctx.transpose(0, 1).contiguous(), 2 * nbytes(ctx),
         ctx.numel()),
        ("softmax_fwd", "row", lambda: scores.softmax(-1), 2 * nbytes(scores), scores.numel()),
        ("softmax_bwd", "row",
         lambda: torch._softmax_backward_data(grad, probs, -1, dtype), 3 * nbytes(scores),
         scores.numel()),
        ("dropout_fwd", "vectorized", lambda: torch.native_dropout(scores, 0.1, True),
         2 * nbytes(scores) + dmask.numel(), scores.numel()),
        ("dropout_bwd", "vectorized",
         lambda: torch.ops.aten.native_dropout_backward(grad, dmask, 1 / 0.9),
         2 * nbytes(scores) + dmask.numel(), scores.numel()),
        ("layernorm_fwd", "row", lambda: F.layer_norm(x, (hidden,), w, bias),
         2 * nbytes(x), x.numel()),
        ("gelu_fwd", "vectorized", lambda: F.gelu(inter, approximate="tanh"),
         2 * nbytes(inter), inter.numel()),
        ("bmm_qk", "gemm", lambda: torch.bmm(q, k),
         nbytes(x, y) + bh * s * s * x.element_size(), bh * s * s),
        ("bmm_pv", "gemm", lambda: torch.bmm(p3, v), nbytes(p3, y) + nbytes(ctx), ctx.numel()),
    ]


def gemm_probes(shape, dtype, device):
    """(name, fn, flops, bytes) of the layer's linear GEMMs on (seq x batch, features) rows:
    forward y = x W^T, input gradient dx = dy W, weight gradient dW = dy^T x, for the four
    hidden x hidden projections (one shape), hidden -> 4 hidden and 4 hidden -> hidden."""
    b, s, h, d = shape
    hidden, rows = h * d, s * b
    g = torch.Generator(device=device).manual_seed(1)
    out = []
    for name, k, n in (("proj", hidden, hidden), ("inter", hidden, 4 * hidden),
                       ("out", 4 * hidden, hidden)):
        x = torch.randn(rows, k, generator=g, device=device, dtype=dtype)
        w = torch.randn(n, k, generator=g, device=device, dtype=dtype)
        dy = torch.randn(rows, n, generator=g, device=device, dtype=dtype)
        flops = 2 * rows * k * n
        out += [
            ("linear_fwd_" + name, lambda x=x, w=w: F.linear(x, w), flops, nbytes(x, w, dy)),
            ("linear_dgrad_" + name, lambda dy=dy, w=w: dy @ w, flops, nbytes(dy, w, x)),
            ("linear_wgrad_" + name, lambda dy=dy, x=x: dy.t() @ x, flops, nbytes(dy, x, w)),
        ]
    return out


def bert_param_shapes(hidden, layers, vocab):
    """(shape, decays) of every parameter tensor of DLE's BertForQuestionAnswering, in
    named_parameters order: embeddings, each layer's 16 tensors, the QA head (391 for 24 layers).
    Weights and embedding tables decay; biases and LayerNorm parameters do not (run_squad.py)."""
    ln = [((hidden,), False), ((hidden,), False)]
    shapes = [((vocab, hidden), True), ((512, hidden), True), ((2, hidden), True)] + ln
    for _ in range(layers):
        shapes += [((hidden, hidden), True), ((hidden,), False)] * 4  # query, key, value, dense
        shapes += ln + [((4 * hidden, hidden), True), ((4 * hidden,), False),
                        ((hidden, 4 * hidden), True), ((hidden,), False)] + ln
    return shapes + [((2, hidden), True), ((2,), False)]


def bertadam_step(params, state, lr=1e-5, b1=0.9, b2=0.999, eps=1e-6, wd=0.01):
    """One BertAdam.step as optimization.py runs it: per tensor, clip_grad_norm_ on that tensor
    alone, the two moment updates, the update with weight decay in the decay group, the step."""
    for (p, decays), (m, v) in zip(params, state):
        torch.nn.utils.clip_grad_norm_(p, 1.0)
        grad = p.grad
        m.mul_(b1).add_(grad, alpha=1 - b1)
        v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        update = m / (v.sqrt() + eps)
        if decays:
            update += wd * p.data
        p.data.add_(-(lr * update))


def bertadam_probe(shape, device, layers, vocab, warmup, reps):
    """Median wall time of one BertAdam step over a DLE BERT's fp32 parameters, synchronized
    before and after; per op with the count epochsim launches (7 for the clip, 9 or 11)."""
    b, s, h, d = shape
    hidden = h * d
    g = torch.Generator(device=device).manual_seed(2)
    params, state = [], []
    for size, decays in bert_param_shapes(hidden, layers, vocab):
        p = torch.randn(*size, generator=g, device=device, requires_grad=True)
        p.grad = torch.randn(*size, generator=g, device=device)
        params.append((p, decays))
        state.append((torch.zeros_like(p), torch.zeros_like(p)))
    ops = sum(7 + (11 if decays else 9) for _, decays in params)
    times = []
    for i in range(warmup + reps):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t = time.perf_counter()
        bertadam_step(params, state)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        if i >= warmup:
            times.append((time.perf_counter() - t) * 1e3)
    ms = statistics.median(times)
    return {"layers": layers, "vocab": vocab, "hidden": hidden, "tensors": len(params),
            "decaying": sum(1 for _, dec in params if dec), "ops": ops, "dtype": "fp32",
            "median_ms": round(ms, 3), "us_per_op": round(ms * 1e3 / ops, 3)}


def encoder_layer(shape, dtype, device):
    """One encoder layer as DLE's modeling.py writes it, on (seq, batch, hidden) activations."""
    b, s, h, d = shape
    hidden = h * d
    lin = lambda i, o: torch.nn.Linear(i, o).to(device=device, dtype=dtype)  # noqa: E731
    m = torch.nn.ModuleDict({
        "query": lin(hidden, hidden), "key": lin(hidden, hidden), "value": lin(hidden, hidden),
        "dense": lin(hidden, hidden), "ln1": torch.nn.LayerNorm(hidden).to(device, dtype),
        "inter": lin(hidden, 4 * hidden), "out": lin(4 * hidden, hidden),
        "ln2": torch.nn.LayerNorm(hidden).to(device, dtype),
    })
    mask = torch.zeros(b, 1, 1, s, device=device, dtype=dtype)

    def step(x):
        bh = b * h
        q = m["query"](x).view(s, bh, d).transpose(0, 1)
        k = m["key"](x).view(s, bh, d).permute(1, 2, 0)
        v = m["value"](x).view(s, bh, d).transpose(0, 1)
        sc = torch.bmm(q, k).view(b, h, s, s) / math.sqrt(d) + mask
        pr = F.dropout(F.softmax(sc, dim=-1), 0.1, True).view(bh, s, s)
        c = torch.bmm(pr, v).transpose(0, 1).contiguous().view(s, b, hidden)
        a = m["ln1"](F.dropout(m["dense"](c), 0.1, True) + x)
        i = F.gelu(m["inter"](a), approximate="tanh")
        return m["ln2"](F.dropout(m["out"](i), 0.1, True) + a)

    return step


def trace_layer(shape, dtype, name, device, outdir, steps):
    """Profiles forward + backward of one layer; writes OUTDIR/layer-NAME.trace.json.gz."""
    from torch.profiler import ProfilerActivity, profile
    b, s, h, d = shape
    step = encoder_layer(shape, dtype, device)
    x = torch.randn(s, b, h * d, device=device, dtype=dtype, requires_grad=True)
    for _ in range(2):
        step(x).float().sum().backward()
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=acts, record_shapes=True) as prof:
        for _ in range(steps):
            step(x).float().sum().backward()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    raw = os.path.join(outdir, ".layer-%s.json" % name)
    prof.export_chrome_trace(raw)
    dst = os.path.join(outdir, "layer-%s.trace.json.gz" % name)
    cap_output.gzip_file(raw, dst)  # removes RAW
    return dst


def device_doc(device):
    doc = {"type": device.type, "torch": torch.__version__, "cuda": torch.version.cuda,
           "host": platform.node(), "processor": platform.processor()}
    if device.type == "cuda":
        p = torch.cuda.get_device_properties(device)
        doc.update(name=p.name, sms=p.multi_processor_count,
                   memory_gb=round(p.total_memory / 2**30, 1),
                   capability="%d.%d" % (p.major, p.minor))
    return doc


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="the JSON file to write")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=384)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--precision", choices=sorted(DTYPES), action="append",
                    help="fp16 and/or fp32 (default both)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--layers", type=int, default=24,
                    help="encoder layers of the BERT whose BertAdam step is timed (default 24)")
    ap.add_argument("--vocab", type=int, default=30522, help="word embedding rows (default 30522)")
    ap.add_argument("--trace", metavar="DIR", help="also profile one encoder layer into DIR")
    ap.add_argument("--trace-steps", type=int, default=3)
    a = ap.parse_args(argv)
    for k in ("batch", "seq", "heads", "head_dim", "reps", "trace_steps", "layers", "vocab"):
        if getattr(a, k) < 1:
            ap.error("--%s must be at least 1" % k.replace("_", "-"))
    if a.warmup < 0:
        ap.error("--warmup must be 0 or more")
    return a


def main(argv=None):
    a = parse_args(argv)
    device = torch.device(a.device)
    shape = (a.batch, a.seq, a.heads, a.head_dim)
    timer = Timer(device, a.warmup, a.reps)
    rows, traces = [], []
    for name in a.precision or ["fp16", "fp32"]:
        dtype = DTYPES[name]
        plist = probes(shape, dtype, device)
        for op, path, fn, nb, elems in plist:
            us = timer.median_us(fn)
            rows.append({"op": op, "path": path, "precision": name, "elements": elems,
                         "bytes": nb, "median_us": round(us, 3),
                         "gbps": round(nb / us / 1e3, 2) if us > 0 else None})
            print("%-5s %-20s %-10s %12.1f us %9.1f GB/s" % (name, op, path, us,
                                                               nb / us / 1e3 if us else 0))
        for op, fn, flops, nb in gemm_probes(shape, dtype, device):
            us = timer.median_us(fn)
            rows.append({"op": op, "path": "gemm", "precision": name, "flops": flops,
                         "bytes": nb, "median_us": round(us, 3),
                         "tflops": round(flops / us / 1e6, 3) if us > 0 else None})
            print("%-5s %-20s %-10s %12.1f us %9.2f TFLOP/s" % (name, op, "gemm", us,
                                                                 flops / us / 1e6 if us else 0))
        if a.trace:
            os.makedirs(a.trace, exist_ok=True)
            traces.append(os.path.basename(
                trace_layer(shape, dtype, name, device, a.trace, a.trace_steps)))
        del plist
    opt = bertadam_probe(shape, device, a.layers, a.vocab, a.warmup, a.reps)
    print("fp32  bertadam_step        loop       %12.3f ms %9.3f us per op (%d tensors, %d ops)"
          % (opt["median_ms"], opt["us_per_op"], opt["tensors"], opt["ops"]))
    doc = {"format": FORMAT,
           "created_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "device": device_doc(device),
           "shape": {"batch": a.batch, "seq": a.seq, "heads": a.heads, "head_dim": a.head_dim},
           "reps": a.reps, "warmup": a.warmup, "rows": rows, "optimizer_loop": opt,
           "traces": traces}
    cap_output.write_json(a.out, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
