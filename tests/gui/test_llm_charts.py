"""The LLM tab on run records real runs wrote: the GPUs' LLM runs (tests/data/h100, h200).
Legend lines stay one line each, the whole name on hover."""

from __future__ import annotations

import pytest

from siliconbench.gui.charts.panel import ChartPanel
from tests.h200_records import h100, h200

DECODE, PREFILL = "decode_tokens_per_s", "prefill_tokens_per_s"


@pytest.fixture
def panel(qtbot):
    p = ChartPanel()
    qtbot.addWidget(p)
    p.resize(820, 620)        # the charts' share of a 1440x900 window
    p.show()
    return p


def gpu_llm_runs() -> list:
    return [r for stem in ("h100-llm-loops", "h100-llm1b", "h100-llm8b-quick")
            for r in h100(stem)] + [h200("h200-llm8b")]


# ---------------------------------------------------------------- legends

@pytest.mark.parametrize("metric", [PREFILL, DECODE])
def test_llm_legend_lines_stay_one_line_each_the_whole_name_on_hover(panel, qtbot, metric):
    """Each run's name (device, framework, time, model, precision, batch, tokens, bound)
    wrapped over two to five lines: the legend showed three runs of nine."""
    panel.show_records(gpu_llm_runs())
    panel.setCurrentWidget(panel.tab_of(metric))
    chart = panel.curves[metric]
    legend = chart.legend
    qtbot.waitUntil(lambda: legend.isVisible() and legend.count() >= 5, timeout=3000)
    qtbot.wait(20)
    names = chart.legend_names()
    fm = legend.fontMetrics()
    one_line = fm.lineSpacing() * 2
    for i in range(legend.count()):
        item = legend.item(i)
        assert legend.visualItemRect(item).height() < one_line, item.text()
        assert item.toolTip() == names[i]     # the whole name on hover
    # The names are longer than the legend is wide: the list elides them ('…'), never wraps.
    assert any(fm.horizontalAdvance(n) > legend.viewport().width() for n in names)
    assert not legend.wordWrap()
    # One line each: the legend shows as many runs as its height holds.
    shown = [i for i in range(legend.count())
             if legend.visualItemRect(legend.item(i)).bottom() <= legend.viewport().height()]
    assert len(shown) >= min(legend.count(), legend.viewport().height() // one_line)
