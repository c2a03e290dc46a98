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

from siliconbench.core.numbers import number, span
from siliconbench.core.results import Row, RunRecord

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


# ---------------------------------------------------------------- energy counters (the worker)
#
# Read by the run's worker at the start and end of each point's timed blocks (siliconbench.core.measure's
# `meter`), so a point's power is its energy over exactly the time it was timed: no sampling
# interval, however short the point. The parent's samples stay for the live plot, the run's
# totals and the devices without a counter.

RAPL_ROOT = "/sys/class/powercap"
POWERCAP_ENV = "SILICONBENCH_POWERCAP"      # another powercap folder (a container's bind mount)
RAPL_HELP = ("since Linux 5.10 only root may read the RAPL energy counters (CVE-2020-8694); "
             "to allow it until the next boot: `sudo chmod a+r "
             "/sys/class/powercap/intel-rapl:*/energy_uj /sys/class/powercap/intel-rapl:*:*/"
             "energy_uj`, or for good a udev rule running that chmod for the powercap devices")
# NVIDIA's counter moves every 20-100 ms: one update more or less in a 1 s window is <= 10%.
COUNTER_MIN_S = {"nvml": 1.0, "rapl": 0.05, "ioreport": 0.1}
KEEP_UP_S = 10.0            # a sustained point's counter is read at least this often
IDLE_S = 0.5                # how long the counter is read with nothing running, before the run
MIN_SAMPLES = 5             # a power from samples needs this many inside the point
NEAR_IDLE = 1.05            # a power within 5% of idle says the work barely showed
# NVML's clock-event (throttle) reasons, nvmlClocksEventReason*: the bits that slow the SM
# clock under load. GpuIdle (0x1), the application clock setting (0x2), sync boost (0x10) and
# the display clock (0x100) are not slowdowns of a loaded GPU.
CLOCK_REASONS = {0x4: "power_capped", 0x8: "hw_slowdown", 0x20: "thermal_slowdown",
                 0x40: "thermal_slowdown", 0x80: "hw_slowdown"}
CLOCK_REASON_WORDS = {"power_capped": "at the board's power cap (software power cap)",
                      "hw_slowdown": "slowed by the hardware (HW slowdown or power brake)",
                      "thermal_slowdown": "slowed for temperature (thermal slowdown)"}


class EnergyCounter:
    """A cumulative energy counter of one device. read_j() gives joules since open, never
    decreasing; state() what else the point should say (NVIDIA's throttle reasons)."""

    kind = "counter"
    label = "counter"

    def read_j(self) -> float:
        raise NotImplementedError

    def state(self) -> dict | None:
        return None

    @property
    def min_window_s(self) -> float:
        return COUNTER_MIN_S.get(self.kind, 1.0)


class RaplCounter(EnergyCounter):
    """Linux RAPL through powercap: the packages' and DRAM's `energy_uj` (microjoules), each
    wrapping to 0 at its `max_energy_range_uj`; read often enough (a package wraps after
    minutes, not milliseconds) one wrap between two reads is all there can be."""

    kind = "rapl"

    def __init__(self, zones: list[tuple[str, int]], names: list[str]) -> None:
        self.zones = zones
        self.label = f"CPU {' + '.join(names)} (RAPL)"
        self._last = [self._raw(path) for path, _ in zones]
        self._total_uj = 0

    @staticmethod
    def _raw(path: str) -> int:
        with open(path) as f:
            return int(f.read().strip())

    def read_j(self) -> float:
        for i, (path, wrap) in enumerate(self.zones):
            now = self._raw(path)
            self._total_uj += rapl_delta(self._last[i], now, wrap)
            self._last[i] = now
        return self._total_uj / 1e6


def rapl_delta(before: int, after: int, max_range: int) -> int:
    """Microjoules between two readings of one RAPL zone, across a wrap to 0."""
    return after - before if after >= before else after + max_range - before


def rapl_counter(root: str | None = None) -> tuple[RaplCounter | None, str | None]:
    """The machine's RAPL packages (intel-rapl:N, named package-N) and their DRAM subzones
    (intel-rapl:N:M named dram); AMD's RAPL appears under the same names. (None, why) when
    there is none or it cannot be read."""
    import glob
    root = root or os.environ.get(POWERCAP_ENV) or RAPL_ROOT
    zones, names = [], []
    for folder in sorted(glob.glob(os.path.join(root, "intel-rapl:*"))):
        try:
            with open(os.path.join(folder, "name")) as f:
                name = f.read().strip()
        except OSError:
            continue
        top = folder.rsplit("intel-rapl:", 1)[1].count(":") == 0
        if not ((top and name.startswith("package")) or (not top and name == "dram")):
            continue
        path = os.path.join(folder, "energy_uj")
        try:
            with open(os.path.join(folder, "max_energy_range_uj")) as f:
                wrap = int(f.read().strip())
            RaplCounter._raw(path)
        except PermissionError:
            return None, f"CPU energy unavailable: {path} is not readable; {RAPL_HELP}"
        except (OSError, ValueError):
            continue
        zones.append((path, wrap))
        names.append(name)
    if not zones:
        return None, (f"CPU energy unavailable: no RAPL zones under {root} (a virtual machine, "
                      "or a kernel without the intel_rapl driver)")
    return RaplCounter(zones, names), None


class NvmlCounter(EnergyCounter):
    """NVIDIA's board energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ since the driver
    loaded; Volta and later), its SM clock and clock-event (throttle) reasons."""

    kind = "nvml"
    label = "board (NVML)"

    def __init__(self, device: str, nvml: Any = None) -> None:
        if nvml is None:
            import pynvml as nvml
        self._nv = nvml
        nvml.nvmlInit()
        self._h = nvml.nvmlDeviceGetHandleByIndex(
            nvml_index(device, os.environ.get("CUDA_VISIBLE_DEVICES")))
        self._reasons = (getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or
                         getattr(nvml, "nvmlDeviceGetCurrentClocksThrottleReasons", None))
        self.read_j()    # an older GPU refuses here, and the run goes on without a counter
        try:
            self._max_clock = float(nvml.nvmlDeviceGetMaxClockInfo(self._h, nvml.NVML_CLOCK_SM))
        except Exception:  # NVMLError_NotSupported
            self._max_clock = None

    def read_j(self) -> float:
        return self._nv.nvmlDeviceGetTotalEnergyConsumption(self._h) / 1000

    def state(self) -> dict | None:
        out: dict[str, Any] = {}
        with contextlib.suppress(Exception):
            out["sm_clock_mhz"] = float(self._nv.nvmlDeviceGetClockInfo(
                self._h, self._nv.NVML_CLOCK_SM))
        if self._max_clock:
            out["max_sm_clock_mhz"] = self._max_clock
        if self._reasons is not None:
            with contextlib.suppress(Exception):
                out["reasons"] = int(self._reasons(self._h))
        return out or None


class IOReportCounter(EnergyCounter):
    """Apple Silicon's IOReport energy (zeus-apple-silicon's cumulative mJ) of the rails a run
    uses, summed: the GPU's for a GPU run, the CPU clusters' for a CPU run, and for Core ML's
    Neural Engine units the rails its work may be planned on (a compute unit is a
    permission, not a pin: CPU + Neural Engine for `ne`; CPU, GPU and Neural Engine for
    `all`)."""

    kind = "ioreport"
    NAMES = {"cpu_total_mj": "CPU", "gpu_mj": "GPU", "ane_mj": "Neural Engine"}

    def __init__(self, monitor: Any, field: str | tuple[str, ...]) -> None:
        self._monitor = monitor
        self._fields = (field,) if isinstance(field, str) else tuple(field)
        self.label = " + ".join(self.NAMES.get(f, f) for f in self._fields) + " (IOReport)"
        reading = monitor.get_cumulative_energy()
        missing = [f for f in self._fields if getattr(reading, f, None) is None]
        if missing:
            raise ValueError(f"this chip reports no {', '.join(missing)}")

    def read_j(self) -> float:
        reading = self._monitor.get_cumulative_energy()
        mj = [getattr(reading, f, None) for f in self._fields]
        return None if None in mj else sum(mj) / 1000


# The IOReport rails of each device id a Mac run may name: Core ML's units are cpu, gpu, ne
# and all (siliconbench.core.frameworks.coreml); every other framework's GPU is one of gpu/mps/metal.
IOREPORT_RAILS = {"cpu": "cpu_total_mj", "ne": ("cpu_total_mj", "ane_mj"),
                  "all": ("cpu_total_mj", "gpu_mj", "ane_mj")}


def energy_counter(device: str, system: str | None = None, machine: str | None = None,
                   load_monitor: Callable[[], Any] | None = None
                   ) -> tuple[EnergyCounter | None, str | None]:
    """The energy counter of the device a run uses, or (None, why not in one sentence)."""
    system = system or platform.system()
    gpu = device.startswith("cuda") or (device.startswith("gpu") and system != "Darwin")
    try:
        if gpu:
            return NvmlCounter(device), None
        if system == "Darwin" and (machine or platform.machine()) == "arm64":
            if load_monitor is None:
                from zeus_apple_silicon import AppleEnergyMonitor as load_monitor
            return IOReportCounter(load_monitor(), IOREPORT_RAILS.get(device, "gpu_mj")), None
        if system == "Linux" and device == "cpu":
            return rapl_counter()
    except ImportError as e:
        return None, f"energy counter unavailable: {e.name or e} is not installed"
    except Exception as e:  # NVMLError_NotSupported (pre-Volta), IOReport refusing
        return None, f"energy counter unavailable: {e}"
    return None, "no energy counter SiliconBench can read for this device"


class PointMeter:
    """siliconbench.core.measure's `meter`: begin() just before a point's first timed block, end() just
    after its last: the seconds between, the counter's joules between (when there is one) and
    the throttle state at both ends. idle_w() reads the counter with nothing running."""

    def __init__(self, counter: EnergyCounter | None = None, why: str | None = None) -> None:
        self.counter, self.why = counter, why
        self._t0, self._e0, self._s0, self._last_read = 0.0, None, None, 0.0

    @property
    def min_window_s(self) -> float:
        return self.counter.min_window_s if self.counter is not None else 0.0

    def _read(self) -> float | None:
        if self.counter is None:
            return None
        self._last_read = time.monotonic()
        try:
            return self.counter.read_j()
        except Exception as e:  # a driver gone away: no energy for the rest of the run
            self.counter, self.why = None, f"energy counter stopped: {e}"
            return None

    def idle_w(self, seconds: float = IDLE_S) -> float | None:
        e0, t0 = self._read(), time.monotonic()
        if e0 is None:
            return None
        time.sleep(seconds)
        e1 = self._read()
        return None if e1 is None else (e1 - e0) / (time.monotonic() - t0)

    def begin(self) -> None:
        self._s0 = self.counter.state() if self.counter is not None else None
        self._e0 = self._read()
        self._t0 = time.monotonic()

    def tick(self) -> None:
        """Reads the counter when KEEP_UP_S have passed since the last read, so a counter that
        wraps (RAPL: after minutes at full power) is never read two wraps apart in a long
        sustained point."""
        if self.counter is not None and time.monotonic() - self._last_read >= KEEP_UP_S:
            self._read()

    def end(self) -> dict:
        e1 = self._read()
        out: dict[str, Any] = {"seconds": time.monotonic() - self._t0}
        if e1 is not None and self._e0 is not None:
            out.update(joules=e1 - self._e0, source=self.counter.label,
                       min_window_s=self.counter.min_window_s)
        s1 = self.counter.state() if self.counter is not None else None
        if self._s0 or s1:
            out["state"] = merge_states(self._s0 or {}, s1 or {})
        return out

    def announce(self) -> dict:
        """The "energy_meter" event: what counts energy in this run, and the idle power."""
        idle = self.idle_w() if self.counter is not None else None
        return {"event": "energy_meter",
                "source": self.counter.label if self.counter is not None else None,
                "idle_w": idle, "why": self.why}


def merge_states(a: dict, b: dict) -> dict:
    """NVML's state at a point's start and end: the reasons that held at its end (at its start
    when the end was not read), the clocks at both. A reason seen at the start only was the
    point before's and had lifted: on an H100 a bfloat16 N=256 point drawing 136 W began
    with the power cap still set from a 750 W float32 point (SM 1,965 MHz) and ended
    without it (1,980 MHz); a point that reaches the cap still holds it at its end."""
    reasons = b.get("reasons") if b.get("reasons") is not None else (a.get("reasons") or 0)
    clocks = [s["sm_clock_mhz"] for s in (a, b) if s.get("sm_clock_mhz") is not None]
    out: dict[str, Any] = {"throttle": sorted({name for bit, name in CLOCK_REASONS.items()
                                               if reasons & bit})}
    if clocks:
        out["sm_clock_mhz"] = clocks
    if a.get("max_sm_clock_mhz") or b.get("max_sm_clock_mhz"):
        out["max_sm_clock_mhz"] = a.get("max_sm_clock_mhz") or b.get("max_sm_clock_mhz")
    return out


def power_trusted(row: Row) -> bool:
    """Whether a power or efficiency row may be shown: its power came from an energy counter
    over the point's timed blocks ("energy_counter") or from at least MIN_SAMPLES samples inside
    them ("power_samples"). Rows of older records carry neither flag: their power was the
    samples between two points' rows, often one 1 s sample taken while nothing ran (the H200
    records' 4.59 TFLOPS/W at 78.6 W), and is not shown. Other rows: True."""
    if row.metric not in POWER_METRICS:
        return True
    return row.value is not None and bool({"energy_counter", "power_samples"} & set(row.flags))


POWER_METRICS = ("power", "joules_per_sample", "samples_per_watt", "tflops_per_watt")


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
        # The worker's "energy" events, each with when it came and how many rows came before
        # it (so it belongs to the next rows), and its "energy_meter" event.
        self.energies: list[tuple[int, float, dict]] = []
        self.meter: dict = {}
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
        kind = event.get("event")
        if kind == "row":
            self.row_times.append(self._now())
        elif kind == "started":
            self.started_at = self._now()
        elif kind == "energy":
            self.energies.append((len(self.row_times), self._now(), event))
        elif kind == "energy_meter":
            self.meter = event

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
        if self.meter:
            rec.telemetry["summary"]["energy_counter"] = self.meter.get("source")
            rec.telemetry["summary"]["idle_power_w"] = self.meter.get("idle_w")
            if self.meter.get("why"):
                rec.telemetry["notes"].append(self.meter["why"])
        if self.energies:   # what the worker read around each point's timed blocks
            rec.telemetry["energy"] = [
                {"t": round(t, 3), "rows_before": k,
                 **{key: e[key] for key in ("seconds", "joules", "source", "state") if key in e}}
                for k, t, e in self.energies]
        extra = derived_rows(rec.rows, self.row_times, rec.telemetry, self.started_at,
                             self.energies, self.meter.get("idle_w"))
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


def _samples_in(s: dict, windows: list[tuple[float, float]]) -> list[float]:
    """The samples of a series that fall inside any of the windows."""
    return [v for t, v in zip(s["t"], s["v"])
            if v is not None and any(a <= t <= b for a, b in windows)]


@dataclass
class PointPower:
    """A point's power and where it came from: `basis` "counter" or "samples" with `watts`, or
    "too_short" with `watts` None; `note` says which, in words."""
    basis: str
    watts: float | None
    note: str


def point_power(events: list[tuple[float, dict]], series: dict | None, label: str | None,
                fallback: tuple[float, float] | None = None) -> PointPower | None:
    """A point's power from the worker's energy events for it ((arrival time, event): its
    timed blocks' seconds and, with a counter, joules): counter joules / seconds when the
    blocks lasted at least the counter's resolution; else the mean of the parent's samples
    inside the blocks when there are MIN_SAMPLES; else too short. Without events (a workload
    that times outside RunContext.measure), `fallback` = (start, end) is the window."""
    counted = [e for _, e in events if e.get("joules") is not None]
    if counted:
        seconds = sum(e["seconds"] for e in counted)
        joules = sum(e["joules"] for e in counted)
        need = max(e.get("min_window_s", 0.0) for e in counted)
        source = counted[0].get("source") or "energy counter"
        if seconds >= need and joules > 0:
            return PointPower("counter", joules / seconds,
                              f"{source} energy counter: {number(joules)} J over the "
                              f"{span(seconds)} of timed blocks")
        if seconds >= need:
            return PointPower("too_short", None,
                              f"no power: the {source} energy counter did not advance during "
                              f"the {span(seconds)} of timed blocks")
        return PointPower("too_short", None,
                          f"too short to measure power: the timed blocks lasted {span(seconds)}"
                          f" and the {source} energy counter needs {span(need)}")
    windows = [(t - e["seconds"], t) for t, e in events if e.get("seconds")]
    if not windows and fallback is not None:
        windows = [fallback]
    if not windows or series is None or not label:
        return None
    inside = _samples_in(series, windows)
    seconds = sum(b - a for a, b in windows)
    if len(inside) >= MIN_SAMPLES:
        where = "during this point" if events else \
            "since the previous point's rows (its set-up included)"
        return PointPower("samples", sum(inside) / len(inside),
                          f"{label} power, mean of {len(inside)} samples {where}")
    return PointPower("too_short", None,
                      f"too short to measure power: {len(inside)} {label} power sample"
                      f"{'s' * (len(inside) != 1)} during its {span(seconds)}, "
                      f"{MIN_SAMPLES} needed")


def throttle_words(state: dict) -> str | None:
    """A point's NVML state in words: 'measured at the board's power cap (software power cap);
    SM clock 1,425-1,545 MHz of 1,980 max'; None when nothing slowed it."""
    reasons = state.get("throttle") or []
    if not reasons:
        return None
    clocks = state.get("sm_clock_mhz") or []
    words = "measured " + " and ".join(CLOCK_REASON_WORDS[r] for r in reasons)
    if clocks:
        low, high = min(clocks), max(clocks)
        words += f"; SM clock {number(low)}" + (f"–{number(high)}" if high != low else "") \
            + " MHz"
        if state.get("max_sm_clock_mhz"):
            words += f" of {number(state['max_sm_clock_mhz'])} max"
    return words


def _say_on(row: Row, flags: list[str], words: str) -> None:
    row.flags += [f for f in flags if f not in row.flags]
    if words not in (row.note or ""):
        row.note = f"{row.note}; {words}" if row.note else words


def derived_rows(rows: list[Row], row_times: list[float], telemetry: dict,
                 origin: float = 0.0, energies: list[tuple[int, float, dict]] | None = None,
                 idle_w: float | None = None) -> list[Row]:
    """Per measured point: its power (point_power: the energy counter over its timed blocks,
    or enough samples inside them, or a row saying it was too short), and from it joules per
    sample, samples per watt and TFLOPS per watt, flagged `near_idle` within 5% of the idle
    power; its throttle state (NVML's clock-event reasons, macOS thermal pressure) as flags and
    a note on its throughput rows; per run: the highest temperature and thermal pressure.
    row_times[i]: when rows[i] arrived; energies: (rows before it, arrival, event) of each
    "energy" event."""
    summary, series = telemetry["summary"], telemetry["series"]
    energies = energies or []
    out: list[Row] = []
    label, power = summary.get("power_source"), summary.get("power_series")
    if idle_w is None and power == "gpu_power_w" and series.get(power) and origin > 0:
        before = [v for t, v in zip(series[power]["t"], series[power]["v"])
                  if v is not None and t <= origin]   # the GPU before the child had started
        idle_w = sum(before) / len(before) if before else None
    if idle_w is not None:
        summary["idle_power_w"] = idle_w
    pressure = series.get("thermal_pressure")
    if len(row_times) == len(rows):
        powered: dict[str, tuple[float | None, list[str], str]] = {}
        for i, row in enumerate(rows):
            if row.metric not in THROUGHPUT_METRICS or not row.value:
                continue
            first = max((j for j in range(i) if rows[j].params != row.params), default=-1)
            events = [(t, e) for k, t, e in energies if first < k <= i]
            key = repr(sorted(row.params.items()))
            if key not in powered:
                start = row_times[first] if first >= 0 else origin
                fallback = (start, row_times[i]) if row_times[i] - start >= MIN_POINT_S else None
                found = point_power(events, series.get(power) if power else None, label,
                                    fallback)
                if found is None:
                    powered[key] = (None, [], "")
                else:
                    flags = [{"counter": "energy_counter", "samples": "power_samples",
                              "too_short": "too_short"}[found.basis]]
                    note = found.note
                    if found.watts is not None and idle_w and found.watts <= idle_w * NEAR_IDLE:
                        flags.append("near_idle")
                        note += (f"; within {round((NEAR_IDLE - 1) * 100)}% of the idle "
                                 f"{number(idle_w)} W: the work barely showed")
                    powered[key] = (found.watts, flags, note)
                    out.append(Row("power", found.watts, "W", dict(row.params),
                                   flags=list(flags), note=note))
            watts, flags, note = powered[key]
            if watts:
                if row.metric == "samples_per_s":
                    out.append(Row("joules_per_sample", watts / row.value, "J/sample",
                                   dict(row.params), flags=list(flags), note=note))
                    out.append(Row("samples_per_watt", row.value / watts, f"{row.unit}/W",
                                   dict(row.params), flags=list(flags), note=note))
                else:
                    out.append(Row("tflops_per_watt", row.value / watts, "TFLOPS/W",
                                   dict(row.params), flags=list(flags), note=note))
            # How the point ran: NVIDIA's throttle reasons, macOS's thermal pressure.
            for _, e in events:
                words = throttle_words(e.get("state") or {})
                if words:
                    _say_on(row, e["state"]["throttle"], words)
            if pressure and events:
                levels = _samples_in(pressure, [(t - e["seconds"], t) for t, e in events])
                if levels and max(levels) >= 1:
                    _say_on(row, ["thermal_pressure"],
                            f"measured under {thermal_level_name(max(levels)).lower()} "
                            "macOS thermal pressure")
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
