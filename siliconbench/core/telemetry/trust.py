"""Which power and efficiency rows may be shown (power_trusted)."""

from __future__ import annotations

from siliconbench.core.results import Row

POWER_METRICS = ("power", "joules_per_sample", "samples_per_watt", "tflops_per_watt")


def power_trusted(row: Row) -> bool:
    """Whether a power or efficiency row may be shown: its power came from an energy counter
    over the point's timed blocks ("energy_counter") or from at least MIN_SAMPLES samples inside
    them ("power_samples"). Rows of older records carry neither flag: their power was the
    samples between two points' rows, often one 1 s sample taken while nothing ran (the H200
    records' 4.59 TFLOPS/W at 78.6 W), and is not shown. Other rows: True."""
    if row.metric not in POWER_METRICS:
        return True
    return row.value is not None and bool({"energy_counter", "power_samples"} & set(row.flags))
