"""The GEMM sweep in-process on the CPU: rows with statistics, unsupported dtypes become
flagged rows while the sweep goes on, the physical-peak check flags impossible numbers."""

import pytest
import torch

from siliconbench.core.context import RunContext
from siliconbench.core.frameworks.torch import adapter as torch_adapter
from siliconbench.core.frameworks.torch.ops import TorchOps
from siliconbench.core.measure import QUICK, settings_for
from siliconbench.core.peaks import Peak
from siliconbench.core.results import Row
from siliconbench.core.workloads import gemm

# These test the sweep's rows, flags and checks, not its numbers: QUICK shortened by
# SHORT_PROTOCOL (tests/conftest.py), still QUICK's floor of blocks a point.
pytestmark = pytest.mark.usefixtures("short_protocol")


def context(events, peak=None):
    return RunContext(framework="torch", device_id="cpu", adapter=torch_adapter,
                      device=torch.device("cpu"), device_name="test cpu", emit=events.append,
                      settings=settings_for(True), peak=peak)


def sweep(params, peak=None, monkeypatch=None):
    events = []
    ctx = context(events, peak)
    full = {"sizes": None, "dtypes": ["float32"], "tf32": False} | params
    gemm.run(ctx, full)
    rows = [Row.from_dict(e["row"]) for e in events if e["event"] == "row"]
    return rows, events


def test_rows_carry_tflops_with_spread():
    rows, events = sweep({"sizes": [64, 128], "dtypes": ["float32", "float64"]})
    assert [(r.params["size"], r.params["dtype"]) for r in rows] == \
        [(64, "float32"), (128, "float32"), (64, "float64"), (128, "float64")]
    for r in rows:
        assert r.metric == "tflops" and r.unit == "TFLOPS" and r.value > 0
        assert r.stats.p25 <= r.value <= r.stats.p75
        assert r.stats.ci_low <= r.value <= r.stats.ci_high
        assert len(r.samples) == r.stats.n >= QUICK.floor_blocks
        assert r.pct_of_peak is None  # CPU peaks are unknown, and said to be
    assert events[-1] == {"event": "progress", "done": 4, "total": 4, "message": "done"}
    assert {"event": "settings", "settings": {"tf32": False, "gemm_call": "one product"}} \
        in events


def test_tflops_count_every_product_of_a_chained_call(monkeypatch):
    # A framework whose timed call chains k products (TensorFlow's) must count 2N^3 for each:
    # with the protocol's seconds per call fixed, the TFLOPS are exactly k * 2N^3 / t.
    from siliconbench.core.measure import Measurement
    seconds = [0.5, 0.5, 0.5, 0.5, 0.5]
    calls = []

    def chained(self, a, b):
        step = self.matmul(a, b)
        return (lambda: [step() for _ in range(3)]), 3
    monkeypatch.setattr(TorchOps, "gemm_step", chained)
    monkeypatch.setattr(RunContext, "measure",
                        lambda self, call, sync=None: (calls.append(call()),
                                                       Measurement(seconds, 1, 1, True, True,
                                                                   2.5))[1])
    rows, _ = sweep({"sizes": [64]})
    assert len(calls) == 1 and len(calls[0]) == 3
    assert rows[0].value == pytest.approx(3 * 2 * 64**3 / 0.5 / 1e12)
    assert rows[0].samples == [pytest.approx(rows[0].value)] * 5


def test_unsupported_dtype_is_a_flagged_row_and_the_sweep_goes_on(monkeypatch):
    real = gemm.unsupported_reason
    monkeypatch.setattr(gemm, "unsupported_reason",
                        lambda ops, dtype: "float64 matmul is not supported on mps: no"
                        if dtype == "float64" else real(ops, dtype))
    rows, _ = sweep({"sizes": [64], "dtypes": ["float64", "float32"]})
    assert rows[0].value is None and rows[0].flags == ["unsupported"]
    assert "not supported" in rows[0].note
    assert rows[1].value > 0 and rows[1].params["dtype"] == "float32"


def testunsupported_reason_comes_from_the_framework():
    ops = TorchOps(context([]))
    reason = gemm.unsupported_reason(ops, "bool")
    assert reason.startswith("bool matmul is not supported on cpu:")
    assert gemm.unsupported_reason(ops, "float32") is None


def peak(tflops):
    return Peak("test", "test device", "nvidia", {"float32": tflops}, None, None, {})


def test_above_physical_peak_is_flagged_as_a_measurement_error():
    rows, _ = sweep({"sizes": [128]}, peak=peak(1e-9))
    assert "above_peak" in rows[0].flags and "measurement is wrong" in rows[0].note
    # The figure as siliconbench.core.numbers writes it: a tiny CPU product's 0.0123 TFLOPS, not "0.0".
    from siliconbench.core.numbers import quantity
    assert rows[0].note.startswith(f"{quantity(rows[0].value, 'TFLOPS')} is above")


def test_percent_of_peak_when_known():
    rows, _ = sweep({"sizes": [128]}, peak=peak(1000.0))
    assert rows[0].pct_of_peak == pytest.approx(100 * rows[0].value / 1000.0)
    assert "above_peak" not in rows[0].flags


def test_results_are_checked_against_float64():
    ops = TorchOps(context([]))
    for dtype in ("float32", "bfloat16", "float64"):
        assert gemm._relative_error(ops, dtype) < gemm.TOLERANCE[dtype]


def test_default_sizes_fit_memory():
    assert gemm.default_sizes("gpu", None)[-1] == 8192
    assert gemm.default_sizes("cpu", None)[-1] == 4096
    # 1 GB free: 3 x 8192^2 x 8 bytes (1.6 GB) does not fit, 4096 (0.4 GB) does
    assert gemm.default_sizes("gpu", 10**9)[-1] == 4096


def test_automatic_sweep_skips_points_too_slow_to_measure(monkeypatch):
    monkeypatch.setattr(gemm, "CPU_SIZES", [64, 512])
    monkeypatch.setattr(gemm, "_seconds_per_product", lambda ops, dtype: 0.02)
    rows, _ = sweep({"sizes": None})
    small, large = rows
    assert small.value > 0
    # 0.02 s at 256 predicts 0.16 s at 512: measured; at 4x the rate limit it is skipped
    assert large.value > 0
    monkeypatch.setattr(gemm, "_seconds_per_product", lambda ops, dtype: 0.3)
    rows, _ = sweep({"sizes": None})
    assert rows[0].value > 0  # 64: 0.005 s predicted
    assert rows[1].value is None and rows[1].flags == ["skipped"]
    assert "would take about 2 s" in rows[1].note and "--sizes" in rows[1].note
    rows, _ = sweep({"sizes": [512]})  # named sizes always run
    assert rows[0].value > 0
