"""How a result row reads on screen: a value always with its spread, flags in words
(core.results.FLAGS), and "peak unknown" when the device has no tabulated peak."""

from __future__ import annotations

from core.results import FLAGS, Row, RunRecord

# Flags that mean the number itself cannot be trusted, as opposed to "read with care".
SERIOUS_FLAGS = ("above_peak", "wrong_result", "fallback")


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
}


def metric_title(metric: str) -> str:
    return METRIC_TITLES.get(metric) or metric.replace("_", " ").capitalize()


def headline_text(rec: RunRecord, spread: bool = True) -> str:
    """The run's headline (its workload's metric, best point) with its unit: '0.178 TFLOPS
    [0.170–0.181]'; what it lacks otherwise."""
    from core.workloads import headline
    row = headline(rec)
    if row is None:
        if not rec.rows:
            return "no results"
        return "nothing measured" if all(r.value is None for r in rec.rows) else \
            "no headline figure"
    if not spread:
        return value_text(row)
    return value_text(row) + (f" [{spread_text(row)}]" if row.stats else " [no spread]")


def number(value: float) -> str:
    """Three significant figures without scientific notation for everyday magnitudes."""
    magnitude = abs(value)
    if magnitude == 0:
        return "0"
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:#.3g}"  # '#': 0.200, not 0.2, so every figure shows three digits


def value_text(row: Row) -> str:
    """'1.23 TFLOPS', or an em dash for a point that could not be measured."""
    return "—" if row.value is None else f"{number(row.value)} {row.unit}"


def spread_text(row: Row) -> str:
    s = row.stats
    return f"{number(s.p25)}–{number(s.p75)}" if s and row.value is not None else ""


def ci_text(row: Row) -> str:
    s = row.stats
    return f"{number(s.ci_low)}–{number(s.ci_high)}" if s and row.value is not None else ""


def value_with_spread(row: Row) -> str:
    """'1.23 TFLOPS (p25–p75 1.20–1.25, n=12)': no number on screen without its spread."""
    if row.value is None:
        return "—"
    if row.stats is None:
        return f"{value_text(row)} (one measurement, no spread)"
    return f"{value_text(row)} (p25–p75 {spread_text(row)}, n={row.stats.n})"


def peak_text(row: Row) -> str:
    if row.value is None:
        return ""
    return "peak unknown" if row.pct_of_peak is None else f"{row.pct_of_peak:.0f}% of peak"


def flag_label(flag: str) -> str:
    return flag.replace("_", " ")


def flags_text(row: Row) -> str:
    return ", ".join(flag_label(f) for f in row.flags)


def flags_explained(row: Row) -> str:
    """One line per flag with its meaning, for tooltips."""
    return "\n".join(f"{flag_label(f)}: {FLAGS.get(f, 'see the note')}" for f in row.flags)


def is_serious(row: Row) -> bool:
    return any(f in SERIOUS_FLAGS for f in row.flags)


def flag_counts(rows: list[Row]) -> str:
    """'2 noisy, 1 above peak' over some rows; empty when none is flagged."""
    counts: dict[str, int] = {}
    for row in rows:
        for f in row.flags:
            counts[f] = counts.get(f, 0) + 1
    return ", ".join(f"{n} {flag_label(f)}" for f, n in counts.items())


def point_tip(series_name: str, row: Row) -> str:
    """Everything known about one measured point, for a hover tooltip."""
    lines = [series_name, ", ".join(f"{k} = {v}" for k, v in row.params.items()),
             value_text(row)]
    if row.stats is not None and row.value is not None:
        s = row.stats
        lines += [f"p25–p75: {spread_text(row)}",
                  f"{s.confidence:.0%} CI of the median: {ci_text(row)}", f"blocks timed: {s.n}"]
    lines.append(peak_text(row))
    if row.flags:
        lines.append(flags_explained(row))
    if row.note:
        lines.append(row.note)
    return "\n".join(line for line in lines if line)


def warning_count(warnings: list[str]) -> str:
    n = len(warnings)
    return f"⚠ {n} warning{'s' * (n != 1)}"


def warnings_tooltip(warnings: list[str]) -> str:
    """A run's warnings, one per line: what the run itself said about its numbers."""
    return "\n".join(f"⚠ {w}" for w in warnings)
