"""The Compare tab, offscreen, on run records real runs wrote (tests/helpers/recorded.py): runs side by
side under their identities with verdicts that never read as equality when the samples cannot
tell, warnings folded away, report and chart export, published references explained and
repeatable, and the window's menu action."""

from __future__ import annotations

import csv
import io
import json

import pytest
from PySide6.QtCore import QSettings

from siliconbench.core import reference
from siliconbench.core.frameworks import DeviceInfo
from siliconbench.core.store import Store
from siliconbench.gui.compare_view import CompareView, reference_details
from tests.helpers.recorded import gemm_runs, recorded


def table(view: CompareView) -> list[dict[str, str]]:
    header = view.headers()
    return [{header[j]: view.table.item(i, j).text() for j in range(len(header))}
            for i in range(view.table.rowCount())]


def test_runs_of_one_machine_side_by_side_by_framework(view):
    """The two torch runs are repeats (one machine, device, framework and settings): one
    side that says it holds two runs; the MLX run is a side of its own."""
    recs = gemm_runs()
    view.set_records(recs)
    rows = table(view)
    assert [(r["Metric"], r["Point"]) for r in rows] == [
        ("Throughput (TFLOPS)", "dtype=float32 size=64"),
        ("Throughput (TFLOPS)", "dtype=float32 size=128")]
    assert view.headers()[3:] == ["A", "B", "B vs A"]
    # The sides are named by device and what sets them apart, never a hash.
    device = recs[0].device_label
    assert f"A = {device} · torch cpu · 2 runs" in view.summary.text()
    assert f"B = {device} · mlx cpu" in view.summary.text()
    for i, r in enumerate(rows):
        # The median in view, its interval and block count on hover.
        assert "[" not in r["A"] and r["A"].endswith(" TFLOPS") and float(r["A"].split()[0]) > 0
        assert "[" in view.table.item(i, 3).toolTip() and "blocks" in \
            view.table.item(i, 3).toolTip()
        for col in ("B vs A",):
            assert "×" in r[col] and not r[col].startswith("no significant")
            # Which side is ahead, in words: never a bare "0.000×".
            assert any(w in r[col] for w in ("faster", "slower")) and "0.00" not in r[col]
    # The table fits: no sideways scrolling at 1440 wide.
    assert view.table.horizontalScrollBar().maximum() == 0
    # A reference of another workload adds a side that shares no row: it takes no column,
    # and the line over the table says so.
    view.add_reference(infer_reference().id)
    assert view.headers()[5] == "C" and view.table.isColumnHidden(5)
    assert view.table.isColumnHidden(7) and not view.table.isColumnHidden(4)
    assert "C shares no result with another side and is not in the table" in \
        view.summary.text()
    view.clear_references()
    # A size sweep is drawn as overlaid curves, one per run the comparison used (each of the
    # torch side's two runs, issue 50: not its newer alone), named by their side, apart.
    chart = view.current_chart()
    assert chart is view.curves["tflops"] and chart.has_data()
    names = {s.name for s in chart.series}
    assert len(names) == 3
    assert sum(n.startswith(f"{device} · torch cpu · 2 runs · ") for n in names) == 2


def test_warnings_fold_away_under_one_line(view):
    view.set_records(gemm_runs())
    assert view.comparison.warnings           # torch vs mlx at least
    assert view.warnings_button.isVisible() and not view.warnings.isVisible()
    assert view.warnings_button.text().startswith(f"⚠ {len(view.comparison.warnings)} warning")
    view.warnings_button.setChecked(True)
    assert view.warnings.isVisible() and "Other framework" in view.warnings.text()
    # The verdict table comes before the chart, as tall as its rows up to half of the
    # room; the chart takes the rest.
    sizes = view.splitter.sizes()
    assert view.splitter.widget(0) is view.table
    assert sizes[0] == max(72, min(view.table_height(), sum(sizes) // 2)) and sizes[1] >= 200


def test_report_and_chart_export(view, tmp_path):
    recs = gemm_runs()[:2]
    view.set_records(recs)
    html, table_csv = tmp_path / "cmp.html", tmp_path / "cmp.csv"
    view.export_report(str(html))
    view.export_report(str(table_csv))
    verdicts = [r.cells[1].verdict for r in view.comparison.rows]
    text = html.read_text(encoding="utf-8")
    assert recs[0].identity in text and all(v in text for v in verdicts)
    lines = list(csv.DictReader(io.StringIO(table_csv.read_text(encoding="utf-8"))))
    assert {r["machine"] for r in lines} == {rec.identity for rec in recs}
    assert {r["verdict"] for r in lines} == {""} | set(verdicts)
    png, svg = tmp_path / "c.png", tmp_path / "c.svg"
    from siliconbench.gui.charts.export import export_chart
    export_chart(str(png), view.current_chart())
    export_chart(str(svg), view.current_chart())
    assert png.read_bytes()[:4] == b"\x89PNG" and "<svg" in svg.read_text(encoding="utf-8")


def infer_reference():
    return next(r for r in reference.references()
                if r.workload == "infer" and r.machine_label.startswith("MacBook Pro 14"))


def test_published_reference_compares_by_value_with_no_verdict(view):
    """The quick suite's inference run matches the published PyTorch figures."""
    mine = recorded("infer-torch-reference")
    view.set_records([mine])
    assert view.comparison is None and "two or more runs" in view.summary.text()
    ref = infer_reference()
    view.add_reference(ref.id)
    # The picker and the line under it describe the reference just compared.
    assert view.reference_combo.currentData() == ref.id
    assert ref.machine_label in view.reference_info.text()
    rows = table(view)
    throughput = next(r for r in rows if r["Metric"] == "Throughput (img/s)")
    verdict = throughput["B vs A"]
    assert "published" in verdict
    # Which side is faster, and by how much, though there are no statistics to test it.
    words, why = verdict.split(" · ", 1)
    assert words.endswith(("× faster", "× slower")) and why.startswith("no statistics")
    assert "[" not in throughput["B"]                # a published figure has no interval
    assert f"B = {ref.identity}" in view.summary.text()
    view.warnings_button.setChecked(True)
    assert "figure from" in view.warnings.text()
    assert view.current_chart() is view.bars and view.bars.has_data()
    view.clear_references()
    assert view.comparison is None


def test_a_reference_says_what_it_measured_and_can_be_run_here(view, qtbot):
    ref = infer_reference()
    view.reference_combo.setCurrentIndex(view.reference_combo.findData(ref.id))
    text = view.reference_info.text()
    assert "infer (model=resnet50 data=host batch_size=64) on torch mps" in text
    assert ref.machine_label in text and ref.provenance["source"] in text
    details = view.reference_info.toolTip()
    assert details == reference_details(ref) and "Throughput (img/s) at" in details
    # No device yet: nothing to run on.
    assert not view.run_reference_button.isEnabled()
    view.set_devices([DeviceInfo("torch", "cpu", "CPU", "cpu"),
                      DeviceInfo("mlx", "cpu", "CPU", "cpu")])
    assert view.device_combo.count() == 1          # infer runs on torch only
    with qtbot.waitSignal(view.run_requested) as sent:
        view.run_reference_button.click()
    (spec,) = sent.args[0]
    assert (spec.workload, spec.framework, spec.device) == ("infer", "torch", "cpu")
    assert spec.params == {"model": "resnet50", "batch_size": 64, "data": "host"}
    # A run that matches nothing says what to do, not what the user just did.
    view.set_records([recorded("infer-torch")])
    assert "Nothing to compare" in view.summary.text() and "Run It Here" in \
        view.summary.text()


def test_llm_runs_side_by_side_with_their_units_and_curves(view):
    """Two recorded tiny LLM runs (torch and MLX on this CPU): prefill and decode in tok/s,
    time to first token in ms (lower is faster), decode drawn over the depth with each run's
    memory bound; peak memory counted two ways is said to be."""
    recs = [recorded("llm-torch"), recorded("llm-mlx")]
    view.set_records(recs)
    rows = table(view)
    metrics = [r["Metric"] for r in rows]
    assert {"Prefill (tok/s)", "Time to first token (ms)", "Decode (tok/s)",
            "Peak memory (bytes)"} <= set(metrics)
    for r in rows:
        unit = {"Time to first token (ms)": " ms", "Peak memory (bytes)": "B"}.get(
            r["Metric"], " tok/s")
        assert r["A"].endswith(unit) and r["B"].endswith(unit), r
    ttft = [r for r in rows if r["Metric"] == "Time to first token (ms)"]
    for r, cell in zip(ttft, [c for c in view.comparison.rows if c.metric == "ttft_ms"],
                       strict=True):
        words = r["B vs A"].split(" · ")[0]
        if words.endswith(("faster", "slower")):   # a shorter time to the first token is faster
            assert words.endswith("faster") == (cell.cells[1].value < cell.cells[0].value)
    decode = view.chart_combo.findText("llm: Decode (tok/s)")
    assert decode >= 0
    view.chart_combo.setCurrentIndex(decode)
    chart = view.current_chart()
    assert chart is view.curves["decode_tokens_per_s"] and chart.has_data()
    assert [len(s.bounds) for s in chart.series] == [3, 3]
    view.warnings_button.setChecked(True)
    assert "Peak memory counted differently (llm)" in view.warnings.text()
    assert "process peak resident memory" in view.warnings.text()


def test_run_it_here_on_an_mlx_lm_reference_measures_the_points_it_published(view, qtbot):
    """Compare pairs rows on their points: the run Run It Here queues for each of mlx-lm's
    Qwen3-4B figures (prompt 2048, 128 tokens after it) makes exactly the published points."""
    from siliconbench.core.workloads import llm
    view.set_devices([DeviceInfo("mlx", "cpu", "CPU", "cpu")])
    for ref_id in ("pub-mlxlm-qwen3-4b-bf16", "pub-mlxlm-qwen3-4b-q8", "pub-mlxlm-qwen3-4b-q4"):
        [ref] = reference.find(ref_id)
        view.reference_combo.setCurrentIndex(view.reference_combo.findData(ref_id))
        with qtbot.waitSignal(view.run_requested) as sent:
            view.run_reference_button.click()
        (spec,) = sent.args[0]
        params = {p.name: p.default for p in llm.WORKLOAD.params} | spec.params
        base = llm.base_point(params)
        made = [base] + [{**base, "prompt": p} for p in params["prompts"]] + \
            [{**base, "depth": d, "gen_tokens": params["gen_tokens"]} for d in params["depths"]]
        assert sorted(json.dumps(m, sort_keys=True) for m in made) == \
            sorted(json.dumps(r.params, sort_keys=True) for r in ref.rows)
        assert (params["preset"], params["gen_tokens"]) == ("qwen3-4b", 128)


def test_window_compare_tab_follows_the_results_selection(qtbot, tmp_path):
    from siliconbench.gui.main_window import MainWindow
    store = Store(tmp_path / "home" / "results.sqlite3")
    for rec in gemm_runs()[:2]:
        store.save(rec)
    w = MainWindow(store, QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat))
    w.ask_before_closing = False
    qtbot.addWidget(w)
    w.show()
    w.results.reload()
    w.select_all_runs()
    w.menu_actions["compare"].trigger()
    assert w.charts.currentWidget() is w.compare
    assert w.compare.table.rowCount() == 2
    assert w.charts.current_chart() is w.compare.current_chart()   # File > Export Chart
    assert w.files.export_chart(str(tmp_path / "compare.png"))
    # The quick suite ends here: its run beside the published machines it matches.
    store.save(recorded("infer-torch-reference"))
    w.results.reload()
    w.live_runs.show_comparison(store.runs())
    assert w.charts.currentWidget() is w.compare
    assert [r.workload for r in w.results.selected_records()] == ["infer"]
    assert {r.id for r in w.compare.references} >= {infer_reference().id}
    assert any(r.metric == "samples_per_s" for r in w.compare.comparison.rows)
    store.close()


def test_the_quick_suite_ends_beside_the_published_m1_max_gemm_point(qtbot, tmp_path):
    """The first launch's ending, on the run the quick suite's last entry really made
    (torch float32 N=8192, recorded): Compare holds it against the M1 Max GPU sweep."""
    from siliconbench.gui.main_window import MainWindow
    store = Store(tmp_path / "home" / "results.sqlite3")
    quick_8192 = recorded("gemm-torch-quick-8192")
    for rec in (recorded("gemm-torch"), quick_8192):
        store.save(rec)
    w = MainWindow(store, QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat))
    w.ask_before_closing = False
    qtbot.addWidget(w)
    w.results.reload()
    w.live_runs.show_comparison(store.runs())
    assert w.charts.currentWidget() is w.compare
    assert [r.id for r in w.results.selected_records()] == [quick_8192.id]
    assert [r.id for r in w.compare.references] == ["pub-tfmetal-gemm-m1max32"]
    [row] = table(w.compare)
    assert row["Metric"] == "Throughput (TFLOPS)" and "size=8192" in row["Point"]
    assert "published" in row["B vs A"]
    store.close()


@pytest.mark.parametrize("case", ["bars: a run and a published figure", "curves: three runs"])
def test_the_chart_has_room_and_no_point_or_bar_under_its_legend(view, qtbot, case):
    """What the README's Compare screenshot showed: a one-row comparison left the chart 60 px
    tall, its legend over the bars. The chart takes the room the verdicts do not need, and
    the legend lies beside the plot, clear of every point and bar."""
    from PySide6.QtCore import QPointF
    if case.startswith("bars"):
        view.set_records([recorded("infer-torch-reference")])
        view.add_reference(infer_reference().id)
    else:
        view.set_records(gemm_runs())
    chart = view.current_chart()
    qtbot.waitUntil(lambda: chart.plot_item.vb.height() > 80)
    qtbot.wait(50)   # the redraw that follows the view's resize
    vb = chart.plot_item.vb
    assert chart.has_data() and vb.height() >= 150
    (_, _), (_, data_top) = vb.childrenBounds()
    top_on_screen = vb.mapViewToScene(QPointF(0, data_top)).y()
    assert chart.legend.isVisible() and len(chart.legend_names()) >= 2
    assert chart.legend.geometry().left() >= chart.plot.geometry().right()
    assert vb.sceneBoundingRect().top() <= top_on_screen
