"""The rows derived from telemetry and appended to a record: each measured point's power (energy
counter or samples inside its timed blocks, or too short) and efficiency, its throttle state
in words, and the run's highest temperature and thermal pressure."""

from __future__ import annotations

from dataclasses import dataclass

from siliconbench.core.numbers import number, span
from siliconbench.core.results import Row
from siliconbench.core.telemetry.counters import CLOCK_REASON_WORDS
from siliconbench.core.telemetry.summary import TEMPERATURE_SERIES, series_values
from siliconbench.core.telemetry.thermal import thermal_level_name

THROUGHPUT_METRICS = ("samples_per_s", "tflops")
# A point whose rows arrive this soon after another point's was not measured in between (the
# per-minute rows of a sustained run): its power is unknown.
MIN_POINT_S = 0.05
MIN_SAMPLES = 5             # a power from samples needs this many inside the point
NEAR_IDLE = 1.05            # a power within 5% of idle says the work barely showed


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
        source = next(name for name in TEMPERATURE_SERIES if series_values(series.get(name)))
        out.append(Row("max_temperature", summary["max_temperature_c"], "°C", {},
                       note=f"highest {source.removesuffix('_c').replace('_', ' ')} "
                            "during the run"))
    levels = series_values(series.get("thermal_pressure"))
    if levels:
        out.append(Row("max_thermal_pressure", max(levels), "level", {},
                       note=f"{thermal_level_name(max(levels))} (macOS thermal pressure: "
                            "0 nominal, 1 moderate, 2 heavy, 3 trapping, 4 sleeping)"))
    return out
