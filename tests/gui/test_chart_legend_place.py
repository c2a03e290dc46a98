"""A chart's legend beside its plot where the chart is wide, under it (three lines tall at
most, scrolling) where it is narrow, and back beside it when the chart widens again: the
chart and its legend agree on where it lies through the legend's own `below`."""

from __future__ import annotations

from siliconbench.gui.charts.bars import BarChart
from siliconbench.gui.charts.chart import NARROW_CHART_W
from tests.helpers.recorded import recorded

TRAIN = ("train-torch", "train-mlx", "train-tensorflow")


def beside(chart) -> bool:
    plot, legend = chart.plot.geometry(), chart.legend.geometry()
    return legend.left() >= plot.right() and legend.top() < plot.bottom()


def under(chart) -> bool:
    plot, legend = chart.plot.geometry(), chart.legend.geometry()
    return legend.top() >= plot.bottom() and legend.width() >= plot.width()


def test_the_legend_moves_under_a_narrow_chart_and_back(qtbot):
    chart = BarChart()
    qtbot.addWidget(chart)
    chart.set_records([recorded(stem) for stem in TRAIN])
    legend = chart.legend
    assert legend.count() == len(TRAIN) > 2
    chart.resize(NARROW_CHART_W + 340, 420)
    chart.show()
    qtbot.waitExposed(chart)
    qtbot.waitUntil(lambda: beside(chart))
    assert not legend.below and 120 <= legend.width() <= 360

    chart.resize(NARROW_CHART_W - 100, 420)
    qtbot.waitUntil(lambda: under(chart))
    assert legend.below
    three_lines = 3 * max(14, legend.sizeHintForRow(0)) + 2 * legend.frameWidth() + 2
    assert legend.height() == three_lines

    chart.set_records([recorded("train-torch")])     # fewer lines: the legend shrinks to one
    assert legend.count() == 1
    qtbot.waitUntil(lambda: legend.height() < three_lines)

    chart.resize(NARROW_CHART_W + 340, 420)
    qtbot.waitUntil(lambda: beside(chart))
    assert not legend.below and 120 <= legend.width() <= 360
