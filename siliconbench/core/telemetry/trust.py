"""Which power and efficiency rows may be shown (power_trusted): siliconbench.core.results's
power_doubt, the one test every surface reads."""

from __future__ import annotations

from siliconbench.core.results import POWER_METRICS, Row, power_doubt

__all__ = ["POWER_METRICS", "power_trusted"]


def power_trusted(row: Row) -> bool:
    """Whether a power or efficiency row may be shown: its power came from an energy counter
    over the point's timed blocks or from 5 or more samples inside them
    (siliconbench.core.results.power_doubt says why not). Other rows: True."""
    return power_doubt(row) is None
