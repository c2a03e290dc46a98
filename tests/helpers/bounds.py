"""A CPU's decode bound as a record or a row says it: the read and triad figures it names."""

from __future__ import annotations

import re

from siliconbench.core.kit.ceilings import MEASURED_READ, MEASURED_TRIAD


def bound_figures(detail: str) -> tuple[float, float]:
    """(read, triad) GB/s, as a CPU's decode bound's detail gives them (4 figures each)."""
    read = re.search(r"the read kernel \(s = sum\(a\)\) ([0-9.e+]+) GB/s", detail)
    triad = re.search(r"triad \(a = b \+ s\*c\) ([0-9.e+]+) GB/s", detail)
    assert read and triad, detail
    return float(read[1]), float(triad[1])


def assert_cpu_decode_bound(bound: dict) -> None:
    """A CPU's decode bound (the record's memory_bound) is the higher of the read and the
    triad it names, and its source says which."""
    read, triad = bound_figures(bound["detail"])
    assert f"{bound['gb_per_s']:.4g}" == f"{max(read, triad):.4g}"
    assert bound["source"] == (MEASURED_READ if read >= triad else MEASURED_TRIAD)
