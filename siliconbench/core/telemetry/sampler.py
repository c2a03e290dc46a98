"""The sampler that runs in the parent during a run: which sources a run's device gets, the
thread that polls them, and stop_into, which puts the telemetry and its derived rows on the
record."""

from __future__ import annotations

import math
import platform
import threading
import time
from collections.abc import Iterable
from typing import Any

from siliconbench.core.results import RunRecord
from siliconbench.core.telemetry.burst import sustained_rows
from siliconbench.core.telemetry.derived import derived_rows
from siliconbench.core.telemetry.ioreport import IOReportSource, mac_power_source
from siliconbench.core.telemetry.linux import LinuxCpuSource
from siliconbench.core.telemetry.nvidia import NvmlSource
from siliconbench.core.telemetry.powermetrics import PowermetricsClocks, powermetrics_command
from siliconbench.core.telemetry.sources import (
    DEFAULT_INTERVAL_S,
    BatterySource,
    PsutilSource,
    Source,
    Values,
)
from siliconbench.core.telemetry.summary import summarize_series
from siliconbench.core.telemetry.thermal import ThermalPressureSource


def default_sources(device: str, interval_s: float = DEFAULT_INTERVAL_S,
                    clocks: bool = False) -> list[Source]:
    """What can be read on this machine for a run on `device`; with `clocks` (a sustained
    run) a Mac whose power comes from IOReport also reads its clocks from powermetrics."""
    sources: list[Source] = [PsutilSource(), BatterySource()]
    # torch says cuda:N; TensorFlow says gpu:N, which off a Mac is an NVIDIA GPU too.
    if device.startswith("cuda") or (device.startswith("gpu") and platform.system() != "Darwin"):
        sources.append(NvmlSource(device))
    if platform.system() == "Darwin":
        power = mac_power_source(platform.machine(), interval_s)
        sources += [ThermalPressureSource(), power]
        if clocks and isinstance(power, IOReportSource):
            sources.append(PowermetricsClocks(powermetrics_command(platform.machine(),
                                                                   interval_s)))
    elif platform.system() == "Linux":
        sources.append(LinuxCpuSource())
    return sources


def power_series_name(device: str) -> str:
    """The power that belongs to a run on `device`: the GPU's (or board's) for a GPU run, the
    CPU cluster's for a CPU run."""
    return "cpu_power_w" if device == "cpu" else "gpu_power_w"


class TelemetrySampler:
    """Samples every source each `interval_s` on its own thread from start() to stop(), and
    notes when each result row arrived so derived metrics use that point's power."""

    def __init__(self, device: str, interval_s: float | None = None,
                 sources: list[Source] | None = None, clocks: bool = False) -> None:
        self.device = device
        self.interval_s = interval_s or DEFAULT_INTERVAL_S
        self.sources = (default_sources(device, self.interval_s, clocks) if sources is None
                        else sources)
        self.row_times: list[float] = []
        self.started_at = 0.0          # when the child said it started (imports done)
        # The worker's "energy" events, each with when it came and how many rows came before
        # it (so it belongs to the next rows), and its "energy_meter" event.
        self.energies: list[tuple[int, float, dict]] = []
        self.meter: dict = {}
        # The child's "sustained" events, each with how many rows came before it.
        self.sustained: list[tuple[int, dict]] = []
        self.power_state: dict[str, dict] = {}     # the power state at the start and the end
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
        self._read_power("start")
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
        elif kind == "sustained":
            self.sustained.append((len(self.row_times), {**event, "arrived_s": self._now()}))

    def _read_power(self, when: str) -> None:
        """The power state (source, charge, power mode, lid) at the run's start or end."""
        from siliconbench.core.machine.power import power_status
        try:
            self.power_state[when] = power_status().to_dict()
        except Exception as e:  # a power probe that fails must not cost the run
            self.notes.append(f"power state unreadable at the {when}: {e}")

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
        self._read_power("end")
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
        if self.power_state:
            self._result["power_state"] = dict(self.power_state)
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
        if self.sustained:    # burst and sustained, with what the machine reported beside
            more, entries = sustained_rows(rec.rows, self.row_times, self.sustained,
                                           rec.telemetry, self._t0)
            rec.telemetry["sustained"] = entries
            rec.rows += more


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
