"""The scaling chart on runs the scaling workload really recorded (tests/data/records): the
points, the ideal linear line from one worker and the efficiency written at each point are
the record's own figures."""

import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt

from siliconbench.core.numbers import percent
from siliconbench.gui.chart_series import SCALING, chart_of, scaling_series
from siliconbench.gui.charts.panel import ChartPanel
from tests.helpers.recorded import recorded

STEMS = ["scaling-mlx", "scaling-torch"]


def rows_of(rec, metric):
    return {r.params["world_size"]: r.value for r in rec.rows if r.metric == metric}


@pytest.mark.parametrize("stem", STEMS)
def test_the_series_is_total_throughput_against_n_times_one_worker(stem):
    rec = recorded(stem)
    total = rows_of(rec, "samples_per_s")
    [s] = scaling_series([rec])
    assert s.workers() == sorted(total) == [1, 2]
    assert [r.value for r in s.rows] == [total[1], total[2]]
    assert s.ideal() == [total[1], 2 * total[1]]
    # The chart's efficiency is the workload's own scaling_efficiency row.
    efficiency = rows_of(rec, "scaling_efficiency")
    assert s.efficiency() == pytest.approx([efficiency[1], efficiency[2]])
    assert {chart_of(rec.workload, r) for r in rec.rows} == {SCALING, None}


@pytest.mark.parametrize("stem", STEMS)
def test_the_chart_draws_points_ideal_line_and_efficiencies(qtbot, stem):
    rec = recorded(stem)
    panel = ChartPanel()
    qtbot.addWidget(panel)
    panel.update_record(rec)
    chart = panel.charts[SCALING]
    assert panel.currentIndex() == 0               # the tab in front is the user's
    panel.setCurrentWidget(chart)
    assert chart.has_data() and chart.point_count() == 2
    items = chart.plot_item.items
    curves = [i for i in items if isinstance(i, pg.PlotDataItem)]
    total = rows_of(rec, "samples_per_s")
    measured = [c for c in curves if c.opts["pen"].style() == Qt.PenStyle.SolidLine]
    dashed = [c for c in curves if c.opts["pen"].style() == Qt.PenStyle.DashLine]
    assert [list(c.getData()[1]) for c in measured] == [[total[1], total[2]]]
    assert [list(c.getData()[1]) for c in dashed] == [[total[1], 2 * total[1]]]
    labels = [i.toPlainText() for i in items if isinstance(i, pg.TextItem)]
    efficiency = rows_of(rec, "scaling_efficiency")
    assert labels == [percent(efficiency[1]), percent(efficiency[2])]
    assert chart.plot.getAxis("left").labelText == "Total throughput (img/s)"


def test_the_published_mac_studio_figures_draw_as_linear_scaling(qtbot):
    """WWDC22's Horovod demo: about 200 / 400 / 800 images/s on 1 / 2 / 4 Mac Studios."""
    from siliconbench.core.reference import find
    [ref] = find("pub-scaling-wwdc22")
    assert ref.source == "published" and "approximate" in ref.provenance["settings"]
    [s] = scaling_series([ref])
    assert s.workers() == [1, 2, 4] and s.ideal() == [200, 400, 800]
    assert s.efficiency() == [100, 100, 100]
    panel = ChartPanel()
    qtbot.addWidget(panel)
    panel.show_records([ref, recorded("scaling-torch")])
    chart = panel.charts[SCALING]
    assert chart.point_count() == 5
    labels = [i.toPlainText() for i in chart.plot_item.items if isinstance(i, pg.TextItem)]
    assert labels[:3] == ["100%"] * 3
