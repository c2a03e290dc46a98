"""The LLM tab on run records real runs wrote: the GPUs' LLM runs (tests/data/h100, h200) and
a context sweep on this CPU (tests/data/records/llm-torch-context-sweep.json). Legend lines
stay one line each, the whole name on hover; a context sweep's depths lie on a log2 axis
with ticks at the depths measured."""

from __future__ import annotations

import pytest

from siliconbench.gui.chart_series import LOG_DEPTHS_BEYOND, curve_series, x_title
from siliconbench.gui.charts.panel import ChartPanel
from tests.helpers.h200_records import h100, h200
from tests.helpers.recorded import recorded

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


def sweep():
    return recorded("llm-torch-context-sweep")


def depths(rec) -> list[int]:
    return sorted({r.params["depth"] for r in rec.rows if r.metric == DECODE})


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


# ---------------------------------------------------------------- a context sweep's depths

def test_a_context_sweeps_depths_go_on_a_log2_axis_zero_a_doubling_below():
    rec = sweep()
    assert rec.params["context_sweep"] and depths(rec)[0] == 0
    above = [d for d in depths(rec) if d]
    assert max(above) > LOG_DEPTHS_BEYOND * min(above)
    [s] = curve_series([rec], DECODE)
    assert s.log_x
    # Doublings lie a step apart, and zero a whole step below the least depth.
    where = {s.x_of(r): s.position(r) for r in s.rows}
    assert where[1024] - where[512] == where[2048] - where[1024] == 1.0
    assert where[512] - where[0] == 1.0
    # Its bound lies at the same positions as its points.
    assert [s.position(b) for b in s.bounds] == s.xs()
    assert "log₂" in x_title([rec], DECODE, s.log_x)


@pytest.mark.parametrize("case", ["llm-torch", "h100-llm-loops"])
def test_depths_that_span_little_stay_on_a_linear_axis(case):
    """The default depths (0, 64, 256 here) and 0 beside 32K read plainly on a linear axis,
    the bound falling as 1/(a + b·depth)."""
    runs = [recorded(case)] if case == "llm-torch" else h100(case)
    series = curve_series(runs, DECODE)
    assert series and not any(s.log_x for s in series)
    assert "linear" in x_title(runs, DECODE, False)


def test_the_decode_chart_of_a_sweep_ticks_its_depths(panel, qtbot):
    rec = sweep()
    panel.show_records([rec])
    panel.setCurrentWidget(panel.tab_of(DECODE))
    decode, prefill = panel.curves[DECODE], panel.curves[PREFILL]
    qtbot.waitUntil(decode.has_data, timeout=3000)
    qtbot.wait(20)
    axis = decode.plot_item.getAxis("bottom")
    assert axis.labelText == "Context (tokens, log₂ scale)"
    lo, hi = decode.plot_item.vb.viewRange()[0]
    ticks = [v for _, values in axis.tickValues(lo, hi, axis.width()) for v in values]
    labels = axis.tickStrings(ticks, 1.0, 1.0)
    # A tick at every depth measured, each as it reads: 0, 512, 1K, 2K, then the deepest
    # (held to the model's positions less the tokens generated).
    deepest = depths(rec)[-1]
    assert labels == ["0", "512", "1K", "2K", str(deepest) if deepest % 1024 else
                      f"{deepest // 1024}K"]
    # The points spread evenly: the three smallest depths no longer crowd the left.
    [s] = decode.series
    xs = s.xs()
    assert xs[1] - xs[0] == xs[2] - xs[1]
    assert (xs[1] - lo) / (hi - lo) > 0.15
    # The prompt lengths of the same sweep read the same way.
    paxis = prefill.plot_item.getAxis("bottom")
    plo, phi = prefill.plot_item.vb.viewRange()[0]
    pticks = [v for _, values in paxis.tickValues(plo, phi, 800) for v in values]
    assert paxis.tickStrings(pticks, 1.0, 1.0) == ["512", "1K", "2K", "4K"]
    # A run of few depths after it: back to linear, its ticks plain numbers.
    panel.show_records([recorded("llm-torch")])
    assert not axis.log and axis.labelText == "Context depth in tokens (linear)"
