"""Burst and sustained: a sustained measurement's throughput per interval on the telemetry's
time axis, its burst (the first 30 s), its sustained figure (the last third, at least a
minute), their ratio, the first lasting drop of more than 5% and what the machine reported
when it came (a clock that fell, a power cap, thermal pressure that rose, or nothing seen).

Pure arithmetic on what the parent already holds: the child's "sustained" event (each timed
block's end and seconds per call, and when the blocks started), the row the workload made of
them (its per-block figures and unit) and the sampled series. Everything here is tested on
real runs (tests/core/test_sustained.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from siliconbench.core.numbers import number
from siliconbench.core.results import Row
from siliconbench.core.telemetry.thermal import thermal_level_name

BURST_S = 30.0            # the burst: blocks that end in the first 30 s
SUSTAINED_SHARE = 1 / 3   # the sustained figure: the last third of the run ...
SUSTAINED_MIN_S = 60.0    # ... and at least its last minute (all of a shorter run)
DROP = 0.05               # a drop counts when an interval is more than 5% under the burst
LASTING_S = 30.0          # ... and every interval of the next 30 s (or to the end) is too
INTERVAL_S = 5.0          # throughput every 5 s; longer runs keep at most MAX_INTERVALS
MAX_INTERVALS = 120
CLOCK_FELL = 0.97         # a clock 3% under its burst median fell
KEEP_BLOCKS = 20_000      # telemetry["sustained"] keeps block ends up to this many blocks

# What a series says, for the sentence: (series, what, unit word), the first present wins.
CLOCKS = (("gpu_sm_clock_mhz", "GPU SM clock"), ("gpu_clock_mhz", "GPU clock"),
          ("cpu_p0_clock_mhz", "P-cluster clock"), ("cpu_p_clock_mhz", "P-cluster clock"),
          ("cpu_clock_mhz", "CPU clock"))
POWERS = ("gpu_power_w", "package_power_w", "cpu_power_w", "rapl_power_w")
TEMPERATURES = ("gpu_temperature_c", "cpu_temperature_c", "thermal_zone_c")
# NVML's clock-event reasons that mean a cap held the clock (nvml.h): SW power cap, HW
# slowdown, HW thermal, HW power brake, SW thermal.
POWER_CAP_BITS = {0x4: "power cap", 0x80: "HW power brake"}
THERMAL_BITS = {0x20: "SW thermal slowdown", 0x40: "HW thermal slowdown", 0x8: "HW slowdown"}


@dataclass
class Analysis:
    """One sustained measurement, read."""
    unit: str
    start_s: float                        # when its blocks started, on the telemetry's axis
    span_s: float
    interval_s: float
    intervals: list[tuple[float, float]]  # (start in s from the blocks' start, median)
    burst: float
    burst_s: float
    sustained: float
    sustained_from_s: float
    ratio: float
    drop_at_s: float | None
    coincided: list[str] = field(default_factory=list)
    beside: list[dict[str, float]] = field(default_factory=list)   # per interval: series means

    def to_dict(self) -> dict[str, Any]:
        return {"unit": self.unit, "start_s": round(self.start_s, 3),
                "span_s": round(self.span_s, 3), "interval_s": self.interval_s,
                "intervals": [[round(t, 3), v] for t, v in self.intervals],
                "burst": self.burst, "burst_s": self.burst_s, "sustained": self.sustained,
                "sustained_from_s": round(self.sustained_from_s, 3), "ratio": self.ratio,
                "drop_at_s": self.drop_at_s, "coincided": list(self.coincided),
                "beside": self.beside}


def interval_length(span_s: float) -> float:
    return max(INTERVAL_S, math.ceil(span_s / MAX_INTERVALS))


def per_interval(ends: list[float], rates: list[float], interval_s: float
                 ) -> list[tuple[float, float]]:
    """The median figure of the blocks that end in each interval (a block belongs to the
    interval it ends in; the run's last blocks, past its duration by less than half an
    interval, join the interval before); an interval no block ended in is left out."""
    def bucket(end: float) -> int:
        return max(math.ceil(end / interval_s - 1e-9) - 1, 0)
    last = bucket(ends[-1])
    if last > 0 and ends[-1] - last * interval_s < interval_s / 2:
        last -= 1
    buckets: dict[int, list[float]] = {}
    for end, rate in zip(ends, rates):
        buckets.setdefault(min(bucket(end), last), []).append(rate)
    return [(k * interval_s, median(v)) for k, v in sorted(buckets.items())]


def burst_and_sustained(ends: list[float], rates: list[float]
                        ) -> tuple[float, float, float, float]:
    """(burst, seconds it covers, sustained, where its window starts): the median of the blocks
    ending in the first BURST_S (the first block when even it ends later), and of those ending
    in the last third of the run or its last SUSTAINED_MIN_S, whichever is longer."""
    if len(ends) != len(rates) or len(rates) < 2:
        raise ValueError("a sustained measurement needs at least two timed blocks")
    span = ends[-1]
    early = [r for e, r in zip(ends, rates) if e <= BURST_S] or rates[:1]
    start = max(0.0, span - max(span * SUSTAINED_SHARE, min(SUSTAINED_MIN_S, span)))
    late = [r for e, r in zip(ends, rates) if e > start] or rates[-1:]
    return median(early), min(BURST_S, span), median(late), start


def first_lasting_drop(intervals: list[tuple[float, float]], burst: float,
                       interval_s: float) -> float | None:
    """The start of the first interval more than DROP under the burst after which every
    interval of the next LASTING_S (or to the end of the run, two intervals at least) stays
    under: a dip that recovers, or one low interval at the end, is not a drop. Intervals
    inside the burst window are not looked at."""
    limit = burst * (1 - DROP)
    for i, (t, v) in enumerate(intervals):
        if t + interval_s <= BURST_S or v >= limit:
            continue
        following = [w for u, w in intervals[i:] if u < t + LASTING_S]
        # At least two intervals: one low interval at the very end is not yet a lasting drop.
        if len(following) >= 2 and all(w < limit for w in following):
            return t
    return None


def _window(series: dict | None, t0: float, t1: float) -> list[float]:
    if not series:
        return []
    return [v for t, v in zip(series["t"], series["v"]) if v is not None and t0 <= t <= t1]


def _first(series: dict[str, dict], names) -> str | None:
    return next((n for n in names if any(v is not None for v in
                                         (series.get(n) or {}).get("v", []))), None)


def when(seconds: float) -> str:
    """4 min 20 s, 45 s."""
    s = round(seconds)
    return f"{s // 60} min {s % 60} s" if s >= 60 else f"{s} s"


def coincided(series: dict[str, dict], start_s: float, drop_at_s: float | None,
              span_s: float) -> list[str]:
    """What the machine reported around the drop, against the burst: each as a phrase ("GPU
    SM clock fell from 1,980 to 1,755 MHz", "thermal pressure Heavy", "power capped (NVML:
    power cap)"); ["none seen"] when every series held. With no drop, what changed over the
    run from its burst to its end, the same way (an empty list when nothing did)."""
    b0, b1 = start_s, start_s + min(BURST_S, span_s)
    a0 = start_s + (drop_at_s if drop_at_s is not None else max(0.0, span_s - LASTING_S))
    a1 = min(a0 + LASTING_S, start_s + span_s) if drop_at_s is not None else start_s + span_s
    out: list[str] = []
    clock = _first(series, [n for n, _ in CLOCKS])
    if clock:
        before, after = _window(series[clock], b0, b1), _window(series[clock], a0, a1)
        if before and after and median(after) < CLOCK_FELL * median(before):
            what = dict(CLOCKS)[clock]
            out.append(f"{what} fell from {median(before):,.0f} to {median(after):,.0f} MHz")
    reasons = _window(series.get("gpu_throttle_reasons"), a0, a1)
    held = {name for r in reasons for bit, name in POWER_CAP_BITS.items() if int(r) & bit}
    if held:
        out.append(f"power capped (NVML: {', '.join(sorted(held))})")
    heat = {name for r in reasons for bit, name in THERMAL_BITS.items() if int(r) & bit}
    if heat:
        out.append(f"thermal slowdown (NVML: {', '.join(sorted(heat))})")
    levels_before = _window(series.get("thermal_pressure"), b0, b1)
    levels_after = _window(series.get("thermal_pressure"), a0, a1)
    if levels_after and max(levels_after) > max(levels_before or [0.0]):
        out.append(f"thermal pressure {thermal_level_name(max(levels_after))}")
    temp = _first(series, TEMPERATURES)
    if temp and out:
        after = _window(series[temp], a0, a1)
        if after:
            out.append(f"{max(after):.0f} °C")
    if drop_at_s is not None and not out:
        out.append("none seen")
    return out


def _beside(series: dict[str, dict], start_s: float, intervals: list[tuple[float, float]],
            interval_s: float) -> list[dict[str, float]]:
    """Per interval, the mean of the clock, power, temperature and thermal-pressure series
    sampled inside it: what the rows print beside each interval's figure."""
    names = [n for n in (_first(series, [c for c, _ in CLOCKS]), _first(series, POWERS),
                         _first(series, TEMPERATURES)) if n]
    names += [n for n in ("thermal_pressure", "gpu_throttle_reasons") if n in series]
    out = []
    for t, _ in intervals:
        seen = {}
        for name in names:
            vs = _window(series[name], start_s + t, start_s + t + interval_s)
            if vs:
                seen[name] = (max(vs) if name in ("thermal_pressure", "gpu_throttle_reasons")
                              else sum(vs) / len(vs))
        out.append(seen)
    return out


def analyse(ends: list[float], rates: list[float], unit: str, series: dict[str, dict],
            start_s: float) -> Analysis:
    span = ends[-1]
    step = interval_length(span)
    intervals = per_interval(ends, rates, step)
    burst, burst_s, sustained, late_from = burst_and_sustained(ends, rates)
    drop = first_lasting_drop(intervals, burst, step)
    return Analysis(unit, start_s, span, step, intervals, burst, burst_s, sustained, late_from,
                    sustained / burst if burst else math.nan, drop,
                    coincided(series, start_s, drop, span),
                    _beside(series, start_s, intervals, step))


def beside_text(values: dict[str, float]) -> str:
    parts = []
    for name, value in values.items():
        if name.endswith("_mhz"):
            parts.append(f"{value:,.0f} MHz")
        elif name.endswith("_w"):
            parts.append(f"{value:.1f} W")
        elif name.endswith("_c"):
            parts.append(f"{value:.0f} °C")
        elif name == "thermal_pressure":
            parts.append(f"thermal {thermal_level_name(value)}")
        elif name == "gpu_throttle_reasons" and int(value):
            parts.append(f"NVML reasons 0x{int(value):x}")
    return ", ".join(parts)


def drop_sentence(a: Analysis) -> str:
    if a.drop_at_s is None:
        held = f"no lasting drop of more than {DROP:.0%} from the burst"
        return held + (f"; over the run: {', '.join(a.coincided)}" if a.coincided else "")
    return (f"first lasting drop of more than {DROP:.0%} at {when(a.drop_at_s)}; "
            f"then: {', '.join(a.coincided)}")


def rows_of(a: Analysis, point: dict, metric: str) -> list[Row]:
    """The rows of one sustained measurement: its figure per interval (point + t_s), the
    burst, the sustained figure and their ratio, each saying what it covers."""
    rows = []
    for (t, v), seen in zip(a.intervals, a.beside):
        extra = beside_text(seen)
        rows.append(Row("interval", v, a.unit, {**point, "t_s": round(t, 1)},
                        note=f"{metric}, median of the blocks ending in {when(t)}–"
                             f"{when(t + a.interval_s)}" + (f"; {extra}" if extra else "")))
    rows.append(Row("burst", a.burst, a.unit, dict(point),
                    note=f"{metric}: median of the blocks ending in the first "
                         f"{when(a.burst_s)}"))
    rows.append(Row("sustained", a.sustained, a.unit, dict(point),
                    note=f"{metric}: median of the blocks ending after "
                         f"{when(a.sustained_from_s)} (the last third, at least a minute) "
                         f"of {when(a.span_s)}"))
    rows.append(Row("sustained_ratio", a.ratio, "×", dict(point),
                    note=f"sustained / burst ({number(a.sustained)} / {number(a.burst)} "
                         f"{a.unit}); {drop_sentence(a)}"))
    return rows


def _is_throughput_of(row: Row, per_call: list[float]) -> bool:
    """Whether a row's per-block figures are a throughput of these blocks: work per call over
    seconds per call, so figure x seconds is the same for every block (a time row, or another
    measurement's row with as many blocks, is not)."""
    if row.value is None or len(row.samples) != len(per_call):
        return False
    products = [f * s for f, s in zip(row.samples, per_call)]
    ref = products[0]
    return ref > 0 and all(abs(x - ref) <= 1e-6 * ref for x in products)


def sustained_rows(rows: list[Row], row_times: list[float], events: list[tuple[int, dict]],
                   telemetry: dict, t0_monotonic: float) -> tuple[list[Row], list[dict]]:
    """Rows and telemetry["sustained"] entries for every "sustained" event of a run: each
    event's blocks are the first row after it, not taken by an earlier event, whose figures
    are a throughput of exactly those blocks (the workload's row of that measurement: its
    metric and unit; an LLM's decode rows may come after later points were measured); without
    one, calls per second."""
    out_rows: list[Row] = []
    entries: list[dict] = []
    taken: set[int] = set()
    series = telemetry.get("series") or {}
    for before, event in events:
        # Rounded as the record keeps them, before they are bucketed: a block that ended at
        # 5.00004 s fell in the second interval, but was kept as 5.0, in the first.
        ends = [round(e, 4) for e in event.get("block_end_s") or []]
        per_call = list(event.get("per_call_s") or [])
        if len(ends) < 2 or len(per_call) != len(ends):
            continue
        i = next((i for i in range(before, len(rows)) if i not in taken
                  and _is_throughput_of(rows[i], per_call)), None)
        if i is not None:
            taken.add(i)
            row = rows[i]
            rates, unit, metric, point = list(row.samples), row.unit, row.metric, row.params
        else:
            rates = [1 / s if s > 0 else math.nan for s in per_call]
            unit, metric, point = "calls/s", "calls", {}
        # When the blocks began on the telemetry's axis: the child's monotonic clock is this
        # machine's; failing that (or out of the run), the event's arrival less their span.
        arrived = float(event.get("arrived_s", ends[-1]))
        start = event.get("start_monotonic")
        start_s = start - t0_monotonic if isinstance(start, int | float) else math.nan
        if not -1.0 <= start_s <= arrived:
            start_s = max(0.0, arrived - ends[-1])
        a = analyse(ends, rates, unit, series, start_s)
        out_rows += rows_of(a, point, metric)
        entry = {"metric": metric, "point": point, **a.to_dict()}
        if len(ends) <= KEEP_BLOCKS:   # the blocks' ends for a re-check; the rows hold the rest
            entry["block_end_s"] = ends
        entries.append(entry)
    return out_rows, entries


# ---------------------------------------------------------------- two machines, side by side

def _entry(rec, metric: str | None = None, point: dict | None = None) -> dict | None:
    entries = (getattr(rec, "telemetry", None) or {}).get("sustained") or []
    for e in entries:
        if (metric is None or e.get("metric") == metric) and \
                (point is None or e.get("point") == point):
            return e
    return None


def _times(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "—"


def burst_sustained_sentence(label: str, rec, base_label: str, base) -> str | None:
    """Compare's burst/sustained row for one side against another, from their runs'
    sustained measurements of the same metric and point: "MacBook Pro: burst 0.99×,
    sustained 0.71× of the Mac Studio; its GPU clock fell from 1,398 to 1,030 MHz at 4 min
    20 s, thermal pressure Heavy". None when either run has no sustained measurement or they
    measured different things."""
    mine = _entry(rec)
    if mine is None:
        return None
    theirs = _entry(base, mine.get("metric"), mine.get("point"))
    if theirs is None or mine.get("unit") != theirs.get("unit"):
        return None
    text = (f"{label}: burst {_times(mine['burst'], theirs['burst'])}, sustained "
            f"{_times(mine['sustained'], theirs['sustained'])} of the {base_label}")
    seen = [c for c in mine.get("coincided") or [] if c != "none seen"]
    if mine.get("drop_at_s") is not None:
        said = seen[0] if seen else "nothing the machine reports changed"
        if seen and " fell from " in said:     # "GPU clock fell from ... MHz": its clock
            said = f"its {said}"
        rest = [c for c in seen[1:] if not c.endswith("°C")]
        text += f"; {said} at {when(mine['drop_at_s'])}" + (f", {', '.join(rest)}"
                                                            if rest else "")
    else:
        text += "; no lasting drop"
    return text


# ---------------------------------------------------------------- what the chart draws

PANES = (("clock", "Clock (MHz)", [n for n, _ in CLOCKS]),
         ("power", "Power (W)", list(POWERS)),
         ("heat", "Thermal pressure", ["thermal_pressure"]),
         ("temperature", "Temperature (°C)", list(TEMPERATURES)))


def chart_data(rec) -> list[dict]:
    """Per sustained measurement of a run, what the Sustained chart draws on one time axis
    (seconds since its blocks began): the figure per interval (at each interval's middle),
    the burst and sustained windows with their figures, the drop, and each pane's series
    (the first series present of each kind) cut to the measurement's span."""
    out = []
    series = (getattr(rec, "telemetry", None) or {}).get("series") or {}
    for e in (getattr(rec, "telemetry", None) or {}).get("sustained") or []:
        start, span, step = e["start_s"], e["span_s"], e["interval_s"]
        panes = {}
        for key, title, names in PANES:
            name = _first(series, names)
            if name is None:
                continue
            pts = [(t - start, v) for t, v in zip(series[name]["t"], series[name]["v"])
                   if v is not None and -step <= t - start <= span + step]
            if pts:
                panes[key] = {"title": title, "series": name,
                              "x": [p[0] for p in pts], "y": [p[1] for p in pts]}
        out.append({"metric": e["metric"], "unit": e["unit"], "point": e["point"],
                    "x": [t + step / 2 for t, _ in e["intervals"]],
                    "y": [v for _, v in e["intervals"]],
                    "burst": (0.0, e["burst_s"], e["burst"]),
                    "sustained": (e["sustained_from_s"], span, e["sustained"]),
                    "drop_at_s": e["drop_at_s"], "ratio": e["ratio"],
                    "said": drop_sentence_of(e), "panes": panes})
    return out


def drop_sentence_of(entry: dict) -> str:
    """drop_sentence of a kept entry (telemetry["sustained"])."""
    a = Analysis(entry["unit"], entry["start_s"], entry["span_s"], entry["interval_s"], [],
                 entry["burst"], entry["burst_s"], entry["sustained"],
                 entry["sustained_from_s"], entry["ratio"], entry["drop_at_s"],
                 list(entry.get("coincided") or []))
    return drop_sentence(a)


def burst_sustained_notes(sides) -> list[str]:
    """Compare's burst/sustained lines: each later side's sustained runs against the first
    side's run of the same workload, metric and point (burst_sustained_sentence)."""
    if len(sides) < 2:
        return []
    out = []
    for side in sides[1:]:
        for rec in side.records:
            for base in sides[0].records:
                if base.workload == rec.workload:
                    said = burst_sustained_sentence(side.label, rec, sides[0].label, base)
                    if said:
                        out.append(said)
                        break
    return list(dict.fromkeys(out))
