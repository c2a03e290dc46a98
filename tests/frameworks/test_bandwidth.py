"""The bandwidth workload on the torch CPU: STREAM's copy, scale, add and triad rows in GB/s
with spread (STREAM's byte counts, each kernel computing STREAM's formula), % of the device's
peak bandwidth, arrays that do not fit, a copy kernel the device lacks, and the CLI.
TensorFlow and MLX run it in tests/frameworks/test_tensorflow.py and tests/frameworks/test_mlx.py."""

import json
from types import SimpleNamespace

import pytest

from siliconbench.core.context import RunContext
from siliconbench.core.frameworks.ops import TensorOps
from siliconbench.core.frameworks.torch import adapter as torch_adapter
from siliconbench.core.measure import QUICK
from siliconbench.core.peaks import Peak
from siliconbench.core.workloads import bandwidth
from tests.helpers.cli_processes import sb
from tests.helpers.torch_cpu import short_context as context
from tests.helpers.torch_cpu import sweep


def test_rows_are_gb_per_s_of_bytes_read_and_written():
    rows, events = sweep({})
    assert [r.params for r in rows] == [
        {"op": op, "size_mb": mb, "dtype": "float32"}
        for op in ("copy", "scale", "add", "triad") for mb in (1, 2)]
    for r in rows:
        assert r.metric == "gb_per_s" and r.unit == "GB/s" and r.value > 0
        assert r.stats.p25 <= r.value <= r.stats.p75
        assert len(r.samples) == r.stats.n >= QUICK.floor_blocks
        assert r.pct_of_peak is None  # no CPU peak
    settings = [e["settings"] for e in events if e["event"] == "settings"]
    assert settings == [{"copy_kernel": "Tensor.copy_", "scale_kernel": "torch.mul(c, s, out=b)",
                         "add_kernel": "torch.add(a, b, out=c)",
                         "triad_kernel": "torch.add(b, c, alpha=s, out=a) (one kernel)",
                         "stream_kernels": {"copy": "c = a", "scale": "b = s*c",
                                            "add": "c = a + b", "triad": "a = b + s*c"}}]
    assert events[-1] == {"event": "progress", "done": 8, "total": 8, "message": "done"}


def test_bytes_counted_are_stream_s_two_two_three_and_three_arrays(monkeypatch):
    seconds_per_call = 0.001
    measured = SimpleNamespace(noisy=False, rates=lambda work: [work / seconds_per_call] * 3)
    monkeypatch.setattr(RunContext, "measure", lambda self, call, sync: measured)
    rows, _ = sweep({"sizes_mb": [1]})
    copy, scale, add, triad = (r.value for r in rows)
    for value, arrays in ((copy, 2), (scale, 2), (add, 3), (triad, 3)):
        assert value == pytest.approx(arrays * 2**20 / seconds_per_call / 1e9)


@pytest.mark.parametrize("framework", ["torch", "llamacpp"])
def test_each_kernel_computes_stream_s_formula(framework):
    """c = a, b = 3c, c = a + b, a = b + 3c, each into an array of its own: the kernels the
    GB/s are of compute what STREAM's do (a wrong kernel moves other bytes)."""
    import importlib

    import numpy as np
    module = importlib.import_module(f"siliconbench.core.frameworks.{framework}.ops")
    events = []
    ctx = context(events)
    if framework == "llamacpp":
        ctx = SimpleNamespace(device=SimpleNamespace(type="cpu"), device_id="cpu",
                              adapter=SimpleNamespace(empty_cache=lambda d: None))
    ops = module.Ops(ctx)
    a, b = ops.random((100_000,), "float32"), ops.random((100_000,), "float32") * 2
    x, y = ops.to_numpy(a), ops.to_numpy(b)
    results = {}
    for op, inputs in (("copy", [a]), ("scale", [a]), ("add", [a, b]), ("triad", [a, b])):
        step = bandwidth._step(ops, op, inputs)
        results[op] = ops.to_numpy(step())
    ops.release()
    assert np.allclose(results["copy"], x)
    assert np.allclose(results["scale"], 3 * x)
    assert np.allclose(results["add"], x + y)
    assert np.allclose(results["triad"], x + 3 * y)


def peak(gbs):
    return Peak("test", "test device", "apple", {}, None, gbs, {})


def test_percent_of_peak_bandwidth_and_the_impossible_flagged():
    rows, _ = sweep({"sizes_mb": [1], "ops": ["copy"]}, peak=peak(1e6))
    assert rows[0].pct_of_peak == pytest.approx(100 * rows[0].value / 1e6)
    rows, _ = sweep({"sizes_mb": [1], "ops": ["copy"]}, peak=peak(1e-6))
    assert "above_peak" in rows[0].flags and "measurement is wrong" in rows[0].note
    from siliconbench.core.numbers import quantity
    assert rows[0].note.startswith(f"{quantity(rows[0].value, 'GB/s')} is above")


def test_arrays_that_do_not_fit_are_flagged_and_defaults_leave_the_caches(monkeypatch):
    monkeypatch.setattr(torch_adapter, "free_memory", lambda dev: 3 * 2**20)
    rows, _ = sweep({"sizes_mb": [1]})
    copy, scale, add, triad = rows
    assert copy.value > 0 and scale.value > 0  # two 1 MB arrays fit in 80% of 3 MB
    for three in (add, triad):
        assert three.value is None and three.flags == ["unsupported"]
        assert "3 arrays of 1 MB do not fit" in three.note
    assert bandwidth.default_sizes(None) == [64, 256, 1024]
    assert bandwidth.default_sizes(2 * 2**30) == [64, 256]  # 3 x 1 GB does not fit in 2 GB


class NoCopyKernel(TensorOps):
    """A device without the framework's copy kernel, but one that can add."""

    def __init__(self):
        self.label, self.copy_kernel, self.tried = "gpu", "DeepCopy", []

    def itemsize(self, dtype):
        return 4

    def random(self, shape, dtype):
        return None

    def to_numpy(self, x):
        return x

    def matmul(self, a, b):
        return lambda: None

    def copy(self, src):
        return lambda: self.tried.append(self.copy_kernel)

    def scale(self, c, s):
        return lambda: None

    def add(self, a, b):
        return lambda: None

    def triad(self, b, c, s):
        return lambda: None

    def read(self, a):
        return lambda: None

    def run_once(self, step):
        step()
        if self.tried[-1] == "DeepCopy":
            raise RuntimeError("No registered 'DeepCopy' OpKernel for 'GPU' devices")

    def failure(self, attempt):
        try:
            attempt()
        except RuntimeError as e:
            return str(e)

    def use_plain_copy(self):
        self.copy_kernel = "x + 0"
        return True


def test_a_device_without_a_copy_kernel_copies_by_adding_zero():
    ops = NoCopyKernel()
    assert bandwidth._unsupported_reason(ops, "copy") is None
    assert ops.tried == ["DeepCopy", "x + 0"] and ops.copy_kernel == "x + 0"


def test_bandwidth_through_the_cli(tmp_path):
    r = sb("run", "bandwidth", "--sizes-mb", "1", "--ops", "copy", "--quick", "--json",
           home=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["workload"] == "bandwidth" and rec["framework"] == "torch"
    assert rec["rows"][0]["params"] == {"op": "copy", "size_mb": 1, "dtype": "float32"}
    assert rec["rows"][0]["value"] > 0


@pytest.mark.parametrize("args, says", [
    (["--sizes-mb", "0"], "--sizes-mb must be at least 1, not 0."),
    (["--ops", "fma"], "--ops must be one of copy, scale, add, triad, read, not 'fma'."),
])
def test_bad_parameters_are_one_sentence_and_exit_2(tmp_path, args, says):
    r = sb("run", "bandwidth", *args, home=tmp_path)
    assert r.returncode == 2 and says in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
