"""A guard against an upstream reference-count bug: with PySide6 6.12 and pyqtgraph 0.14 on
Python 3.11, pyqtgraph's widgets release references to None, True and False that they never
took. Measured here: every PlotWidget built takes ~129 from None for good, and every resize of
a plot ~8 from True (the window's charts together ~20 per resize event, and a live resize sends
dozens a second). Python 3.11's singletons are not immortal (3.12's are), and the interpreter
aborts ("none_dealloc", "bool_dealloc") when a count reaches zero: True starts near 5,000, so a
few hundred resizes would crash the app. Holding references keeps the counts far from zero;
`top_up` refills a hold that runs low, before every plot is built and on a timer. The hold is
never given back: a list of references was freed as the interpreter shut down, and a session
whose charts had released more than the singletons' own counts (one selection of a sustained
run: its panes are rebuilt, ~2,800 of None and ~175 of True) aborted as the app quit."""

from __future__ import annotations

import sys

SINGLETONS = (None, True, False)
HOLD = 200_000            # per singleton: ~1,500 plots or ~10,000 resize events' worth
LOW = HOLD // 2
TOP_UP_EVERY_MS = 5_000   # a live resize loses ~2,000 a second at most: far less than LOW


def _hold_for_good(obj: object, n: int) -> None:
    """n references to obj that nothing owns, so that none is released at shutdown either:
    CPython's object header starts with its reference count (3.11 here; 3.12 needs none)."""
    import ctypes
    ctypes.c_ssize_t.from_address(id(obj)).value += n


def top_up() -> bool:
    """Hold HOLD more references to each singleton whose count is below LOW; True when it
    did for any."""
    if sys.version_info >= (3, 12):
        return False
    low = [s for s in SINGLETONS if sys.getrefcount(s) < LOW]
    for s in low:
        _hold_for_good(s, HOLD)
    return bool(low)
