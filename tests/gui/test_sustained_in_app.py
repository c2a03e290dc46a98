"""The sustained mode in the window, on the sustained runs this machine really recorded
(tests/data/sustained): selecting one under Results offers the Sustained tab and brings it
forward with its panes; a run without intervals hides it again; Run > Run the Sustained Check
asks with the check's time, then queues the suite's runs; the interval rows fold into one line
in the table and Run Details until asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QMessageBox

from siliconbench.core.frameworks import DeviceInfo
from siliconbench.core.results import RunRecord
from siliconbench.core.suites import expand, load_suites
from siliconbench.gui.row_table import RowTable
from siliconbench.gui.run_detail import RunDetail, record_text
from tests.helpers.recorded import recorded

HERE = Path(__file__).parents[1] / "data" / "sustained"
GPU = DeviceInfo("torch", "cuda:0", "Test GPU", "gpu", 80 * 2**30)
CPU = DeviceInfo("torch", "cpu", "Test CPU", "cpu", 8 * 2**30)


def record(name: str) -> RunRecord:
    return RunRecord.from_dict(json.loads((HERE / name).read_text("utf-8")))


def _select(window, store, recs: list[RunRecord]) -> None:
    for rec in recs:
        store.save(rec)
    window.results.reload()
    window.results.select_ids({r.id for r in recs})
    assert {r.id for r in window.results.selected_records()} == {r.id for r in recs}


def _visible(charts) -> list[str]:
    return [charts.tabText(i) for i in range(charts.count()) if charts.isTabVisible(i)]


@pytest.mark.parametrize("name", ["gemm-cpu-1min.json", "llm-cpu-1min.json"])
def test_selecting_a_sustained_run_shows_the_sustained_chart(qtbot, window, store, name):
    charts = window.charts
    assert "Sustained" not in _visible(charts)       # nothing sustained looked at yet
    rec = record(name)
    _select(window, store, [rec])
    assert "Sustained" in _visible(charts)
    assert charts.currentWidget() is charts.sustained   # brought forward over a chart
    chart = charts.sustained
    assert chart.isVisible() and not chart.empty.isVisibleTo(chart)
    # Throughput on top and the clock this VM reported below, x-linked to it.
    assert list(chart.plots) == ["throughput", "clock"]
    assert chart.plots["clock"].getViewBox().linkedView(pg.ViewBox.XAxis) is \
        chart.plots["throughput"].getViewBox()
    [entry] = rec.telemetry["sustained"]
    curves = [i for i in chart.plots["throughput"].items if isinstance(i, pg.PlotDataItem)]
    assert list(curves[0].getData()[1]) == [v for _, v in entry["intervals"]]
    assert "Clock" in chart.pane_titles()[1]
    # One y-axis width in every pane: their time axes line up under each other.
    qtbot.waitUntil(lambda: len({p.getAxis("left").width() for p in chart.plots.values()})
                    == 1, timeout=5_000)
    # The workload's own chart is still there beside it.
    usual = "TFLOPS" if rec.workload == "gemm" else "LLM"
    assert usual in _visible(charts)


def test_a_run_without_intervals_hides_the_tab_and_shows_its_own_chart(qtbot, window, store):
    charts = window.charts
    plain = recorded("gemm-torch")
    _select(window, store, [record("gemm-cpu-1min.json")])
    assert charts.currentWidget() is charts.sustained
    _select(window, store, [plain])
    assert "Sustained" not in _visible(charts)
    assert charts.currentWidget() is charts.tab_of("tflops")
    # The table or Compare being read stays in front when a sustained run is selected.
    charts.setCurrentWidget(charts.table)
    _select(window, store, [record("llm-cpu-1min.json")])
    assert "Sustained" in _visible(charts) and charts.currentWidget() is charts.table


def _answer(qtbot, window, button_text: str | None) -> QMessageBox:
    qtbot.waitUntil(lambda: any(isinstance(w, QMessageBox) and w.isVisible()
                                for w in window.findChildren(QMessageBox)), timeout=5_000)
    box = next(w for w in window.findChildren(QMessageBox) if w.isVisible())
    if button_text is not None:
        next(b for b in box.buttons() if b.text() == button_text).click()
    return box


def test_the_menu_item_asks_with_the_checks_time_then_queues_its_runs(qtbot, window,
                                                                      monkeypatch):
    monkeypatch.setattr(window.queue, "_start_next", lambda: None)   # queued, never run
    window.devices.set_devices([CPU, GPU], {"torch": "test"})
    entry = window.menu_actions["sustained_check"]
    assert entry in window.menus["Run"].actions()
    assert entry.text() == "Run the Sustained Check…"
    entry.trigger()
    box = _answer(qtbot, window, None)
    # 10 min of GEMM then 5 min of decode on the one GPU: 15 min, said before anything runs.
    assert box.text() == "The Sustained check takes about 15 min on Test GPU."
    assert window.queue.jobs == []
    next(b for b in box.buttons() if b.text() == "Run the Sustained Check").click()
    qtbot.waitUntil(lambda: len(window.queue.jobs) == 2, timeout=5_000)
    specs = expand("sustained", [CPU, GPU])
    assert [j.spec for j in window.queue.jobs] == specs
    assert all(j.spec.device == "cuda:0" and j.state == "queued" for j in window.queue.jobs)
    title = load_suites()["sustained"]["title"]
    assert all(j.title.startswith(f"{title} · ") for j in window.queue.jobs)


def test_cancel_queues_nothing_and_a_cpu_only_machine_is_told_why(qtbot, window, monkeypatch):
    monkeypatch.setattr(window.queue, "_start_next", lambda: None)
    window.menu_actions["sustained_check"].trigger()      # no device list yet: said so
    assert "once the devices are found" in window.statusBar().currentMessage()
    assert not any(w.isVisible() for w in window.findChildren(QMessageBox))
    window.devices.set_devices([CPU, GPU], {"torch": "test"})
    window.menu_actions["sustained_check"].trigger()
    _answer(qtbot, window, "Cancel")
    qtbot.waitUntil(lambda: not any(w.isVisible() for w in window.findChildren(QMessageBox)))
    assert window.queue.jobs == []
    window.devices.set_devices([CPU], {"torch": "test"})
    window.menu_actions["sustained_check"].trigger()
    box = _answer(qtbot, window, None)
    assert "runs on GPUs" in box.text() and "Duration" in box.text()
    assert window.queue.jobs == []


def test_interval_rows_fold_into_one_line_until_asked(qtbot):
    rec = record("gemm-cpu-1min.json")
    intervals = [r for r in rec.rows if r.metric == "interval"]
    assert len(intervals) == 12
    table = RowTable()
    qtbot.addWidget(table)
    table.set_records([rec])
    assert table.rowCount() == len(rec.rows) - len(intervals) + 1
    headers = [table.horizontalHeaderItem(j).text() for j in range(table.columnCount())]
    assert "t_s" not in headers
    value, note = headers.index("Value"), headers.index("Note")
    [line] = [i for i in range(table.rowCount()) if "interval figures" in
              table.item(i, note).text()]
    low, high = min(r.value for r in intervals), max(r.value for r in intervals)
    assert table.item(line, value).text() == f"{low:.3g}–{high:.3g} TFLOPS"
    detail = RunDetail(rec)
    qtbot.addWidget(detail)
    assert detail.rows.rowCount() == table.rowCount()
    assert detail.each_interval.isVisibleTo(detail) and "(12)" in detail.each_interval.text()
    detail.each_interval.setChecked(True)
    assert detail.rows.rowCount() == len(rec.rows)
    # Copy keeps every interval's figure.
    text = record_text(rec)
    assert all(r.note in text for r in intervals) and "interval figures" not in text
    intervals[3].params["t_s"] = "soon"          # an imported file's: still one line
    table.set_records([rec])
    assert table.rowCount() == len(rec.rows) - len(intervals) + 1
    plain = RunDetail(recorded("gemm-torch"))
    qtbot.addWidget(plain)
    assert not plain.each_interval.isVisibleTo(plain)


def test_runs_of_different_units_are_drawn_against_their_own_burst(qtbot, window, store):
    """A GEMM's 0.013 TFLOPS beside a decode's 6 tok/s on one axis was a flat line at zero:
    selected together, each is drawn as a share of its own burst."""
    gemm, llm = record("gemm-cpu-1min.json"), record("llm-cpu-1min.json")
    _select(window, store, [gemm, llm])
    chart = window.charts.sustained
    top = chart.plots["throughput"]
    assert top.getAxis("left").labelText == "Throughput (× its burst)"
    drawn = [list(c.getData()[1]) for c in top.items if isinstance(c, pg.PlotDataItem)]
    for rec in (gemm, llm):
        [e] = rec.telemetry["sustained"]
        for want in ([v / e["burst"] for _, v in e["intervals"]],
                     [e["sustained"] / e["burst"]] * 2):   # its sustained line, at the ratio
            assert any(len(c) == len(want) and c == pytest.approx(want) for c in drawn), want
    assert "Decode (tiny" in chart.caption.text() and "decode_tokens_per_s" not in \
        chart.caption.text()


def test_results_name_a_sustained_run_and_the_precision_it_measured():
    """The record's params keep GEMM's default dtypes (four), but sustained mode measured
    float32 alone: Results said 'float32, float16, bfloat16, float64' and nothing of the
    minute the run lasted."""
    from siliconbench.gui.results_browser import workload_text
    assert workload_text(record("gemm-cpu-1min.json")) == \
        "Matrix multiply (TFLOPS) · float32 · sustained 1 min"
    assert workload_text(record("llm-cpu-1min.json")).endswith(" · sustained 1 min")
    assert "sustained" not in workload_text(recorded("gemm-torch"))


def test_export_chart_writes_the_sustained_tab(qtbot, window, store, tmp_path):
    """File > Export Chart with the Sustained tab in front said 'Nothing to export' (it was
    no Chart the exporter knew): it writes the panes as PNG and SVG."""
    from PySide6.QtGui import QImage
    _select(window, store, [record("gemm-cpu-1min.json")])
    assert window.charts.currentWidget() is window.charts.sustained
    assert window.charts.can_export()
    png, svg = tmp_path / "sustained.png", tmp_path / "sustained.svg"
    assert window.files.export_chart(str(png)) and window.files.export_chart(str(svg))
    image = QImage(str(png))
    assert not image.isNull() and image.width() >= 2 * 640
    text = svg.read_text("utf-8")
    assert "<svg" in text and "Clock" in text and "Time since the timed blocks began" in text


SHOW_AND_QUIT = """
import json, sys
from PySide6.QtWidgets import QApplication
from siliconbench.core.results import RunRecord
from siliconbench.core.store import Store
from siliconbench.gui.main_window import MainWindow
app = QApplication(["SiliconBench"])
window = MainWindow(Store())
window.ask_before_closing = False
window.resize(1440, 900)
window.show()
rec = RunRecord.from_dict(json.loads(open(sys.argv[1], encoding="utf-8").read()))
window.store.save(rec)
window.results.reload()
window.results.select_ids({rec.id})
for _ in range(40):
    app.processEvents()
assert window.charts.currentWidget() is window.charts.sustained
window.close()
print("closed", flush=True)
"""


def test_the_app_quits_cleanly_after_drawing_a_sustained_run(tmp_path):
    """Drawing the Sustained chart releases thousands of references to None and True that
    pyqtgraph never took (siliconbench/gui/singleton_refs.py): the hold that made up for them
    was freed at shutdown, and the interpreter aborted as the app quit (exit code 134)."""
    import os
    import subprocess
    import sys
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "SILICONBENCH_HOME": str(tmp_path),
           "PYTHONPATH": str(Path(__file__).parents[2])}
    done = subprocess.run([sys.executable, "-c", SHOW_AND_QUIT,
                           str(HERE / "llm-cpu-1min.json")], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and "closed" in done.stdout, done.stderr[-2000:]


def test_the_same_runs_are_not_drawn_again(qtbot):
    """A live run's rows redraw the panel: the Sustained panes (costly to rebuild) stay as
    they are while its runs and their rows are the same, and are rebuilt when they change."""
    from siliconbench.gui.charts.sustained import SustainedChart
    chart = SustainedChart()
    qtbot.addWidget(chart)
    rec = record("gemm-cpu-1min.json")
    chart.set_records([rec])
    top = chart.plots["throughput"]
    chart.set_records([record("gemm-cpu-1min.json")])
    assert chart.plots["throughput"] is top
    chart.set_records([rec, record("llm-cpu-1min.json")])
    assert chart.plots["throughput"] is not top
    assert chart.plots["throughput"].getAxis("left").labelText == "Throughput (× its burst)"


@pytest.mark.parametrize("spoil", [
    lambda e: e.clear(),                                   # no keys at all
    lambda e: e.update(intervals=[["0", "fast"]]),         # strings for figures
    lambda e: e.update(burst=0),                           # a burst of zero: nothing to divide
    lambda e: e.update(intervals=[[0, float("nan")]]),
    lambda e: e.update(point=None),
])
def test_an_imported_file_with_unreadable_sustained_data_is_left_out_not_fatal(qtbot, spoil):
    """telemetry["sustained"] is open in the record schema: a file that fills it with
    anything is said to be left out, and the other runs are drawn."""
    from siliconbench.gui.charts.sustained import SustainedChart
    bad, good = record("gemm-cpu-1min.json"), record("llm-cpu-1min.json")
    spoil(bad.telemetry["sustained"][0])
    chart = SustainedChart()
    qtbot.addWidget(chart)
    chart.set_records([bad, good])
    assert "throughput" in chart.plots
    assert f"unreadable: {bad.identity}" in chart.caption.text()
    assert "Decode" in chart.caption.text()
    chart.set_records([bad])
    assert chart.plots == {} and "unreadable" in chart.caption.text()
