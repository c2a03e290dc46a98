"""The guard against PySide6/pyqtgraph releasing references to None they never took
(gui/none_refs.py): on Python 3.11 the interpreter aborts when None's count reaches zero."""

from __future__ import annotations

import sys

import pytest

from gui import none_refs

needs_311 = pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from 3.12")


@needs_311
def test_charts_built_keep_none_far_from_zero(qtbot):
    from gui.plots import plot_widget
    for _ in range(10):
        qtbot.addWidget(plot_widget())
    assert sys.getrefcount(None) >= none_refs.LOW


@needs_311
def test_the_hold_is_refilled_when_it_runs_low(monkeypatch):
    before = sys.getrefcount(None)
    monkeypatch.setattr(none_refs, "LOW", before + 1)   # as if the count had run low
    assert none_refs.top_up()
    assert sys.getrefcount(None) >= before + none_refs.HOLD
    monkeypatch.setattr(none_refs, "LOW", 0)            # plenty left: nothing to do
    assert not none_refs.top_up()
