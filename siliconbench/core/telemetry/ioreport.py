"""Power on Apple Silicon from IOReport's energy counters through zeus-apple-silicon (no root), and
mac_power_source: IOReport where it answers, otherwise powermetrics, with a note saying why."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar

from siliconbench.core.telemetry.powermetrics import PowermetricsSource, powermetrics_command
from siliconbench.core.telemetry.sources import DEFAULT_INTERVAL_S, Source, Values

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
