"""What was left of issue 41's Compare on the real records (tests/data): the Results' Machine
filter keeps two hosts of one CPU name apart; a GPU's GEMM beside a CPU's that share no point
gets its best vs best in the verdict table, on the chart and in the CSV export; a one-rank
all-reduce side is left off the chart's legend, the chart saying why; the narrowest window
and a long or short chart's caption read whole."""

from __future__ import annotations

import csv
import io

import pytest

from siliconbench.gui.compare_view import CompareView
from tests.helpers.h200_records import h100, h200, h200_runs
from tests.helpers.recorded import recorded

# ---------------------------------------------------------------- the Machine filter

def test_the_machine_filter_lists_two_hosts_of_one_cpu_name_as_two(qtbot, store):
    """The H100 host and the H200 host both report 'Intel(R) Xeon(R) Processor': the filter
    listed one machine holding both; now each is a machine of its own, named apart."""
    from siliconbench.gui.results_browser import MACHINE, ResultsBrowser
    h100_runs, h200s = h100("h100-quick-suite"), h200_runs()
    assert {r.machine_label for r in h100_runs + h200s} == {"Intel(R) Xeon(R) Processor"}
    store.import_records(h100_runs + h200s + [recorded("gemm-torch")])
    browser = ResultsBrowser(store)
    qtbot.addWidget(browser)
    browser.reload()
    combo = browser.combos[MACHINE]
    xeons = [combo.itemText(i) for i in range(1, combo.count())
             if combo.itemText(i).startswith("Intel(R) Xeon(R) Processor")]
    assert len(xeons) == 2, xeons
    h200_name = next(x for x in xeons if "H200" in x)
    browser.set_filter("Machine", h200_name)
    assert browser.shown_ids({r.id for r in h100_runs + h200s}) == {r.id for r in h200s}
    # The column says what the filter lists: the rows read apart too.
    assert browser.model.cell(h200s[0], MACHINE) == h200_name


# ---------------------------------------------------------------- best vs best in the app

def best_float32(rec) -> tuple[int, float]:
    """The size and value of a GEMM run's best float32 point, read off its rows."""
    rows = [r for r in rec.rows if r.metric == "tflops" and r.params["dtype"] == "float32"
            and r.value is not None]
    best = max(rows, key=lambda r: r.value)
    return best.params["size"], best.value


def test_a_gpu_beside_a_cpu_that_share_no_point_compare_best_vs_best(view, tmp_path):
    """The H200's GEMM sweep starts at N=4096, this CPU's stops at 2048: the verdict table
    was empty and the chart said 'Nothing to draw'. Now the table has a best vs best row
    naming the points it divides, the chart draws both sweeps with each side's best ringed
    and the ratio under it, and the CSV export carries the same lines."""
    import math

    from siliconbench.core.numbers import quantity
    gpu, cpu = h200("h200-gemm"), recorded("gemm-torch")
    (gpu_n, _), (cpu_n, _) = best_float32(gpu), best_float32(cpu)
    view.set_records([gpu, cpu])
    cmp = view.comparison
    assert not cmp.rows
    (best,) = cmp.best
    header = view.headers()
    assert view.table.rowCount() == 1
    row = {header[j]: view.table.item(0, j).text() for j in range(len(header))}
    assert row["Point"] == "best vs best · dtype=float32"
    assert row["A"] == quantity(best.cells[0].value, "TFLOPS")
    assert row["B"] == quantity(best.cells[1].value, "TFLOPS")
    # 'best vs best' in the row's Point, the points the ratio divides in its verdict, and
    # the whole sentence on hover.
    assert row["B vs A"].endswith(f"slower (size={cpu_n} vs size={gpu_n})")
    assert f"best vs best: size={cpu_n} vs size={gpu_n}" in \
        view.table.item(0, header.index("B vs A")).toolTip()
    assert not any(view.table.isColumnHidden(header.index(c)) for c in ("A", "B", "B vs A"))
    # One workload and one metric: the chart's list names them, their columns give room.
    assert view.table.isColumnHidden(header.index("Workload"))
    assert view.table.isColumnHidden(header.index("Metric"))
    point = view.table.item(0, header.index("Point"))      # read whole in the room left
    assert view.table.columnWidth(header.index("Point")) >= \
        view.table.fontMetrics().horizontalAdvance(point.text())
    assert f"at size={gpu_n}" in view.table.item(0, header.index("A")).toolTip()
    # The chart: both sweeps, each side's best ringed where its point lies, said under it.
    chart = view.current_chart()
    assert chart is view.curves["tflops"] and chart.has_data()
    assert sorted(x for x, _ in chart.ringed()) == sorted([math.log2(gpu_n), math.log2(cpu_n)])
    assert {s.key[0] for s in chart.series} == {gpu.id, cpu.id}
    assert f"B {quantity(best.cells[1].value, 'TFLOPS')} at size={cpu_n}" in \
        chart.caption.text()
    assert "Ringed: each side's best" in chart.caption.text()
    # Exported, the CSV has each side's best (it held its header alone).
    out = tmp_path / "cmp.csv"
    view.export_report(str(out))
    lines = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert [(line["run_id"], line["size"]) for line in lines] == \
        [(gpu.id, str(gpu_n)), (cpu.id, str(cpu_n))]
    # Sides that share points ring nothing: the chart is the curves compared.
    view.set_records([recorded("gemm-torch"), recorded("gemm-mlx")])
    assert view.comparison.rows and view.current_chart().ringed() == []


def one_rank_repeat():
    """The H200's one-rank all-reduce and a repeat of it an hour later."""
    first, again = h200("h200-allred"), h200("h200-allred")
    again.id = "a" * 32
    again.created_at = first.created_at.replace("T04:", "T05:")
    assert again.created_at != first.created_at
    return [first, again]


def choose_chart(view: CompareView, metric: str) -> None:
    combo = view.chart_combo
    combo.setCurrentIndex(next(i for i in range(combo.count())
                               if combo.itemData(i)[1] == metric))


def test_one_rank_all_reduce_sides_say_in_the_chart_why_nothing_is_drawn(view):
    """A one-rank all-reduce's bus bandwidth is 0 by definition: the Compare chart listed
    such runs in its legend with nothing drawn and no word why. Now they are left off the
    bus-bandwidth chart's legend and the chart says why; their algorithm bandwidth draws."""
    view.set_records(one_rank_repeat())
    cmp = view.comparison
    assert len(cmp.sides) == 2 and len(cmp.notes) == 2
    assert not view.table.isColumnHidden(view.headers().index("Metric"))   # three metrics
    choose_chart(view, "busbw")
    chart = view.current_chart()
    assert chart.legend_names() == [] and not chart.has_data()
    for side in cmp.sides:
        assert f"{side.label} ran all-reduce on one rank" in chart.empty.text()
    choose_chart(view, "algbw")
    assert view.current_chart().has_data() and len(view.current_chart().legend_names()) >= 2

    # Beside two-rank runs on this CPU: the bus-bandwidth chart's legend holds those, and
    # its caption says why the H200 has no line.
    view.set_records(one_rank_repeat() + [recorded("allreduce-torch"),
                                          recorded("allreduce-mlx")])
    choose_chart(view, "busbw")
    chart = view.current_chart()
    assert chart.has_data() and chart.legend_names()
    assert not any("H200" in name for name in chart.legend_names())
    assert "ran all-reduce on one rank" in chart.caption.text()


# ---------------------------------------------------------------- the window's narrowest

@pytest.mark.parametrize("sidebar", [True, False], ids=["with the sidebar", "without"])
def test_compare_fits_the_narrowest_window_without_scrolling_sideways(window, qtbot, sidebar):
    """At the window's minimum size with the sidebar the charts get 480 px and Compare asked
    for 600: it scrolled sideways, Export Report… out of view. Its buttons now fit whole,
    and the chart's list ends in '…' where its text does not fit."""
    from tests.helpers.gui import show_compare
    view = show_compare(window, qtbot, [h200("h200-gemm"), recorded("gemm-torch")], sidebar)
    assert view.scroll.horizontalScrollBar().maximum() == 0
    for button in (view.add_reference_button, view.clear_references_button,
                   view.export_chart_button, view.export_report_button,
                   view.run_reference_button):
        assert button.width() >= button.sizeHint().width(), button.text()
        assert button.mapTo(view.scroll.viewport(), button.rect().topRight()).x() <= \
            view.scroll.viewport().width()
    combo = view.chart_combo
    shown = combo.displayed_text()
    assert shown == combo.currentText() or shown.endswith("…")


def test_a_long_caption_takes_three_lines_and_says_the_rest_on_hover(view, qtbot):
    """Ten sides: the curve chart's caption (best vs best, six peaks, points not measured)
    ran to six lines at 1440x900 and left the plot a strip. Three lines now, the whole
    caption on hover."""
    from siliconbench.gui.charts.chart import CAPTION_LINES, SHORT_CHART_H
    from tests.helpers.gui import ten_sides
    view.resize(820, 800)      # the tab's share of a 1440x900 window's width, tall
    view.set_records(ten_sides())
    qtbot.wait(50)
    caption = view.current_chart().caption
    assert view.current_chart().height() >= SHORT_CHART_H    # not a short chart's one line
    shown = caption.displayed()
    assert len(shown) == CAPTION_LINES and shown[-1].endswith("…")
    assert len("".join(shown)) < len(caption.text())          # it would need more lines
    assert caption.height() <= CAPTION_LINES * caption.fontMetrics().lineSpacing() + 2
    assert caption.toolTip() == caption.text() and "Ringed" in caption.text()


def test_a_short_chart_keeps_its_caption_off_the_plot(qtbot):
    """At 720x520 the LLM tab's two charts are about 145 px tall each: their two-line
    captions were drawn over the x axis's title. A short chart's caption is one line."""
    from siliconbench.gui.charts.chart import SHORT_CHART_H
    from siliconbench.gui.charts.curve import CurveChart
    chart = CurveChart("decode_tokens_per_s")
    qtbot.addWidget(chart)
    chart.set_records([r for stem in ("h100-llm1b", "h100-llm8b-quick") for r in h100(stem)]
                      + [h200("h200-llm8b")])
    chart.resize(700, 145)
    chart.show()
    qtbot.waitExposed(chart)
    assert chart.height() < SHORT_CHART_H and chart.has_data()
    assert len(chart.caption.displayed()) == 1
    assert chart.caption.geometry().top() >= chart.plot.geometry().bottom()
    chart.resize(700, 400)
    qtbot.wait(20)
    assert len(chart.caption.displayed()) > 1          # the whole caption where there is room


def test_a_best_vs_best_row_gives_words_only_where_the_point_rows_do_not(view):
    """This CPU's torch, TensorFlow and MLX GEMM runs share N=64 and 128; the H100's sweep
    starts at 256. The best vs best row gives D (the H100) its ratio; B's and C's are in the
    point rows above it, and the best row repeated B's as '3.93× slower (size=128 vs
    size=128)'."""
    cpu = [recorded(s) for s in ("gemm-torch", "gemm-tensorflow", "gemm-mlx")]
    gpu = h100("h100-gemm")
    view.set_records(cpu + gpu)
    cmp = view.comparison
    header = view.headers()
    d = next(i for i, s in enumerate(cmp.sides) if s.records[0] in gpu)
    letter = header[3 + d]
    rows = [{header[j]: view.table.item(i, j).text() for j in range(len(header))}
            for i in range(view.table.rowCount())]
    (best,) = [r for r in rows if r["Point"].startswith("best vs best")]
    assert best[f"{letter} vs A"].endswith(")") and "faster (size=" in best[f"{letter} vs A"]
    for other in {"B", "C"} - {letter}:
        assert best[f"{other} vs A"] == "" and best[other]      # its value, no words
        assert any(r[f"{other} vs A"] for r in rows if r is not best)
