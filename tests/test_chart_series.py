"""Which rows go on which chart and what each series is called (gui.chart_series), on the run
records real runs wrote (tests/recorded.py), without Qt."""

from __future__ import annotations

import subprocess
import sys

import pytest

from core.workloads import catalogue
from gui.chart_series import (BARS, SCALING, TELEMETRY_UNITS, bar_series, chart_of, curve_series,
                              peak_of, series_title, size_label, telemetry_series)
from tests.recorded import every_run, recorded, stems

# The chart each workload's headline rows belong on; mlp (seconds to train), memory (the
# largest batch) and llm (decode tokens/s over depth, whose chart is still to come) are
# table-only.
CHART_OF_WORKLOAD = {"gemm": "tflops", "bandwidth": "gb_per_s", "train": BARS, "infer": BARS,
                     "mlp": None, "memory": None, "llm": None, "allreduce": None,
                     "scaling": SCALING}


def test_choosing_and_naming_series_needs_no_qt():
    code = ("import sys, gui.chart_series, tests.recorded;"
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
    # Latencies, FLOP rates of models and peak memory stay in the table.
    others = {chart_of(rec.workload, r) for r in rec.rows if r.metric != headline}
    assert others <= {None}


def test_gemm_runs_make_one_curve_each_over_the_matrix_size_named_by_run_and_dtype():
    runs = [recorded("gemm-torch"), recorded("gemm-torch-second")]
    series = curve_series(runs, "tflops")
    assert [s.name for s in series] == [f"{r.identity} · float32" for r in runs]
    assert len({s.name for s in series}) == 2  # two runs of one machine stay apart
    for s, rec in zip(series, runs, strict=True):
        assert s.x == "size" and s.device == rec.device_name
        sizes = [r.params["size"] for r in rec.rows if r.value is not None]
        assert [s.x_of(r) for r in s.rows] == sorted(sizes)
        assert s.log_xs() == [float(int(n).bit_length() - 1) for n in sorted(sizes)]  # 64 -> 6
    assert curve_series(runs, "gb_per_s") == []


def test_bandwidth_makes_one_curve_per_operation_over_the_array_size():
    rec = recorded("bandwidth-torch")
    series = curve_series([rec], "gb_per_s")
    ops = sorted({r.params["op"] for r in rec.rows})
    assert [s.name for s in series] == [f"{rec.identity} · float32 · {op}" for op in ops]
    assert all(s.x == "size_mb" and len(s.rows) == 2 for s in series)


def test_training_and_inference_bars_group_by_model_one_series_per_run():
    train, infer = recorded("train-torch"), recorded("infer-torch")
    models, series = bar_series([train, infer])
    assert models == ["distilbert", "resnet18"]  # first seen first
    assert [s.name for s in series] == [f"{train.identity} · batch_size=2 · fp32",
                                        f"{infer.identity} · batch_size=2 · device"]
    rates = [r for r in infer.rows if r.metric == "samples_per_s"]
    assert series[1].rows == rates


def test_a_series_title_names_words_plainly_and_numbers_by_their_parameter():
    rec = recorded("gemm-torch")
    assert series_title(rec, {}) == rec.identity
    assert series_title(rec, {"dtype": "float16", "batch_size": 8}) == \
        f"{rec.identity} · float16 · batch_size=8"


def test_the_peak_comes_from_the_table_entry_the_run_named():
    from core.peaks import load_peaks
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
            assert run_id == rec.id and label == sensor  # one run: no run name needed
            scale = 1e-9 if raw["unit"] == "bytes" else 1.0
            kept = [(t, v) for t, v in zip(raw["t"], raw["v"], strict=True) if v is not None]
            assert times == [t for t, _ in kept]
            assert values == pytest.approx([v * scale for _, v in kept])


def test_with_several_runs_each_telemetry_line_names_its_run():
    runs = [r for r in every_run() if r.telemetry][:2]
    for series in telemetry_series(runs).values():
        for (run_id, sensor), (label, _, _) in series.items():
            rec = next(r for r in runs if r.id == run_id)
            assert label == f"{rec.identity} · {sensor}"


def test_sizes_are_labelled_in_binary_units():
    assert [size_label(n) for n in (64, 8192, 2**20, 3 * 2**30, 1000)] == \
        ["64", "8192", "1M", "3G", "1000"]
