"""What every telemetry source is (Source: opened, polled each tick, closed; a push source emits
instead), the sampling interval, and the sources every OS has: psutil's load, memory and swap,
and whether the machine runs on battery."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

DEFAULT_INTERVAL_S = 1.0

Values = dict[str, tuple[str, float | None]]   # series name -> (unit, value)


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
