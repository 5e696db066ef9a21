"""cap_probe.py - what the machine is and what it is doing: CPU/RAM/storage/GPU description,
CPU time from /proc (system-wide and for the job's process tree) and a sampler thread that
polls GPU-Util through NVML (nvmlDeviceGetUtilizationRates, the figure nvidia-smi prints) or,
without pynvml, through a streaming `nvidia-smi --query-gpu ... -lms` subprocess.
Every probe is best-effort: an unknown value is None with the reason kept beside it.
"""

import datetime
import os
import platform
import re
import shutil
import subprocess
import threading
import time

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


# ---------------------------------------------------------------- CPU, RAM, OS, storage
def _read(path):
    try:
        with open(path, "r") as f:
            return f.read()
    except OSError:
        return None


def cpu_info():
    text = _read("/proc/cpuinfo") or ""
    model, mhz, cache, flags = None, [], None, None
    cores, sockets, logical = set(), set(), 0
    phys = core = None
    for line in text.splitlines() + [""]:
        if not line.strip():
            if phys is not None and core is not None:
                cores.add((phys, core))
                sockets.add(phys)
            phys = core = None
            continue
        k, _, v = line.partition(":")
        k, v = k.strip(), v.strip()
        if k == "processor":
            logical += 1
        elif k == "model name" and model is None:
            model = v
        elif k == "cpu MHz":
            try:
                mhz.append(float(v))
            except ValueError:
                pass
        elif k == "flags" and flags is None:
            flags = v.split()
        elif k == "cache size" and cache is None:
            cache = v
        elif k == "physical id":
            phys = v
        elif k == "core id":
            core = v
    max_khz = _read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    quota = None
    cpu_max = _read("/sys/fs/cgroup/cpu.max")  # cgroup v2: "QUOTA PERIOD" or "max PERIOD"
    if cpu_max:
        q, _, p = cpu_max.strip().partition(" ")
        if q != "max" and p:
            try:
                quota = float(q) / float(p)
            except ValueError:
                pass
    return {
        "model": model,
        "logical_cpus": logical or os.cpu_count(),
        "physical_cores": len(cores) or None,
        "sockets": len(sockets) or None,
        "threads_per_core": (logical // len(cores)) if cores and logical else None,
        "mhz_now_mean": round(sum(mhz) / len(mhz), 1) if mhz else None,
        "mhz_max": round(int(max_khz) / 1000.0, 1) if max_khz and max_khz.strip().isdigit() else None,
        "cache": cache,
        "affinity_cpus": affinity,
        "cgroup_cpu_quota": quota,
        "virtualized": ("hypervisor" in flags) if flags is not None else None,
    }


def ram_info():
    out = {"total_bytes": None, "available_bytes": None}
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            out["total_bytes"] = int(line.split()[1]) * 1024
        elif line.startswith("MemAvailable:"):
            out["available_bytes"] = int(line.split()[1]) * 1024
    return out


def os_info():
    pretty = None
    for line in (_read("/etc/os-release") or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            pretty = line.split("=", 1)[1].strip().strip('"')
    return {"system": platform.system(), "kernel": platform.release(), "distro": pretty,
            "python": platform.python_version()}


def storage_info(path):
    """File system and block device under PATH (from /proc/self/mountinfo)."""
    real = os.path.realpath(path)
    best = None
    for line in (_read("/proc/self/mountinfo") or "").splitlines():
        left, _, right = line.partition(" - ")
        f = left.split()
        r = right.split()
        if len(f) < 5 or len(r) < 2:
            continue
        mnt = f[4].replace("\\040", " ")
        if real == mnt or real.startswith(mnt.rstrip("/") + "/") or mnt == "/":
            if best is None or len(mnt) > len(best[0]):
                best = (mnt, r[0], r[1])
    if best is None:
        return {"path": real, "mount": None, "fstype": None, "device": None, "rotational": None}
    mnt, fstype, dev = best
    rot = None
    name = os.path.basename(dev) if dev.startswith("/dev/") else None
    if name:
        sysdev = os.path.realpath("/sys/class/block/" + name)
        for cand in (sysdev, os.path.dirname(sysdev)):
            r = _read(os.path.join(cand, "queue", "rotational"))
            if r is not None:
                rot = r.strip() == "1"
                break
    return {"path": real, "mount": mnt, "fstype": fstype, "device": dev, "rotational": rot}


# ---------------------------------------------------------------- CPU time accounting
def system_cpu_ticks():
    """(busy, total) jiffies over all logical CPUs from the first line of /proc/stat.
    busy = user+nice+system+irq+softirq+steal (guest time is already inside user/nice);
    total adds idle and iowait."""
    line = (_read("/proc/stat") or "").split("\n", 1)[0].split()
    if not line or line[0] != "cpu":
        return None
    v = [int(x) for x in line[1:]] + [0] * 10
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait


def util_pct(a, b):
    """System CPU utilisation between two system_cpu_ticks() readings, % of all logical CPUs."""
    if a is None or b is None or b[1] <= a[1]:
        return None
    return 100.0 * (b[0] - a[0]) / (b[1] - a[1])


def _stat_fields(pid):
    s = _read("/proc/%d/stat" % pid)
    if s is None:
        return None
    # the command name (field 2) may contain spaces and parentheses: split after the last ')'
    rest = s[s.rfind(")") + 2:].split()
    # rest[0] is field 3 (state); utime..cstime are fields 14..17
    return [int(x) for x in rest[11:15]]


def _children(pid):
    kids = []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return kids
    for tid in tids:
        c = _read("/proc/%d/task/%s/children" % (pid, tid))
        if c:
            kids.extend(int(x) for x in c.split())
    return kids


def _children_by_scan(pid):
    kids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            s = _read("/proc/%s/stat" % d)
            if s:
                rest = s[s.rfind(")") + 2:].split()
                if len(rest) > 1 and rest[1] == str(pid):
                    kids.append(int(d))
    return kids


_HAVE_CHILDREN_FILE = os.path.exists("/proc/self/task/%d/children" % os.getpid())


def job_cpu_seconds(root=None):
    """CPU seconds (user+system) used so far by process ROOT and all its descendants: its own
    threads, the reaped children (cutime/cstime: workers of finished epochs) and the live ones
    (persistent or running DataLoader workers). A child exiting during the walk is missed for
    that reading (a few ms at most)."""
    root = root or os.getpid()
    f = _stat_fields(root)
    if f is None:
        return None
    ticks = sum(f)
    seen = {root}
    stack = _children(root) if _HAVE_CHILDREN_FILE else _children_by_scan(root)
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        g = _stat_fields(pid)
        if g is None:
            continue
        ticks += sum(g)
        stack.extend(_children(pid) if _HAVE_CHILDREN_FILE else _children_by_scan(pid))
    return ticks / float(CLK_TCK)


# ---------------------------------------------------------------- GPU: NVML or nvidia-smi
def _s(x):
    return x.decode() if isinstance(x, bytes) else x


def _parse_bus_id(text):
    """'00000000:3B:00.0' -> (domain, bus, device) ints."""
    m = re.match(r"\s*([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.", text or "")
    return tuple(int(g, 16) for g in m.groups()) if m else None


class GpuProbe:
    """One GPU as NVML or nvidia-smi sees it. `source` is 'pynvml', 'nvidia-smi' or None, with
    `reason` saying why when None. `match` says how the CUDA device was paired with it."""

    def __init__(self, pci=None, uuid=None, cuda_count=1, cuda_index=0):
        self.source, self.reason, self.match = None, None, None
        self.nvml = self.handle = None
        self.smi_id = None
        self.smi = shutil.which("nvidia-smi")
        try:
            import pynvml  # nvidia-ml-py
            pynvml.nvmlInit()
            self.nvml = pynvml
        except Exception as e:  # ImportError or NVMLError: try the CLI
            nvml_reason = "pynvml: %s" % (e,)
            self.nvml = None
        if self.nvml is not None:
            self._match_nvml(pci, uuid, cuda_count, cuda_index)
            if self.handle is not None:
                self.source = "pynvml"
                return
            nvml_reason = "pynvml: could not find the CUDA device among NVML's devices"
        if self.smi:
            self._match_smi(pci, uuid, cuda_count, cuda_index)
            if self.smi_id is not None:
                self.source = "nvidia-smi"
                return
            self.reason = nvml_reason + "; nvidia-smi: could not list or match the GPU"
        else:
            self.reason = nvml_reason + "; nvidia-smi not on PATH"

    def _match_nvml(self, pci, uuid, cuda_count, cuda_index):
        n = self.nvml
        try:
            count = n.nvmlDeviceGetCount()
            handles = [n.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        except Exception:
            return
        for h in handles:
            if pci:
                try:
                    p = n.nvmlDeviceGetPciInfo(h)
                    if (p.domain, p.bus, p.device) == pci:
                        self.handle, self.match = h, "pci"
                        return
                except Exception:
                    pass
            if uuid:
                try:
                    if _s(n.nvmlDeviceGetUUID(h)).lower().replace("gpu-", "") == uuid:
                        self.handle, self.match = h, "uuid"
                        return
                except Exception:
                    pass
        if count == 1:
            self.handle, self.match = handles[0], "single"
        elif count == cuda_count and "CUDA_VISIBLE_DEVICES" not in os.environ \
                and os.environ.get("CUDA_DEVICE_ORDER") == "PCI_BUS_ID":
            self.handle, self.match = handles[cuda_index], "index"

    def _smi(self, args, timeout=20):
        r = subprocess.run([self.smi] + args, capture_output=True, text=True, timeout=timeout)
        return r.stdout if r.returncode == 0 else None

    def _match_smi(self, pci, uuid, cuda_count, cuda_index):
        try:
            out = self._smi(["--query-gpu=index,pci.bus_id,uuid", "--format=csv,noheader"])
        except (OSError, subprocess.TimeoutExpired):
            out = None
        if not out:
            return
        rows = [[c.strip() for c in line.split(",")] for line in out.strip().splitlines()]
        rows = [r for r in rows if len(r) == 3]
        for idx, bus, uid in rows:
            if pci and _parse_bus_id(bus) == pci:
                self.smi_id, self.match = bus, "pci"
                return
            if uuid and uid.lower().replace("gpu-", "") == uuid:
                self.smi_id, self.match = uid, "uuid"
                return
        if len(rows) == 1:
            self.smi_id, self.match = rows[0][1], "single"
        elif len(rows) == cuda_count and "CUDA_VISIBLE_DEVICES" not in os.environ \
                and os.environ.get("CUDA_DEVICE_ORDER") == "PCI_BUS_ID":
            self.smi_id, self.match = rows[cuda_index][1], "index"

    # -- one-off description
    SMI_FIELDS = ("name", "driver_version", "clocks.sm", "clocks.max.sm", "clocks.mem",
                  "clocks.max.mem", "pcie.link.gen.current", "pcie.link.width.current",
                  "pcie.link.gen.max", "pcie.link.width.max", "power.limit", "memory.total",
                  "mig.mode.current", "persistence_mode", "temperature.gpu")

    def describe(self):
        """Name, driver, clocks (MHz), PCIe link, power limit (W), MIG: a dict, None where unknown."""
        d = {"source": self.source, "match": self.match}
        if self.source == "pynvml":
            n, h = self.nvml, self.handle

            def q(fn, *a):
                try:
                    return fn(h, *a) if h is not None else fn(*a)
                except Exception:
                    return None
            d["name"] = _s(q(n.nvmlDeviceGetName))
            try:
                d["driver_version"] = _s(n.nvmlSystemGetDriverVersion())
            except Exception:
                d["driver_version"] = None
            d["sm_clock_mhz"] = q(n.nvmlDeviceGetClockInfo, n.NVML_CLOCK_SM)
            d["sm_clock_max_mhz"] = q(n.nvmlDeviceGetMaxClockInfo, n.NVML_CLOCK_SM)
            d["mem_clock_mhz"] = q(n.nvmlDeviceGetClockInfo, n.NVML_CLOCK_MEM)
            d["mem_clock_max_mhz"] = q(n.nvmlDeviceGetMaxClockInfo, n.NVML_CLOCK_MEM)
            d["pcie_gen_current"] = q(n.nvmlDeviceGetCurrPcieLinkGeneration)
            d["pcie_width_current"] = q(n.nvmlDeviceGetCurrPcieLinkWidth)
            d["pcie_gen_max"] = q(n.nvmlDeviceGetMaxPcieLinkGeneration)
            d["pcie_width_max"] = q(n.nvmlDeviceGetMaxPcieLinkWidth)
            pl = q(n.nvmlDeviceGetPowerManagementLimit)
            d["power_limit_w"] = pl / 1000.0 if pl is not None else None
            mem = q(n.nvmlDeviceGetMemoryInfo)
            d["memory_total_bytes"] = int(mem.total) if mem is not None else None
            mig = q(n.nvmlDeviceGetMigMode)
            d["mig_mode"] = bool(mig[0]) if isinstance(mig, (tuple, list)) else None
            pm = q(n.nvmlDeviceGetPersistenceMode)
            d["persistence_mode"] = bool(pm) if pm is not None else None
            d["temperature_c"] = q(n.nvmlDeviceGetTemperature, n.NVML_TEMPERATURE_GPU)
            return d
        if self.source == "nvidia-smi":
            vals = self._smi_query(self.SMI_FIELDS)
            num = lambda k: _num_or_none(vals.get(k))
            d.update({
                "name": vals.get("name"), "driver_version": vals.get("driver_version"),
                "sm_clock_mhz": num("clocks.sm"), "sm_clock_max_mhz": num("clocks.max.sm"),
                "mem_clock_mhz": num("clocks.mem"), "mem_clock_max_mhz": num("clocks.max.mem"),
                "pcie_gen_current": num("pcie.link.gen.current"),
                "pcie_width_current": num("pcie.link.width.current"),
                "pcie_gen_max": num("pcie.link.gen.max"), "pcie_width_max": num("pcie.link.width.max"),
                "power_limit_w": num("power.limit"),
                "memory_total_bytes": (int(num("memory.total") * 1048576)
                                       if num("memory.total") is not None else None),
                "mig_mode": ({"enabled": True, "disabled": False}.get(
                    (vals.get("mig.mode.current") or "").lower())),
                "persistence_mode": ({"enabled": True, "disabled": False}.get(
                    (vals.get("persistence_mode") or "").lower())),
                "temperature_c": num("temperature.gpu"),
            })
            return d
        return None

    def link_and_clocks(self):
        """The PCIe link and SM clock now (they drop at idle, so this is called under load)."""
        if self.source is None:
            return None
        d = self.describe()
        return {k: d.get(k) for k in ("pcie_gen_current", "pcie_width_current", "sm_clock_mhz",
                                      "mem_clock_mhz", "temperature_c")}

    def _smi_query(self, fields):
        vals = {}
        try:
            out = self._smi(["-i", self.smi_id, "--query-gpu=" + ",".join(fields),
                             "--format=csv,noheader,nounits"])
        except (OSError, subprocess.TimeoutExpired):
            out = None
        if out:
            parts = [p.strip() for p in out.strip().splitlines()[0].split(",")]
            if len(parts) == len(fields):
                return dict(zip(fields, parts))
        for f in fields:  # an unknown field fails the whole query on older drivers: one by one
            try:
                o = self._smi(["-i", self.smi_id, "--query-gpu=" + f,
                               "--format=csv,noheader,nounits"])
            except (OSError, subprocess.TimeoutExpired):
                o = None
            vals[f] = o.strip().splitlines()[0].strip() if o and o.strip() else None
        return vals

    def util_now(self):
        """(gpu %, memory-controller %, SM clock MHz) from NVML, or None."""
        n, h = self.nvml, self.handle
        try:
            u = n.nvmlDeviceGetUtilizationRates(h)
        except Exception:
            return None
        try:
            clk = n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)
        except Exception:
            clk = None
        return int(u.gpu), int(u.memory), clk

    def close(self):
        if self.nvml is not None:
            try:
                self.nvml.nvmlShutdown()
            except Exception:
                pass
            self.nvml = None


def _num_or_none(s):
    if s is None:
        return None
    try:
        v = float(s)
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"
    return int(v) if v == int(v) else v


# ---------------------------------------------------------------- the sampler
class Sampler:
    """Polls, every PERIOD seconds on the run's clock (time.perf_counter() - t0): system CPU %
    over the last period, and, when a GPU probe is live, GPU-Util (% of the NVML sample window
    in which a kernel ran, as nvidia-smi shows it), memory-controller % and SM clock.
    Samples are [t_s, ...] with t_s the moment the reading was taken."""

    def __init__(self, period_s, gpu, t0):
        self.period_s, self.gpu, self.t0 = period_s, gpu, t0
        self.cpu_series, self.gpu_series = [], []
        self.under_load = None
        self._stop = threading.Event()
        self._threads = []
        self._proc = None
        self.error = None

    def now(self):
        return time.perf_counter() - self.t0

    def start(self):
        t = threading.Thread(target=self._loop, name="capture-sampler", daemon=True)
        t.start()
        self._threads.append(t)
        if self.gpu is not None and self.gpu.source == "nvidia-smi":
            self._start_smi()

    def _loop(self):
        prev = system_cpu_ticks()
        while not self._stop.wait(self.period_s):
            cur = system_cpu_ticks()
            t = self.now()
            u = util_pct(prev, cur)
            if u is not None:
                self.cpu_series.append([round(t, 4), round(u, 2)])
            prev = cur
            if self.gpu is not None and self.gpu.source == "pynvml":
                r = self.gpu.util_now()
                if r is not None:
                    self.gpu_series.append([round(self.now(), 4), r[0], r[1], r[2]])
                    self._maybe_under_load(r[0])

    def _maybe_under_load(self, util):
        if self.under_load is None and util >= 50:
            self.under_load = {"t_s": round(self.now(), 4)}
            try:
                self.under_load.update(self.gpu.link_and_clocks() or {})
            except Exception as e:  # keep sampling even if a query fails
                self.under_load["error"] = str(e)

    def _start_smi(self):
        # timestamp is printed by nvidia-smi itself, so pipe buffering does not skew the times;
        # it is local wall time with ms, mapped onto the run clock through time.time().
        cmd = [self.gpu.smi, "-i", self.gpu.smi_id,
               "--query-gpu=timestamp,utilization.gpu,utilization.memory,clocks.sm",
               "--format=csv,noheader,nounits", "-lms", str(max(1, int(self.period_s * 1000)))]
        try:
            self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                          text=True, bufsize=1)
        except OSError as e:
            self.error = "nvidia-smi: %s" % e
            return
        wall_minus_run = time.time() - self.now()
        t = threading.Thread(target=self._read_smi, args=(wall_minus_run,),
                             name="capture-smi", daemon=True)
        t.start()
        self._threads.append(t)

    def _read_smi(self, wall_minus_run):
        for line in self._proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) != 4:
                continue
            try:
                ts = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                util = int(float(parts[1]))
            except ValueError:
                continue
            self.gpu_series.append([round(ts - wall_minus_run, 4), util,
                                    _num_or_none(parts[2]), _num_or_none(parts[3])])
            self._maybe_under_load(util)

    def stop(self):
        self._stop.set()
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for t in self._threads:
            t.join(timeout=5)

    def gpu_mean(self, t_start, t_end):
        """Mean GPU-Util of the samples taken inside [t_start, t_end] and their count.
        A sample stamped at t covers the NVML window that ends at t."""
        v = [s[1] for s in list(self.gpu_series) if t_start <= s[0] <= t_end]
        return (sum(v) / len(v), len(v)) if v else (None, 0)
