"""A Linux machine's CPU as /sys and /proc report it, without root: the cores' clock (cpufreq's
scaling_cur_freq, else /proc/cpuinfo's "cpu MHz"), the package power from RAPL's energy
counters (powercap; often root-only since 2020, then left out with a note) and the hottest
thermal zone. What sustained mode puts beside a CPU's throughput."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from siliconbench.core.telemetry.sources import Source, Values

SYS_CPU = Path("/sys/devices/system/cpu")
POWERCAP = Path("/sys/class/powercap")
THERMAL = Path("/sys/class/thermal")
CPUINFO = Path("/proc/cpuinfo")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, ValueError):
        return None


def cpufreq_mhz(root: Path = SYS_CPU) -> list[float]:
    """Each core's current clock from cpufreq (kHz in the files), in MHz."""
    out = []
    for f in sorted(root.glob("cpu[0-9]*/cpufreq/scaling_cur_freq")):
        text = _read(f)
        if text and text.isdigit():
            out.append(int(text) / 1000)
    return out


def cpuinfo_mhz(text: str) -> list[float]:
    """Each core's "cpu MHz" from /proc/cpuinfo (x86; a VM reports its host's nominal clock)."""
    return [float(m) for m in re.findall(r"^cpu MHz\s*:\s*([0-9.]+)", text, re.M)]


def rapl_packages(root: Path = POWERCAP) -> list[tuple[Path, float | None]]:
    """The package-level RAPL domains (intel-rapl:N, not their :N:M subdomains) with their
    counter's range in µJ (it wraps there)."""
    out = []
    for d in sorted(root.glob("intel-rapl:*")):
        if d.name.count(":") != 1:
            continue
        top = _read(d / "max_energy_range_uj")
        out.append((d, float(top) if top and top.isdigit() else None))
    return out


def hottest_zone(root: Path = THERMAL) -> tuple[str, float] | None:
    """(type, °C) of the hottest thermal zone (millidegrees in the files)."""
    best = None
    for zone in sorted(root.glob("thermal_zone*")):
        text = _read(zone / "temp")
        if not text or not text.lstrip("-").isdigit():
            continue
        celsius = int(text) / 1000
        if best is None or celsius > best[1]:
            best = (_read(zone / "type") or zone.name, celsius)
    return best


def rapl_watts(e0: float, e1: float, seconds: float, wrap: float | None) -> float | None:
    """Watts between two readings of a RAPL counter (µJ), across one wrap at `wrap`."""
    if seconds <= 0:
        return None
    delta = e1 - e0
    if delta < 0:
        if wrap is None:
            return None
        delta += wrap
    return delta / 1e6 / seconds


class LinuxCpuSource(Source):
    """cpufreq (or /proc/cpuinfo), RAPL package power and the hottest thermal zone, each read
    only where this machine has it; the first poll says in a note what it lacks."""

    name = "linux cpu"
    power_labels: ClassVar[dict[str, str]] = {"rapl_power_w": "CPU package (RAPL)"}

    def __init__(self, sys_cpu: Path = SYS_CPU, powercap: Path = POWERCAP,
                 thermal: Path = THERMAL, cpuinfo: Path = CPUINFO,
                 clock: Callable[[], float] | None = None) -> None:
        super().__init__()
        import time
        self.sys_cpu, self.powercap, self.thermal, self.cpuinfo = sys_cpu, powercap, thermal, \
            cpuinfo
        self._clock = clock or time.monotonic
        self._last: dict[Path, tuple[float, float]] = {}
        self._said = False

    def open(self, emit: Callable[[Values], None]) -> None:
        self._domains = rapl_packages(self.powercap)

    def poll(self) -> Values:
        out: Values = {}
        lacks = []
        clocks = cpufreq_mhz(self.sys_cpu)
        if not clocks:
            clocks = cpuinfo_mhz(_read(self.cpuinfo) or "")
            lacks.append("cpufreq (the clock is /proc/cpuinfo's)" if clocks else "a CPU clock")
        if clocks:
            out["cpu_clock_mhz"] = ("MHz", sum(clocks) / len(clocks))
            out["cpu_clock_min_mhz"] = ("MHz", min(clocks))
        watts, readable, got = 0.0, 0, False
        now = self._clock()
        for d, wrap in self._domains:
            text = _read(d / "energy_uj")
            if not text or not text.isdigit():
                continue
            readable += 1
            e1 = float(text)
            if d in self._last:
                t0, e0 = self._last[d]
                w = rapl_watts(e0, e1, now - t0, wrap)
                if w is not None:
                    watts, got = watts + w, True
            self._last[d] = (now, e1)
        if got:
            out["rapl_power_w"] = ("W", watts)
        if not readable:
            lacks.append("RAPL power (no readable powercap energy_uj)")
        zone = hottest_zone(self.thermal)
        if zone is not None:
            out["thermal_zone_c"] = ("°C", zone[1])
        else:
            lacks.append("a thermal zone")
        if lacks and not self._said:
            self._said = True
            self.notes.append("Not readable on this machine: " + "; ".join(lacks) + ".")
        return out
