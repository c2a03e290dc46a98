"""Which rows of which runs go on which chart, and what each series is called: plain Python
(no Qt, no pyqtgraph), so it is tested on recorded runs without a display. Which chart a row
belongs to follows from its workload's own declaration (siliconbench.core.catalogue: `metric` and `x`) and
the curves below, so new workloads slot in: the headline metric over a swept `x` -> a curve
over a log2 axis; a metric whose curve names its own x (an LLM's prefill over the prompt,
decode over the context depth) -> that curve, whichever workload measured it; a rate per
"model" -> throughput bars grouped by model; telemetry -> a time series per unit.
siliconbench/gui/charts/ draws them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache

from siliconbench.core.results import Row, RunRecord


@dataclass(frozen=True)
class Curve:
    """How one metric is drawn over a point parameter."""
    tab: str              # the tab it is shown in; curves of one tab are drawn side by side
    y_name: str
    unit: str
    x_label: str          # says how the axis is scaled
    x: str = ""           # the point parameter on x; "" for the workload's declared x
    log_x: bool = True
    x_bytes: int = 0      # bytes in one unit of x, where x is a size: its ticks read '256 KB'
    peak: bool = True     # the device's physical peak (siliconbench.core.peaks) bounds it: drawn dashed
    # The metric of rows that bound each point (decode's memory roofline, which falls with
    # the depth): drawn dashed under this name, per series, in the series' colour.
    bound: str = ""
    bound_name: str = ""
    # The axis's title where every run drawn swept the context (an LLM's --context-sweep:
    # its prompts and depths are the same lengths), so both charts read "against context".
    sweep_label: str = ""
    # A linear x (log_x False) turns log2 where its values above zero span more than this
    # (0: never): decode's depths of a context sweep, 512 to 32K and more, crowded into the
    # left tenth of a linear axis. Zero then lies a doubling below the least (zero_position).
    log_beyond: float = 0.0
    tokens: bool = False  # x counts tokens: its ticks read 512, 1K, 2K


# Depths above zero spanning more than this go on a log2 axis: a context sweep of four
# lengths (512 to 4096, the deepest held to the model's positions less the tokens generated:
# 3968, 7.75x) and more; the default depths (0, 512, 2048) stay linear.
LOG_DEPTHS_BEYOND = 6.0

CURVE_METRICS = {
    "tflops": Curve("TFLOPS", "Throughput", "TFLOPS", "Matrix size N (log₂ scale)"),
    "gb_per_s": Curve("Bandwidth", "Bandwidth", "GB/s", "Array size (log₂ scale)",
                      x_bytes=2 ** 20),
    # Prompts are lengths of 1 and more, swept in powers of two (128, 512, 2048).
    "prefill_tokens_per_s": Curve("LLM", "Prefill", "tok/s",
                                  "Prompt length in tokens (log₂ scale)", x="prompt",
                                  peak=False, sweep_label="Context (tokens, log₂ scale)",
                                  tokens=True),
    # Depth 0 (an empty context) is the first point of every sweep, which a log axis cannot
    # place; and the bytes a step reads grow in step with the depth, so on a linear axis the
    # bound falls as a smooth 1/(a + b·depth) and a curve that falls faster stands out. A
    # context sweep's depths double from 512: past LOG_DEPTHS_BEYOND they go on a log2 axis.
    "decode_tokens_per_s": Curve("LLM", "Decode", "tok/s", "Context depth in tokens (linear)",
                                 x="depth", log_x=False, peak=False, bound="decode_roofline",
                                 bound_name="memory bound",
                                 sweep_label="Context (tokens, linear)",
                                 log_beyond=LOG_DEPTHS_BEYOND, tokens=True),
    # A serving run's latency/throughput curve (run serve): over the requests in flight,
    # the total output, each user's decode rate and the time to first token, side by side.
    "output_tok_s": Curve("Serving", "Total output", "tok/s",
                          "Concurrent requests (log₂ scale)", x="concurrency", peak=False),
    "decode_tok_s": Curve("Serving", "Per user", "tok/s", "Concurrent requests (log₂ scale)",
                          x="concurrency", peak=False),
    "ttft_ms": Curve("Serving", "Time to first token", "ms",
                     "Concurrent requests (log₂ scale)", x="concurrency", peak=False),
    # nccl-tests' bus bandwidth over the message size; a link has no published peak here.
    "busbw": Curve("All-reduce", "Bus bandwidth", "GB/s", "Message size (log₂ scale)",
                   x_bytes=1, peak=False),
}
BARS = "throughput"
TELEMETRY = "telemetry"
SCALING = "scaling"             # the headline over the number of workers (world_size)
SCALING_X = "world_size"
INTERVAL = "interval"           # a sustained run's figure per interval (--duration)


def x_param(workload_name: str) -> str:
    """The point parameter the workload's curve sweeps ("" for none or an unknown workload)."""
    from siliconbench.core.catalogue import catalogue
    w = catalogue().get(workload_name)
    return w.x if w is not None else ""


def curve_x(workload_name: str, metric: str) -> str:
    """The point parameter a curve of this metric runs over ("" for no curve)."""
    curve = CURVE_METRICS.get(metric)
    if curve is None:
        return ""
    return curve.x or x_param(workload_name)


def chart_of(workload_name: str, row: Row) -> str | None:
    """The chart a row of this workload is drawn on (CURVE_METRICS key or BARS), or None:
    table only (a latency in ms, a peak memory in bytes: they do not belong among rates)."""
    from siliconbench.core.catalogue import catalogue
    w = catalogue().get(workload_name)
    if w is None:
        return None
    if row.metric == w.metric and w.x == SCALING_X and SCALING_X in row.params:
        return SCALING
    curve = CURVE_METRICS.get(row.metric)
    # A curve over the workload's declared x takes its headline metric only (training's
    # TFLOPS per model are no sweep); a curve naming its own x takes its metric anywhere.
    if curve is not None and (curve.x or row.metric == w.metric) \
            and curve_x(workload_name, row.metric) in row.params:
        return row.metric
    if row.metric == w.metric and "model" in row.params and row.metric.endswith("_per_s"):
        return BARS
    return None


def is_sustained(rec: RunRecord) -> bool:
    """A run made with --duration: its rows include a figure per interval (metric
    "interval", siliconbench.core.telemetry.burst), which the Sustained chart draws."""
    return any(row.metric == INTERVAL for row in rec.rows)


def x_title(records: list[RunRecord], metric: str, log_x: bool | None = None) -> str:
    """The curve's x axis title for these runs: Curve.sweep_label where every run with a
    point on it is a context sweep (params["context_sweep"]), else Curve.x_label; a linear
    curve's title says log2 where `log_x` (its series' Series.log_x) turned it."""
    curve = CURVE_METRICS[metric]
    drawn = [r for r in records if any(chart_of(r.workload, row) == metric for row in r.rows)]
    if curve.sweep_label and drawn and all(r.params.get("context_sweep") for r in drawn):
        title = curve.sweep_label
    else:
        title = curve.x_label
    return title.replace("linear", "log₂ scale") if log_x and not curve.log_x else title


def log_x_for(curve: Curve, xs: list[float]) -> bool:
    """Whether a curve with these x values is drawn over log2 x: always where it says so,
    else where its values above zero span more than Curve.log_beyond."""
    above = [x for x in xs if x > 0]
    return curve.log_x or bool(curve.log_beyond and above
                               and max(above) > curve.log_beyond * min(above))


def zero_position(xs: list[float]) -> float:
    """Where x = 0 lies on a log2 axis of these values: a whole doubling below the least
    above zero, where no value lies (the axis labels it 0)."""
    return math.floor(math.log2(min(x for x in xs if x > 0))) - 1.0


def token_label(n: float) -> str:
    """A count of tokens as an axis reads it: 512, 1K, 32K; 3968 whole."""
    n = int(round(n))
    return f"{n // 1024}K" if n >= 1024 and n % 1024 == 0 else str(n)


def size_label(n: float) -> str:
    n = int(round(n))
    for div, suffix in ((2**30, "G"), (2**20, "M")):
        if n >= div and n % div == 0:
            return f"{n // div}{suffix}"
    return str(n)


# Point parameters whose values name themselves ("float32", "copy", "resnet50"); others
# are named ('batch 256', 'data on device'), never a bare number.
SPEAKING = {"dtype", "op", "model", "preset"}
PARAM_WORDS = {"batch_size": "batch", "batch": "batch", "gen_tokens": "tokens generated",
               "data": "data on", "ranks": "ranks", "widths": "widths", "hidden": "hidden",
               "world_size": "workers", "percentile": "percentile"}
WORKLOAD_WORDS = {"infer": "inference", "train": "training"}


def param_text(key: str, value) -> str:
    """One point parameter as a legend reads it: 'float32', 'batch 256', 'widths 256'."""
    if key in SPEAKING and isinstance(value, str):
        return value
    if key == "gen_tokens":
        return f"{value} tokens generated"
    if key == "precision":
        return f"{value} precision"
    return f"{PARAM_WORDS.get(key, key.replace('_', ' '))} {value}"


def run_traits(rec: RunRecord, point: dict) -> dict[str, str]:
    """What about a run changes what its series measures beyond the point: the workload,
    the precision, TF32 on a float32 product, channels-last images. Named where they differ
    between a chart's series (name_apart); TF32 always, for it changes what float32 means."""
    precision = point.get("precision") or rec.params.get("precision") or \
        rec.settings.get("precision")
    traits = {"workload": WORKLOAD_WORDS.get(rec.workload, rec.workload),
              "precision": f"{precision} precision" if precision else "",
              "channels_last": "channels-last" if rec.params.get("channels_last") else ""}
    if rec.settings.get("tf32") and point.get("dtype", "float32") == "float32":
        traits["tf32"] = "TF32"
    return traits


def series_title(rec: RunRecord, point: dict, traits: dict[str, str] | None = None) -> str:
    """The run's identity ('AMD EPYC · torch cpu · 23 Nov 05:41:07'), what sets the series
    apart within the run ('float32', 'batch 256'), and the run's traits given (TF32)."""
    traits = traits or {}
    # A point's precision is a trait: said once, where the runs differ in it.
    parts = [param_text(k, v) for k, v in point.items()
             if not (k == "precision" and "precision" in traits)]
    parts += [v for v in traits.values() if v]
    return " · ".join([rec.identity, *parts])


def name_apart(series: list, records: list[RunRecord]) -> None:
    """Name each series by its run, its point, and the run traits that differ between the
    chart's series (inference beside training, mixed precision beside fp32); TF32 always.
    Series carry (run id, point) as .key."""
    by_id = {r.id: r for r in records}
    traits = [run_traits(by_id[s.key[0]], dict(s.key[1])) for s in series]
    differ = {k for k in {k for t in traits for k in t}
              if len({t.get(k, "") for t in traits}) > 1}
    for s, t in zip(series, traits, strict=True):
        shown = {k: v if k in differ or k == "tf32" else "" for k, v in t.items()}
        s.name = series_title(by_id[s.key[0]], dict(s.key[1]), shown)


@cache
def _peaks_by_name() -> dict:
    from siliconbench.core.peaks import load_peaks
    return {p.name: p for p in load_peaks()}


def peak_of(rec: RunRecord, metric: str, point: dict, rows: list[Row]) -> float | None:
    """The device's physical peak for this series, from the peak table entry the run named,
    else implied by the rows' % of peak; None when unknown (CPUs, untabulated GPUs)."""
    name = rec.settings.get("peak")
    peak = _peaks_by_name().get(name) if name else None
    if peak is None and rec.device != "cpu":
        # A published figure names no table entry: the device's own does (an M1 Max's
        # 32-core GPU is in the table though the record never said so).
        from siliconbench.core.peaks import find_peak
        m = rec.machine or {}
        peak = find_peak(rec.device_name, chip=m.get("chip"), gpu_cores=m.get("gpu_cores"))
    if peak is not None:
        if metric == "tflops":
            value = peak.tflops_for(str(point.get("dtype", "float32")),
                                    tf32=bool(rec.settings.get("tf32")))
        else:
            value = peak.bandwidth_gbs
        if value:
            return float(value)
    implied = sorted(r.value * 100.0 / r.pct_of_peak for r in rows
                     if r.value is not None and r.pct_of_peak)
    return implied[len(implied) // 2] if implied else None


@dataclass
class Series:
    """One curve of a chart: a run's rows of one metric over the point parameter."""
    key: tuple
    name: str
    device: str
    rows: list[Row] = field(default_factory=list)   # measured rows, in x order
    missing: list[Row] = field(default_factory=list)  # unsupported points (no value)
    peak: float | None = None
    x: str = ""                                        # the point parameter on the x axis
    log_x: bool = True
    bounds: list[Row] = field(default_factory=list)   # the curve's bound at each x, in order
    bound_label: str = ""                              # 'memory bound (measured triad)'
    zero_at: float = 0.0                               # where x = 0 lies on a log2 axis

    def x_of(self, row: Row) -> float:
        return float(row.params[self.x])

    def position(self, row: Row) -> float:
        """Where the row lies on the x axis: log2 of its x (0 at zero_at), or x itself on
        a linear axis."""
        x = self.x_of(row)
        if not self.log_x:
            return x
        return math.log2(x) if x > 0 else self.zero_at

    def xs(self) -> list[float]:
        return [self.position(r) for r in self.rows]


def bound_label(rec: RunRecord, curve: Curve) -> str:
    """'memory bound (measured triad)': the bound's name and which ceiling it divides, as
    the run recorded it (siliconbench.core.workloads.llm: settings["memory_bound"]["source"])."""
    source = (rec.settings.get("memory_bound") or {}).get("source")
    return f"{curve.bound_name} ({source})" if source else curve.bound_name


def curve_series(records: list[RunRecord], metric: str) -> list[Series]:
    """One series per (run, the point's other parameters, e.g. dtype); x is the curve's point
    parameter (Series.x), and its bound rows (Curve.bound) go with the series of their point."""
    curve = CURVE_METRICS[metric]
    out: list[Series] = []
    for rec in records:
        groups: dict[tuple, Series] = {}
        x = curve_x(rec.workload, metric)
        bounds: dict[tuple, list[Row]] = {}
        for row in rec.rows:
            point = tuple((k, v) for k, v in row.params.items() if k != x)
            if curve.bound and row.metric == curve.bound and row.value is not None \
                    and x in row.params:
                bounds.setdefault(point, []).append(row)
            if chart_of(rec.workload, row) != metric:
                continue
            key = (rec.id, point)
            s = groups.get(key)
            if s is None:
                s = groups[key] = Series(key, series_title(rec, dict(point)),
                                         rec.device_name or rec.device, x=x)
            (s.rows if row.value is not None else s.missing).append(row)
        for s in groups.values():
            s.rows.sort(key=s.x_of)
            s.bounds = sorted(bounds.get(s.key[1], []), key=s.x_of)
            s.bound_label = bound_label(rec, curve) if s.bounds else ""
            if curve.peak:
                s.peak = peak_of(rec, metric, dict(s.key[1]), s.rows)
            out.append(s)
    # One scale for the chart: log2 where its x values span far (a context sweep's depths).
    xs = [s.x_of(r) for s in out for r in s.rows + s.bounds]
    log_x = log_x_for(curve, xs)
    zero_at = zero_position(xs) if log_x and any(x > 0 for x in xs) else 0.0
    for s in out:
        s.log_x, s.zero_at = log_x, zero_at
    name_apart(out, records)
    return out


def bar_series(records: list[RunRecord]) -> tuple[list[str], list[Series]]:
    """(models in first-seen order, one series per run and non-model parameters)."""
    models: list[str] = []
    out: dict[tuple, Series] = {}
    for rec in records:
        for row in rec.rows:
            if chart_of(rec.workload, row) != BARS:
                continue
            model = str(row.params["model"])
            if model not in models:
                models.append(model)
            point = {k: v for k, v in row.params.items() if k != "model"}
            key = (rec.id, tuple(point.items()))
            if key not in out:
                out[key] = Series(key, series_title(rec, point),
                                  rec.device_name or rec.device)
            (out[key].rows if row.value is not None else out[key].missing).append(row)
    name_apart(list(out.values()), records)
    return models, list(out.values())


@dataclass
class ScalingSeries:
    """One run's total throughput over its world sizes, against the ideal: n x one worker."""
    key: tuple
    name: str
    device: str
    rows: list[Row] = field(default_factory=list)      # measured, in world-size order
    missing: list[Row] = field(default_factory=list)

    def workers(self) -> list[int]:
        return [int(r.params[SCALING_X]) for r in self.rows]

    def one_worker(self) -> float | None:
        return next((r.value for r in self.rows if r.params[SCALING_X] == 1), None)

    def ideal(self) -> list[float]:
        """Linear scaling from one worker's throughput (empty without a world of one)."""
        one = self.one_worker()
        return [] if one is None else [n * one for n in self.workers()]

    def efficiency(self) -> list[float]:
        """throughput(N) / (N x throughput(1)), in percent, at each point."""
        return [100 * r.value / ideal for r, ideal in zip(self.rows, self.ideal(),
                                                          strict=False)]


def scaling_series(records: list[RunRecord]) -> list[ScalingSeries]:
    """One series per run and point apart from the world size (model, batch size)."""
    out: dict[tuple, ScalingSeries] = {}
    for rec in records:
        for row in rec.rows:
            if chart_of(rec.workload, row) != SCALING:
                continue
            point = {k: v for k, v in row.params.items() if k != SCALING_X}
            key = (rec.id, tuple(point.items()))
            if key not in out:
                out[key] = ScalingSeries(key, series_title(rec, point),
                                         rec.device_name or rec.device)
            (out[key].rows if row.value is not None else out[key].missing).append(row)
    for s in out.values():
        s.rows.sort(key=lambda r: r.params[SCALING_X])
    name_apart(list(out.values()), records)
    return list(out.values())


# Telemetry units, in the order the chart prefers to show them, with the axis title of each.
TELEMETRY_UNITS = {"W": "Power (W)", "°C": "Temperature (°C)", "%": "Load (%)",
                   "MHz": "Clock (MHz)", "GB": "Memory (GB)", "J": "Energy (J)"}


_SENSOR_UNITS = ("_percent", "_bytes", "_mhz", "_w", "_j", "_c")
_SENSOR_WORDS = {"gpu": "GPU", "cpu": "CPU", "ane": "Neural Engine", "dram": "DRAM",
                 "sm": "SM", "mem": "memory"}


def sensor_title(key: str) -> str:
    """A telemetry series as a person reads it: 'GPU power' for gpu_power_w, 'CPU load' for
    cpu_percent, 'Memory used' for memory_used_bytes; never the raw key."""
    special = {"cpu_percent": "CPU load", "gpu_active_percent": "GPU busy",
               "gpu_temperature_c": "GPU temperature", "gpu_energy_j": "GPU energy"}
    if key in special:
        return special[key]
    stem = key
    for suffix in _SENSOR_UNITS:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    words = [_SENSOR_WORDS.get(w, w) for w in stem.split("_") if w]
    text = " ".join(words) or key
    return text[:1].upper() + text[1:]


def telemetry_series(records: list[RunRecord]) -> dict[str, dict[tuple, tuple]]:
    """unit -> {(run id, sensor): (legend name, times, values)}, units in TELEMETRY_UNITS'
    order (others after, by name); bytes become GB. A sensor is named by its run only when
    several runs have telemetry."""
    multi = len([r for r in records if r.telemetry]) > 1
    by_unit: dict[str, dict] = {}
    for rec in records:
        for name, s in ((rec.telemetry or {}).get("series") or {}).items():
            unit, scale = (s.get("unit") or "", 1.0)
            if unit == "bytes":
                unit, scale = "GB", 1e-9
            label = f"{rec.identity} · {sensor_title(name)}" if multi else sensor_title(name)
            pairs = [(t, v * scale) for t, v in zip(s.get("t", []), s.get("v", []),
                                                    strict=False) if v is not None]
            if pairs:
                by_unit.setdefault(unit, {})[(rec.id, name)] = (
                    label, [t for t, _ in pairs], [v for _, v in pairs])
    order = list(TELEMETRY_UNITS)
    return {u: by_unit[u] for u in sorted(by_unit, key=lambda u: (
        order.index(u) if u in order else len(order), u))}
