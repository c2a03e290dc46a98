"""The per-point meter (siliconbench.core.measure's `meter`): an energy counter read just before a
point's first timed block and just after its last, the idle power, and NVML's state at both
ends merged."""

from __future__ import annotations

import time
from typing import Any

from siliconbench.core.telemetry.counters import CLOCK_REASONS, EnergyCounter

KEEP_UP_S = 10.0            # a sustained point's counter is read at least this often
IDLE_S = 0.5                # how long the counter is read with nothing running, before the run


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
