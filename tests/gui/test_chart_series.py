"""Which rows go on which chart and what each series is called (siliconbench.gui.chart_series), on the run
records real runs wrote (tests/helpers/recorded.py), without Qt."""

from __future__ import annotations

import subprocess
import sys

import pytest

from siliconbench.core.catalogue import catalogue
from siliconbench.gui.chart_series import (
    BARS,
    CURVE_METRICS,
    SCALING,
    TELEMETRY_UNITS,
    bar_series,
    chart_of,
    curve_series,
    peak_of,
    sensor_title,
    series_title,
    size_label,
    telemetry_series,
)
from tests.helpers.recorded import every_run, recorded, stems

# The chart each workload's headline rows belong on; mlp (seconds to train) and memory (the
# largest batch) are table-only.
CHART_OF_WORKLOAD = {"gemm": "tflops", "bandwidth": "gb_per_s", "train": BARS, "infer": BARS,
                     "mlp": None, "memory": None, "llm": "decode_tokens_per_s",
                     "allreduce": "busbw", "scaling": SCALING, "serve": "output_tok_s"}
# Charts of rows other than the headline: llm's prefill, over the prompt length; a serving
# run's per-user decode rate and time to first token, over the requests in flight.
OTHER_CHARTS = {"llm": {"prefill_tokens_per_s"}, "serve": {"decode_tok_s", "ttft_ms"}}


def test_choosing_and_naming_series_needs_no_qt():
    code = ("import sys, siliconbench.gui.chart_series, tests.helpers.recorded;"
            "print(sorted(m for m in ('PySide6', 'pyqtgraph') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("stem", stems())
def test_only_a_workloads_headline_rows_go_on_its_chart(stem):
    rec = recorded(stem)
    headline = catalogue()[rec.workload].metric
    charted = {chart_of(rec.workload, r) for r in rec.rows if r.metric == headline}
    expected = CHART_OF_WORKLOAD[rec.workload]
    assert charted == {expected}
    # Latencies, FLOP rates of models, times to first token and peak memory stay in the table.
    others = {chart_of(rec.workload, r) for r in rec.rows if r.metric != headline}
    assert others - {None} == OTHER_CHARTS.get(rec.workload, set())
    assert all(chart_of(rec.workload, r) is None for r in rec.rows
               if r.metric in ("ttft_ms", "peak_memory", "decode_roofline")
               and rec.workload != "serve")   # serving's TTFT is a curve over concurrency


def test_gemm_runs_make_one_curve_each_over_the_matrix_size_named_by_run_and_dtype():
    runs = [recorded("gemm-torch"), recorded("gemm-torch-second")]
    series = curve_series(runs, "tflops")
    assert [s.name for s in series] == [f"{r.identity} · float32" for r in runs]
    assert len({s.name for s in series}) == 2  # two runs of one machine stay apart
    for s, rec in zip(series, runs, strict=True):
        assert s.x == "size" and s.device == rec.device_name
        sizes = [r.params["size"] for r in rec.rows if r.value is not None]
        assert [s.x_of(r) for r in s.rows] == sorted(sizes)
        assert s.xs() == [float(int(n).bit_length() - 1) for n in sorted(sizes)]  # 64 -> 6
    assert curve_series(runs, "gb_per_s") == []


def test_bandwidth_makes_one_curve_per_operation_over_the_array_size():
    rec = recorded("bandwidth-torch")
    series = curve_series([rec], "gb_per_s")
    ops = sorted({r.params["op"] for r in rec.rows})
    assert [s.name for s in series] == [f"{rec.identity} · float32 · {op}" for op in ops]
    assert all(s.x == "size_mb" and len(s.rows) == 2 for s in series)


def test_llm_prefill_runs_over_the_prompt_on_a_log_axis_decode_over_the_depth_on_a_linear_one():
    runs = [recorded("llm-torch"), recorded("llm-mlx")]
    prefill = curve_series(runs, "prefill_tokens_per_s")
    decode = curve_series(runs, "decode_tokens_per_s")
    for series, extra in ((prefill, set()), (decode, {"8 tokens generated"})):
        assert [s.name.split(" · ")[:3] for s in series] == [r.identity.split(" · ")
                                                            for r in runs]
        assert [set(s.name.split(" · ")[3:]) for s in series] == \
            [{"tiny", "float32", "batch 1"} | extra] * 2
    for p, d, rec in zip(prefill, decode, runs, strict=True):
        rows = {m: [r for r in rec.rows if r.metric == m] for m in
                ("prefill_tokens_per_s", "decode_tokens_per_s", "decode_roofline")}
        assert p.x == "prompt" and p.rows == rows["prefill_tokens_per_s"]
        assert p.xs() == [4.0, 6.0, 8.0]   # log2 of 16, 64, 256
        assert d.x == "depth" and d.rows == rows["decode_tokens_per_s"]
        assert d.xs() == [0.0, 64.0, 256.0]   # linear: depth 0 is a point like any other
        # The decode bound is the run's own roofline rows, named by the ceiling it divides.
        assert d.bounds == rows["decode_roofline"] and len(d.bounds) == 3
        assert d.bound_label == "memory bound (measured triad)"
        assert rec.settings["memory_bound"]["source"] == "measured triad"
        # Its physical peak is no bound of tokens/s: none drawn; prefill has no bound row.
        assert p.peak is d.peak is None and p.bounds == []


def test_a_decode_bound_from_the_published_peak_says_so_and_none_is_drawn_without_one():
    rec = recorded("llm-torch")
    rec.settings["memory_bound"]["source"] = "published peak"
    [s] = curve_series([rec], "decode_tokens_per_s")
    assert s.bound_label == "memory bound (published peak)"
    rec.rows = [r for r in rec.rows if r.metric != "decode_roofline"]
    [s] = curve_series([rec], "decode_tokens_per_s")
    assert s.bounds == [] and s.bound_label == ""


def test_every_curve_metric_names_its_axes_with_units_and_scale():
    for metric, curve in CURVE_METRICS.items():
        assert curve.unit and curve.y_name and curve.tab
        assert ("log₂ scale" in curve.x_label) == curve.log_x, metric
        assert ("linear" in curve.x_label) == (not curve.log_x), metric


def test_training_and_inference_bars_group_by_model_one_series_per_run():
    train, infer = recorded("train-torch"), recorded("infer-torch")
    models, series = bar_series([train, infer])
    assert models == ["distilbert", "resnet18"]  # first seen first
    # Named by what sets them apart: training beside inference, the precision said in words
    # (never a bare "fp32" or "device").
    assert [s.name for s in series] == [f"{train.identity} · batch 2 · training",
                                        f"{infer.identity} · batch 2 · data on device · inference"]
    rates = [r for r in infer.rows if r.metric == "samples_per_s"]
    assert series[1].rows == rates


def test_a_series_title_names_words_plainly_and_numbers_by_their_parameter():
    rec = recorded("gemm-torch")
    assert series_title(rec, {}) == rec.identity
    assert series_title(rec, {"dtype": "float16", "batch_size": 8}) == \
        f"{rec.identity} · float16 · batch 8"
    assert series_title(rec, {"model": "mlp", "widths": "256"}) == \
        f"{rec.identity} · mlp · widths 256"


def test_the_peak_comes_from_the_table_entry_the_run_named():
    from siliconbench.core.peaks import load_peaks
    rec = recorded("gemm-torch")
    assert peak_of(rec, "tflops", {"dtype": "float32"}, rec.rows) is None  # a CPU: unknown
    peak = next(p for p in load_peaks() if p.bandwidth_gbs and p.tflops_for("float32"))
    rec.settings["peak"] = peak.name
    assert peak_of(rec, "tflops", {"dtype": "float32"}, rec.rows) == peak.tflops_for("float32")
    assert peak_of(rec, "gb_per_s", {}, rec.rows) == peak.bandwidth_gbs


def test_telemetry_is_grouped_by_unit_bytes_as_gigabytes():
    rec = recorded("gemm_cpu_tiny")
    by_unit = telemetry_series([rec])
    recorded_series = rec.telemetry["series"]
    units = {"GB" if s["unit"] == "bytes" else s["unit"] for s in recorded_series.values()}
    assert set(by_unit) == units
    assert list(by_unit) == [u for u in TELEMETRY_UNITS if u in units]
    for unit, series in by_unit.items():
        for (run_id, sensor), (label, times, values) in series.items():
            raw = recorded_series[sensor]
            # One run: no run name needed; the sensor in words, never its key.
            assert run_id == rec.id and label == sensor_title(sensor) and "_" not in label
            scale = 1e-9 if raw["unit"] == "bytes" else 1.0
            kept = [(t, v) for t, v in zip(raw["t"], raw["v"], strict=True) if v is not None]
            assert times == [t for t, _ in kept]
            assert values == pytest.approx([v * scale for _, v in kept])


def test_with_several_runs_each_telemetry_line_names_its_run():
    runs = [r for r in every_run() if r.telemetry][:2]
    for series in telemetry_series(runs).values():
        for (run_id, sensor), (label, _, _) in series.items():
            rec = next(r for r in runs if r.id == run_id)
            assert label == f"{rec.identity} · {sensor_title(sensor)}"


def test_sizes_are_labelled_in_binary_units():
    assert [size_label(n) for n in (64, 8192, 2**20, 3 * 2**30, 1000)] == \
        ["64", "8192", "1M", "3G", "1000"]
