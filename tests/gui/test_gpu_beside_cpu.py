"""The views on runs 1,000x apart: the H200's records (tests/helpers/h200_records.py) selected with
this machine's CPU runs (tests/helpers/recorded.py), as a person comparing a GPU with a laptop would.
Each test asserts what a person reads: names, axis modes and tick labels, legend names and
where the legend lies, ratio text and what was paired with what."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from siliconbench.gui.compare_view import CompareView
from tests.helpers.gui import shown, ten_sides
from tests.helpers.h200_records import gpu_and_cpu, h200, h200_runs
from tests.helpers.recorded import recorded


@pytest.fixture
def view(qtbot):
    return shown(qtbot, CompareView(), 1100, 760)


# ---------------------------------------------------------------- identity

def test_a_gpu_run_is_named_by_its_gpu_and_a_cpu_run_by_its_cpu(panel, view):
    for rec in h200_runs():
        assert rec.identity.startswith("NVIDIA H200 · torch cuda · ")
        assert "Xeon" not in rec.identity
    cpu = recorded("gemm-torch")
    assert cpu.identity.startswith("AMD EPYC · torch cpu · ")
    # A name the user gave the machine stays the run's name.
    assert recorded("gemm_cpu_tiny").identity.startswith("Lab Mac · torch cpu · ")
    gpu = h200("h200-gemm")
    panel.show_records([gpu, cpu])
    names = panel.curves["tflops"].legend_names()
    assert any(n.startswith("NVIDIA H200") for n in names)
    assert any(n.startswith("AMD EPYC") for n in names)
    assert not any("Xeon" in n for n in names)
    # Compare: the GPU and the CPU are its two sides, each named by its device.
    view.set_records([gpu, cpu])
    assert [s.label for s in view.comparison.sides] == ["NVIDIA H200", "AMD EPYC"]
    assert "A = NVIDIA H200" in view.summary.text() and "Xeon" not in view.summary.text()


def test_run_details_title_names_the_gpu(qtbot):
    from siliconbench.gui.run_detail import RunDetail
    dialog = RunDetail(h200("h200-infer"))
    qtbot.addWidget(dialog)
    assert dialog.windowTitle().endswith("NVIDIA H200")


# ---------------------------------------------------------------- scales

def test_charts_of_a_gpu_beside_a_cpu_turn_logarithmic_with_ticks_in_human_units(panel):
    panel.show_records(gpu_and_cpu())
    tflops, bars = panel.curves["tflops"], panel.bars
    # 680 TFLOPS beside a CPU's 0.00003: a log axis, every decade read plainly.
    assert tflops.axis_mode() == "log"
    ticks = tflops.tick_labels()
    assert {"0.001", "1", "100"} <= set(ticks)
    assert not any("e" in t or "×" in t for t in ticks)
    # 15,294 img/s beside 3.8: log too, thousands as K.
    assert bars.axis_mode() == "log" and "10K" in bars.tick_labels()
    assert "Log scale" in bars.caption.text()
    # The H200's GEMM alone spans 13x (float32 to bfloat16): linear, from zero.
    panel.show_records([h200("h200-gemm")])
    assert tflops.axis_mode() == "linear" and tflops.plot_item.viewRange()[1][0] == 0
    # Its inference alone: thousands read as K on a linear axis.
    panel.show_records([h200("h200-infer")])
    assert bars.axis_mode() == "linear"
    assert {"5K", "10K", "15K"} <= set(bars.tick_labels())


def test_view_menu_and_context_menu_set_the_y_axis(panel):
    panel.show_records(gpu_and_cpu())
    tflops = panel.curves["tflops"]
    panel.set_y_mode("linear")              # View > Y Axis > Linear
    assert tflops.axis_mode() == panel.bars.axis_mode() == "linear"
    panel.set_y_mode("auto")
    assert tflops.axis_mode() == "log"
    menu = tflops.y_menu()                  # right-click on the plot
    texts = [a.text() for a in menu.actions()]
    assert texts == ["Y Axis: Automatic (log beyond 30×)", "Y Axis: Linear",
                     "Y Axis: Logarithmic"]
    assert [a.isChecked() for a in menu.actions()] == [True, False, False]
    menu.actions()[1].trigger()
    assert tflops.axis_mode() == "linear" and tflops.y_mode == "linear"
    assert panel.bars.axis_mode() == "log"    # the other charts keep theirs


def test_the_window_view_menu_has_the_y_axis_entries(qtbot, window, store):
    w = window
    for rec in gpu_and_cpu():
        store.save(rec)
    qtbot.waitUntil(lambda: bool(w.menu_actions.y_axis), timeout=10_000)
    assert w.menu_actions.y_axis_menu.title() == "Y Axis"
    w.results.reload()
    w.select_all_runs()
    tflops = w.charts.curves["tflops"]
    qtbot.waitUntil(lambda: tflops.has_data(), timeout=10_000)
    assert tflops.axis_mode() == "log"
    w.menu_actions.y_axis["linear"].trigger()
    assert tflops.axis_mode() == "linear" and w.compare.bars.y_mode == "linear"


# ---------------------------------------------------------------- legends

def test_legends_lie_beside_the_plot_scroll_and_tell_every_series_apart(panel, qtbot):
    panel.resize(900, 190)
    panel.show_records(gpu_and_cpu())
    tflops = panel.curves["tflops"]
    qtbot.waitUntil(lambda: tflops.legend.isVisible())
    names = tflops.legend_names()
    assert len(names) == len(tflops.series) > 8      # more series than the palette's colours
    assert tflops.legend.geometry().left() >= tflops.plot.geometry().right()
    keys = [(color, symbol) for _, _, color, symbol, _ in tflops.legend._keys]
    assert len(set(keys)) == len(keys)                # colour and marker together differ
    assert len({c for c, _ in keys}) < len(keys)      # colours alone repeat
    # Long: it scrolls rather than running off the chart; each name whole in its tooltip.
    legend = tflops.legend
    assert legend.count() * legend.sizeHintForRow(0) > legend.viewport().height()
    # (one line per name, laid out by the list at its next event)
    qtbot.waitUntil(lambda: legend.verticalScrollBar().maximum() > 0, timeout=1000)
    assert [tflops.legend.item(i).toolTip() for i in range(len(names))] == names
    # Unticking a line hides its series.
    item = tflops.legend.item(0)
    item.setCheckState(Qt.CheckState.Unchecked)
    assert not tflops._items[tflops.series[0].key]["line"].isVisible()


def test_legend_names_say_what_differs_never_a_raw_key(panel):
    panel.show_records(gpu_and_cpu())
    tf32 = h200("h200-gemmtf32")
    gemm_names = panel.curves["tflops"].legend_names()
    assert f"{tf32.identity} · float32 · TF32" in gemm_names
    bars = panel.bars.legend_names()
    infer, train = h200("h200-infer"), h200("h200-train")
    assert any(n.startswith(infer.identity) and "inference" in n for n in bars)
    assert any(n.startswith(train.identity) and "training" in n for n in bars)
    for chart in panel.charts.values():
        for name in chart.legend_names():
            assert "=" not in name and "_" not in name, name
    panel.setCurrentWidget(panel.telemetry)
    telemetry = panel.telemetry
    power = telemetry.unit_box.findData("W")
    telemetry.unit_box.setCurrentIndex(power)
    names = telemetry.legend_names()
    assert names and all(n.endswith("GPU power") for n in names)
    assert not any("gpu_power_w" in n for n in names)


# ---------------------------------------------------------------- ratios and pairing

def table(view: CompareView) -> list[dict[str, str]]:
    header = view.headers()
    return [{header[j]: view.table.item(i, j).text() for j in range(len(header))}
            for i in range(view.table.rowCount())]


def test_ratios_say_which_side_is_faster_at_one_precision(view):
    """360 TFLOPS beside 0.07 read '0.000× · slower'; now the ratio is the times apart, to
    three significant figures, with the direction in words."""
    gpu, cpu = h200("h200-gemm"), recorded("gemm-torch-quick-8192")
    view.set_records([gpu, cpu])
    [row] = table(view)
    [compared] = view.comparison.rows
    apart = compared.cells[0].value / compared.cells[1].value
    assert row["B vs A"] == f"{float(f'{apart:.3g}'):.0f}× slower"     # '714× slower'
    # The other way round: the GPU is the faster side.
    view.set_records([cpu, gpu])
    assert table(view)[0]["B vs A"] == f"{float(f'{apart:.3g}'):.0f}× faster"


def test_like_is_paired_with_like_tf32_included(view):
    """With every run selected, the H200's plain float32 product is paired with the CPU's
    float32 one, never its TF32 run; where only the TF32 run is there, the cell says how the
    two are unlike."""
    runs = gpu_and_cpu()
    plain, tf32 = h200("h200-gemm"), h200("h200-gemmtf32")
    view.set_records(runs)
    rows = [r for r in view.comparison.rows
            if r.workload == "gemm" and r.params == {"size": 8192, "dtype": "float32"}]
    assert len(rows) == 1 and rows[0].cells[0].run_id == plain.id
    paired = [c for c in rows[0].cells[1:] if c is not None]
    assert [c.run_id for c in paired] == [recorded("gemm-torch-quick-8192").id]
    assert paired[0].unlike is None
    # The TF32 run alone beside the CPU: compared, and the cell says they are unlike.
    view.set_records([tf32, recorded("gemm-torch-quick-8192")])
    [row] = table(view)
    assert row["B vs A"].endswith("× slower · unlike: TF32 off vs on")
    assert row["B vs A"].startswith("≈")        # 360 TFLOPS over 0.07: thousands apart


def test_a_published_figure_says_which_side_is_faster_and_its_peak_is_known(view):
    """'143× · no statistics: published figure' said nothing of direction; Compare's caption
    said 'Peak unknown for Apple M1 Max' though the peak table has that GPU."""
    view.set_records([recorded("gemm-torch-quick-8192")])
    view.add_reference("pub-tfmetal-gemm-m1max32")
    [row] = table(view)
    assert row["B vs A"].endswith("× faster · no statistics: published figure")
    caption = view.current_chart().caption.text()
    assert "Peak unknown for AMD EPYC" in caption and "M1 Max" not in caption


# ---------------------------------------------------------------- Compare with many sides


@pytest.mark.parametrize("size", [(820, 520), (300, 300)], ids=["at 1440x900", "at minimum"])
def test_compare_with_ten_sides_keeps_a_usable_chart(view, qtbot, size):
    """The Compare tab's share of a 1440x900 window and of the 720x520 minimum: the chart
    keeps its height (the tab scrolls below its minimum), long cells elide with the whole
    text on hover, the sides' names take at most three lines, unfolded warnings scroll in a
    strip of their own."""
    from siliconbench.gui.compare_view import (
        MAX_VERDICT_W,
        MAX_WARNINGS_H,
        MIN_CHART_H,
        MIN_CONTENT,
    )
    view.resize(*size)
    view.set_records(ten_sides())
    qtbot.wait(50)
    cmp = view.comparison
    assert len(cmp.sides) == 10 and cmp.rows
    assert view.chart_stack.height() >= MIN_CHART_H
    assert view.content.height() >= MIN_CONTENT[1]
    if size[1] < MIN_CONTENT[1]:
        assert view.scroll.verticalScrollBar().maximum() > 0
    # Every side is named; what the summary cannot show is in its tooltip.
    assert len(view.summary.displayed()) <= 3
    for i, side in enumerate(cmp.sides):
        assert side.label in view.summary.toolTip()
    # Verdict columns elide at their cap; each cell's whole text is its tooltip.
    n = len(cmp.sides)
    first_verdict = 3 + n
    for j in range(first_verdict, first_verdict + n - 1):
        if not view.table.isColumnHidden(j) and j < view.table.columnCount() - 1:
            assert view.table.columnWidth(j) <= MAX_VERDICT_W
    for i in range(view.table.rowCount()):
        for j in range(view.table.columnCount()):
            item = view.table.item(i, j)
            assert item.toolTip().startswith(item.text()) or item.text() in item.toolTip()
    # Unfolding the warnings leaves the chart its height.
    before = view.chart_stack.height()
    view.warnings_button.setChecked(True)
    qtbot.wait(50)
    assert view.warnings.isVisible() and view.warnings_area.height() <= MAX_WARNINGS_H
    assert view.chart_stack.height() >= min(before, MIN_CHART_H)
    # The combos say their whole text on hover.
    assert view.reference_combo.toolTip() == view.reference_combo.currentText()


# ---------------------------------------------------------------- run details

def test_run_details_are_tables_with_units_nothing_cut(qtbot):
    from siliconbench.gui.run_detail import RunDetail
    rec = h200("h200-llm8b")
    dialog = RunDetail(rec)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.wait(50)
    fields = dialog.fields
    # Fields in a table of their own, in units: never 'memory_bytes: 135148564480'.
    assert fields.headerItem().text(0) == "Field" and fields.headerItem().text(1) == "Value"
    assert fields.field("Machine", "memory_bytes") == "126 GB"
    assert fields.field("Machine", "gpu_name") == "NVIDIA H200"
    assert fields.field("Run", "device").startswith("NVIDIA H200")
    for i in range(fields.topLevelItemCount()):
        top = fields.topLevelItem(i)
        for j in range(top.childCount()):
            assert "e+" not in top.child(j).text(1)
    # The rows' table: the run's name is the title, the Value column in view.
    rows = dialog.rows
    header = [rows.horizontalHeaderItem(j).text() for j in range(rows.columnCount())]
    value = header.index("Value")
    assert rows.isColumnHidden(header.index("Run"))
    head = rows.horizontalHeader()
    assert head.sectionViewportPosition(value) + head.sectionSize(value) <= \
        rows.viewport().width()
    # Copy gives the same fields as text.
    assert "memory_bytes: 126 GB" in dialog.plain_text()


# ---------------------------------------------------------------- selection

def test_filtering_results_draws_only_what_is_still_selected(qtbot, window, store):
    w = window
    runs = gpu_and_cpu()
    for rec in runs:
        store.save(rec)
    w.results.reload()
    w.select_all_runs()
    assert len(w.charts.records()) == len(runs)
    w.results.set_filter("Workload", "Matrix multiply (TFLOPS)")
    gemm = {r.id for r in runs if r.workload == "gemm"}
    assert {r.id for r in w.results.selected_records()} == gemm
    assert {r.id for r in w.charts.records()} == gemm
    assert {r.id for r in w.compare.records} == gemm
    # Tabbing into the table keeps a two-run selection (and Compare's two sides).
    two = {h200("h200-gemm").id, recorded("gemm-torch").id}
    w.results.select_ids(two)
    w.results.search.setFocus()
    qtbot.keyClick(w.results.search, Qt.Key.Key_Tab)
    w.results.view.setFocus(Qt.FocusReason.TabFocusReason)
    assert {r.id for r in w.results.selected_records()} == two
    assert {r.id for r in w.compare.records} == two


# ---------------------------------------------------------------- power

def test_power_without_an_energy_counter_is_flagged_not_shown_nor_compared(panel, view):
    """The H200 records' power is one 1 s sample per point (78.6 W at 360 TFLOPS, '4.59
    TFLOPS/W'): the table flags it without its figure, and Compare leaves it out, saying so."""
    rec = h200("h200-gemmtf32")
    panel.show_records([rec])
    panel.setCurrentWidget(panel.table)
    table = panel.table
    header = [table.horizontalHeaderItem(j).text() for j in range(table.columnCount())]
    rows = [{h: table.item(i, j).text() for j, h in enumerate(header)}
            for i in range(table.rowCount())]
    power = [r for r in rows if r["Metric"] in ("Power", "TFLOPS per watt")]
    assert power and all(r["Value"] == "—" and r["Flags"] == "power not trusted"
                         for r in power)
    assert not any("4.59" in r["Value"] or "78.5" in r["Value"] for r in rows)
    tflops = next(r for r in rows if r["Metric"] == "Throughput")
    assert tflops["Value"].startswith("360")
    view.set_records([h200("h200-gemm"), h200("h200-gemmtf32"), recorded("gemm-torch")])
    metrics = {r.metric for r in view.comparison.rows}
    assert not metrics & {"power", "tflops_per_watt"}
    assert "power and efficiency figures of" in " ".join(view.comparison.warnings)


# ---------------------------------------------------------------- the queue

def test_the_queue_estimate_counts_the_queued_runs_and_a_long_point_looks_alive(qtbot):
    """'about 3 s left' with two long runs queued: the estimate counted the running run only.
    A one-step run (the N=8192 product on a CPU) showed an empty bar for minutes."""
    import time

    from siliconbench.core.runner import RunSpec
    from siliconbench.gui.queue_view import JobRow, queue_eta_text
    from siliconbench.gui.run_queue import OK, QUEUED, RUNNING, RunJob, RunQueue
    from siliconbench.gui.theme import LIGHT
    queue = RunQueue()
    now = time.monotonic()
    gemm = RunSpec("gemm", "torch", "cpu", {"sizes": [8192], "dtypes": ["float32"]})
    infer = RunSpec("infer", "torch", "cpu", {})
    done, running, same, other = (RunJob(gemm, "a"), RunJob(gemm, "b"), RunJob(gemm, "c"),
                                  RunJob(infer, "d"))
    done.state, done.started_at, done.ended_at = OK, now - 300, now - 100   # 200 s long
    running.state, running.started_at, running.total, running.done = RUNNING, now - 30, 1, 0
    same.state = other.state = QUEUED
    queue.jobs = [done, running, same, other]
    queue._running = (running, None)
    left, unknown = queue.estimate()
    # The running one's own estimate is unknown (no step done yet); the queued GEMM like the
    # finished one takes 200 s; the inference run's length is unknown.
    assert (left, unknown) == (None, 1)
    running.measuring_since, running.done, running.total = now - 20, 1, 2   # half way
    left, unknown = queue.estimate()
    assert unknown == 1 and left == pytest.approx(20 + 200, abs=2)
    assert queue_eta_text(left, unknown) == \
        " · about 4 min left, then 1 queued run of unknown length"
    assert queue.eta_s() is None     # a total would hide the unknown run
    # A one-step point under way: a busy bar and the time it has run.
    running.done, running.total = 0, 1
    row = JobRow(running, queue, LIGHT)
    qtbot.addWidget(row)
    row.update_view()
    assert row.bar.maximum() == 0 and row.eta.text() == "30 s elapsed"


def test_bound_labels_stay_inside_the_plot(panel, qtbot):
    """A tiny model's decode bound ends at depth 256 beside the H200's sweep to 2048: its
    label, ending at that point, ran off the plot's left edge."""
    panel.show_records(gpu_and_cpu())
    decode = panel.curves["decode_tokens_per_s"]
    panel.setCurrentWidget(panel.tab_of("decode_tokens_per_s"))
    labels = [decode._items[s.key]["bound_label"] for s in decode.series
              if "bound_label" in decode._items[s.key]]
    shown = [label for label in labels if label.isVisible()]
    # The H200's, and the CPU's: runs that share a bound share its label (the llama.cpp
    # record's own triad may set another).
    assert len(shown) >= 2

    def inside() -> bool:           # once the plot is laid out at its size
        view = decode.plot_item.vb.sceneBoundingRect()
        return all(view.left() - 1 <= label.sceneBoundingRect().left()
                   and label.sceneBoundingRect().right() <= view.right() + 1
                   for label in shown)
    qtbot.waitUntil(inside, timeout=3000)


def test_a_run_added_to_a_long_queue_is_scrolled_into_view(qtbot):
    from siliconbench.core.runner import RunSpec
    from siliconbench.gui.queue_view import QueueView
    from siliconbench.gui.run_queue import RunQueue
    queue = RunQueue()
    queue._start_next = lambda: None       # listed, never started: this is about the view
    view = QueueView(queue)
    qtbot.addWidget(view)
    view.resize(700, 240)
    view.show()
    jobs = queue.enqueue([RunSpec("gemm", "torch", "cpu", {"sizes": [64 * (i + 1)]})
                          for i in range(12)])
    last = view.row_for(jobs[-1])
    bar = view.scroll.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() > 0, timeout=3000)
    top = last.mapTo(view.scroll.viewport(), last.rect().topLeft()).y()
    assert 0 <= top and top + last.height() <= view.scroll.viewport().height()


def test_references_read_apart_and_an_empty_comparison_says_why(view):
    from siliconbench.core import reference
    from siliconbench.gui.compare_view import reference_title
    titles = [reference_title(r) for r in reference.references()]
    assert len(set(titles)) == len(titles)      # bf16, 8-bit and 4-bit read alike before
    mlx = [t for t in titles if "qwen3-4b" in t]
    assert {t.split(" · ")[1] for t in mlx} == {"llm qwen3-4b bfloat16 (mlx gpu)",
                                                 "llm qwen3-4b q8 (mlx gpu)",
                                                 "llm qwen3-4b q4 (mlx gpu)"}
    # Two runs that share nothing: the chart says so, as the table does; no stray legend.
    view.set_records([h200("h200-bw"), recorded("gemm-torch")])
    assert view.comparison is not None and not view.comparison.rows
    assert view.summary.text().startswith("Nothing to compare")
    assert view.bars.empty.text().startswith("Nothing to draw")
    assert not view.bars.legend.isVisible()


def test_a_first_launch_ticks_an_accelerator_before_a_cpu():
    from siliconbench.core.frameworks import DeviceInfo
    from siliconbench.gui.device_list import default_device
    mlx_cpu = DeviceInfo("mlx", "cpu", "AMD EPYC", "cpu")
    torch_cpu = DeviceInfo("torch", "cpu", "AMD EPYC", "cpu")
    cuda = DeviceInfo("torch", "cuda:0", "NVIDIA H200", "gpu")
    busy = DeviceInfo("tensorflow", "gpu:0", "NVIDIA H200", "gpu", usable=False)
    # Listed as discovery lists them: MLX first. Ticking the first ticked MLX's CPU.
    assert default_device([mlx_cpu, busy, torch_cpu, cuda]) is cuda
    assert default_device([mlx_cpu, torch_cpu]) is torch_cpu
    assert default_device([busy]) is None


def test_the_device_list_keeps_the_registry_s_order_whatever_answers_first(tmp_path,
                                                                           monkeypatch):
    """Core ML, not installed off a Mac, answers at once: the list put it first, above
    PyTorch, for good. The frameworks now stand in the registry's order as they answer."""
    from siliconbench.core import runner
    from siliconbench.core.frameworks import FRAMEWORKS, DeviceInfo
    from siliconbench.gui.device_list import discover
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path))
    answers = [DeviceInfo(name, "cpu", "AMD EPYC", "cpu")
               for name in ("coreml", "mlx", "llamacpp", "torch")]

    def as_they_answer(on_found=None, fresh=True):
        for n in range(1, len(answers) + 1):
            on_found(answers[:n])
        return answers
    monkeypatch.setattr(runner, "discover_devices", as_they_answer)
    seen = []
    devices, _ = discover(lambda found: seen.append([d.framework for d in found]))
    order = [f for f in FRAMEWORKS if f in {"coreml", "mlx", "llamacpp", "torch"}]
    assert [d.framework for d in devices] == order == ["torch", "mlx", "llamacpp", "coreml"]
    assert seen[0] == ["coreml"] and seen[1] == ["mlx", "coreml"] and seen[-1] == order


def test_help_tells_of_the_llm_all_reduce_and_scaling_tabs_run_it_here_and_the_keys(
        qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path))
    from siliconbench.gui.help import help_page
    from siliconbench.gui.shortcuts import shortcuts
    text = help_page().read_text(encoding="utf-8")
    for words in ("<b>LLM</b>", "<b>All-reduce</b>", "<b>Scaling</b>", "<b>Run It Here</b>",
                  "Keyboard shortcuts", "View &gt; Y Axis", "power not trusted"):
        assert words in text, words
    assert "<!-- SHORTCUTS -->" not in text
    import sys

    from PySide6.QtGui import QKeySequence
    run = QKeySequence(shortcuts(sys.platform)["run"]).toString(
        QKeySequence.SequenceFormat.NativeText)
    assert f"<dt><b>{run}</b></dt><dd>Run</dd>" in text


def test_size_axes_read_as_sizes(panel):
    """All-reduce's ticks mixed '262144, 524288, 1M'; the H200's message sizes run to 256 MB."""
    panel.show_records([h200("h200-allred"), recorded("allreduce-torch")])
    axis = panel.curves["busbw"].plot.getAxis("bottom")
    assert axis.tickStrings([18.0, 19.0, 20.0, 28.0], 1, 1) == ["256 KB", "512 KB", "1 MB",
                                                                 "256 MB"]
    assert "bytes" not in axis.labelText


def test_png_and_svg_exports_carry_the_same_legend(panel, tmp_path):
    """The SVG's legend was clipped and laid out unlike the PNG's: both draw the chart widget,
    plot, legend and caption, so the legend's names are in both at the same place."""
    from PySide6.QtGui import QImage

    from siliconbench.gui.charts.export import TITLE_H, export_chart
    panel.show_records(gpu_and_cpu())
    chart = panel.curves["tflops"]
    png, svg = tmp_path / "c.png", tmp_path / "c.svg"
    export_chart(str(png), chart)
    export_chart(str(svg), chart)
    text = svg.read_text(encoding="utf-8")
    # Qt's SVG writes each word of a line as its own text run: look for the distinct words.
    for word in ("TF32", "H200", "tensorflow", "Peak"):
        assert word in text, word
    image = QImage(str(png))
    tall = chart.height() + TITLE_H            # the chart under its title
    assert (image.width(), image.height()) == (2 * chart.width(), 2 * tall)
    # The same page: the SVG's view box is the chart's size, the PNG twice it.
    assert f'viewBox="0 0 {chart.width()} {tall}"' in text


def test_a_run_done_with_warnings_reads_as_done_not_failed(qtbot):
    from siliconbench.core.runner import RunSpec
    from siliconbench.gui.queue_view import JobRow
    from siliconbench.gui.run_queue import OK, RunJob, RunQueue
    from siliconbench.gui.theme import LIGHT
    rec = recorded("gemm-mlx")
    assert rec.warnings                     # MLX's CPU warned of its reference BLAS
    job = RunJob(RunSpec("gemm", "mlx", "cpu"), "gemm")
    job.record, job.state = rec, OK
    row = JobRow(job, RunQueue(), LIGHT)
    qtbot.addWidget(row)
    row.update_view()
    assert row.step.text().startswith("Done") and "⚠" in row.step.text()
    assert LIGHT.ok.lower() in row.step.styleSheet().lower()
    assert LIGHT.error.lower() not in row.step.styleSheet().lower()


def test_the_exported_report_says_the_ratio_in_words_too(view, tmp_path):
    view.set_records([h200("h200-gemm"), recorded("gemm-torch-quick-8192")])
    [row] = table(view)
    page = tmp_path / "compare.html"
    view.export_report(str(page))
    text = page.read_text(encoding="utf-8")
    assert f">{row['B vs A']}</td>" in text      # '714× slower', as the app says it


def test_run_details_give_telemetry_sizes_in_units(qtbot):
    """The H200 GEMM's GPU memory read 649,461,760 in Run Details: a size reads as one."""
    from siliconbench.core.numbers import size
    from siliconbench.gui.run_detail import FieldTree
    rec = h200("h200-gemmtf32")
    tree = FieldTree(rec)
    qtbot.addWidget(tree)
    mean = rec.telemetry["summary"]["series"]["gpu_memory_used_bytes"]["mean"]
    found = tree.findItems("mean", Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive, 0)
    memory = [i for i in found if i.parent().text(0) == "gpu memory used bytes"]
    assert [i.text(1) for i in memory] == [size(mean)] and "649,461,760" not in size(mean)
    counts = [i for i in tree.findItems("n", Qt.MatchFlag.MatchExactly |
                                        Qt.MatchFlag.MatchRecursive, 0)
              if i.parent().text(0) == "gpu memory used bytes"]
    assert [i.text(1) for i in counts] == ["5"]          # a count stays a count


def test_help_names_only_menu_entries_there_are(tmp_path, monkeypatch):
    """How to Send Results described File > Export Selected Runs as JSON and a file named by
    hand; the menu has Export Selected Runs to Send…. Every 'Menu > Entry' the help names is
    an entry of the menus (siliconbench.gui.menus.ENTRIES), as written there."""
    import re

    from siliconbench.gui.help import help_page, send_results_text
    from siliconbench.gui.menus import ENTRIES
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path))
    entries = {f"{menu} > {e[1]}" for menu, items in ENTRIES.items() for e in items if e}
    submenus = {"View > Y Axis"}
    text = help_page().read_text(encoding="utf-8").replace("&gt;", ">") + send_results_text()
    named = re.findall(r"\b(?:File|Edit|Run|View|Window|Help) > [A-Z][\w ]*?(?:…|(?=[,.;:)<]))",
                       text)
    assert named
    for path in named:
        assert path in entries or path in submenus, path
    assert "File > Export Selected Runs to Send…" in send_results_text()
