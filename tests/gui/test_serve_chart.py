"""The Serving tab's curves from a real `run serve` record (mlx_lm.server on the tiny preset,
this 2-core CPU: tests/data/serve): total output, per-user decode rate and time to first
token over the requests in flight, each with its spread; an llm run's time to first token
(no concurrency) stays off them."""

from __future__ import annotations

import json
from pathlib import Path

from siliconbench.core.results import RunRecord
from siliconbench.gui.chart_series import CURVE_METRICS, chart_of, curve_series

DATA = Path(__file__).resolve().parent.parent / "data" / "serve"


def record() -> RunRecord:
    return RunRecord.from_dict(json.loads((DATA / "mlx-lm-server-tiny-cpu.json").read_text()))


def test_serving_curves_run_over_the_requests_in_flight():
    rec = record()
    for metric in ("output_tok_s", "decode_tok_s", "ttft_ms"):
        assert CURVE_METRICS[metric].tab == "Serving"
        (series,) = curve_series([rec], metric)
        assert [series.x_of(r) for r in series.rows] == [1, 2, 4]
        values = {r.params["concurrency"]: r.value for r in rec.rows if r.metric == metric}
        assert [r.value for r in series.rows] == [values[1], values[2], values[4]]
    # per request rows carry their spread (the band); the level's total is one figure
    (ttft,) = curve_series([rec], "ttft_ms")
    assert all(r.stats is not None and r.stats.n == 8 for r in ttft.rows)
    # percentile rows and the server's own figures are tabled, not drawn
    assert chart_of("serve", next(r for r in rec.rows if r.metric == "ttft_p99_ms")) is None


def test_an_llm_runs_time_to_first_token_is_not_a_serving_curve():
    from tests.helpers.recorded import recorded
    rows = [r for r in recorded("llm-torch").rows if r.metric == "ttft_ms"]   # a real llm run
    assert rows and all(chart_of("llm", row) is None for row in rows)


def test_the_chart_panel_draws_a_serving_run(qtbot):
    from siliconbench.gui.charts.panel import ChartPanel
    panel = ChartPanel()
    qtbot.addWidget(panel)
    assert "Serving" in [panel.tabText(i) for i in range(panel.count())]
    panel.show_records([record()])
    for metric in ("output_tok_s", "decode_tok_s", "ttft_ms"):
        assert panel.curves[metric].has_data()
