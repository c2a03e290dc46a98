"""Every view on what real runs produce: run records that real, tiny runs of each workload on
each framework wrote (tests/helpers/recorded.py) through the charts, the row table, Results, the
queue and Compare; and one real run end to end through the real window. Asserts what a
person sees: the chart holds the run's points, legend names differ, the headline carries the
workload's unit, the verdict text matches the statistics."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from siliconbench.core.catalogue import catalogue, headline, listed
from siliconbench.core.compare_stats import (
    ALPHA,
    FAR_APART,
    INCONCLUSIVE,
    NO_SAMPLES_VERDICT,
    SAME,
    Side,
    compare,
    smallest_p,
)
from siliconbench.core.numbers import (
    interval,
    metric_title,
    number,
    percent,
    spread_text,
    value_text,
)
from siliconbench.core.results import FLAGS
from siliconbench.core.suites import summary_lines
from siliconbench.gui.chart_series import BARS, SCALING, chart_of
from siliconbench.gui.charts.curve import bound_text
from siliconbench.gui.charts.panel import ChartPanel
from siliconbench.gui.row_text import headline_text
from tests.helpers.recorded import every_run, recorded, stems

# What a person reads as each workload's headline unit.
HEADLINE_UNITS = {"gemm": "TFLOPS", "bandwidth": "GB/s", "train": ("img/s", "seq/s"),
                  "infer": "img/s", "mlp": "s", "memory": "samples", "llm": "tok/s",
                  "allreduce": "GB/s", "scaling": "img/s", "serve": "tok/s"}


def test_the_records_cover_every_workload_on_every_framework_it_runs_here():
    """Every framework that can run on this kind of machine: Core ML runs on macOS only, so
    no real run of it can be recorded on Linux."""
    from siliconbench.core.frameworks import framework as info
    from siliconbench.core.frameworks import runs_on
    made = {(r.workload, r.framework) for r in every_run()}
    for w in listed():  # hidden ones (a world of the scaling workload) only run inside others
        for framework in runs_on(w):
            if framework == "coreml" and not info(framework).installed():
                continue
            assert (w.name, framework) in made, (
                f"no recorded run of {w.name} on {framework}: add one to RUNS in "
                f"tests/data/records/make_records.py and record it (README: Add a workload, 4)")
    assert all(r.status == "ok" and r.rows for r in every_run())


@pytest.mark.parametrize("stem", stems())
def test_each_run_has_one_headline_of_its_workloads_metric_with_its_unit(stem):
    rec = recorded(stem)
    row = headline(rec)
    assert row is not None and row.metric == catalogue()[rec.workload].metric
    units = HEADLINE_UNITS[rec.workload]
    assert row.unit in (units if isinstance(units, tuple) else (units,))
    text = headline_text(rec)
    assert f" {row.unit} [" in text and "bytes" not in text and "_" not in text
    # The best of the headline metric: the highest rate, the shortest time to train.
    values = [r.value for r in rec.rows if r.metric == row.metric and r.value is not None]
    assert row.value == (min(values) if rec.workload == "mlp" else max(values))


@pytest.mark.parametrize("stem", stems())
def test_every_chart_row_is_drawn_on_its_chart(qtbot, stem):
    """A finished run's headline points all appear: the bandwidth curve over size_mb too."""
    rec = recorded(stem)
    panel = ChartPanel()
    qtbot.addWidget(panel)
    panel.show_records([rec])
    kinds = {chart_of(rec.workload, r) for r in rec.rows} - {None}
    expected = {"gemm": {"tflops"}, "bandwidth": {"gb_per_s"}, "train": {BARS},
                "infer": {BARS}, "mlp": set(), "memory": set(),
                "llm": {"prefill_tokens_per_s", "decode_tokens_per_s"},
                "allreduce": {"busbw"}, "scaling": {SCALING},
                "serve": {"output_tok_s", "decode_tok_s", "ttft_ms"}}[rec.workload]
    assert kinds == expected
    for kind in kinds:
        chart = panel.charts[kind]
        measured = [r for r in rec.rows if chart_of(rec.workload, r) == kind
                    and r.value is not None]
        assert chart.has_data() and chart.point_count() == len(measured) > 0
        assert not chart.empty.isVisible() or not panel.isVisible()
    # Every row is in the table, its metric in words.
    panel.setCurrentWidget(panel.table)
    assert panel.table.rowCount() == len(rec.rows)
    metric_col = [panel.table.horizontalHeaderItem(j).text()
                  for j in range(panel.table.columnCount())].index("Metric")
    shown = {panel.table.item(i, metric_col).text() for i in range(len(rec.rows))}
    assert shown == {metric_title(r.metric) for r in rec.rows}
    assert not any("_" in m for m in shown)


def test_decode_at_one_depth_draws_depths_from_zero_on(qtbot):
    """The quick suite decodes at depth 0 alone: the axis runs on from 0, not -1..1 (the
    real run's rows at depth 0, as the quick suite measures them)."""
    rec = recorded("llm-torch")
    rec.rows = [r for r in rec.rows if r.params.get("depth", 0) == 0]
    panel = ChartPanel()
    qtbot.addWidget(panel)
    panel.show_records([rec])
    decode = panel.curves["decode_tokens_per_s"]
    lo, hi = decode.plot_item.viewRange()[0]
    assert -0.05 * hi <= lo < 0 and hi >= 64
    # The bound 100x above the points: on the automatic log axis it is drawn in the scale and
    # labelled at its point; on a linear axis it stays above the scale, and its label ends at
    # the right edge, inside the plot (it ran off the left when it ended at depth 0).
    label = decode._items[decode.series[0].key]["bound_label"]
    bound = decode.series[0].bounds[-1].value
    assert decode.axis_mode() == "log"
    assert label.textItem.toPlainText() == f"bound {number(bound)} tok/s"
    decode.set_y_mode("linear")
    assert label.textItem.toPlainText() == f"bound {number(bound)} tok/s ↑ above the scale"


def test_bandwidth_draws_one_curve_per_op_over_the_array_size(qtbot):
    rec = recorded("bandwidth-torch")
    panel = ChartPanel()
    qtbot.addWidget(panel)
    panel.show_records([rec])
    chart = panel.curves["gb_per_s"]
    assert sorted(s.name.split(" · ")[-1] for s in chart.series) == ["copy", "triad"]
    assert [r.params["size_mb"] for r in chart.series[0].rows] == [1, 4]
    # The sizes read as sizes: 1 MB, 4 MB (the axis holds their log2 in MB).
    axis = chart.plot.getAxis("bottom")
    assert axis.tickStrings([0.0, 2.0], 1, 1) == ["1 MB", "4 MB"]
    assert "Array size" in axis.labelText


def test_the_llm_tab_draws_prefill_and_decode_with_each_runs_memory_bound(qtbot, tmp_path):
    """Two recorded tiny LLM runs side by side: prefill over the prompt, decode over the depth
    from 0, each decode series with its roofline dashed in its own colour, labelled with the
    ceiling it divides; hovering a point tells its spread and its share of the bound."""
    from PySide6.QtCore import Qt
    runs = [recorded("llm-torch"), recorded("llm-mlx")]
    panel = ChartPanel()
    qtbot.addWidget(panel)
    panel.resize(1400, 700)
    panel.show()
    panel.show_records(runs)
    tab = panel.tab_of("decode_tokens_per_s")
    assert tab is panel.tab_of("prefill_tokens_per_s")
    assert panel.tabText(panel.indexOf(tab)) == "LLM"
    panel.setCurrentWidget(tab)
    prefill, decode = panel.curves["prefill_tokens_per_s"], panel.curves["decode_tokens_per_s"]
    for chart, metric in ((prefill, "prefill_tokens_per_s"), (decode, "decode_tokens_per_s")):
        assert chart.isVisible() and chart.has_data() and len(chart.series) == 2
        legend = chart.legend_names()
        # Each decode series' memory bound is in its legend line too.
        assert legend == [s.name + bound_text(s, "tok/s", " · ") for s in chart.series]
        assert len(set(legend)) == 2
        # The legend lies beside the plot, not over it.
        assert chart.legend.geometry().left() >= chart.plot.geometry().right()
        chart.set_y_mode("linear")   # the values themselves (a log axis holds their log10)
        for s, rec in zip(chart.series, runs, strict=True):
            _, ys = chart._items[s.key]["line"].getData()
            assert list(ys) == [r.value for r in rec.rows if r.metric == metric]
    assert "log₂" in prefill.plot.getAxis("bottom").labelText
    assert "linear" in decode.plot.getAxis("bottom").labelText
    assert decode.plot_item.viewRange()[0][0] < 0   # depth 0 is inside the axis
    colours = set()
    for s, rec in zip(decode.series, runs, strict=True):
        items = decode._items[s.key]
        xs, ys = items["bound"].getData()
        bounds = [r for r in rec.rows if r.metric == "decode_roofline"]
        assert list(xs) == [r.params["depth"] for r in bounds] == [0, 64, 256]
        assert list(ys) == [r.value for r in bounds]
        pen, line_pen = items["bound"].opts["pen"], items["line"].opts["pen"]
        assert pen.style() == Qt.PenStyle.DashLine and pen.color() == line_pen.color()
        colours.add(pen.color().name())
        # The tiny model runs far below its bound (overheads, not memory, bind it): the bound
        # stays above the scale, so the curve is not flattened, and its label gives its values.
        top = decode.plot_item.viewRange()[1][1]
        assert max(r.value for r in s.rows) < top < min(r.value for r in bounds)
        values = sorted(r.value for r in bounds)
        # Both runs divide the one triad measured on this CPU: one label for the two lines.
        assert items["bound_label"].isVisible() == (s is decode.series[0])
        assert items["bound_label"].textItem.toPlainText() == (
            f"bound {interval(values[0], values[-1])} tok/s ↑ above the scale")
        tip = items["dots"].data["data"][0]
        row = s.rows[0]
        assert f"p25–p75: {spread_text(row)}" in tip
        assert f"{percent(row.pct_of_peak)} of memory bound" in tip
    assert len(colours) == 2
    assert "memory bound" in decode.caption.text()
    # A bound within reach of the points is drawn in the scale, labelled at its last point.
    for rec in runs:
        for r in rec.rows:
            if r.metric == "decode_roofline":
                r.value = next(x.value for x in rec.rows if x.metric == "decode_tokens_per_s"
                               and x.params == r.params) * 1.5
    panel.show_records(runs)
    for s in decode.series:
        label = decode._items[s.key]["bound_label"]
        assert label.isVisible() and label.textItem.toPlainText() == \
            f"bound {number(s.bounds[-1].value)} tok/s"
        assert (label.pos().x(), label.pos().y()) == pytest.approx(
            (s.bounds[-1].params["depth"], s.bounds[-1].value))
        assert decode.plot_item.viewRange()[1][1] >= s.bounds[0].value
    # File > Export Chart writes the decode chart, or the prefill chart once clicked.
    assert panel.current_chart() is decode
    qtbot.mouseClick(prefill.plot.viewport(), Qt.MouseButton.LeftButton)
    assert panel.current_chart() is prefill
    panel.export_chart(str(tmp_path / "prefill.png"))
    assert (tmp_path / "prefill.png").stat().st_size > 0


def test_runs_on_one_device_have_distinct_legend_names(qtbot):
    runs = [recorded(s) for s in ("gemm-torch", "gemm-torch-second", "gemm-tensorflow",
                                  "gemm-mlx")]
    panel = ChartPanel()
    qtbot.addWidget(panel)
    panel.show_records(runs)
    names = [s.name for s in panel.curves["tflops"].series]
    assert len(names) == len(set(names)) == 4
    legend = panel.curves["tflops"].legend_names()
    assert sorted(legend) == sorted(names)
    assert not any("unknown machine" in n for n in names)
    # One identity per run, everywhere: legend, table, Compare.
    assert all(n.startswith(r.identity) for n, r in zip(names, runs, strict=True))


def test_results_and_queue_show_the_headline_not_the_largest_number(qtbot):
    from siliconbench.core.runner import RunSpec
    from siliconbench.gui.queue_view import outcome_text
    from siliconbench.gui.results_browser import BEST, cell_text
    from siliconbench.gui.run_queue import OK, RunJob
    rec = recorded("infer-torch")  # its largest number is a peak memory in bytes
    assert max(r.value for r in rec.rows if r.value) > 1e6
    assert cell_text(rec, BEST).startswith(headline_text(rec))
    assert "img/s" in cell_text(rec, BEST) and "bytes" not in cell_text(rec, BEST)
    job = RunJob(RunSpec("infer"), "infer")
    job.record, job.state = rec, OK
    text = outcome_text(job)
    assert "img/s" in text and "bytes" not in text


def _verdicts(runs):
    cmp = compare([Side(r.identity, [r]) for r in runs])
    return cmp, [(r, r.cells[1]) for r in cmp.rows]


def test_two_real_quick_runs_get_verdicts_that_match_their_statistics():
    """Quick runs time few blocks: where the test cannot reach 1% the verdict says so, and
    never reads as equality for medians 5% or more apart."""
    pairs = [("gemm-torch", "gemm-torch-second"), ("gemm-torch", "gemm-mlx"),
             ("memory-mlx", "memory-torch"), ("memory-mlx", "memory-tensorflow")]
    seen = set()
    for pair in ([recorded(a), recorded(b)] for a, b in pairs):
        cmp, cells = _verdicts(pair)
        assert cells
        for row, cell in cells:
            base = row.cells[0]
            if not base.samples or not cell.samples:   # a peak memory: one number a run
                assert cell.verdict == NO_SAMPLES_VERDICT
                continue
            reachable = smallest_p(len(base.samples), len(cell.samples)) < ALPHA
            apart = abs(cell.ratio - 1) >= 0.05
            if apart:
                assert not cell.verdict.startswith(SAME)
            if cell.verdict.startswith(("faster", "slower")):
                assert reachable and cell.p_value < ALPHA and apart
            if not reachable and apart:
                assert cell.verdict.startswith((INCONCLUSIVE, FAR_APART))
                assert "a quick run times few blocks" in cell.verdict
            seen.add(cell.verdict.split(":")[0])
    # Quick probes of the memory workload time 3 blocks: too few for the test, so the real
    # runs give both the inconclusive and the far-apart wording, beside tested verdicts.
    assert {"faster", "slower", INCONCLUSIVE, FAR_APART} <= seen


def test_the_quick_suite_summary_is_one_headline_per_workload_and_device():
    runs = [recorded("gemm-torch"), recorded("infer-torch"), recorded("llm-torch"),
            recorded("gemm-mlx")]
    lines = summary_lines(runs)
    assert lines[0].endswith("(torch cpu)") and lines[4].endswith("(mlx cpu)")
    assert lines[1].startswith("  Matrix multiply (TFLOPS): ") and " TFLOPS (dtype " in lines[1]
    assert lines[2].startswith("  Inference throughput: ") and " img/s (" in lines[2]
    # A noisy headline (this CPU's GEMM run) is to be read with care, and says so.
    assert "noisy" in headline(runs[0]).flags
    assert lines[1].endswith(f"; peak unknown) — read with care: {FLAGS['noisy']}")
    # An LLM's best decode, with its share of the memory bound the run recorded.
    best = headline(runs[2])
    assert lines[3] == (f"  LLM inference (tokens/s): {value_text(best)} (batch 1, depth "
                        f"{best.params['depth']}, dtype float32, gen_tokens 8, preset tiny; "
                        f"{percent(best.pct_of_peak)} of memory bound)")
    assert all("peak" in line for line in lines if line.startswith("  ") and line != lines[3])
    assert len(lines) == 6


@pytest.mark.usefixtures("short_protocol")   # the runs' labels and rows, not their numbers
def test_naming_a_machine_names_its_future_runs_too(qtbot, tmp_path):
    """Name Machine on a stored run; the next CLI run on this machine comes out under it."""
    import json
    import os
    import subprocess
    import sys

    from siliconbench.core.store import Store
    from siliconbench.gui.results_browser import ResultsBrowser
    store = Store()
    earlier = recorded("gemm-torch")
    from siliconbench.core.machine import probe
    earlier.machine = probe().to_dict()   # a run of this machine
    store.save(earlier)
    browser = ResultsBrowser(store)
    qtbot.addWidget(browser)
    browser.reload()
    assert browser.rename_machine("Lab box", [earlier]) == 1
    # In MLX: a tenth of a CPU-second to import, PyTorch three; the machine's name is not
    # the framework's.
    r = subprocess.run([sys.executable, "-m", "siliconbench.core.cli", "run", "gemm", "--sizes", "16",
                        "--dtypes", "float32", "--quick", "--json", "--framework", "mlx"],
                       capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert r.returncode == 0, r.stderr
    new = json.loads(r.stdout)
    assert new["label"] == "Lab box"
    store.close()


@pytest.mark.usefixtures("short_protocol")   # the runs' labels and rows, not their numbers
def test_a_real_run_end_to_end_through_the_real_window(qtbot, tmp_path):
    """Two real tiny runs queued together (GEMM and bandwidth, MLX on the CPU) after an
    older run was selected: each chart holds its run's points under a legend that names this
    machine, the queue and Results read each workload's headline with its unit, and the
    finished runs are drawn together, without the older selection."""
    from siliconbench.core.runner import RunSpec
    from siliconbench.core.store import Store
    from siliconbench.gui.main_window import MainWindow
    store = Store()
    older = recorded("gemm-mlx")
    store.save(older)
    w = MainWindow(store, QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat))
    w.ask_before_closing = False
    qtbot.addWidget(w)
    w.resize(1600, 1000)
    w.show()
    w.results.reload()
    w.results.select_ids({older.id})
    assert [r.id for r in w.results.selected_records()] == [older.id]
    # MLX's child imports it in a tenth of a CPU-second, PyTorch's in three.
    specs = [RunSpec("gemm", "mlx", "cpu", {"sizes": [32, 64], "dtypes": ["float32"]},
                     quick=True),
             RunSpec("bandwidth", "mlx", "cpu", {"sizes_mb": [1, 2], "ops": ["copy"]},
                     quick=True)]
    gemm, bandwidth = w.queue.enqueue(specs)
    live_names = []
    w.queue.row_arrived.connect(
        lambda job: live_names.extend(s.name for c in w.charts.curves.values()
                                      for s in c.series))
    qtbot.waitUntil(lambda: gemm.ended and bandwidth.ended, timeout=180_000)
    try:
        assert gemm.state == bandwidth.state == "ok"
        assert live_names and not any("unknown machine" in n for n in live_names)
        # The runs join Results; the selection stays the user's (Preferences can change it).
        qtbot.waitUntil(lambda: w.results.model.rowCount() == 3, timeout=10_000)
        assert [r.id for r in w.results.selected_records()] == [older.id]
        w.results.select_ids({gemm.record.id, bandwidth.record.id})
        for job, metric, unit in ((gemm, "tflops", "TFLOPS"), (bandwidth, "gb_per_s", "GB/s")):
            chart = w.charts.curves[metric]
            assert chart.has_data() and chart.point_count() == 2
            (series,) = chart.series
            assert series.name.startswith(job.record.identity)
            assert job.record.device_label in series.name
            assert f" {unit} " in w.queue_view.row_for(job).step.text()
        from siliconbench.gui.results_browser import BEST, cell_text
        assert "GB/s [" in cell_text(bandwidth.record, BEST)
        # A finished row's context menu: its details and its line of text, no Cancel.
        row = w.queue_view.row_for(gemm)
        menu = row.context_menu()
        assert [a.text() for a in menu.actions()] == ["Show Run Details…", "Copy Summary"]
        detail = row.show_details()
        assert gemm.record.id in detail.plain_text()
        assert detail.rows.rowCount() == len(gemm.record.rows)
        detail.close()
        menu.actions()[1].trigger()
        from PySide6.QtGui import QGuiApplication
        assert QGuiApplication.clipboard().text() == f"{gemm.title}\t{row.step.text()}"
    finally:
        store.close()


def test_the_quick_suite_waits_for_every_framework_not_the_first_to_answer(qtbot, tmp_path):
    """MLX answers first; the suite queued then ran on MLX alone and never reached the
    inference run that ends in a comparison."""
    from siliconbench.core.frameworks import DeviceInfo
    from siliconbench.core.store import Store
    from siliconbench.gui.main_window import MainWindow
    store = Store()
    w = MainWindow(store, QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat))
    w.ask_before_closing = False
    qtbot.addWidget(w)
    mlx, torch = DeviceInfo("mlx", "cpu", "CPU", "cpu"), DeviceInfo("torch", "cpu", "CPU", "cpu")
    w.devices.set_devices([mlx], {"mlx": "test"}, final=False)   # the first framework's answer
    assert w.queue_quick_suite() == 0 and not w.queue.jobs
    w.devices.set_devices([mlx, torch], {"mlx": "test", "torch": "test"})  # discovery ends
    try:
        jobs = w.queue.jobs
        assert {(j.spec.workload, j.spec.framework) for j in jobs} == {
            ("gemm", "mlx"), ("gemm", "torch"), ("infer", "torch"), ("bandwidth", "torch"),
            ("bandwidth", "mlx"), ("llm", "torch"), ("llm", "mlx")}
        assert {j.batch for j in jobs} <= w.live_runs.compare_batches
    finally:
        w.queue.cancel_all()
        qtbot.waitUntil(lambda: not w.queue.busy, timeout=60_000)
        store.close()


def test_exports_name_each_run_by_its_identity():
    import csv
    import io

    from siliconbench.core.export import to_csv
    runs = [recorded("gemm-torch"), recorded("gemm-torch-second")]
    lines = list(csv.DictReader(io.StringIO(to_csv(runs))))
    assert {line["run"] for line in lines} == {r.identity for r in runs}
    assert len({r.identity for r in runs}) == 2
