"""Summary statistics of repeated measurements: median, quartiles and a distribution-free
confidence interval of the median (timings are skewed, so no normal-theory intervals)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Stats:
    """The summary of a point's timed samples: median, spread and confidence interval."""
    median: float
    p25: float
    p75: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float = 0.95

    @property
    def rel_iqr(self) -> float:
        """Interquartile range over the median: the protocol's measure of spread."""
        if self.median == 0:
            return math.inf if self.p75 != self.p25 else 0.0
        return abs(self.p75 - self.p25) / abs(self.median)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Stats:
        return cls(**{k: d[k] for k in ("median", "p25", "p75", "ci_low", "ci_high", "n")},
                   confidence=d.get("confidence", 0.95))


def _sign_test_index(n: int, alpha: float) -> int:
    """Largest j with P(X <= j) <= alpha/2 for X ~ Binomial(n, 1/2), or -1. Summed in log
    space, term by term, so it stays linear in n and never overflows."""
    log_norm = math.lgamma(n + 1) - n * math.log(2)
    cdf, j = 0.0, -1
    for i in range(n // 2):
        cdf += math.exp(log_norm - math.lgamma(i + 1) - math.lgamma(n - i + 1))
        if cdf > alpha / 2:
            break
        j = i
    return j


def median_ci(sorted_samples: list[float], confidence: float = 0.95) -> tuple[float, float]:
    """Order-statistic interval [x_(j), x_(n-1-j)] that covers the median with at least
    `confidence` (the sign-test interval). Too few samples for that confidence: the range."""
    xs = sorted_samples
    n = len(xs)
    j = _sign_test_index(n, 1 - confidence)
    if j < 0:
        return xs[0], xs[-1]
    return xs[j], xs[n - 1 - j]


def rel_iqr(samples: list[float]) -> float:
    """IQR / median without the rest of the summary (the timing loop asks after every block)."""
    if len(samples) < 2:
        return 0.0
    import statistics  # here, not above: the app's window imports this module before its paint
    p25, p50, p75 = statistics.quantiles(samples, n=4, method="inclusive")
    return abs(p75 - p25) / abs(p50) if p50 else math.inf


def summarize(samples: list[float], confidence: float = 0.95) -> Stats:
    if not samples:
        raise ValueError("no samples to summarise")
    xs = sorted(float(s) for s in samples)
    if len(xs) == 1:
        x = xs[0]
        return Stats(x, x, x, x, x, 1, confidence)
    import statistics
    p25, p50, p75 = statistics.quantiles(xs, n=4, method="inclusive")
    lo, hi = median_ci(xs, confidence)
    return Stats(p50, p25, p75, lo, hi, len(xs), confidence)
