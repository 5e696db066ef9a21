"""cap_config.py - the knobs of one capture run, named as epochsim names them.

The experiment keys (dataset.*, loader.*, training.*, workload.model/precision, seed) are
epochsim's own (sim/setup/experiment.h), so a measured point can be fed to epochsim unchanged; the
capture.* keys say how the real run is staged (storage, device, warm-up...). Torch-free on purpose:
the grid and input validation run without importing torch.
"""

import difflib
import hashlib
import json
import os
import tempfile


class ConfigError(Exception):
    """A user-input error: printed as `capture: error: ...`, exit code 2."""


MODELS = ("resnet18", "resnet50", "mlp", "triplet")
PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "amp_fp16", "amp_bf16")
STORAGES = ("file", "ram")


def _int(lo=None, hi=None):
    def conv(key, v):
        if isinstance(v, bool):
            raise ConfigError("%s must be an integer, got %r" % (key, v))
        if isinstance(v, str):
            s = v.strip()
            try:
                v = int(s, 10)
            except ValueError:
                try:
                    f = float(s)
                except ValueError:
                    raise ConfigError("%s must be an integer, got %r" % (key, v)) from None
                v = f
        if isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")) or v != int(v):
                raise ConfigError("%s must be an integer, got %r" % (key, v))
            v = int(v)
        if not isinstance(v, int):
            raise ConfigError("%s must be an integer, got %r" % (key, v))
        if lo is not None and v < lo:
            raise ConfigError("%s must be an integer >= %d, got %d" % (key, lo, v))
        if hi is not None and v > hi:
            raise ConfigError("%s must be an integer <= %d, got %d" % (key, hi, v))
        return v
    return conv


def _num(lo=None, hi=None):
    def conv(key, v):
        if isinstance(v, bool):
            raise ConfigError("%s must be a number, got %r" % (key, v))
        if isinstance(v, str):
            try:
                v = float(v.strip())
            except ValueError:
                raise ConfigError("%s must be a number, got %r" % (key, v)) from None
        if not isinstance(v, (int, float)):
            raise ConfigError("%s must be a number, got %r" % (key, v))
        v = float(v)
        if v != v or v in (float("inf"), float("-inf")):
            raise ConfigError("%s must be a finite number, got %r" % (key, v))
        if lo is not None and v < lo:
            raise ConfigError("%s must be >= %g, got %g" % (key, lo, v))
        if hi is not None and v > hi:
            raise ConfigError("%s must be <= %g, got %g" % (key, hi, v))
        return v
    return conv


_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _bool(key, v):
    if isinstance(v, bool):
        return v
    if isinstance(v, int) and v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in _TRUE + _FALSE:
        return v.strip().lower() in _TRUE
    raise ConfigError("%s must be true or false, got %r" % (key, v))


def _choice(options):
    def conv(key, v):
        if not isinstance(v, str) or v not in options:
            raise ConfigError("%s must be one of %s, got %r" % (key, ", ".join(options), v))
        return v
    return conv


def _str(key, v):
    if v is None:
        return ""
    if not isinstance(v, str):
        raise ConfigError("%s must be a string, got %r" % (key, v))
    return v


def _device(key, v):
    if not isinstance(v, str):
        raise ConfigError("%s must be a string, got %r" % (key, v))
    if v in ("auto", "cpu", "cuda"):
        return v
    if v.startswith("cuda:") and v[5:].isdigit():
        return v
    raise ConfigError("%s must be auto, cpu, cuda or cuda:N, got %r" % (key, v))


# key -> (converter, default, meaning). Defaults: a small ImageNet-like job that runs in seconds
# on a GPU; 110000 bytes is about the mean ImageNet-1k training JPEG (the 2012 training tar is
# ~138 GB for 1,281,167 images, recalled, not measured here); 602112 = 3x224x224 float32.
KEYS = {
    "seed": (_int(0), 1, "seed of the shuffle, the per-sample cost variation and the data"),
    "dataset.samples": (_int(1), 1024, "samples per epoch"),
    "dataset.sample_bytes": (_int(0), 110000, "bytes read from storage per sample"),
    "dataset.decode_us": (_num(0), 1000.0,
                          "CPU decode+augment per sample on THIS machine's core, us"),
    "dataset.decode_cv": (_num(0, 10), 0.3, "coefficient of variation of decode time (lognormal)"),
    "dataset.input_bytes": (_int(4), 602112, "bytes of the float32 tensor per sample"),
    "loader.batch_size": (_int(1), 128, "samples per batch"),
    "loader.num_workers": (_int(0, 512), 2, "DataLoader worker processes (0 = main thread)"),
    "loader.prefetch_factor": (_int(1, 1024), 2, "batches in flight per worker"),
    "loader.pin_memory": (_bool, True, "DataLoader pin_memory (page-locked batches)"),
    "loader.non_blocking": (_bool, True, ".to(device, non_blocking=...)"),
    "loader.persistent_workers": (_bool, False, "keep workers across epochs"),
    "loader.drop_last": (_bool, False, "drop the last partial batch"),
    "training.epochs": (_int(1, 100000), 2, "timed epochs"),
    "training.max_steps": (_int(0), 0, "steps per epoch; 0 = the whole epoch"),
    "training.sync_every_step": (_bool, True, "loss.item() after every step"),
    "training.cuda_graphs": (_bool, False, "capture the whole step in a CUDA graph"),
    "workload.model": (_choice(MODELS), "resnet18", "model"),
    "workload.precision": (_choice(PRECISIONS), "fp32", "numeric format"),
    "workload.memory_format": (_choice(("contiguous", "channels_last")), "contiguous",
                               "layout of the model and of image batches (torch.channels_last)"),
    "workload.attention": (_choice(("default", "eager", "sdpa")), "default",
                           "attention implementation (the harness's models have no attention)"),
    "capture.storage": (_choice(STORAGES), "file", "file: one real file per sample; ram: bytes in RAM"),
    "capture.data_dir": (_str, "", "where file storage writes (\"\" = a temporary folder)"),
    "capture.cold_cache": (_bool, True,
                           "evict the sample files from the page cache before epoch 1"),
    "capture.device": (_device, "auto", "auto, cpu, cuda or cuda:N"),
    "capture.warmup_steps": (_int(0, 100000), 3, "untimed steps before epoch 1"),
    "capture.profile_steps": (_int(0, 1000), 0, "Kineto-traced steps after the timed epochs"),
    "capture.util_period_ms": (_int(10, 10000), 100, "GPU-Util / CPU sampling period, ms"),
    "capture.cudnn_benchmark": (_bool, False, "torch.backends.cudnn.benchmark"),
    "capture.strict_fp32": (_bool, False,
                            "fp32 without cuDNN's default TF32 convolutions (true fp32)"),
    "capture.shuffle": (_bool, True, "shuffle the sampler (seeded)"),
}

# epochsim keys that describe the *simulated* hardware or modelled costs: a real run has its own,
# so they are accepted (an epochsim experiment file can be passed as is), ignored, and listed in
# the output. Mirrors sim/setup/experiment.h.
IGNORED_EPOCHSIM_KEYS = (
    "system.name", "system.gpu", "system.gpu_count", "system.cpu", "system.cpu_cores",
    "system.cpu_threads", "system.storage", "system.host_memory_gb", "system.pcie_gen",
    "system.page_cache_gb", "system.mem_copy_efficiency", "workload.trace", "workload.kernels_per_step", "workload.kernel_us", "workload.dispatch_us",
    "workload.graph_launch_us", "workload.step_overhead_us",
    "loader.worker_start_ms", "loader.copy_dispatch_us", "report.util_window_ns",
)

# capture.* keys that do not change what is measured: left out of the run id.
_NOT_IN_ID = ("capture.data_dir", "capture.profile_steps", "capture.util_period_ms")


def defaults():
    return {k: v[1] for k, v in KEYS.items()}


def _flatten(prefix, obj, out, where):
    for k, v in obj.items():
        if not isinstance(k, str):
            raise ConfigError("%s: key %r is not a string" % (where, k))
        key = prefix + k
        if isinstance(v, dict):
            _flatten(key + ".", v, out, where)
        else:
            out.append((key, v))


def _unknown(key, where):
    close = difflib.get_close_matches(key, list(KEYS) + list(IGNORED_EPOCHSIM_KEYS), n=1)
    hint = " (did you mean '%s'?)" % close[0] if close else ""
    return ConfigError("%sunknown key '%s'%s" % (where + ": " if where else "", key, hint))


def load_file(path):
    """Reads a YAML (.yaml/.yml, needs python3-yaml) or JSON file into [(dotted key, value)]."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ConfigError("%s: cannot read: %s" % (path, e.strerror)) from None
    if path.endswith((".yaml", ".yml")):
        try:
            import yaml  # Debian: python3-yaml
        except ImportError:
            raise ConfigError("%s: reading YAML needs python3-yaml (apt-get install python3-yaml); "
                              "or give the same keys as JSON" % path) from None
        try:
            obj = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            pos = ":%d:%d" % (mark.line + 1, mark.column + 1) if mark is not None else ""
            raise ConfigError("%s%s: YAML error: %s" % (path, pos, getattr(e, "problem", e))) from None
    else:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError("%s:%d:%d: JSON error: %s" % (path, e.lineno, e.colno, e.msg)) from None
    if obj is None:
        obj = {}
    if not isinstance(obj, dict):
        raise ConfigError("%s: the top level must be a mapping of keys" % path)
    out = []
    _flatten("", obj, out, path)
    return out


def parse_set(text):
    """`key=value` from --set into (key, value-as-string)."""
    if "=" not in text:
        raise ConfigError("--set wants key=value, got %r" % text)
    k, v = text.split("=", 1)
    k = k.strip()
    if not k:
        raise ConfigError("--set wants key=value, got %r" % text)
    return k, v.strip()


def resolve(pairs):
    """Applies [(key, value, where)] in order over the defaults and validates.
    Returns (config dict of every key, sorted list of ignored epochsim keys)."""
    cfg = defaults()
    ignored = set()
    for key, value, where in pairs:
        if key in IGNORED_EPOCHSIM_KEYS:
            ignored.add(key)
            continue
        if key not in KEYS:
            raise _unknown(key, where)
        cfg[key] = KEYS[key][0](key, value)
    check(cfg)
    return cfg, sorted(ignored)


def check(cfg):
    """Cross-key checks that need more than one value."""
    if cfg["dataset.input_bytes"] % 4:
        raise ConfigError("dataset.input_bytes must be a multiple of 4 (a float32 tensor), got %d"
                          % cfg["dataset.input_bytes"])
    if cfg["loader.drop_last"] and cfg["dataset.samples"] < cfg["loader.batch_size"]:
        raise ConfigError("loader.drop_last=true with dataset.samples (%d) < loader.batch_size "
                          "(%d) leaves no step" % (cfg["dataset.samples"], cfg["loader.batch_size"]))
    if cfg["training.cuda_graphs"]:
        whole = cfg["dataset.samples"] % cfg["loader.batch_size"] == 0
        if not (whole or cfg["loader.drop_last"] or
                (cfg["training.max_steps"] and cfg["training.max_steps"] * cfg["loader.batch_size"]
                 <= cfg["dataset.samples"])):
            raise ConfigError("training.cuda_graphs=true needs batches of one shape: set "
                              "loader.drop_last=true or make dataset.samples a multiple of "
                              "loader.batch_size")
        if cfg["workload.precision"] == "amp_fp16":
            raise ConfigError("training.cuda_graphs=true with workload.precision=amp_fp16 is not "
                              "supported: GradScaler.step() reads found_inf on the CPU and cannot "
                              "be captured; use amp_bf16 (no scaler)")
    if cfg["capture.storage"] == "ram" and cfg["capture.data_dir"]:
        raise ConfigError("capture.data_dir is for capture.storage=file")


def steps_per_epoch(cfg):
    n, b = cfg["dataset.samples"], cfg["loader.batch_size"]
    steps = n // b if cfg["loader.drop_last"] else -(-n // b)
    if cfg["training.max_steps"]:
        steps = min(steps, cfg["training.max_steps"])
    return steps


def experiment_tree(cfg):
    """The epochsim keys as a nested mapping, like an epochsim experiment YAML."""
    tree = {}
    for k, v in cfg.items():
        if k.startswith("capture."):
            continue
        node = tree
        parts = k.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = v
    return tree


def capture_options(cfg):
    return {k[len("capture."):]: v for k, v in cfg.items() if k.startswith("capture.")}


def run_id(cfg):
    """A readable id that is the same for the same measured configuration."""
    keyed = {k: v for k, v in sorted(cfg.items()) if k not in _NOT_IN_ID}
    digest = hashlib.sha1(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:8]
    return "%s_%s_b%d_w%d_pin%d_%s_%s" % (
        cfg["workload.model"], cfg["workload.precision"], cfg["loader.batch_size"],
        cfg["loader.num_workers"], int(cfg["loader.pin_memory"]), cfg["capture.storage"], digest)


def describe_keys():
    """Help text listing every key, its default and meaning."""
    lines = []
    for k, (_, d, doc) in KEYS.items():
        lines.append("  %-28s %-10s %s" % (k, json.dumps(d), doc))
    return "\n".join(lines)


def ram_bytes_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_resources(cfg):
    """Refuses a dataset that cannot fit where it is asked to live, before writing anything."""
    total = cfg["dataset.samples"] * cfg["dataset.sample_bytes"]
    if cfg["capture.storage"] == "ram":
        avail = ram_bytes_available()
        if avail is not None and total > avail // 2:
            raise ConfigError("capture.storage=ram: dataset.samples x dataset.sample_bytes = %d bytes "
                              "is more than half of the available RAM (%d bytes)" % (total, avail))
    else:
        d = cfg["capture.data_dir"] or tempfile.gettempdir()
        if cfg["capture.data_dir"] and os.path.exists(os.path.join(d, "epochsim-capture-data.json")):
            return  # written before: FileStore reuses it when it matches
        probe = os.path.abspath(d)
        while probe and not os.path.exists(probe):
            probe = os.path.dirname(probe.rstrip("/")) or "/"
        st = os.statvfs(probe or ".")
        free = st.f_bavail * st.f_frsize
        if total > free * 0.9:
            raise ConfigError("capture.data_dir=%s: the dataset needs %d bytes, %d are free"
                              % (d, total, free))
