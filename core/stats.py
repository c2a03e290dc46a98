"""Summary statistics of repeated measurements: median, quartiles and a distribution-free
confidence interval of the median (timings are skewed, so no normal-theory intervals)."""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Stats:
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
    def from_dict(cls, d: dict) -> "Stats":
        return cls(**{k: d[k] for k in ("median", "p25", "p75", "ci_low", "ci_high", "n")},
                   confidence=d.get("confidence", 0.95))


def _binom_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


def median_ci(sorted_samples: list[float], confidence: float = 0.95) -> tuple[float, float]:
    """Order-statistic interval [x_(j), x_(n-1-j)] that covers the median with at least
    `confidence` (the sign-test interval). Too few samples for that confidence: the range."""
    xs = sorted_samples
    n = len(xs)
    alpha = 1 - confidence
    j = -1
    # Largest j with P(X <= j) <= alpha/2; the interval is then [x_(j), x_(n-1-j)] 0-based.
    while j + 1 < n // 2 and _binom_cdf(j + 1, n) <= alpha / 2:
        j += 1
    if j < 0:
        return xs[0], xs[-1]
    return xs[j], xs[n - 1 - j]


def summarize(samples: list[float], confidence: float = 0.95) -> Stats:
    if not samples:
        raise ValueError("no samples to summarise")
    xs = sorted(float(s) for s in samples)
    if len(xs) == 1:
        x = xs[0]
        return Stats(x, x, x, x, x, 1, confidence)
    p25, p50, p75 = statistics.quantiles(xs, n=4, method="inclusive")
    lo, hi = median_ci(xs, confidence)
    return Stats(p50, p25, p75, lo, hi, len(xs), confidence)
