"""The real window at its smallest (MIN_WINDOW, the sidebar shown or not) and at 1440x900,
with run records real runs wrote: Compare's chart stays whole in view and readable, and the
Results pane still shows a run. At the smallest the Results pane kept 166 px and Compare's
chart showed 60 px, the rest scrolled off under the reference's rows."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint

from tests.helpers.gui import show_compare, ten_sides
from tests.helpers.h200_records import h200
from tests.helpers.recorded import recorded

# What a person reads a plot by: its axes and two or three decades between them.
READABLE_PLOT_H = 140

SIZES = {"smallest with the sidebar": (True, None), "smallest": (False, None),
         "1440x900": (True, (1440, 900))}
CASES = {"two sides": lambda: [h200("h200-gemm"), recorded("gemm-torch")],
         "ten sides": ten_sides}


def in_view(widget, viewport) -> tuple[int, int]:
    """The rows of `widget` from its top to its bottom, in `viewport`'s coordinates."""
    top = widget.mapTo(viewport, QPoint(0, 0)).y()
    return top, top + widget.height()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("size", SIZES)
def test_compares_chart_is_whole_in_view_and_readable(window, qtbot, size, case):
    from siliconbench.gui.compare_view import MIN_CHART_H
    sidebar, wanted = SIZES[size]
    view = show_compare(window, qtbot, CASES[case](), sidebar, wanted)
    if wanted is None:
        assert window.size() == window.minimumSize()
    chart = view.current_chart()
    assert chart.has_data()
    # The chart, its legend and caption lie wholly in the tab's view: nothing to scroll to.
    top, bottom = in_view(chart, view.scroll.viewport())
    assert 0 <= top and bottom <= view.scroll.viewport().height()
    assert chart.height() >= MIN_CHART_H
    assert chart.plot.height() >= READABLE_PLOT_H
    # The verdicts above it show their header and a row.
    table = view.table
    assert table.viewport().height() >= table.rowHeight(0)
    # Results still lists a run to select.
    runs = window.results.view
    assert runs.viewport().height() >= runs.rowHeight(0)
    # The reference's controls stay in the tab: above the verdicts, or a scroll away under
    # the chart where the tab is short.
    assert view.add_reference_button.isVisible() and view.run_reference_button.isVisible()
    if view.is_short():
        box_top, _ = in_view(view.reference_box, view.scroll.viewport())
        assert box_top >= bottom
    else:
        assert wanted is not None         # 1440x900: the tab is laid out whole


def test_the_results_give_the_charts_room_first_and_keep_a_dragged_height(window, qtbot):
    """As the window shrinks, the Run Queue and Results pane gives up its room before the
    charts do; a height the user drags stays while the window keeps its size."""
    from siliconbench.gui.main_window import CHARTS_FIRST_H
    split = window.right_split
    window.show_sidebar(True)
    window.resize(1440, 900)
    qtbot.wait(20)
    window.resize(window.minimumSize())
    qtbot.wait(20)
    charts, below = split.sizes()
    least = window.bottom.minimumSizeHint().height()
    # Shrinking took from the lower pane first: it is at its least, or the charts at theirs.
    assert below == least or charts >= CHARTS_FIRST_H
    window.resize(1440, 900)
    qtbot.wait(20)
    split.moveSplitter(400, 1)          # the user makes Results taller
    qtbot.wait(20)
    assert abs(split.sizes()[0] - 400) <= split.handleWidth()
