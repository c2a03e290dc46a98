"""The guard against PySide6/pyqtgraph releasing references to None, True and False they
never took (siliconbench/gui/singleton_refs.py): on Python 3.11 the interpreter aborts when one of those
counts reaches zero."""

from __future__ import annotations

import sys

import pytest

from siliconbench.gui import singleton_refs

needs_311 = pytest.mark.skipif(sys.version_info >= (3, 12),
                               reason="None, True and False are immortal from 3.12")


@needs_311
def test_charts_built_keep_none_far_from_zero(qtbot):
    from siliconbench.gui.charts.axes import plot_widget
    for _ in range(10):
        qtbot.addWidget(plot_widget())
    # plot_widget tops the hold up before it builds, and a build takes ~129 from None: the
    # count may end one build's worth under LOW (99,990 seen), never near zero. Without the
    # guard it is ~16,500 after ten builds in a bare QApplication.
    assert sys.getrefcount(None) >= singleton_refs.LOW - 1_000


@needs_311
def test_a_window_resized_again_and_again_keeps_true_far_from_zero(qtbot, window):
    """~20 of True's references go with every resize of the window's charts: with None alone
    held, the window aborted ("bool_dealloc") at its ~190th resize here, so 500 go well past
    it."""
    from tests.helpers.recorded import recorded
    window.charts.show_records([recorded("gemm-torch")])
    window.charts.setCurrentIndex(0)
    for i in range(500):
        window.resize(900 + (i % 2) * 300, 700)
        qtbot.wait(0)
        if i % 200 == 0:
            window.top_up_timer.timeout.emit()      # as the timer does every few seconds
    assert window.top_up_timer.isActive()
    assert window.top_up_timer.interval() == singleton_refs.TOP_UP_EVERY_MS
    for s in singleton_refs.SINGLETONS:
        assert sys.getrefcount(s) >= singleton_refs.LOW // 2, s


@needs_311
def test_the_hold_is_refilled_when_it_runs_low(monkeypatch):
    before = [sys.getrefcount(s) for s in singleton_refs.SINGLETONS]
    monkeypatch.setattr(singleton_refs, "LOW", max(before) + 1)   # as if each had run low
    assert singleton_refs.top_up()
    for s, count in zip(singleton_refs.SINGLETONS, before, strict=True):
        assert sys.getrefcount(s) >= count + singleton_refs.HOLD
    monkeypatch.setattr(singleton_refs, "LOW", 0)                 # plenty left: nothing to do
    assert not singleton_refs.top_up()
