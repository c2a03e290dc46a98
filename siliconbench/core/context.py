"""What a workload sees of its run: the device, the timing protocol, and the event stream back
to the parent process (progress, rows, warnings, settings)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from siliconbench.core.measure import Measurement, MeasureSettings, measure
from siliconbench.core.results import Row


class RunContext:
    def __init__(self, *, framework: str, device_id: str, adapter: Any, device: Any,
                 device_name: str, emit: Callable[[dict], None],
                 settings: MeasureSettings = MeasureSettings(), peak: Any = None,
                 quick: bool = False, plan: Any = None) -> None:
        self.framework = framework
        self.device_id = device_id
        self.adapter = adapter            # the framework adapter module (None, with device,
        self.device = device              # for a workload that starts_runs) and its device
        self.device_name = device_name
        self.settings = settings
        self.quick = quick                # asked for quick settings: runs it starts are too
        self.peak = peak                  # siliconbench.core.peaks.Peak or None when unknown
        # The run's inputs worked out where it started (siliconbench.core.plan.RunPlan; None
        # for a workload called without one, as tests do).
        self.plan = plan
        self._emit = emit
        self.sync = adapter.synchronizer(device) if adapter is not None else None
        self._meter = None
        self._said_window = False
        # --duration (minutes) of a workload that has it: every measure() is sustained mode.
        self.duration_min: float | None = None

    @property
    def ceilings(self):
        """The bounds measured before on this machine, from the run's plan (the command or
        the app read them from its store: siliconbench.core.kit.ceilings.stored_bounds)."""
        return self.plan.ceilings if self.plan is not None else {}

    @property
    def on_cpu(self) -> bool:
        """Whether the device is the CPU, read from its id (every framework names it "cpu"),
        so a workload that starts_runs, with no framework loaded, can tell too."""
        return self.device_id.strip().lower().split(":")[0] == "cpu"

    def progress(self, done: float, total: float, message: str = "") -> None:
        self._emit({"event": "progress", "done": done, "total": total, "message": message})

    def row(self, row: Row) -> None:
        self._emit({"event": "row", "row": row.to_dict()})

    def warn(self, message: str) -> None:
        self._emit({"event": "warning", "message": message})

    def pass_on(self, event: dict, said: set) -> None:
        """For a workload that starts_runs: the first "started" event of its runs (device name,
        software, settings) becomes its own, and each warning of its runs is said once
        (`said` holds what was passed on already)."""
        kind = event.get("event")
        if kind == "started" and None not in said:
            said.add(None)
            self._emit(event)
        elif kind == "warning" and event["message"] not in said:
            said.add(event["message"])
            self.warn(event["message"])

    def inside(self, what: str, report: str) -> None:
        """Says which native code the run enters next ("llama.cpp loading x.gguf (Q4_0)") and
        where to report a crash in it: a process killed by a signal there fails with both
        named, not a bare "crashed (SIGSEGV)"."""
        self._emit({"event": "inside", "what": what, "report": report})

    def record_settings(self, **settings: Any) -> None:
        """Settings that change what a number means (tf32, precision, ...) go into the record."""
        self._emit({"event": "settings", "settings": settings})

    def meter(self):
        """The device's energy counter around each point's timed blocks
        (siliconbench.core.telemetry.PointMeter), opened at the first measurement: it then reads the idle
        power and says it, with what counts, in an "energy_meter" event."""
        if self._meter is None:
            from siliconbench.core.telemetry import PointMeter, energy_counter
            self._meter = PointMeter(*energy_counter(self.device_id))
            self._emit(self._meter.announce())
        return self._meter

    def settings_for_meter(self) -> MeasureSettings:
        """The protocol's settings, with the timed phase at least as long as the energy
        counter needs (NVIDIA's moves every 20-100 ms: 1 s)."""
        from dataclasses import replace
        need = self.meter().min_window_s
        if self.settings.min_time_s >= need:
            return self.settings
        if not self._said_window:    # the record's settings.measure says the shorter time
            self._said_window = True
            self.record_settings(energy_min_time_s=need)
        return replace(self.settings, min_time_s=need,
                       max_time_s=max(self.settings.max_time_s, need))

    def energy(self, m: Measurement) -> None:
        """Sends what the meter read over a measurement's timed blocks (an "energy" event): the
        parent makes the point's power and throttle flags from it."""
        if m.energy is not None:
            self._emit({"event": "energy", **m.energy})

    def measure(self, call: Callable[[], object], sync: Callable[[], None] | None = None,
                sustained: bool = True) -> Measurement:
        """The timing protocol; with --duration (and `sustained`, which a measurement that
        only prepares the sustained one turns off) sustained mode."""
        if self.duration_min and sustained:
            return self.measure_sustained(call, self.duration_min, sync=sync)
        m = measure(call, sync or self.sync, self.settings_for_meter(), meter=self.meter())
        self.energy(m)
        return m

    def measure_sustained(self, call: Callable[[], object], duration_min: float,
                          label: str = "", sync: Callable[[], None] | None = None
                          ) -> Measurement:
        """Sustained mode, the one loop every workload's --duration runs: blocks back to back
        for `duration_min` minutes, progress about once a second, then a "sustained" event
        with each block's end and when the first began (this machine's monotonic clock, which
        the parent's telemetry shares), from which the parent makes the figure per interval,
        burst and sustained (siliconbench.core.telemetry.sustained)."""
        import math
        import time

        from siliconbench.core.measure import measure_for
        from siliconbench.core.numbers import duration
        self.record_settings(duration_min=duration_min)
        duration_s = duration_min * 60
        reported = [-math.inf]
        started: list[float] = []

        def on_block(elapsed: float) -> None:
            if not started:
                started.append(time.monotonic() - elapsed)
            # Blocks last ~20 ms: one progress event per block would flood the event stream.
            if elapsed - reported[0] >= 1.0:
                reported[0] = elapsed
                self.progress(min(elapsed, duration_s), duration_s,
                              f"{label}sustained: {duration(elapsed)} of {duration(duration_s)}")
        m = measure_for(call, sync or self.sync, duration_s, self.settings, on_block=on_block,
                        meter=self.meter())
        self._emit({"event": "sustained", "start_monotonic": started[0],
                    "block_end_s": m.block_end_s, "per_call_s": m.per_call_s})
        self.energy(m)
        return m
