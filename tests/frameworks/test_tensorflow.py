"""TensorFlow on the CPU: GEMM and bandwidth end to end through the CLI, the placement check (an
op forced onto a device that cannot run it is an unsupported row, never a number timed on the
CPU), and the Metal plugin's reasons. TensorFlow itself only ever loads in child processes:
this one has PyTorch."""

import importlib.util
import json
import subprocess
import sys

import pytest

from siliconbench.core.frameworks import UnknownDevice
from siliconbench.core.frameworks.tensorflow import adapter as tensorflow_adapter
from tests.helpers.cli_processes import ROOT, sb

if importlib.util.find_spec("tensorflow") is None:  # looked up, not imported
    pytest.skip("TensorFlow is not installed", allow_module_level=True)


@pytest.mark.usefixtures("short_protocol")   # the rows, not their numbers
def test_gemm_through_the_cli(tmp_path):
    # One size: each (size, dtype) traces a tf.function of its own, about a CPU-second here;
    # the sweep's order over sizes is the engines' common code (test_gemm.py).
    r = sb("run", "gemm", "--framework", "tensorflow", "--device", "cpu", "--sizes", "32",
           "--dtypes", "float32,float64", "--quick", "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["status"] == "ok" and rec["framework"] == "tensorflow"
    assert [(row["params"]["size"], row["params"]["dtype"]) for row in rec["rows"]] == \
        [(32, "float32"), (32, "float64")]
    for row in rec["rows"]:
        assert row["metric"] == "tflops" and row["unit"] == "TFLOPS" and row["value"] > 0
        assert row["stats"]["p25"] <= row["value"] <= row["stats"]["p75"]
        assert len(row["samples"]) == row["stats"]["n"] >= 3
        assert "wrong_result" not in row["flags"]
    assert rec["software"]["tensorflow"] and "metal_plugin" in rec["software"]
    assert rec["settings"]["tf32"] is False
    assert rec["settings"]["gemm_call"].startswith("a tf.function chaining up to 10")


# The classic sweep's timed call: a tf.function chaining k dependent products x <- x @ b/sqrt(N).
# Checked against float64 on the host, so a chain that merged or skipped products would fail.
CHAIN = """
import json
import numpy as np
from siliconbench.core.frameworks import isolate
from siliconbench.core.frameworks.tensorflow import adapter
isolate("tensorflow")
from siliconbench.core.context import RunContext
from siliconbench.core.measure import QUICK
from siliconbench.core.frameworks.tensorflow.ops import TensorFlowOps

cpu = adapter.resolve("cpu")
ctx = RunContext(framework="tensorflow", device_id="cpu", adapter=adapter, device=cpu,
                 device_name="cpu", emit=lambda e: None, settings=QUICK)
ops = TensorFlowOps(ctx)
a, b = ops.random((64, 64), "float64"), ops.random((64, 64), "float64")
# How many products a call chains, for a product timed at 1 ms, 0.2 s and 1 s (the rule).
rule = {}
for seconds in (0.001, 0.2, 1.0):
    ops.seconds_once = lambda step, s=seconds: s
    rule[seconds] = ops.gemm_step(a, b)[1]
ops.seconds_once = lambda step: 0.001  # the real timing of a 64x64 product moves with the load
step, k = ops.gemm_step(a, b)
expected = ops.to_numpy(a)
for _ in range(k):
    expected = expected @ (ops.to_numpy(b) / 8.0)
out = ops.to_numpy(step())
print(json.dumps({"k": k, "rule": list(rule.values()), "error": float(np.abs(out - expected).max() / np.abs(expected).max()),
                  "scale": float(np.abs(out).mean())}))
"""


def test_a_timed_tensorflow_call_is_a_chain_of_real_products():
    r = subprocess.run([sys.executable, "-c", CHAIN], capture_output=True, text=True, cwd=ROOT,
                       timeout=240)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    # Up to 10 products per call, as many as fit in half a second, at least one.
    assert out["rule"] == [10, 2, 1]
    assert out["k"] == 10
    assert out["error"] < 1e-12
    assert 0.05 < out["scale"] < 20  # scaled by 1/sqrt(N): the values stay near 1


@pytest.mark.usefixtures("short_protocol")   # the rows, not their numbers
def test_bandwidth_through_the_cli(tmp_path):
    r = sb("run", "bandwidth", "--framework", "tensorflow", "--sizes-mb", "1", "--quick",
           "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert [row["params"] for row in rec["rows"]] == [
        {"op": op, "size_mb": 1, "dtype": "float32"}
        for op in ("copy", "scale", "add", "triad", "read")]
    assert all(row["unit"] == "GB/s" and row["value"] > 0 for row in rec["rows"])
    assert rec["settings"]["copy_kernel"] == "tf.raw_ops.DeepCopy"
    assert rec["settings"]["read_kernel"] == "tf.reduce_sum(a)"


def test_a_gpu_that_is_absent_is_one_sentence_and_exit_2(tmp_path):
    r = sb("run", "gemm", "--framework", "tensorflow", "--device", "gpu:3", "--sizes", "32",
           home=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "TensorFlow" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


# Runs in a child process. First, what soft placement would do: a product pinned to a GPU the
# machine lacks silently runs on the CPU. Then the sweep, after the adapter turned it off: the
# same forced product, and uint8 (whose MatMul has no CPU kernel) on the real CPU, are rows
# flagged unsupported with TensorFlow's reason, while float32 is measured.
PLACEMENT = """
import json
from siliconbench.core.frameworks import Device, isolate
from siliconbench.core.frameworks.tensorflow import adapter
isolate("tensorflow")
import tensorflow as tf
from siliconbench.core.context import RunContext
from siliconbench.core.measure import QUICK
from siliconbench.core.workloads import gemm

with tf.device("/GPU:0"):
    fallback = tf.linalg.matmul(tf.ones((4, 4)), tf.ones((4, 4))).device
cpu = adapter.resolve("cpu")
out = {"fallback": fallback, "soft": tf.config.get_soft_device_placement()}
for label, device, dtypes in (("gpu", Device("gpu", 0, "/GPU:0"), ["float32"]),
                              ("cpu", cpu, ["uint8", "float32"])):
    events = []
    ctx = RunContext(framework="tensorflow", device_id=label, adapter=adapter, device=device,
                     device_name=label, emit=events.append, settings=QUICK)
    gemm.run(ctx, {"sizes": [16], "dtypes": dtypes, "tf32": False})
    out[label] = [e["row"] for e in events if e["event"] == "row"]
print(json.dumps(out))
"""


def test_an_op_forced_onto_a_device_that_cannot_run_it_is_an_unsupported_row():
    r = subprocess.run([sys.executable, "-c", PLACEMENT], capture_output=True, text=True,
                       cwd=ROOT, timeout=240)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["fallback"].endswith("CPU:0")  # what soft placement does, and why it is off
    assert out["soft"] is False
    [gpu] = out["gpu"]
    assert gpu["value"] is None and gpu["flags"] == ["unsupported"]
    assert gpu["note"].startswith("float32 matmul is not supported on gpu: ")
    assert "GPU:0" in gpu["note"]  # TensorFlow's own words: it cannot place the op there
    uint8, float32 = out["cpu"]
    assert uint8["value"] is None and uint8["flags"] == ["unsupported"]
    assert uint8["note"].startswith("uint8 matmul is not supported on cpu: ")
    assert "MatMul" in uint8["note"]
    assert float32["value"] > 0 and float32["params"] == {"size": 16, "dtype": "float32"}


def test_a_mismatched_metal_plugin_says_which_pair_works(monkeypatch):
    versions = {"tensorflow": "2.21.0", "tensorflow-metal": "1.2.0"}
    monkeypatch.setattr(tensorflow_adapter, "_distribution_version",
                        lambda *names: next((versions[n] for n in names if n in versions), None))
    error = RuntimeError("dlopen(/v/site-packages/tensorflow-plugins/libmetal_plugin.dylib, 0x0006"
                         "): Symbol not found: __ZN3tsl8internal10LogMessage\nmore lines")
    reason = tensorflow_adapter._import_failure(error)
    assert reason.startswith("TensorFlow 2.21.0 cannot load its Metal plugin tensorflow-metal "
                             "1.2.0 (dlopen(")
    assert "tensorflow 2.18 with tensorflow-metal 1.2.0" in reason
    assert "pip install 'siliconbench[tensorflow]'" in reason and "\n" not in reason


def test_a_missing_metal_plugin_on_a_mac_is_one_sentence(monkeypatch):
    monkeypatch.setattr(tensorflow_adapter, "_on_apple_silicon", lambda: True)
    monkeypatch.setattr(tensorflow_adapter, "_distribution_version", lambda *names: None)
    reason = tensorflow_adapter.metal_plugin()
    assert reason.startswith("The Metal plugin (tensorflow-metal) is not installed")
    assert "tensorflow 2.18 with tensorflow-metal 1.2.0" in reason


def test_tensorflow_that_cannot_import_is_an_unusable_device(monkeypatch):
    def broken():
        raise tensorflow_adapter.TensorFlowUnusable("TensorFlow 2.21.0 cannot load its plugin.")
    monkeypatch.setattr(tensorflow_adapter, "_tf", broken)
    [cpu] = tensorflow_adapter.devices()
    assert not cpu.usable and cpu.reason == "TensorFlow 2.21.0 cannot load its plugin."
    with pytest.raises(UnknownDevice, match="cannot load its plugin"):
        tensorflow_adapter.resolve("cpu")
