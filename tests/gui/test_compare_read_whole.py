"""Compare read whole (issue 50): the sides of the three M2 Max Macs named by machine in the
window, a side of repeats shown with its runs and spread, legends that keep the part of a
name that differs, exports with their whole caption and no 'Hover' sentence, SVG fonts a
browser renders sans serif, and the export saying where it saved. Mac records are made from
a real run as tests/core/test_compare_machines.py says."""

from __future__ import annotations

import re

import pytest

from siliconbench.gui.charts.export import export_chart
from siliconbench.gui.charts.legend import distinct_names
from siliconbench.gui.compare_view import CompareView
from tests.helpers.gui import shown
from tests.helpers.mac_records import gpu, mac_run, repeats_with_an_outlier, three_macs
from tests.helpers.recorded import recorded


@pytest.fixture
def view(qtbot):
    return shown(qtbot, CompareView(), 1440, 800)


def test_the_three_macs_are_three_sides_named_by_machine_in_the_window(view):
    view.set_records(three_macs())
    text = view.summary.text()
    assert "A = MacBook Pro (16-inch, 2023) · host" in text
    assert "B = Mac Studio (2023)" in text and "C = MacBook Pro (16-inch, 2023) · host" in text
    assert view.headers()[3:6] == ["A", "B", "C"]
    names = view.current_chart().legend_names()
    assert len(names) == 3 and len(set(names)) == 3


def test_a_side_of_repeats_shows_its_runs_and_spread(view):
    view.set_records([*repeats_with_an_outlier(), mac_run("Mac14,6", "my-laptop", 0.5)])
    assert "A = Mac Studio (2023) · 3 runs" in view.summary.text()
    tip = view.table.item(0, 3).toolTip()
    assert "3 runs" in tip and "median of the runs' medians" in tip and "run-to-run" in tip


def test_legend_names_keep_the_part_that_differs():
    names = ["NVIDIA H200 · TF32 on · 3 runs", "NVIDIA H200 · TF32 off · 3 runs"]
    shown = distinct_names(names, lambda t: len(t) <= 22)
    assert len(set(shown)) == 2 and "TF32 on" in shown[0] and "TF32 off" in shown[1]
    assert distinct_names(names, lambda t: True) == names


def test_a_narrow_legend_keeps_the_sides_apart(view, qtbot):
    view.set_records(three_macs())
    chart = view.current_chart()
    chart.legend.setFixedWidth(170)
    qtbot.waitUntil(lambda: len(set(chart.legend.shown_names())) == 3)
    shown = chart.legend.shown_names()
    assert any("host" in s for s in shown)


@pytest.mark.parametrize("suffix", ["svg", "png"])
def test_exports_carry_the_whole_caption_and_no_hover(view, tmp_path, suffix):
    view.set_records([gpu("h200-gemm"), recorded("gemm-torch")])
    chart = view.current_chart()
    caption = chart.caption.text()
    assert caption and "Hover" in caption          # on screen it says how to hover
    path = tmp_path / f"chart.{suffix}"
    view._write(lambda: export_chart(str(path), chart, view.chart_title()), str(path))
    assert view.saved_label.text() == f"Saved to {path}" and view.saved_label.isVisible()
    assert chart.caption.text() == caption          # the screen's caption put back
    if suffix == "svg":
        svg = path.read_text(encoding="utf-8")
        assert "Hover" not in svg
        families = re.findall(r'font-family="([^"]*)"', svg)
        assert families and all(f.endswith("sans-serif") for f in families)
        # The caption's first sentence is there whole (the screen elides it).
        first = caption.split(". ")[0]
        words = [w for w in re.findall(r"[A-Za-z]{4,}", first)]
        assert all(w in svg for w in words)
    else:
        assert path.read_bytes()[:4] == b"\x89PNG"
