"""cap_output.py - writing a capture run: one JSON document per run and one row per run in a
CSV summary. Every file is written whole (temp file in the same folder, fsync, rename), and the
CSV is rewritten under an flock so that concurrent runs cannot interleave rows.
"""

import csv
import fcntl
import gzip
import io
import json
import os
import shutil

FORMAT = "epochsim-capture/1"

CSV_COLUMNS = (
    "run_id", "status", "created_utc", "device", "gpu_name", "cpu_model",
    "model", "precision", "batch_size", "num_workers", "prefetch_factor", "pin_memory",
    "non_blocking", "persistent_workers", "drop_last", "storage", "samples", "sample_bytes",
    "decode_us", "decode_cv", "input_bytes", "epochs", "max_steps", "sync_every_step",
    "cuda_graphs", "seed",
    "steps_per_epoch", "epoch1_s", "epoch_last_s", "epoch_mean_s", "samples_per_s_last",
    "step_p50_s", "step_p99_s", "gpu_util_mean_pct", "gpu_util_last_pct", "cpu_system_pct",
    "job_cpu_pct", "decode_unit_us", "json_file",
)


def write_whole(path, data):
    """Writes bytes DATA to PATH atomically."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, ".%s.tmp.%d" % (os.path.basename(path), os.getpid()))
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json(path, doc):
    write_whole(path, (json.dumps(doc, indent=1, allow_nan=False) + "\n").encode())


def gzip_file(src, dst):
    """Compresses SRC into DST (written whole) and removes SRC."""
    d = os.path.dirname(os.path.abspath(dst))
    tmp = os.path.join(d, ".%s.tmp.%d" % (os.path.basename(dst), os.getpid()))
    with open(src, "rb") as fi, open(tmp, "wb") as fo:
        with gzip.GzipFile(fileobj=fo, mode="wb", compresslevel=6, mtime=0) as gz:
            shutil.copyfileobj(fi, gz, 1 << 20)
        fo.flush()
        os.fsync(fo.fileno())
    os.replace(tmp, dst)
    os.unlink(src)


def _cell(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(round(v, 6))
    return str(v)


def append_csv(path, row):
    """Appends ROW (a dict over CSV_COLUMNS) to the CSV at PATH, writing the header when the file
    is new. The existing header must match CSV_COLUMNS: a summary from another format version is
    an error, not something to mix into."""
    lock_path = path + ".lock"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        old = b""
        if os.path.exists(path):
            with open(path, "rb") as f:
                old = f.read()
        if old:
            header = old.decode().split("\n", 1)[0].rstrip("\r")
            if header != ",".join(CSV_COLUMNS):
                raise RuntimeError("%s has another header than this capture version writes; "
                                   "use another --out folder" % path)
            if not old.endswith(b"\n"):
                old += b"\n"
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        if not old:
            w.writerow(CSV_COLUMNS)
        w.writerow([_cell(row.get(c)) for c in CSV_COLUMNS])
        write_whole(path, old + buf.getvalue().encode())
