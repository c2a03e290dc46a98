"""The Sustained chart on sustained runs this machine really recorded (tests/data/sustained):
throughput per interval on top, the clock below it on the same time axis, the burst and
sustained windows drawn at the record's own figures."""

import json
from pathlib import Path

import pyqtgraph as pg
import pytest

from siliconbench.core.results import RunRecord
from siliconbench.core.telemetry.burst import chart_data
from siliconbench.gui.charts.sustained import SustainedChart

HERE = Path(__file__).parents[1] / "data" / "sustained"


def record(name: str) -> RunRecord:
    return RunRecord.from_dict(json.loads((HERE / name).read_text("utf-8")))


@pytest.mark.parametrize("name", ["gemm-cpu-1min.json", "llm-cpu-1min.json"])
def test_the_chart_draws_the_records_figures_on_one_time_axis(qtbot, name):
    rec = record(name)
    [entry] = rec.telemetry["sustained"]
    chart = SustainedChart()
    qtbot.addWidget(chart)
    chart.set_records([rec])
    assert not chart.empty.isVisibleTo(chart)
    # Throughput, then the clock this Linux VM reports (/proc/cpuinfo): no power, no heat.
    assert list(chart.plots) == ["throughput", "clock"]
    assert chart.plots["clock"].getViewBox().linkedView(pg.ViewBox.XAxis) is \
        chart.plots["throughput"].getViewBox()
    curves = [i for i in chart.plots["throughput"].items if isinstance(i, pg.PlotDataItem)]
    xs, ys = curves[0].getData()
    step = entry["interval_s"]
    assert list(ys) == [v for _, v in entry["intervals"]]
    assert list(xs) == [t + step / 2 for t, _ in entry["intervals"]]
    # The burst and sustained lines at the record's figures, over their windows.
    flat = [(tuple(c.getData()[0]), tuple(c.getData()[1])) for c in curves[1:]]
    assert ((0.0, entry["burst_s"]), (entry["burst"], entry["burst"])) in flat
    assert ((entry["sustained_from_s"], entry["span_s"]),
            (entry["sustained"], entry["sustained"])) in flat
    assert f"sustained {entry['ratio']:.2f}× of its burst" in chart.caption.text()
    [clock] = [i for i in chart.plots["clock"].items if isinstance(i, pg.PlotDataItem)]
    cx, _ = clock.getData()
    assert min(cx) >= -step and max(cx) <= entry["span_s"] + step


def test_a_run_without_sustained_mode_says_how_to_get_one(qtbot):
    chart = SustainedChart()
    qtbot.addWidget(chart)
    from tests.helpers.recorded import recorded
    chart.set_records([recorded("gemm-torch")])      # a real GEMM run, not in sustained mode
    assert chart.empty.isVisibleTo(chart) and "--duration" in chart.empty.text()
    assert chart.plots == {}


def test_chart_data_panes_on_real_nvidia_telemetry():
    """An H100 record's series under a sustained entry: the clock, power and temperature
    panes take the GPU's SM clock, board power and temperature, cut to the entry's span."""
    rec = RunRecord.from_dict(json.loads((Path(__file__).parents[1] / "data" / "h100" /
                                          "h100-gemm.json").read_text("utf-8")))
    rec.telemetry["sustained"] = [{
        "metric": "tflops", "unit": "TFLOPS", "point": {"size": 8192}, "start_s": 4.0,
        "span_s": 6.0, "interval_s": 1.0, "intervals": [[0.0, 700.0], [1.0, 600.0]],
        "burst": 700.0, "burst_s": 1.0, "sustained": 600.0, "sustained_from_s": 2.0,
        "ratio": 600 / 700, "drop_at_s": 1.0, "coincided": ["none seen"]}]
    [d] = chart_data(rec)
    assert {k: p["series"] for k, p in d["panes"].items()} == {
        "clock": "gpu_sm_clock_mhz", "power": "gpu_power_w",
        "temperature": "gpu_temperature_c"}
    # From 3.04 s: an interval before the blocks began (idle, 345 MHz), then under load.
    assert d["panes"]["clock"]["y"][:3] == [345.0, 1980.0, 1140.0]
    assert all(-1.0 <= x <= 7.0 for x in d["panes"]["clock"]["x"])
    assert d["said"] == "first lasting drop of more than 5% at 1 s; then: none seen"
