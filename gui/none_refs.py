"""A guard against an upstream reference-count bug: with PySide6 6.x and pyqtgraph 0.14 on
Python 3.11, every PlotWidget built releases about 130 references to None that it never took
(measured: sys.getrefcount(None) falls by ~129 per widget and does not come back when the
widget is deleted). Python 3.11's None is not immortal (3.12's is), and the interpreter aborts
("none_dealloc") when that count reaches zero: a long session that draws a few hundred charts
would crash. Holding references to None keeps the count far from zero; `top_up` refills the
hold when the count runs low, so no number of charts ends the app."""

from __future__ import annotations

import sys

HOLD = 1_000_000          # ~7,700 plots' worth
LOW = HOLD // 2
_held: list[None] = []


def top_up() -> bool:
    """Hold HOLD more references when fewer than LOW are left; True when it did."""
    if sys.version_info >= (3, 12) or sys.getrefcount(None) >= LOW:
        return False
    _held.extend([None] * HOLD)
    return True
