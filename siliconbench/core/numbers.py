"""How a figure reads wherever a person sees it: the command's tables, the app, the HTML report.
One place, so the same value reads the same everywhere ('12,345 img/s', never '1.234e+04' in
one and '12,345' in another). Exports (CSV, JSON) keep the raw numbers, never these strings."""

from __future__ import annotations

import math

# Metric names as a person reads them; others lose their underscores.
METRIC_TITLES = {
    "tflops": "Throughput", "gb_per_s": "Bandwidth", "samples_per_s": "Throughput",
    "step_time": "Step time", "batch_time": "Batch time", "batch_latency": "Batch latency",
    "train_seconds": "Time to train", "epoch_seconds": "Epoch time",
    "us_per_sample": "Time per sample", "final_loss": "Final loss",
    "final_accuracy": "Final accuracy", "peak_memory": "Peak memory",
    "max_batch_size": "Largest batch", "host_device_ratio": "Host/device ratio",
    "loss_rel_diff": "Loss difference vs CPU", "samples_per_watt": "Samples per watt",
    "max_temperature": "Highest temperature", "power": "Power",
    "tflops_per_watt": "TFLOPS per watt",
    # nccl-tests' busbw and algbw, spelled out (README: All-reduce says how they differ)
    "busbw": "Bus bandwidth", "algbw": "Algorithm bandwidth",
    # data-parallel scaling (README: Scaling)
    "worker_samples_per_s": "Throughput per worker", "speedup": "Speedup",
    "scaling_efficiency": "Scaling efficiency", "comm_share": "All-reduce share",
    "replica_difference": "Difference between replicas",
    "prefill_tokens_per_s": "Prefill", "decode_tokens_per_s": "Decode",
    "ttft_ms": "Time to first token", "decode_roofline": "Decode memory bound",
    "decode_compile_s": "Decode compile time", "decode_fixed_ms": "Decode fixed cost per step",
    # a serving run (README: Serving, each by its formula)
    "output_tok_s": "Total output", "requests_per_s": "Requests", "goodput_req_s": "Goodput",
    "ttfb_ms": "Time to first byte", "ttfr_ms": "Time to first reasoning token",
    "tpot_ms": "Time per output token", "e2e_ms": "End-to-end latency",
    "decode_tok_s": "Decode per user", "chunk_gap_ms": "Gap between chunks",
    "chunk_gap_max_ms": "Longest gap between chunks", "tokens_per_chunk": "Tokens per chunk",
    "server_decode_tok_s": "Server's decode per user",
    "server_ttft_ms": "Server's time to first token",
    **{f"{stem}_p{q}{unit}": f"{title} p{q}" for q in (90, 99) for stem, unit, title in (
        ("ttfb", "_ms", "Time to first byte"), ("ttft", "_ms", "Time to first token"),
        ("ttfr", "_ms", "Time to first reasoning token"), ("tpot", "_ms", "Time per output token"),
        ("e2e", "_ms", "End-to-end latency"), ("decode", "_tok_s", "Decode per user"),
        ("chunk_gap", "_ms", "Gap between chunks"))},
}

# What a row's % of peak is a share of where that is not the device's physical peak (an
# LLM's decode against its memory roofline), or None for a metric that has no ceiling. Only
# a throughput (has_ceiling: TFLOPS, GB/s, img/s, tokens/s) has one at all: never a power,
# a temperature or an efficiency.
CEILINGS = {"decode_tokens_per_s": "memory bound", "prefill_tokens_per_s": "compute bound",
            "ttft_ms": None, "decode_roofline": None, "decode_compile_s": None,
            "decode_fixed_ms": None,
            # a server's tokens/s: no ceiling SiliconBench knows
            "output_tok_s": None, "decode_tok_s": None, "decode_p90_tok_s": None,
            "decode_p99_tok_s": None, "server_decode_tok_s": None}

# Values spanning more than this many times (highest over lowest) are drawn on a log axis,
# in the app's charts and the HTML report's alike: beside 680 TFLOPS a CPU's 0.05 lies flat
# on a linear axis, and 3.8 img/s is no bar at all beside 15,294.
LOG_SPAN = 30.0

BYTES = "bytes"           # the unit whose values read as a size (peak memory)
_SIZES = ("bytes", "KB", "MB", "GB", "TB")
NOT_MEASURED = "—"


def number(value: float) -> str:
    """Three significant figures, thousands separated, never scientific for everyday
    magnitudes: 12,345 · 263 · 20.7 · 1.23 · 0.178 · 0.0000328 (a tiny GEMM's TFLOPS); whole
    numbers whole (4, not 4.00). Scientific only below a millionth."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    # Decided on the rounded value, so 999.6 reads 1,000 and 9.996 reads 10.0.
    rounded = abs(float(f"{value:.3g}"))
    if rounded >= 1000 or float(value).is_integer():   # a count reads whole: 4 samples
        return f"{value:,.0f}"
    if rounded >= 1e-6:     # 0.200, not 0.2: every figure shows its three digits
        return f"{value:.{2 - math.floor(math.log10(rounded))}f}"
    return f"{value:#.3g}"


def size(n_bytes: float) -> str:
    """A memory size in steps of 1024, as macOS and the device lists name RAM: '16 GB',
    '1.5 GB', '117 MB'. Whole sizes drop their zeros ('16 GB', not '16.0 GB')."""
    value, step = float(n_bytes), 0
    while abs(value) >= 1024 and step < len(_SIZES) - 1:
        value, step = value / 1024, step + 1
    text = number(value)
    if "." in text and "e" not in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} {_SIZES[step]}"


def _trimmed(value: float) -> str:
    """number() without the zeros that only pad its three digits: '0.5', '2', '15.3'."""
    text = number(value)
    return text.rstrip("0").rstrip(".") if "." in text and "e" not in text else text


def compact(value: float, unit: str = "") -> str:
    """An axis tick in human units: '15K', '2.5M', '680', '0.05'; a size for bytes ('1.5 GB').
    Ticks fall on round values, so no digits are lost; a table keeps quantity()'s figure."""
    if unit == BYTES:
        return size(value)
    rounded = abs(float(f"{value:.3g}")) if math.isfinite(value) else 0.0
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if rounded >= div:
            return f"{_trimmed(value / div)}{suffix}"
    return _trimmed(value)


def figure(value: float, unit: str = "") -> str:
    """The number alone, where a heading or an axis names the unit; a size for bytes."""
    return size(value) if unit == BYTES else number(value)


def quantity(value: float | None, unit: str = "") -> str:
    """'12,345 img/s', '1.5 GB' for bytes, or an em dash for a point not measured."""
    if value is None:
        return NOT_MEASURED
    if unit == BYTES or not unit:
        return figure(value, unit)
    return f"{number(value)} {unit}"


def interval(low: float, high: float, unit: str = "") -> str:
    """A range in the value's own terms: '20.5–21.2' ('1.2 GB–1.3 GB' for bytes)."""
    return f"{figure(low, unit)}–{figure(high, unit)}"


def with_spread(value: float | None, low: float | None, high: float | None,
                unit: str = "") -> str:
    """'20.7 img/s [20.5–21.2]': the value and, where known, its range (p25–p75 or a
    confidence interval: the caller's heading or legend says which)."""
    text = quantity(value, unit)
    if value is not None and low is not None and high is not None:
        text += f" [{interval(low, high, unit)}]"
    return text


def duration(seconds: float) -> str:
    """'45 s', '12 min', '2.5 h', '3 days'."""
    if seconds < 90:
        return f"{max(1, round(seconds)) if seconds > 0 else 0} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"


def span(seconds: float) -> str:
    """A measured stretch of time, three significant figures in its own unit: '1.51 s',
    '1 min', '2.50 min', '1.20 h' (duration rounds; this keeps what was measured)."""
    if seconds < 60:
        return f"{number(seconds)} s"
    if seconds < 3600:
        return f"{number(seconds / 60)} min"
    return f"{number(seconds / 3600)} h"


def percent(value: float) -> str:
    """A percentage given in percent: '87%'."""
    return f"{value:.0f}%"


def ratio(value: float | None) -> str:
    """One value over another: three decimals near parity, where they tell 1.013× from 1×
    ('1.234×'); three significant figures from 10 on ('57.8×', not '57.821×')."""
    if value is None:
        return ""
    return f"{value:.3f}×" if abs(value) < 10 else f"{number(value)}×"


def times(value: float) -> str:
    """How many times apart, always >= 1, to three significant figures whatever the size:
    '36.0×' for 36.0 and for 1/36, '1.23×', '143×'; from 1,000 on rounded and said so
    ('≈6,420×'): 360 TFLOPS over 0.0561 reads '≈6,420×', never '0.000×'."""
    r = value if value >= 1 else 1 / value
    rounded = float(f"{r:.3g}")
    if rounded >= 1000:
        return f"≈{rounded:,.0f}×"
    return f"{rounded:.{max(0, 2 - math.floor(math.log10(rounded)))}f}×"


def needs_log_axis(values) -> bool:
    """Whether values (None, zero and negatives ignored: a log axis cannot show them) span
    more than LOG_SPAN times, so that a linear axis would flatten the smaller ones."""
    positive = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    return bool(positive) and max(positive) / min(positive) > LOG_SPAN


def p_value(p: float) -> str:
    """A test's p-value, two significant figures (scientific when tiny, as statistics
    writes it): '0.0031', '2.1e-05'."""
    return f"{p:.2g}"


def metric_title(metric: str) -> str:
    """'Throughput' for tflops: a metric's name as a person reads it."""
    return METRIC_TITLES.get(metric) or metric.replace("_", " ").capitalize()


def metric_heading(metric: str, unit: str) -> str:
    """'Throughput (TFLOPS)': a metric with its unit, for a column, an axis or a caption."""
    return f"{metric_title(metric)} ({unit or 'no unit'})"


# ---------------------------------------------------------------- a result row's value

def value_text(row) -> str:
    """A row's value with its unit: '1.23 TFLOPS', or an em dash where nothing was measured."""
    return quantity(row.value, row.unit)


def spread_text(row) -> str:
    """A row's p25–p75, or nothing where it has no statistics."""
    s = row.stats
    return interval(s.p25, s.p75, row.unit) if s and row.value is not None else ""


def ci_text(row) -> str:
    """A row's confidence interval of the median, or nothing."""
    s = row.stats
    return interval(s.ci_low, s.ci_high, row.unit) if s and row.value is not None else ""


def row_with_spread(row) -> str:
    """'0.178 TFLOPS [0.170–0.181]' (p25–p75), '… [no spread]' for a single figure."""
    if row.value is None or row.stats is None:
        return value_text(row) + ("" if row.value is None else " [no spread]")
    return with_spread(row.value, row.stats.p25, row.stats.p75, row.unit)


def has_ceiling(unit: str) -> bool:
    """Whether a figure in this unit is a throughput, which a device's peak bounds: TFLOPS,
    GB/s, img/s, tokens/s; not TFLOPS/W, img/s/W, W, °C, ms."""
    return unit == "TFLOPS" or unit.endswith("/s")


def peak_text(row) -> str:
    """'87% of peak' ('41% of memory bound' for an LLM's decode), 'peak unknown' where the
    device has no tabulated peak, or nothing for a point not measured or a metric without a
    ceiling (not a throughput, has_ceiling; a time to first token, CEILINGS)."""
    ceiling = CEILINGS.get(row.metric, "peak") if has_ceiling(row.unit) else None
    if row.value is None:
        return ""
    if row.pct_of_peak is not None:
        return f"{percent(row.pct_of_peak)} of {ceiling or 'peak'}"
    return f"{ceiling} unknown" if ceiling else ""


def scaled_units(value: float, step: int, units: tuple[str, ...]) -> str:
    """'1.23 B', '51.33 KiB': llama-bench's way of showing sizes, with the unit that fits."""
    for unit in units[:-1]:
        if value < step:
            return f"{value:.2f} {unit}".rstrip()
        value /= step
    return f"{value:.2f} {units[-1]}"
