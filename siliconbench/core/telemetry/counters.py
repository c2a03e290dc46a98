"""Energy counters, read by the run's worker around each point's timed blocks: NVIDIA's board
counter (NVML, with its clock-event reasons), Apple Silicon's IOReport rails, Linux RAPL through
powercap; energy_counter picks the one of a run's device, or says why there is none."""

from __future__ import annotations

import contextlib
import os
import platform
from collections.abc import Callable
from typing import Any

from siliconbench.core.files import read_small
from siliconbench.core.telemetry.nvidia import nvml_index

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
        return int(_read(path))

    def read_j(self) -> float:
        for i, (path, wrap) in enumerate(self.zones):
            now = self._raw(path)
            self._total_uj += rapl_delta(self._last[i], now, wrap)
            self._last[i] = now
        return self._total_uj / 1e6


def _read(path: str) -> str:
    """A powercap attribute (sysfs says 4096 bytes for each): OSError unless a regular file."""
    return read_small(path, 4096, "powercap file").strip()


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
            name = _read(os.path.join(folder, "name"))
        except OSError:
            continue
        top = folder.rsplit("intel-rapl:", 1)[1].count(":") == 0
        if not ((top and name.startswith("package")) or (not top and name == "dram")):
            continue
        path = os.path.join(folder, "energy_uj")
        try:
            wrap = int(_read(os.path.join(folder, "max_energy_range_uj")))
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
