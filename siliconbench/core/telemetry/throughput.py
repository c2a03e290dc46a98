"""Sustained mode: throughput per window over a long run and the last/first window ratio, as
rows."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median

from siliconbench.core.numbers import number, span
from siliconbench.core.results import Row


@dataclass(frozen=True)
class Sustained:
    """Throughput over a sustained run: per-window medians and last/first window ratio."""
    window_s: float
    per_window: list[tuple[float, float]]   # (window start in s, median throughput)
    first: float
    last: float
    ratio: float                            # last / first: below 1 means it slowed down


def sustained(block_end_s: list[float], rates: list[float],
              window_s: float = 60.0) -> Sustained:
    """Throughput over time from per-block rates and block end times (measure_for). Windows of
    `window_s` (a minute), shrunk to half the run when it is shorter than two windows."""
    if len(block_end_s) != len(rates) or len(rates) < 2:
        raise ValueError("sustained mode needs at least two timed blocks")
    span = block_end_s[-1]
    window = min(window_s, span / 2)
    last_bucket = max(math.floor(span / window + 1e-9) - 1, 0)
    buckets: dict[int, list[float]] = {}
    for end, rate in zip(block_end_s, rates):
        # A block belongs to the window it ends in; a short tail joins the last full window.
        bucket = min(max(math.ceil(end / window - 1e-9) - 1, 0), last_bucket)
        buckets.setdefault(bucket, []).append(rate)
    per_window = [(k * window, median(v)) for k, v in sorted(buckets.items())]
    early = [r for e, r in zip(block_end_s, rates) if e <= window]
    # One slow first block (a loaded machine) can end past the first window: it is the start.
    first = median(early) if early else rates[0]
    last = median([r for e, r in zip(block_end_s, rates) if e > span - window])
    return Sustained(window, per_window, first, last, last / first if first else math.nan)


def sustained_rows(block_end_s: list[float], rates: list[float], unit: str, point: dict,
                   window_s: float = 60.0) -> list[Row]:
    """Rows for a sustained run: throughput per minute (point + {"minute": k}) and the
    last-minute / first-minute ratio (metric "throttle_ratio")."""
    s = sustained(block_end_s, rates, window_s)
    window = span(s.window_s)
    rows = [Row("samples_per_s", value, unit, {**point, "minute": round(start / 60, 3)},
                note=f"median over the {window} window starting {span(start)} in")
            for start, value in s.per_window]
    rows.append(Row("throttle_ratio", s.ratio, "×", dict(point),
                    note=f"last {window} / first {window} median throughput "
                         f"({number(s.last)} / {number(s.first)} {unit}); below 1: the machine slowed "
                         "down (thermal throttling)"))
    return rows
