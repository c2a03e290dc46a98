"""The Compare tab, offscreen: constructed runs of two machines side by side with verdicts and
warnings, report and chart export, published references, and the window's menu action."""

from __future__ import annotations

import csv
import io

import pytest
from PySide6.QtCore import QSettings

from core import reference
from core.store import Store
from gui.compare_view import CompareView
from tests.sample_records import gemm_run, infer_run


@pytest.fixture
def view(qtbot):
    v = CompareView()
    qtbot.addWidget(v)
    v.resize(1200, 600)
    v.show()
    return v


def runs():
    """A fast machine and one at half its speed with another torch version."""
    return [gemm_run("Studio", 10.0, created_at="2024-06-01T10:00:00+00:00"),
            gemm_run("Air", 5.0, torch="2.5.0", created_at="2024-06-02T10:00:00+00:00")]


def table(view: CompareView) -> list[dict[str, str]]:
    header = view.headers()
    return [{header[j]: view.table.item(i, j).text() for j in range(len(header))}
            for i in range(view.table.rowCount())]


def test_two_machines_side_by_side_with_verdicts_warnings_and_curves(view):
    view.set_records(runs())
    rows = table(view)
    assert [(r["Metric"], r["Point"]) for r in rows] == [
        ("tflops", "size=1024 dtype=float32"), ("tflops", "size=2048 dtype=float32")]
    assert view.headers()[4:] == ["Studio", "Air", "Air: ratio", "Air: verdict"]
    for r in rows:
        assert r["Air: verdict"] == "slower"
        assert r["Air: ratio"] == "0.500×"
        assert "[" in r["Studio"]                       # the median with its interval
    assert "Other torch version (gemm): Studio 2.4.1, Air 2.5.0." in view.warnings.text()
    assert view.warnings.isVisible()
    # A size sweep is drawn as overlaid curves, one per machine.
    assert view.current_chart() is view.curves["tflops"]
    assert view.current_chart().has_data() and len(view.current_chart().series) == 2


def test_report_and_chart_export(view, tmp_path):
    view.set_records(runs())
    html, table_csv = tmp_path / "cmp.html", tmp_path / "cmp.csv"
    view.export_report(str(html))
    view.export_report(str(table_csv))
    text = html.read_text(encoding="utf-8")
    assert "Studio vs Air" in text and "slower" in text and "other torch version" in text
    lines = list(csv.DictReader(io.StringIO(table_csv.read_text(encoding="utf-8"))))
    assert {(r["machine"], r["verdict"]) for r in lines} == {("Studio", ""), ("Air", "slower")}
    png, svg = tmp_path / "c.png", tmp_path / "c.svg"
    from gui.plots import export_chart
    export_chart(str(png), view.current_chart())
    export_chart(str(svg), view.current_chart())
    assert png.read_bytes()[:4] == b"\x89PNG" and "<svg" in svg.read_text(encoding="utf-8")


def test_published_reference_compares_by_value_with_no_verdict(view):
    mine = infer_run("Mine", 300.0)
    view.set_records([mine])
    assert view.comparison is None and "two or more runs" in view.summary.text()
    ref = next(r for r in reference.references()
               if r.workload == "infer" and r.machine_label.startswith("MacBook Pro 14"))
    view.add_reference(ref.id)
    rows = table(view)
    label = f"{ref.machine_label} (published)"
    throughput = next(r for r in rows if r["Metric"] == "samples_per_s")
    verdict = throughput[f"{label}: verdict"]
    assert "published" in verdict
    assert not verdict.startswith(("faster", "slower", "no significant"))
    assert "[" not in throughput[label]                # a published figure has no interval
    assert "figure from" in view.warnings.text()
    # Bars for a model point; the published side is drawn without whiskers.
    assert view.current_chart() is view.bars and view.bars.has_data()
    view.clear_references()
    assert view.comparison is None


def test_window_compare_tab_follows_the_results_selection(qtbot, tmp_path):
    from gui.main_window import MainWindow
    store = Store(tmp_path / "home" / "results.sqlite3")
    for rec in runs():
        store.save(rec)
    w = MainWindow(store, QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat))
    w.ask_before_closing = False
    qtbot.addWidget(w)
    w.show()
    w.results.reload()
    w.select_all_runs()
    w.compare_action.trigger()
    assert w.charts.currentWidget() is w.compare
    assert w.compare.table.rowCount() == 2
    assert w.charts.current_chart() is w.compare.current_chart()   # File > Export Chart
    assert w.export_chart(str(tmp_path / "compare.png"))
    store.close()
