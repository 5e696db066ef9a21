"""cap_workload.py - the synthetic dataset and the models of a capture run.

A sample is: read sample_bytes (one real file, or bytes held in RAM), burn the sample's CPU cost
(decode_us x a lognormal factor of mean 1 and CV decode_cv, fixed per sample by the seed), then
fill a float32 tensor of input_bytes. The CPU cost is real decoding work - zlib inflate of a
fixed buffer, a fixed amount of work per unit - calibrated on this CPU to microseconds, so it
slows down under core sharing, SMT and lower all-core clocks the way image decode does.
"""

import array
import json
import math
import os
import random
import shutil
import statistics
import time
import zlib

import torch
import torch.nn as nn

class WorkloadError(Exception):
    """Input that cannot work here: a model that cannot be built (missing torchvision, wrong
    input shape), a data folder that is not capture's. Exit 2, nothing written."""


# ---------------------------------------------------------------- the busy loop
_UNIT_BYTES = 4096  # one inflate unit: ~13 us on a 2.6 GHz server core (measured), fine-grained


def _text(n, rng, words):
    out, size = [], 0
    while size < n:
        w = rng.choice(words)
        out.append(w)
        size += len(w) + 1
    return " ".join(out).encode()[:n]


class Burner:
    """Decode-like CPU work: inflating one deflate stream of 4 KiB of word-like text, again and
    again. Inflate is what PNG/zip decoders run and, like JPEG's entropy decoding, branchy
    table-driven native code that runs in L1/L2 and releases the GIL; one unit is always the same
    work. calibrate() times the unit on this core (median of rounds of back-to-back units, the
    pattern burn() runs); a cost of X us becomes floor(X/unit) units plus one more with
    probability frac(X/unit), drawn once per sample from the seed, so the mean is exact."""

    def __init__(self):
        rng = random.Random(0x5EED)  # the unit is the same for every run and seed
        words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
                 for _ in range(512)]
        self.blob = zlib.compress(_text(_UNIT_BYTES, rng, words), 6)
        self.unit_us = None

    def calibrate(self, rounds=9, round_s=0.05):
        blob = self.blob
        zlib.decompress(blob)
        t = time.perf_counter()
        for _ in range(50):
            zlib.decompress(blob)
        reps = max(50, int(round_s / max((time.perf_counter() - t) / 50, 1e-9)))
        per_round = []
        for _ in range(rounds):
            t = time.perf_counter()
            for _ in range(reps):
                zlib.decompress(blob)
            per_round.append((time.perf_counter() - t) / reps * 1e6)
        self.unit_us = statistics.median(per_round)
        self.rounds_us = per_round
        return self

    def units_for(self, costs_us, seed):
        """Units to burn for each cost (stochastic rounding, seeded)."""
        rng = random.Random(seed * 7919 + 3)
        out = array.array("I", bytes(4 * len(costs_us)))
        for i, c in enumerate(costs_us):
            x = c / self.unit_us
            n = int(x)
            out[i] = n + (1 if rng.random() < x - n else 0)
        return out

    def burn_units(self, n):
        blob = self.blob
        for _ in range(n):
            zlib.decompress(blob)

    def verify(self, targets=(10.0, 100.0, 1000.0, 10000.0), seconds_each=0.1):
        """Times the work of a target cost single-threaded: the check that a sample costs what
        it says (10 us is ~1 unit: its mean holds, single calls vary by a unit)."""
        rows = []
        for us in targets:
            calls = max(5, int(seconds_each * 1e6 / us))
            units = self.units_for([us] * calls, 0)
            wall, cpu = [], []
            for n in units:
                t, c = time.perf_counter(), time.thread_time()
                self.burn_units(n)
                wall.append((time.perf_counter() - t) * 1e6)
                cpu.append((time.thread_time() - c) * 1e6)
            rows.append({"decode_us": us, "calls": calls,
                         "wall_us_mean": round(statistics.fmean(wall), 3),
                         "wall_us_sd": round(statistics.pstdev(wall), 3),
                         "cpu_us_mean": round(statistics.fmean(cpu), 3)})
        return rows

    def describe(self):
        return {"method": "zlib-inflate",
                "unit_output_bytes": _UNIT_BYTES,
                "unit_input_bytes": len(self.blob),
                "unit_us": round(self.unit_us, 4),
                "unit_rounds_us": [round(r, 4) for r in self.rounds_us],
                "inflate_mb_per_s": round(_UNIT_BYTES / self.unit_us, 1)}


def lognormal_factors(n, cv, seed):
    """N multipliers of mean 1 and coefficient of variation CV (lognormal), fixed by SEED:
    sigma^2 = ln(1 + cv^2), mu = -sigma^2 / 2."""
    out = array.array("d", [1.0]) * n
    if cv <= 0:
        return out
    sigma = math.sqrt(math.log1p(cv * cv))
    mu = -0.5 * sigma * sigma
    rng = random.Random(seed * 1000003 + 17)
    for i in range(n):
        out[i] = rng.lognormvariate(mu, sigma)
    return out


# ---------------------------------------------------------------- storage
MANIFEST = "epochsim-capture-data.json"


class RamStore:
    kind = "ram"

    def __init__(self, n, sample_bytes, seed):
        rng = random.Random(seed)
        self.items = [rng.randbytes(sample_bytes) for _ in range(n)]
        self.root = None

    def read(self, i):
        return self.items[i]

    def evict(self):
        return None

    def close(self):
        self.items = []


class FileStore:
    """One file of sample_bytes per sample under ROOT/NNNN/NNNNNNNN.bin (1000 per folder).
    A folder written before with the same (samples, sample_bytes, seed) is reused."""
    kind = "file"

    def __init__(self, root, n, sample_bytes, seed, owned):
        self.root, self.n, self.owned = root, n, owned
        self.written, self.write_s = False, 0.0
        want = {"format": "epochsim-capture-data/1", "samples": n, "sample_bytes": sample_bytes,
                "seed": seed}
        man = os.path.join(root, MANIFEST)
        partial = man + ".partial"  # present while writing: a folder cut short is still ours
        os.makedirs(root, exist_ok=True)
        have = None
        if os.path.exists(man):
            try:
                with open(man) as f:
                    have = json.load(f)
            except (OSError, ValueError):
                have = None
        elif os.listdir(root) and not os.path.exists(partial):
            raise WorkloadError("capture.data_dir=%s is not empty and was not written by capture "
                               "(no %s): refusing to write into it" % (root, MANIFEST))
        if have != want:
            t = time.perf_counter()
            with open(partial, "w"):
                pass
            if os.path.exists(man):
                os.unlink(man)  # a half-rewritten folder must not look complete
            rng = random.Random(seed)
            for i in range(n):
                p = self.path(i)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "wb") as f:
                    f.write(rng.randbytes(sample_bytes))  # random: a compressing FS cannot shrink it
            os.sync()  # clean pages can be evicted; dirty ones cannot
            tmp = man + ".tmp"
            with open(tmp, "w") as f:
                json.dump(want, f)
            os.replace(tmp, man)
            os.unlink(partial)
            self.written, self.write_s = True, time.perf_counter() - t

    def path(self, i):
        return os.path.join(self.root, "%04d" % (i // 1000), "%08d.bin" % i)

    def read(self, i):
        with open(self.path(i), "rb") as f:
            return f.read()

    def evict(self):
        """Asks the kernel to drop the files from the page cache (POSIX_FADV_DONTNEED), so that
        epoch 1 reads from the device. Returns seconds spent, or None when unsupported."""
        if not hasattr(os, "posix_fadvise"):
            return None
        t = time.perf_counter()
        for i in range(self.n):
            fd = os.open(self.path(i), os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
        return time.perf_counter() - t

    def close(self):
        if self.owned:
            shutil.rmtree(self.root, ignore_errors=True)


# ---------------------------------------------------------------- the dataset
def input_shape(input_bytes):
    """An image-like (C, H, W) float32 shape of INPUT_BYTES: C = 3 when it divides, H the largest
    divisor of the rest not above its square root. 602112 -> (3, 224, 224)."""
    n = input_bytes // 4
    c = 3 if n % 3 == 0 else 1
    m = n // c
    h = math.isqrt(m)
    while m % h:
        h -= 1
    return (c, h, m // h)


NUM_CLASSES = 1000


class SyntheticDataset(torch.utils.data.Dataset):
    """Map-style dataset: read, burn, fill. Label = index mod 1000."""

    def __init__(self, store, shape, cost_us, burner, seed):
        self.store, self.shape, self.cost_us, self.burner = store, shape, cost_us, burner
        self.units = burner.units_for(cost_us, seed)

    def __len__(self):
        return len(self.cost_us)

    def __getitem__(self, i):
        data = self.store.read(i)
        self.burner.burn_units(self.units[i])
        x = torch.empty(self.shape, dtype=torch.float32)
        x.fill_((len(data) + i) % 251 / 251.0)
        return x, i % NUM_CLASSES

    def timed_item(self, i):
        """((x, label), (read_us, decode_us, tensor_us)) of one sample, for the calibration."""
        t0 = time.perf_counter()
        data = self.store.read(i)
        t1 = time.perf_counter()
        self.burner.burn_units(self.units[i])
        t2 = time.perf_counter()
        x = torch.empty(self.shape, dtype=torch.float32)
        x.fill_((len(data) + i) % 251 / 251.0)
        t3 = time.perf_counter()
        return (x, i % NUM_CLASSES), ((t1 - t0) * 1e6, (t2 - t1) * 1e6, (t3 - t2) * 1e6)


# ---------------------------------------------------------------- models
MLP_HIDDEN = 1024       # Flatten -> Linear(in,1024) -> ReLU -> Linear(1024,1024) -> ReLU -> Linear(1024,1000)
TRIPLET_DIMS = (256, 256, 64)  # embedding net: Linear(in,256)-ReLU-Linear(256,256)-ReLU-Linear(256,64)


def build_model(name, shape):
    """Returns (module, kind) with kind 'classify' (cross-entropy on labels) or 'triplet'."""
    n = shape[0] * shape[1] * shape[2]
    if name in ("resnet18", "resnet50"):
        try:
            import torchvision
        except ImportError:
            raise WorkloadError("workload.model=%s needs torchvision, which this Python cannot import; "
                             "install python3-torchvision (Debian) or `pip install torchvision`, "
                             "or use workload.model=mlp|triplet" % name) from None
        if shape[0] != 3 or min(shape[1], shape[2]) < 32:
            raise WorkloadError("workload.model=%s needs a 3-channel image of at least 32x32: "
                             "dataset.input_bytes=%d gives shape %s; use 4*3*H*W bytes, e.g. "
                             "602112 for 3x224x224" % (name, n * 4, list(shape)))
        return getattr(torchvision.models, name)(num_classes=NUM_CLASSES), "classify"
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(n, MLP_HIDDEN), nn.ReLU(),
                             nn.Linear(MLP_HIDDEN, MLP_HIDDEN), nn.ReLU(),
                             nn.Linear(MLP_HIDDEN, NUM_CLASSES)), "classify"
    if name == "triplet":
        a, b, c = TRIPLET_DIMS
        return nn.Sequential(nn.Flatten(), nn.Linear(n, a), nn.ReLU(), nn.Linear(a, b), nn.ReLU(),
                             nn.Linear(b, c)), "triplet"
    raise WorkloadError("unknown workload.model %r" % name)


class LossFn:
    """The forward pass and loss of one step. Triplet: positive = the anchor flipped
    horizontally (a GPU-side augmentation), negative = the next sample of the batch; the three
    views go through the embedding net as one batch, then TripletMarginLoss(margin=1)."""

    def __init__(self, kind):
        self.kind = kind
        self.ce = nn.CrossEntropyLoss()
        self.triplet = nn.TripletMarginLoss(margin=1.0)

    def __call__(self, model, x, y):
        if self.kind == "classify":
            return self.ce(model(x), y)
        pos = torch.flip(x, dims=[-1])
        neg = torch.roll(x, 1, 0)
        emb = model(torch.cat([x, pos, neg]))
        a, p, n = emb.chunk(3)
        return self.triplet(a, p, n)
