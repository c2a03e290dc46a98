"""Power, thermal and load telemetry sampled by the parent process while a run's child works
(it costs the workload nothing), the energy metrics derived from it, and sustained-mode rows."""

from __future__ import annotations

import contextlib
import math
import os
import platform
import plistlib
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import pairwise
from statistics import median
from typing import Any, ClassVar
from xml.parsers.expat import ExpatError

from core.numbers import number, span
from core.results import Row, RunRecord

DEFAULT_INTERVAL_S = 1.0

# macOS thermal pressure as thermald publishes it (OSThermalNotification.h), 0 to 4.
THERMAL_LEVELS = ("Nominal", "Moderate", "Heavy", "Trapping", "Sleeping")
THERMAL_NOTIFICATION = "com.apple.system.thermalpressurelevel"

SUDOERS_LINE = "%admin ALL=(root) NOPASSWD: /usr/bin/powermetrics"
POWERMETRICS_HELP = (
    "GPU and CPU power on a Mac come from powermetrics, which needs root. To allow it once, "
    "run `sudo visudo -f /etc/sudoers.d/siliconbench` and add the line "
    f"`{SUDOERS_LINE}`; it lets administrators run powermetrics (and nothing else) without a "
    "password. On Apple Silicon, `pip install 'siliconbench[macpower]'` reads power without "
    "root instead. SiliconBench works without either, with no power figures.")

THROUGHPUT_METRICS = ("samples_per_s", "tflops")
TEMPERATURE_SERIES = ("gpu_temperature_c", "cpu_temperature_c")
# A point whose rows arrive this soon after another point's was not measured in between (the
# per-minute rows of a sustained run): its power is unknown.
MIN_POINT_S = 0.05

Values = dict[str, tuple[str, float | None]]   # series name -> (unit, value)


# ---------------------------------------------------------------- parsers (pure)

def thermal_level(word: Any) -> int | None:
    """powermetrics' `thermal_pressure` word ("Nominal", "Heavy", ...) -> the level 0..4."""
    names = [name.lower() for name in THERMAL_LEVELS]
    return names.index(word.lower()) if isinstance(word, str) and word.lower() in names else None


def thermal_level_name(level: float | None) -> str | None:
    if level is None:
        return None
    i = int(level)
    return THERMAL_LEVELS[i] if 0 <= i < len(THERMAL_LEVELS) else f"level {i}"


class PlistStream:
    """Splits powermetrics' `-f plist` stream (one XML plist per sample, separated by NUL
    bytes) into dicts. A plist is complete only once the next one starts, or at flush()."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[dict]:
        self._buffer += chunk
        *complete, self._buffer = self._buffer.split(b"\0")
        return [doc for doc in map(_load_plist, complete) if doc is not None]

    def flush(self) -> list[dict]:
        rest, self._buffer = self._buffer, b""
        doc = _load_plist(rest)
        return [doc] if doc is not None else []


def _load_plist(data: bytes) -> dict | None:
    data = data.strip()
    if not data:
        return None
    try:
        doc = plistlib.loads(data)
    except (plistlib.InvalidFileException, ExpatError, ValueError):
        return None   # a truncated sample (the process was stopped mid-write) is skipped
    return doc if isinstance(doc, dict) else None


def powermetrics_values(doc: dict) -> Values:
    """One powermetrics sample -> series values. Apple Silicon reports power (mW) and the GPU's
    clock and busy share, not temperatures; Intel Macs' smc sampler adds die temperatures."""
    out: Values = {}
    proc = doc.get("processor") or {}
    elapsed_s = (doc.get("elapsed_ns") or 0) / 1e9
    for name, key in (("cpu_power_w", "cpu"), ("gpu_power_w", "gpu"), ("ane_power_w", "ane")):
        mw = proc.get(f"{key}_power")
        if mw is None and proc.get(f"{key}_energy") is not None and elapsed_s > 0:
            mw = proc[f"{key}_energy"] / elapsed_s     # mJ over the interval
        if mw is not None:
            out[name] = ("W", float(mw) / 1000)
    if proc.get("combined_power") is not None:
        out["package_power_w"] = ("W", float(proc["combined_power"]) / 1000)
    elif proc.get("package_watts") is not None:       # Intel Macs
        out["package_power_w"] = ("W", float(proc["package_watts"]))
    gpu = doc.get("gpu") or {}
    if gpu.get("freq_hz") is not None:
        out["gpu_clock_mhz"] = ("MHz", float(gpu["freq_hz"]))  # the key says Hz; it is MHz
    if gpu.get("idle_ratio") is not None:
        out["gpu_active_percent"] = ("%", 100.0 * (1.0 - float(gpu["idle_ratio"])))
    smc = doc.get("smc") or {}
    for name, key in (("cpu_temperature_c", "cpu_die"), ("gpu_temperature_c", "gpu_die")):
        if smc.get(key) is not None:
            out[name] = ("°C", float(smc[key]))
    if smc.get("fan") is not None:
        out["fan_rpm"] = ("rpm", float(smc["fan"]))
    level = thermal_level(doc.get("thermal_pressure"))   # what the `thermal` sampler adds
    if level is not None:
        out["thermal_pressure"] = ("level", float(level))
    return out


def powermetrics_command(arch: str, interval_s: float = DEFAULT_INTERVAL_S) -> list[str]:
    """`sudo -n` never asks for a password: without the sudoers rule it fails at once. Intel
    Macs add the smc sampler (die temperatures, fan); Apple Silicon has none and reports no
    temperatures through powermetrics."""
    samplers = "cpu_power,gpu_power,thermal" + (",smc" if arch == "x86_64" else "")
    return ["sudo", "-n", "/usr/bin/powermetrics", "--samplers", samplers, "-f", "plist",
            "-i", str(max(100, round(interval_s * 1000)))]


def sudo_failure_reason(stderr: str) -> str:
    """sudo's complaint (`sudo: a password is required`) as the 'power unavailable' reason."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else "powermetrics could not be started"


def nvml_index(device: str, visible: str | None) -> int:
    """NVML index of a device id ('cuda', 'cuda:1', TensorFlow's 'gpu:1') under
    CUDA_VISIBLE_DEVICES: NVML numbers every GPU, CUDA renumbers the visible ones from 0."""
    _, _, number = device.partition(":")
    index = int(number) if number.isdigit() else 0
    ids = [v.strip() for v in (visible or "").split(",") if v.strip()]
    if ids and all(v.isdigit() for v in ids) and index < len(ids):
        return int(ids[index])
    return index


# ---------------------------------------------------------------- sources

class Source:
    """One kind of sensor. poll() is called every tick by the sampler thread; a push source
    (one that runs its own reader) sends values through `emit` instead and polls nothing."""

    name = "source"
    # The power series this source makes -> what they measure ("GPU (powermetrics)").
    power_labels: ClassVar[dict[str, str]] = {}

    def __init__(self) -> None:
        self.notes: list[str] = []

    def open(self, emit: Callable[[Values], None]) -> None:
        pass

    def poll(self) -> Values:
        return {}

    def close(self) -> None:
        pass


class PsutilSource(Source):
    """System-wide CPU utilisation, memory and swap in use, on every OS."""

    name = "psutil"

    def open(self, emit: Callable[[Values], None]) -> None:
        import psutil
        self._psutil = psutil
        psutil.cpu_percent(interval=None)   # the first call only sets the reference point

    def poll(self) -> Values:
        ps = self._psutil
        mem = ps.virtual_memory()
        return {"cpu_percent": ("%", ps.cpu_percent(interval=None)),
                "memory_used_bytes": ("bytes", float(mem.total - mem.available)),
                "swap_used_bytes": ("bytes", float(ps.swap_memory().used))}


class NvmlSource(Source):
    """Board power, the energy counter, temperature, SM clock and memory of the run's NVIDIA
    GPU, through nvidia-ml-py (no root needed)."""

    name = "nvml"
    power_labels: ClassVar[dict[str, str]] = {"gpu_power_w": "board (NVML)"}

    def __init__(self, device: str) -> None:
        super().__init__()
        self.index = nvml_index(device, os.environ.get("CUDA_VISIBLE_DEVICES"))
        self._energy0: float | None = None
        self._broken: set[str] = set()

    def open(self, emit: Callable[[Values], None]) -> None:
        import pynvml
        self._nvml = pynvml
        pynvml.nvmlInit()
        self._handle = pynvml.nvmlDeviceGetHandleByIndex(self.index)

    def poll(self) -> Values:
        nv, h = self._nvml, self._handle
        readers: dict[str, tuple[str, Callable[[], float]]] = {
            "gpu_power_w": ("W", lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000),
            "gpu_energy_j": ("J", lambda: nv.nvmlDeviceGetTotalEnergyConsumption(h) / 1000),
            "gpu_temperature_c": ("°C", lambda: nv.nvmlDeviceGetTemperature(
                h, nv.NVML_TEMPERATURE_GPU)),
            "gpu_sm_clock_mhz": ("MHz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
            "gpu_memory_used_bytes": ("bytes", lambda: nv.nvmlDeviceGetMemoryInfo(h).used),
        }
        out: Values = {}
        for name, (unit, read) in readers.items():
            if name in self._broken:
                continue
            try:
                value = float(read())
            except Exception as e:  # NVMLError_NotSupported on older GPUs: drop that series
                self._broken.add(name)
                self.notes.append(f"{name} unavailable from NVML: {e}")
                continue
            if name == "gpu_energy_j":   # the counter runs since the driver loaded
                self._energy0 = value if self._energy0 is None else self._energy0
                value -= self._energy0
            out[name] = (unit, value)
        return out

    def close(self) -> None:
        with contextlib.suppress(Exception):   # a driver that went away meanwhile
            self._nvml.nvmlShutdown()


class BatterySource(Source):
    """Whether the machine runs on battery, read in-process by psutil (IOKit's power sources on
    a Mac, /sys on Linux): no process per sample. A machine without a battery gives no series."""

    name = "battery"

    def open(self, emit: Callable[[Values], None]) -> None:
        import psutil
        self._read = getattr(psutil, "sensors_battery", lambda: None)

    def poll(self) -> Values:
        battery = self._read()
        if battery is None or battery.power_plugged is None:
            return {}
        return {"on_battery": ("bool", 0.0 if battery.power_plugged else 1.0)}


NOTIFY_STATUS_OK = 0


def load_libsystem() -> Any:
    """macOS's C library, which holds notify(3)."""
    import ctypes
    return ctypes.CDLL("/usr/lib/libSystem.B.dylib")


class ThermalPressureSource(Source):
    """thermald's thermal pressure level through notify(3) in this process: a token registered
    once (notify_register_check), then one notify_get_state call per sample. No process, no
    root; `load_library` is what tests replace, since only a Mac has the real one."""

    name = "thermal pressure"

    def __init__(self, load_library: Callable[[], Any] = load_libsystem) -> None:
        super().__init__()
        self._load_library = load_library
        self._get_state: Callable[..., int] | None = None

    def open(self, emit: Callable[[Values], None]) -> None:
        import ctypes
        try:
            lib = self._load_library()
            register, get_state = lib.notify_register_check, lib.notify_get_state
        except (OSError, AttributeError) as e:
            self.notes.append(f"thermal pressure unavailable: notify(3) not found ({e})")
            return
        register.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
        register.restype = ctypes.c_uint32
        get_state.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_uint64)]
        get_state.restype = ctypes.c_uint32
        token = ctypes.c_int(-1)
        status = register(THERMAL_NOTIFICATION.encode(), ctypes.pointer(token))
        if status != NOTIFY_STATUS_OK:
            self.notes.append(f"thermal pressure unavailable: notify_register_check returned "
                              f"status {status}")
            return
        self._lib, self._token = lib, token.value
        self._state = ctypes.c_uint64(0)
        self._state_ptr = ctypes.pointer(self._state)
        self._get_state = get_state

    def poll(self) -> Values:
        if self._get_state is None:
            return {}
        if self._get_state(self._token, self._state_ptr) != NOTIFY_STATUS_OK:
            return {}   # thermald not answering this time: a gap, not a made-up level
        return {"thermal_pressure": ("level", float(self._state.value))}

    def close(self) -> None:
        if self._get_state is not None:
            with contextlib.suppress(AttributeError):   # a library without notify_cancel
                self._lib.notify_cancel(self._token)
            self._get_state = None


# zeus-apple-silicon's AppleEnergyMetrics fields (mJ; None where the chip has no such channel).
IOREPORT_FIELDS = (("cpu_power_w", "cpu_total_mj"), ("gpu_power_w", "gpu_mj"),
                   ("ane_power_w", "ane_mj"), ("dram_power_w", "dram_mj"))
IOREPORT_EXTRA = "macpower"


def ioreport_values(before: Any, after: Any, seconds: float) -> Values:
    """Two cumulative energy readings (AppleEnergyMonitor.get_cumulative_energy) `seconds`
    apart -> the mean power of each rail between them."""
    out: Values = {}
    if seconds <= 0:
        return out
    for name, field in IOREPORT_FIELDS:
        mj0, mj1 = getattr(before, field, None), getattr(after, field, None)
        if mj0 is not None and mj1 is not None and mj1 >= mj0:
            out[name] = ("W", (mj1 - mj0) / 1000 / seconds)
    return out


class IOReportSource(Source):
    """CPU, GPU, ANE and DRAM power on Apple Silicon from IOReport's energy counters, read
    in-process through zeus-apple-silicon (the `macpower` extra): no root, no process."""

    name = "ioreport"
    power_labels: ClassVar[dict[str, str]] = {
        "gpu_power_w": "GPU (IOReport)", "cpu_power_w": "CPU (IOReport)"}

    def __init__(self, monitor: Any) -> None:
        super().__init__()
        self._monitor = monitor
        self.notes.append("power from IOReport energy counters (zeus-apple-silicon), "
                          "without admin rights")

    def open(self, emit: Callable[[Values], None]) -> None:
        self._last = (time.monotonic(), self._monitor.get_cumulative_energy())

    def poll(self) -> Values:
        now, reading = time.monotonic(), self._monitor.get_cumulative_energy()
        (then, before), self._last = self._last, (now, reading)
        return ioreport_values(before, reading, now - then)


class PowermetricsSource(Source):
    """GPU, CPU and package power from `sudo -n powermetrics`, which works only once the user
    has added the sudoers rule (POWERMETRICS_HELP); otherwise it says why, once."""

    name = "powermetrics"
    power_labels: ClassVar[dict[str, str]] = {
        "gpu_power_w": "GPU (powermetrics)", "cpu_power_w": "CPU (powermetrics)",
        "package_power_w": "CPU+GPU package (powermetrics)"}

    def __init__(self, command: list[str]) -> None:
        super().__init__()
        self.command = command
        self._proc: subprocess.Popen | None = None
        self._got_sample = False

    def open(self, emit: Callable[[Values], None]) -> None:
        try:
            self._proc = subprocess.Popen(self.command, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            self.notes.append(f"power unavailable: {e.strerror or e}. {POWERMETRICS_HELP}")
            return
        self._reader = threading.Thread(target=self._read, args=(emit,), daemon=True)
        self._reader.start()

    def _read(self, emit: Callable[[Values], None]) -> None:
        stream = PlistStream()
        for chunk in iter(lambda: self._proc.stdout.read1(1 << 16), b""):
            for doc in stream.feed(chunk):
                self._got_sample = True
                emit(powermetrics_values(doc))
        for doc in stream.flush():
            self._got_sample = True
            emit(powermetrics_values(doc))

    def close(self) -> None:
        p = self._proc
        if p is None:
            return
        if p.poll() is None:
            p.terminate()     # sudo relays it to powermetrics
            try:
                p.wait(3)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self._reader.join(timeout=3)
        stderr = p.stderr.read().decode("utf-8", "replace") if p.stderr else ""
        if not self._got_sample:
            self.notes.append(f"power unavailable: {sudo_failure_reason(stderr)}. "
                              f"{POWERMETRICS_HELP}")


def mac_power_source(arch: str, interval_s: float = DEFAULT_INTERVAL_S,
                     load_monitor: Callable[[], Any] | None = None) -> Source:
    """Power on a Mac: IOReport when the `macpower` extra is installed and the chip answers
    (no root needed), otherwise `sudo -n powermetrics`, with a note saying why."""
    if arch == "arm64":
        try:
            if load_monitor is None:
                from zeus_apple_silicon import AppleEnergyMonitor
                load_monitor = AppleEnergyMonitor
            return IOReportSource(load_monitor())
        except ImportError:
            why = (f"zeus-apple-silicon is not installed (`pip install "
                   f"'siliconbench[{IOREPORT_EXTRA}]'` reads power without root)")
        except Exception as e:  # an unsupported chip, IOReport refusing the subscription
            why = f"IOReport energy counters unavailable ({e})"
    source = PowermetricsSource(powermetrics_command(arch, interval_s))
    if arch == "arm64":
        source.notes.append(f"power from powermetrics: {why}")
    return source


def default_sources(device: str, interval_s: float = DEFAULT_INTERVAL_S) -> list[Source]:
    """What can be read on this machine for a run on `device`."""
    sources: list[Source] = [PsutilSource(), BatterySource()]
    # torch says cuda:N; TensorFlow says gpu:N, which off a Mac is an NVIDIA GPU too.
    if device.startswith("cuda") or (device.startswith("gpu") and platform.system() != "Darwin"):
        sources.append(NvmlSource(device))
    if platform.system() == "Darwin":
        sources += [ThermalPressureSource(), mac_power_source(platform.machine(), interval_s)]
    return sources


def power_series_name(device: str) -> str:
    """The power that belongs to a run on `device`: the GPU's (or board's) for a GPU run, the
    CPU cluster's for a CPU run."""
    return "cpu_power_w" if device == "cpu" else "gpu_power_w"


# ---------------------------------------------------------------- the sampler

class TelemetrySampler:
    """Samples every source each `interval_s` on its own thread from start() to stop(), and
    notes when each result row arrived so derived metrics use that point's power."""

    def __init__(self, device: str, interval_s: float | None = None,
                 sources: list[Source] | None = None) -> None:
        self.device = device
        self.interval_s = interval_s or DEFAULT_INTERVAL_S
        self.sources = default_sources(device, self.interval_s) if sources is None else sources
        self.row_times: list[float] = []
        self.started_at = 0.0          # when the child said it started (imports done)
        self.notes: list[str] = []
        self._series: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._result: dict | None = None
        self._t0 = time.monotonic()

    def _now(self) -> float:
        return time.monotonic() - self._t0

    def _add(self, values: Values) -> None:
        t = round(self._now(), 3)
        with self._lock:
            for name, (unit, value) in values.items():
                s = self._series.setdefault(name, {"unit": unit, "t": [], "v": []})
                s["t"].append(t)
                s["v"].append(None if value is None or not math.isfinite(value) else value)

    def start(self) -> TelemetrySampler:
        self._t0 = time.monotonic()
        opened = []
        for source in self.sources:
            try:
                source.open(self._add)
                opened.append(source)
            except Exception as e:  # a missing library or driver: no series from it
                self.notes.append(f"{source.name} unavailable: {e}")
        self.sources = opened
        self._thread = threading.Thread(target=self._loop, daemon=True, name="telemetry")
        self._thread.start()
        return self

    def _loop(self) -> None:
        while True:
            started = time.monotonic()
            for source in list(self.sources):
                try:
                    self._add(source.poll())
                except Exception as e:  # one broken sensor must not end the others
                    self.notes.append(f"{source.name} sampling stopped: {e}")
                    self.sources.remove(source)
            if self._stopping.wait(max(0.0, self.interval_s - (time.monotonic() - started))):
                return

    def observe(self, event: dict) -> None:
        """Called with each event of the run; remembers when each row arrived."""
        if event.get("event") == "row":
            self.row_times.append(self._now())
        elif event.get("event") == "started":
            self.started_at = self._now()

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """The series so far (a copy), for a live plot while the run goes on."""
        with self._lock:
            return {k: {"unit": s["unit"], "t": list(s["t"]), "v": list(s["v"])}
                    for k, s in self._series.items()}

    def stop(self) -> dict:
        """End sampling (once; later calls return the same result): the record's telemetry."""
        if self._result is not None:
            return self._result
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for source in self.sources:
            try:
                self._add(source.poll())   # a last sample, so even a short run has two
                source.close()
            except Exception as e:  # closing must never lose the run
                self.notes.append(f"{source.name} did not close cleanly: {e}")
            self.notes += source.notes
        labels = {k: v for s in self.sources for k, v in s.power_labels.items()}
        series = self.snapshot()
        power = power_series_name(self.device)
        self._result = {"interval_s": self.interval_s, "series": series,
                        "summary": summarize_series(series, power, labels.get(power),
                                                    self._now(), self.notes),
                        "notes": _unique(self.notes)}
        return self._result

    def stop_into(self, rec: RunRecord) -> None:
        """Stop, put the telemetry on the record and add its derived rows."""
        if rec.telemetry is not None:
            return
        rec.telemetry = self.stop()
        extra = derived_rows(rec.rows, self.row_times, rec.telemetry, self.started_at)
        rec.telemetry["summary"]["derived"] = [r.to_dict() for r in extra]
        rec.rows += extra


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _values(s: dict | None) -> list[float]:
    return [v for v in (s or {}).get("v", []) if v is not None]


def summarize_series(series: dict[str, dict], power: str, power_label: str | None,
                     duration_s: float, notes: list[str]) -> dict:
    """Run-level figures: each series' mean/min/max, the run's power and energy, the highest
    temperature and thermal pressure, and whether it ran on battery."""
    summary: dict[str, Any] = {"duration_s": round(duration_s, 3), "series": {}}
    for name, s in series.items():
        vs = _values(s)
        if vs:
            summary["series"][name] = {"unit": s["unit"], "mean": sum(vs) / len(vs),
                                       "min": min(vs), "max": max(vs), "n": len(vs)}
    watts = _values(series.get(power))
    if watts and power_label:
        summary["power_source"] = power_label
        summary["power_series"] = power
        summary["power_w"] = sum(watts) / len(watts)
        counter = _values(series.get("gpu_energy_j")) if power == "gpu_power_w" else []
        summary["energy_j"] = (counter[-1] - counter[0] if len(counter) > 1
                               else _integrate(series[power]))
    else:
        summary["power_source"] = None
        unavailable = [n for n in notes if n.startswith("power unavailable")]
        summary["power_unavailable"] = (unavailable[0] if unavailable else
                                        "no power sensor SiliconBench can read for this device")
    temps = [v for name in TEMPERATURE_SERIES for v in _values(series.get(name))]
    summary["max_temperature_c"] = max(temps) if temps else None
    levels = _values(series.get("thermal_pressure"))
    summary["max_thermal_pressure"] = thermal_level_name(max(levels)) if levels else None
    battery = _values(series.get("on_battery"))
    summary["on_battery"] = any(battery) if battery else None
    return summary


def _integrate(s: dict) -> float:
    """Joules from a power series by the trapezoid rule (samples with no value skipped)."""
    points = [(t, v) for t, v in zip(s["t"], s["v"]) if v is not None]
    return sum((t1 - t0) * (v0 + v1) / 2 for (t0, v0), (t1, v1) in pairwise(points))


def _window_mean(s: dict, start: float, end: float, interval_s: float) -> tuple[float, int] | None:
    """Mean power over [start, end] and how many samples made it; a point shorter than one
    sampling interval takes the sample nearest its end."""
    inside = [v for t, v in zip(s["t"], s["v"]) if v is not None and start <= t <= end]
    if inside:
        return sum(inside) / len(inside), len(inside)
    near = [(abs(t - end), v) for t, v in zip(s["t"], s["v"])
            if v is not None and abs(t - end) <= 2 * interval_s]
    return (min(near)[1], 1) if near else None


def derived_rows(rows: list[Row], row_times: list[float], telemetry: dict,
                 origin: float = 0.0) -> list[Row]:
    """Per measured point: its average power (from the previous point's rows, or `origin`, to
    its own), and from it joules per sample, samples per watt and TFLOPS per watt; per run:
    the highest temperature and thermal pressure. row_times[i]: when rows[i] arrived."""
    summary, series = telemetry["summary"], telemetry["series"]
    out: list[Row] = []
    label, power = summary.get("power_source"), summary.get("power_series")
    if power and len(row_times) == len(rows):
        powered: dict[str, float] = {}
        for i, row in enumerate(rows):
            if row.metric not in THROUGHPUT_METRICS or not row.value:
                continue
            start = max((row_times[j] for j in range(i) if rows[j].params != row.params),
                        default=origin)
            if row_times[i] - start < MIN_POINT_S:
                continue   # sent together with another point's rows: not measured just now
            found = _window_mean(series[power], start, row_times[i], telemetry["interval_s"])
            if found is None:
                continue
            watts, n = found
            if watts <= 0:
                continue
            note = f"{label} power, mean of {n} sample{'s' * (n != 1)} during this point"
            key = repr(sorted(row.params.items()))
            if key not in powered:
                powered[key] = watts
                out.append(Row("power", watts, "W", dict(row.params), note=note))
            if row.metric == "samples_per_s":
                out.append(Row("joules_per_sample", watts / row.value, "J/sample",
                               dict(row.params), note=note))
                out.append(Row("samples_per_watt", row.value / watts, f"{row.unit}/W",
                               dict(row.params), note=note))
            else:
                out.append(Row("tflops_per_watt", row.value / watts, "TFLOPS/W",
                               dict(row.params), note=note))
    if summary.get("max_temperature_c") is not None:
        source = next(name for name in TEMPERATURE_SERIES if _values(series.get(name)))
        out.append(Row("max_temperature", summary["max_temperature_c"], "°C", {},
                       note=f"highest {source.removesuffix('_c').replace('_', ' ')} "
                            "during the run"))
    levels = _values(series.get("thermal_pressure"))
    if levels:
        out.append(Row("max_thermal_pressure", max(levels), "level", {},
                       note=f"{thermal_level_name(max(levels))} (macOS thermal pressure: "
                            "0 nominal, 1 moderate, 2 heavy, 3 trapping, 4 sleeping)"))
    return out


# ---------------------------------------------------------------- sustained mode

@dataclass(frozen=True)
class Sustained:
    """Throughput over a sustained run: per-window medians and last/first window ratio."""
    window_s: float
    per_window: list[tuple[float, float]]   # (window start in s, median throughput)
    first: float
    last: float
    ratio: float                            # last / first: below 1 means it slowed down


def sustained(block_end_s: list[float], rates: list[float],
              window_s: float = 60.0) -> Sustained:
    """Throughput over time from per-block rates and block end times (measure_for). Windows of
    `window_s` (a minute), shrunk to half the run when it is shorter than two windows."""
    if len(block_end_s) != len(rates) or len(rates) < 2:
        raise ValueError("sustained mode needs at least two timed blocks")
    span = block_end_s[-1]
    window = min(window_s, span / 2)
    last_bucket = max(math.floor(span / window + 1e-9) - 1, 0)
    buckets: dict[int, list[float]] = {}
    for end, rate in zip(block_end_s, rates):
        # A block belongs to the window it ends in; a short tail joins the last full window.
        bucket = min(max(math.ceil(end / window - 1e-9) - 1, 0), last_bucket)
        buckets.setdefault(bucket, []).append(rate)
    per_window = [(k * window, median(v)) for k, v in sorted(buckets.items())]
    early = [r for e, r in zip(block_end_s, rates) if e <= window]
    # One slow first block (a loaded machine) can end past the first window: it is the start.
    first = median(early) if early else rates[0]
    last = median([r for e, r in zip(block_end_s, rates) if e > span - window])
    return Sustained(window, per_window, first, last, last / first if first else math.nan)


def sustained_rows(block_end_s: list[float], rates: list[float], unit: str, point: dict,
                   window_s: float = 60.0) -> list[Row]:
    """Rows for a sustained run: throughput per minute (point + {"minute": k}) and the
    last-minute / first-minute ratio (metric "throttle_ratio")."""
    s = sustained(block_end_s, rates, window_s)
    window = span(s.window_s)
    rows = [Row("samples_per_s", value, unit, {**point, "minute": round(start / 60, 3)},
                note=f"median over the {window} window starting {span(start)} in")
            for start, value in s.per_window]
    rows.append(Row("throttle_ratio", s.ratio, "×", dict(point),
                    note=f"last {window} / first {window} median throughput "
                         f"({number(s.last)} / {number(s.first)} {unit}); below 1: the machine slowed "
                         "down (thermal throttling)"))
    return rows
