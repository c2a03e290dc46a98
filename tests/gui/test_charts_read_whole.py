"""Issue #41 (the GUI's layout): exported charts carry a title and no check boxes, and their
markers are shapes in SVG; an emptied Compare forgets the last chart's axis titles; every bar
group is labelled; a short log axis labels every decade; Results sizes its columns to their
text; long combo texts end in '…'. On real records (tests/data)."""

from __future__ import annotations

import os
import re

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from tests.helpers.gui import compare_view  # noqa: E402
from tests.helpers.h200_records import gpu_and_cpu, h200  # noqa: E402
from tests.helpers.recorded import recorded  # noqa: E402


@pytest.fixture
def panel(qtbot):
    from siliconbench.gui.charts.panel import ChartPanel
    from siliconbench.gui.theme import LIGHT
    p = ChartPanel()
    p.apply_theme(LIGHT)
    qtbot.addWidget(p)
    p.resize(1100, 700)
    p.show()
    return p


def test_an_exported_svg_has_its_title_shapes_for_markers_and_no_check_boxes(panel, tmp_path):
    from siliconbench.gui.charts.export import printable_legend
    panel.show_records([h200("h200-gemm")])
    chart = panel.curves["tflops"]
    svg = tmp_path / "c.svg"
    panel.setCurrentWidget(chart)
    panel.export_chart(str(svg))
    text = svg.read_text(encoding="utf-8")
    assert "<title>Throughput (TFLOPS) over matrix size N" in text
    # Images are the plot's background and the legend's keys (28x14) only: each marker was
    # the whole atlas of marker pixmaps squeezed into its 10 px box.
    sizes = re.findall(r'<image x="[^"]*" y="[^"]*" width="([^"]*)" height="([^"]*)"', text)
    assert all((w, h) == ("28", "14") for w, h in sizes[1:]), sizes
    # On the page the legend has no check boxes, and comes back with them after.
    legend = chart.legend
    with printable_legend(chart):
        assert all(legend.item(i).data(Qt.ItemDataRole.CheckStateRole) is None
                   for i in range(legend.count()))
    assert all(legend.item(i).checkState() == Qt.CheckState.Checked
               for i in range(legend.count()))


def test_an_emptied_compare_forgets_the_last_charts_axis_titles(qtbot):
    view = compare_view(qtbot, 1200, 800)
    view.set_records([recorded("scaling-mlx"), recorded("scaling-torch")])
    bars = view.bars
    assert view.current_chart() is bars and bars.plot.getAxis("left").labelText
    view.set_records([])
    assert view.current_chart() is bars
    assert bars.plot.getAxis("left").labelText == ""
    assert bars.plot.getAxis("bottom").labelText == ""


def test_every_bar_group_is_labelled_within_its_width(qtbot):
    from PySide6.QtGui import QFontMetrics
    view = compare_view(qtbot, 900, 800)
    view.set_records([recorded("scaling-mlx"), recorded("scaling-torch")])
    axis = view.bars.axis
    assert len(axis.names) >= 2
    qtbot.waitUntil(lambda: axis.width() > 100)
    labels = axis.tickStrings([float(i) for i in range(len(axis.names))], 1, 1)
    assert all(labels)
    room = axis.width() / (len(axis.names) + 0.2)
    fm = QFontMetrics(axis.font())
    assert all(fm.horizontalAdvance(t) <= room for t in labels)


def test_a_short_log_axis_labels_every_decade(panel):
    panel.show_records(gpu_and_cpu())
    tflops = panel.curves["tflops"]
    assert tflops.axis_mode() == "log"
    axis = tflops.plot.getAxis("left")
    lo, hi = tflops.plot_item.vb.viewRange()[1]
    decades = [d for d in range(int(lo) - 1, int(hi) + 2) if lo <= d <= hi]
    assert len(decades) >= 5
    # 150 px for all of them: one label every third decade ("10" and "1K") before.
    ticks = [v for _, values in axis.tickValues(lo, hi, 150) for v in values]
    assert len(ticks) >= len(decades) // 2 + 1


def test_results_size_status_and_device_to_their_text_and_hide_an_empty_machine(window):
    from siliconbench.gui.results_browser import DEVICE, MACHINE, STATUS
    runs = gpu_and_cpu()
    for rec in runs:
        window.store.save(rec)
    window.results.reload()
    view = window.results.view
    fm = view.fontMetrics()
    longest_device = max(fm.horizontalAdvance(window.results.model.cell(r, DEVICE))
                         for r in runs)
    assert view.columnWidth(DEVICE) >= min(280, longest_device)
    assert view.columnWidth(STATUS) > 60
    assert not view.isColumnHidden(MACHINE)


def test_a_cancel_is_not_painted_like_a_warning():
    from siliconbench.gui.results_browser import STATUS, RunTableModel
    from siliconbench.gui.theme import LIGHT
    warned = recorded("gemm-mlx")
    assert warned.warnings
    cancelled = recorded("gemm-torch")
    cancelled.status, cancelled.reason = "cancelled", "cancelled"
    model = RunTableModel()
    model.set_records([warned, cancelled])
    colour = [model.data(model.index(i, STATUS), Qt.ItemDataRole.ForegroundRole).name()
              for i in range(2)]
    assert colour == [LIGHT.warning.lower(), LIGHT.muted.lower()]


def test_a_long_reference_title_ends_in_an_ellipsis(qtbot):
    view = compare_view(qtbot, 720, 520)
    combo = view.reference_combo
    qtbot.waitUntil(lambda: combo.width() > 0)
    shown = combo.displayed_text()
    assert shown != combo.currentText() and shown.endswith("…")


def test_a_peak_label_without_room_is_named_in_the_caption(panel):
    from tests.helpers.h200_records import h100_runs
    gemm = [h200("h200-gemm")] + [r for r in h100_runs() if r.workload == "gemm"]
    panel.show_records(gemm)
    tflops = panel.curves["tflops"]
    panel.setCurrentWidget(tflops)
    tflops.resize(500, 260)         # little room: some labels cannot be placed
    tflops._place_labels()
    for line in tflops._peak_lines:
        text = line.label.textItem.toPlainText()
        assert line.label.isVisible() or text in tflops.caption.text()


def test_name_machine_shows_the_name_on_the_card_and_the_queue(window):
    from siliconbench.core.machine import MachineInfo
    from siliconbench.core.runner import RunSpec
    from siliconbench.gui.run_queue import RunJob
    rec = h200("h200-gemm")
    window.store.save(rec)
    window.results.reload()
    window.machine_card.set_machine(MachineInfo.from_dict(rec.machine))
    job = RunJob(RunSpec("gemm", "torch", "cuda", {}), "gemm (test)")
    job.record, job.state = h200("h200-bw"), "ok"
    window.queue.jobs.append(job)
    window.results.rename_machine("Lab H200", [rec])
    assert window.machine_card.title.text() == "Lab H200"
    assert job.record.machine_label == "Lab H200"
    assert window.results.model.records[0].machine_label == "Lab H200"


def test_with_the_sidebar_the_window_keeps_room_for_the_charts(window):
    from siliconbench.gui.main_window import MIN_CHARTS_W, MIN_WINDOW
    window.show_sidebar(True)
    window.resize(*MIN_WINDOW)
    assert window.right_split.width() >= MIN_CHARTS_W     # at 720 it had 270 px
    window.show_sidebar(False)
    window.resize(*MIN_WINDOW)
    assert window.width() == MIN_WINDOW[0]
