"""The fixed cost of a decode step apart from the bytes it streams (the llm workload's
decode_fixed_ms): the intercept of step time against bytes read per step, from a fit that can
hold it, with a bootstrap interval over the timed blocks.

A line through one model's depths (0, 512, 2048) cannot hold an intercept: only the cache's
bytes vary there, 2-3% of what a step reads, so the intercept is extrapolated 35-50 times past
the data, and it moves with any difference between what a cache byte and a weight byte cost.
So the fit is across models (the same shape with other layer counts, at depth 0: the weights
span the x-axis, as the H100 note's 1B and 8B did), or within one model only where its bytes
span at least MIN_SPAN; elsewhere there is no row. Either way the line counts a cache byte as
a weight byte, and across layer counts a layer's own overheads (its launches, its Python) with
its bytes, so they are not in the intercept; the row says so."""

from __future__ import annotations

import random
import statistics
from typing import NamedTuple

from siliconbench.core.results import Row
from siliconbench.core.stats import Stats

# The least spread of bytes per step (largest over smallest, less one) a fit may span.
MIN_SPAN = 0.20
RESAMPLES = 2000          # bootstrap draws of the blocks
CONFIDENCE = 0.95
ASSUMPTION = "a KV byte costs what a weight byte costs"


class FitPoint(NamedTuple):
    """One decode measurement of a fit: the model's layer count, its depth, the bytes a step
    reads, and the seconds a step took in each timed block."""
    layers: int
    depth: int
    step_bytes: float
    step_s: list[float]


def chosen_points(points: list[FitPoint]) -> tuple[list[FitPoint], str] | str:
    """The points a fit may use and how they were chosen, or why there are none: two or more
    models at depth 0, else one model's depths; either only where the bytes span MIN_SPAN."""
    at_zero = {p.layers: p for p in points if p.depth == 0}
    if len(at_zero) >= 2:
        chosen = sorted(at_zero.values(), key=lambda p: p.layers)
        how = (f"{len(chosen)} models of {', '.join(str(p.layers) for p in chosen)} layers "
               "at depth 0")
    else:
        layers = points[0].layers if points else 0
        chosen = [p for p in points if p.layers == layers]
        how = f"one model's {len(chosen)} depths"
    if len({p.step_bytes for p in chosen}) < 2:
        return f"{how}: fewer than two byte counts to fit a line through"
    lo, hi = min(p.step_bytes for p in chosen), max(p.step_bytes for p in chosen)
    if hi < (1 + MIN_SPAN) * lo:
        return (f"{how}: the bytes per step span {hi / lo - 1:.1%}, less than the "
                f"{MIN_SPAN:.0%} an intercept needs (decode more than one layer count with "
                "--fit-layers)")
    return chosen, how


def line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / \
        sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def bootstrap(points: list[FitPoint], seed: int = 0) -> list[float]:
    """The intercepts of RESAMPLES lines, each through every point's median of its blocks
    drawn again with replacement; sorted."""
    rng = random.Random(seed)
    xs = [p.step_bytes for p in points]
    out = []
    for _ in range(RESAMPLES):
        ys = [statistics.median(rng.choices(p.step_s, k=len(p.step_s))) for p in points]
        out.append(line(xs, ys)[0])
    return sorted(out)


def _quantile(xs: list[float], q: float) -> float:
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def no_fit(points: list[FitPoint]) -> str | None:
    """Why no fixed cost can be fit through `points`, in a sentence's words (with each point
    chosen: its layers, depth, bytes and median time a step); None where one can."""
    chosen = chosen_points(points)
    if isinstance(chosen, str):
        return chosen
    chosen, how = chosen
    fixed, slope = line([p.step_bytes for p in chosen],
                        [statistics.median(p.step_s) for p in chosen])
    if slope > 0 and fixed >= 0:
        return None
    said = "; ".join(f"{p.layers} layers at depth {p.depth}: {p.step_bytes / 1e6:.4g} MB in "
                     f"{statistics.median(p.step_s) * 1e3:.4g} ms" for p in chosen)
    why = "the step times do not rise with the bytes" if slope <= 0 else \
        f"the line meets zero bytes below zero seconds ({fixed * 1e3:.3g} ms)"
    return f"{how}: {why} ({said})"


def fixed_cost_row(point: dict, points: list[FitPoint], loop_note: str) -> Row | None:
    """decode_fixed_ms: the intercept of a line through the chosen points' median seconds
    per step against the bytes each reads (what a step costs whatever it reads: launches,
    host reads, Python), its 95% bootstrap interval over the timed blocks, beside the rate
    the slope says it streams at; None where no fit can hold one (see chosen_points, or the
    times do not rise with the bytes, or the line crosses zero before the data)."""
    if no_fit(points) is not None:
        return None
    chosen, how = chosen_points(points)
    xs = [p.step_bytes for p in chosen]
    ys = [statistics.median(p.step_s) for p in chosen]
    fixed, slope = line(xs, ys)
    draws = bootstrap(chosen)
    lo, hi = _quantile(draws, (1 - CONFIDENCE) / 2), _quantile(draws, (1 + CONFIDENCE) / 2)
    ms = [d * 1e3 for d in (lo, hi)]
    stats = Stats(fixed * 1e3, _quantile(draws, 0.25) * 1e3, _quantile(draws, 0.75) * 1e3,
                  ms[0], ms[1], sum(len(p.step_s) for p in chosen), CONFIDENCE)
    share = fixed / statistics.fmean(ys)
    # Across layer counts, what each layer costs apart from its bytes (its launches, its
    # Python) grows with the bytes too: the line counts it in the slope, not the intercept.
    layers = ", and counts a layer's own overheads (launches, Python) with its bytes" \
        if len({p.layers for p in chosen}) > 1 else ""
    return Row("decode_fixed_ms", fixed * 1e3, "ms", point, stats, [],
               f"a line through {how}, seconds per step against the bytes each reads: "
               f"{fixed * 1e3:.3g} ms a step whatever it reads ({CONFIDENCE:.0%} interval "
               f"{ms[0]:.3g} to {ms[1]:.3g} ms, bootstrap over the timed blocks; "
               f"{share:.0%} of the mean step), beside {1 / slope / 1e9:.4g} GB/s streamed; "
               f"assumes {ASSUMPTION}{layers} ({loop_note})")
