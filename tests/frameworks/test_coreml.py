"""Core ML on Linux: everything short of a prediction. The conversion runs for real (a child
process: coremltools is never imported in a test's process, where TensorFlow beside torch
makes it segfault), once per session; the compute units' list and the refusal of a run say in
one sentence that Core ML runs on macOS; the run itself (compile, two loads, the compute plan,
prediction timed by the protocol) runs against a STAND-IN for coremltools' prediction API,
shaped after coremltools 9.0's source: models/_compiled_model.py (CompiledMLModel(path,
compute_units), .predict(dict) -> dict of numpy arrays), models/utils.py (compile_model(model,
destination_path) -> path), models/compute_plan.py (MLComputePlan.load_from_path(path,
compute_units), model_structure.program.functions["main"].block.operations, op.blocks,
get_compute_device_usage_for_mlprogram_operation(op) -> MLComputePlanDeviceUsage or None,
get_estimated_cost_for_mlprogram_operation(op) -> MLComputePlanCost(weight)) and
models/compute_device.py (MLCPUComputeDevice, MLGPUComputeDevice, MLNeuralEngineComputeDevice).
What Core ML itself does on a Mac (its timings, its plan) is not checked here."""

from __future__ import annotations

import enum
import importlib.util
import json
import shutil
import subprocess
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from siliconbench.core.frameworks.coreml import FRAMEWORK as COREML
from siliconbench.core.frameworks.coreml import MACOS_ONLY, macos_version, runs_here
from tests.helpers.cli_processes import ROOT, run_cli, shared

needs_coremltools = pytest.mark.skipif(
    importlib.util.find_spec("coremltools") is None,
    reason="coremltools is not installed (pip install 'siliconbench[coreml]'): the conversion "
           "tests need it")

MODEL, SIZE, BATCH = "mobilenet_v2", 32, 2


@pytest.fixture
def converted(tmp_path_factory) -> tuple[Path, dict]:
    """mobilenet_v2 at 32x32, batch 2, FP16, converted once for the whole session by the real
    child process, and its spec as a second child process reads it: (package, what both said)."""
    from siliconbench.core.frameworks.coreml.infer import run_converter

    def make(home: Path) -> dict:
        out = home / "mobilenet_v2.mlpackage"
        request = {"model": MODEL, "image_size": SIZE, "batch_size": BATCH,
                   "precision": "float16", "out": str(out)}
        made = run_converter("convert", stdin=json.dumps(request))
        return {"package": str(out), "made": made, "spec": run_converter("describe", str(out))}
    _, answer = shared(tmp_path_factory, "coreml-mobilenet", make)
    return Path(answer["package"]), answer


# ---------------------------------------------------------------- conversion, for real

@needs_coremltools
def test_conversion_makes_an_fp16_mlprogram_with_the_batch_in_its_shape(converted):
    package, answer = converted
    spec, made = answer["spec"], answer["made"]
    assert (package / "Manifest.json").is_file()
    assert package.with_suffix(".json").is_file()      # written last: the package is whole
    assert spec["type"] == "mlProgram"
    assert spec["inputs"] == [{"name": "images", "shape": [BATCH, 3, SIZE, SIZE],
                               "dtype": "FLOAT16"}]
    assert spec["outputs"] == [{"name": "logits", "shape": [BATCH, 1000], "dtype": "FLOAT16"}]
    # Every float the program computes is float16: FP16 compute precision, no float32 op.
    assert spec["op_output_dtypes"].get("FLOAT16", 0) > 50
    assert "FLOAT32" not in spec["op_output_dtypes"]
    assert made["convert_s"] > 0 and made["coremltools"].startswith("9.")
    # The FLOPs the rows use are those of the PyTorch run's model at the same batch.
    import torch
    import torchvision

    from siliconbench.core.frameworks.torch.models import count_flops
    model = torchvision.models.get_model(MODEL, weights=None, num_classes=1000).eval()
    with torch.no_grad():
        assert made["flops"] == count_flops(lambda: model(torch.randn(BATCH, 3, SIZE, SIZE)))


@needs_coremltools
def test_a_runs_worker_imports_coremltools_without_torch_or_tensorflow():
    """On a Mac the run's worker imports coremltools after isolate('coreml'), which refuses
    torch and TensorFlow: coremltools must take both as absent (no segfault, nothing loaded)."""
    code = ("import sys\nfrom siliconbench.core.frameworks import isolate\nisolate('coreml')\n"
            "import coremltools\n"
            "print(coremltools.ComputeUnit.CPU_AND_NE.name, 'torch' in sys.modules, "
            "'tensorflow' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["CPU_AND_NE", "False", "False"]


def test_a_failed_conversion_is_one_sentence(monkeypatch):
    from siliconbench.core.frameworks.coreml import infer
    with pytest.raises(infer.ConversionFailed, match=r"^converting to Core ML failed "
                                                     r"\(exit 2\): usage: "):
        infer.run_converter("neither")


@needs_coremltools
def test_the_package_is_kept_and_reused(converted, monkeypatch):
    from siliconbench.core.frameworks.coreml import infer
    package, answer = converted
    cached = infer.package_path(MODEL, SIZE, BATCH, "float16")
    assert cached.parent.parent == Path(__import__("os").environ["SILICONBENCH_HOME"])
    calls = []
    monkeypatch.setattr(infer, "run_converter", lambda *a, **k: calls.append(a) or
                        {**answer["made"], "convert_s": 99.0})
    # A package without its JSON (a conversion cut short) is converted again...
    shutil.copytree(package, cached)
    path, made = infer.cached_package(MODEL, SIZE, BATCH, "float16")
    assert (path, made["fresh"], made["convert_s"], len(calls)) == (cached, True, 99.0, 1)
    assert not cached.exists()     # removed first: the converter puts a whole one in place
    # ... a whole one is reused, with what its conversion took (the stand-in made none).
    shutil.copytree(package, cached)
    shutil.copy(package.with_suffix(".json"), cached.with_suffix(".json"))
    path, made = infer.cached_package(MODEL, SIZE, BATCH, "float16")
    assert (path, made["fresh"], len(calls)) == (cached, False, 1)
    assert made["convert_s"] == answer["made"]["convert_s"]
    # Another shape, precision or coremltools is another package.
    assert len({infer.package_path(MODEL, SIZE, 4, "float16"), cached,
                infer.package_path(MODEL, SIZE, BATCH, "float32")}) == 3


# ---------------------------------------------------------------- macOS only, said once

def test_the_device_list_says_core_ml_runs_on_macos_here():
    from siliconbench.core.frameworks.coreml import adapter
    from siliconbench.core.runner import discover_devices
    assert sys.platform == "linux"
    assert not runs_here() and not COREML.installed()
    [listed] = adapter.devices()
    assert (listed.usable, listed.reason) == (False, MACOS_ONLY)
    [found] = discover_devices(["coreml"])     # what `siliconbench devices` and the app show
    assert (found.framework, found.usable, found.reason) == ("coreml", False, MACOS_ONLY)
    assert MACOS_ONLY.count(".") == 1 and MACOS_ONLY.endswith(".")


def test_on_macos_13_the_devices_are_the_compute_units(monkeypatch):
    from siliconbench.core.frameworks import UnknownDevice
    from siliconbench.core.frameworks.coreml import adapter
    monkeypatch.setattr("platform.system", lambda: "Darwin")
    monkeypatch.setattr("platform.mac_ver", lambda: ("14.5", ("", "", ""), "arm64"))
    monkeypatch.setattr(adapter, "cpu_name", lambda: "Apple M1 Max")
    assert macos_version() == (14, 5) and runs_here()
    units = adapter.devices()
    assert [(d.id, d.name, d.kind, d.usable) for d in units] == [
        ("cpu", "Apple M1 Max · CPU only", "cpu", True),
        ("gpu", "Apple M1 Max · CPU + GPU", "gpu", True),
        ("ne", "Apple M1 Max · CPU + Neural Engine", "ne", True),
        ("all", "Apple M1 Max · All units", "all", True)]
    assert adapter.resolve(" NE ").native == "CPU_AND_NE"
    with pytest.raises(UnknownDevice, match="no compute unit 'ane'; choose one of cpu, gpu"):
        adapter.resolve("ane")
    # macOS 12 has no CPU_AND_NE (coremltools refuses it below 13): not a Core ML system here.
    assert not runs_here("12.7") and runs_here("13.0") and macos_version("x") == ()


def test_a_core_ml_run_here_is_refused_in_one_sentence(siliconbench_home):
    done = run_cli("run", "infer", "--framework", "coreml", "--device", "ne")
    assert done.returncode == 2
    assert done.stderr.strip() == f"siliconbench: {MACOS_ONLY}"
    assert "Traceback" not in done.stdout + done.stderr
    assert not (siliconbench_home / "coreml").exists()


# ---------------------------------------------------------------- the stand-in

class CPU: ...


class GPU: ...


class NE: ...


# coremltools' own class names: the code reads the unit from them.
CPU.__name__, GPU.__name__, NE.__name__ = ("MLCPUComputeDevice", "MLGPUComputeDevice",
                                           "MLNeuralEngineComputeDevice")


@dataclass(frozen=True)
class Usage:        # MLComputePlanDeviceUsage
    preferred_compute_device: object
    supported_compute_devices: list


@dataclass(frozen=True)
class Cost:         # MLComputePlanCost
    weight: float


@dataclass(frozen=True)
class Operation:    # MLModelStructureProgramOperation
    operator_name: str
    blocks: list = field(default_factory=list)
    inputs: dict = field(default_factory=dict)
    outputs: list = field(default_factory=list)


@dataclass(frozen=True)
class Block:        # MLModelStructureProgramBlock
    operations: list
    inputs: list = field(default_factory=list)
    output_names: list = field(default_factory=list)


class Plan:
    """An MLComputePlan: each op's preferred unit and cost; constants have no usage."""

    def __init__(self, ops: list[tuple[str, object, float]], inner: list | None = None):
        self.where = {name: (unit, weight) for name, unit, weight in ops + (inner or [])}
        operations = [Operation(name) for name, _, _ in ops]
        if inner:    # a nested block (a loop's body) under the first op
            operations[0] = Operation(ops[0][0], [Block([Operation(n) for n, _, _ in inner])])
        main = types.SimpleNamespace(inputs=[], block=Block(operations))
        program = types.SimpleNamespace(functions={"main": main})
        self.model_structure = types.SimpleNamespace(program=program, neuralnetwork=None,
                                                     pipeline=None)

    def get_compute_device_usage_for_mlprogram_operation(self, op):
        unit, _ = self.where[op.operator_name]
        return None if unit is None else Usage(unit(), [unit()])

    def get_estimated_cost_for_mlprogram_operation(self, op):
        _, weight = self.where[op.operator_name]
        return None if weight is None else Cost(weight)


MOSTLY_CPU = [("const_1", None, None), ("conv_1", NE, 0.2), ("conv_2", CPU, 0.5),
              ("softmax", CPU, 0.3)]


def test_the_plan_gives_each_units_share_of_ops_and_work():
    from siliconbench.core.frameworks.coreml.infer import plan_shares, plan_words
    shares = plan_shares(Plan(MOSTLY_CPU, inner=[("loop_conv", NE, 0.0)]))
    assert shares["ops"] == {"Neural Engine": 2, "CPU": 2}          # the constant not counted
    assert shares["cost_share"] == pytest.approx({"Neural Engine": 0.2, "CPU": 0.8})
    flags, note = plan_words(shares, "ne")
    assert flags == ["mostly_off_neural_engine"]
    assert note.startswith("Core ML's compute plan (4 ops): 80% on CPU, 20% on Neural Engine "
                           "of the estimated work; most of it is not on the Neural Engine")
    # The same plan on the All unit is not a fallback: no flag, the shares still said.
    assert plan_words(shares, "all")[0] == []
    on_ne = plan_shares(Plan([("conv", NE, 0.9), ("softmax", GPU, 0.1)]))
    assert plan_words(on_ne, "ne") == ([], "Core ML's compute plan (2 ops): 90% on Neural "
                                           "Engine, 10% on GPU of the estimated work")
    # No cost estimate: the shares are of the ops.
    no_cost = plan_shares(Plan([("a", NE, None), ("b", NE, None), ("c", CPU, None)]))
    assert no_cost["cost_share"] is None
    assert plan_words(no_cost, "ne")[1] == ("Core ML's compute plan (3 ops): 67% on Neural "
                                            "Engine, 33% on CPU of the ops")
    flags, note = plan_words({"unavailable": "ValueError: MLComputePlan is not supported."},
                             "ne")
    assert flags == [] and "compute plan is unavailable" in note


class StandIn:
    """A coremltools module for the run: ComputeUnit, models.CompiledMLModel,
    models.utils.compile_model, models.compute_plan.MLComputePlan. Predictions check the
    input against the converted package's spec and give zeros of its output's shape."""

    def __init__(self, spec: dict, plan: Plan) -> None:
        self.loads: list[tuple[str, str]] = []
        self.compiles: list[tuple[str, str]] = []
        self.plans: list[str] = []
        [inp], [out] = spec["inputs"], spec["outputs"]
        stand_in = self

        class ComputeUnit(enum.Enum):
            ALL, CPU_AND_GPU, CPU_ONLY, CPU_AND_NE = 1, 2, 3, 4

        class CompiledMLModel:
            def __init__(self, path: str, compute_units=ComputeUnit.ALL, function_name=None,
                         optimization_hints=None, asset=None) -> None:
                assert isinstance(compute_units, ComputeUnit) and Path(path).is_dir()
                stand_in.loads.append((path, compute_units.name))

            def predict(self, data, state=None) -> dict:
                x = data[inp["name"]]
                assert x.dtype == np.float16 and list(x.shape) == inp["shape"]
                time.sleep(0.001)
                return {out["name"]: np.zeros(out["shape"], np.float16)}

        def compile_model(model, destination_path=None) -> str:
            shutil.copytree(model, destination_path)
            stand_in.compiles.append((model, destination_path))
            return destination_path

        class MLComputePlan:
            @classmethod
            def load_from_path(cls, path, compute_units=ComputeUnit.ALL):
                stand_in.plans.append(compute_units.name)
                return plan

        self.module = types.ModuleType("coremltools")
        self.module.ComputeUnit = ComputeUnit
        self.module.models = types.SimpleNamespace(
            CompiledMLModel=CompiledMLModel,
            utils=types.SimpleNamespace(compile_model=compile_model),
            compute_plan=types.SimpleNamespace(MLComputePlan=MLComputePlan))


def _run(monkeypatch, stand_in: StandIn, unit: str, **params):
    from siliconbench.core.context import RunContext
    from siliconbench.core.frameworks import Device
    from siliconbench.core.frameworks.coreml import adapter
    from siliconbench.core.measure import MeasureSettings
    from siliconbench.core.params import resolve
    from siliconbench.core.peaks import find_peak
    from siliconbench.core.workloads import infer
    monkeypatch.setitem(sys.modules, "coremltools", stand_in.module)
    events: list[dict] = []
    native = adapter.UNITS[unit][0]
    ctx = RunContext(framework="coreml", device_id=unit, adapter=adapter,
                     device=Device(unit, 0, native), device_name=f"Apple M1 Max · {unit}",
                     emit=events.append, peak=find_peak(chip="Apple M1 Max", gpu_cores=32),
                     settings=MeasureSettings(min_blocks=3, min_time_s=0.01, max_time_s=0.1,
                                              max_warmup_s=0.05))
    infer.run(ctx, resolve(infer.WORKLOAD.params, {
        "model": MODEL, "image_size": SIZE, "batch_size": BATCH, "images": 4,
        "precision": "mixed", **params}))
    return events


@needs_coremltools
def test_a_run_on_the_neural_engine_against_the_stand_in(converted, monkeypatch):
    from siliconbench.core.frameworks.coreml import infer as coreml_infer
    package, answer = converted
    cached = coreml_infer.package_path(MODEL, SIZE, BATCH, "float16")
    shutil.copytree(package, cached)
    shutil.copy(package.with_suffix(".json"), cached.with_suffix(".json"))
    stand_in = StandIn(answer["spec"], Plan(MOSTLY_CPU))
    events = _run(monkeypatch, stand_in, "ne")
    compiled = str(cached.with_suffix(".mlmodelc"))
    [(source, destination)] = stand_in.compiles      # compiled once, then moved in place
    assert source == str(cached) and Path(destination).name == Path(compiled).name
    assert Path(compiled).is_dir() and not list(cached.parent.glob(".compiling-*"))
    assert stand_in.loads == [(compiled, "CPU_AND_NE")] * 2     # a first and a warm load
    assert stand_in.plans == ["CPU_AND_NE"]
    settings = {k: v for e in events if e["event"] == "settings" for k, v in
                e["settings"].items()}
    coreml = settings["coreml"]
    assert settings["peak"] is None     # the GPU's peak says nothing of the Neural Engine
    assert coreml["converted_in_this_run"] is False
    assert coreml["converted_s"] == answer["made"]["convert_s"]
    assert coreml["first_load_s"] > 0 and coreml["second_load_s"] > 0
    assert coreml["compute_plan"]["ops"] == {"Neural Engine": 1, "CPU": 2}
    rows = [e["row"] for e in events if e["event"] == "row"]
    by_metric = {r["metric"]: r for r in rows}
    ips = by_metric["samples_per_s"]
    assert ips["unit"] == "img/s" and ips["params"] == {"model": MODEL, "batch_size": BATCH,
                                                        "data": "device"}
    # 1 ms a batch of 2 at most: under 2,000 img/s, and the protocol's blocks behind it.
    assert 0 < ips["value"] < 2000 and len(ips["samples"]) >= 3
    assert "mostly_off_neural_engine" in ips["flags"]
    assert ips["note"].startswith("Core ML's compute plan (3 ops): 80% on CPU")
    assert by_metric["tflops"]["pct_of_peak"] is None
    assert by_metric["tflops"]["value"] == pytest.approx(
        answer["made"]["flops"] * ips["value"] / BATCH / 1e12, rel=0.5)
    latencies = [r for r in rows if r["metric"] == "batch_latency"]
    assert [r["params"]["percentile"] for r in latencies] == [50, 90, 99]
    assert all(len(r["samples"]) == 2 and "mostly_off_neural_engine" in r["flags"]
               for r in latencies)     # 4 images in 2 whole batches
    # A second run compiles nothing again; on CPU + GPU the GPU's peak stays.
    again = StandIn(answer["spec"], Plan([("conv", GPU, 1.0)]))
    events = _run(monkeypatch, again, "gpu")
    assert again.compiles == [] and again.loads == [(compiled, "CPU_AND_GPU")] * 2
    rows = [e["row"] for e in events if e["event"] == "row"]
    tflops = next(r for r in rows if r["metric"] == "tflops")
    assert tflops["pct_of_peak"] is not None
    assert "mostly_off_neural_engine" not in tflops["flags"]


def test_channels_last_is_refused_in_one_sentence(monkeypatch):
    from siliconbench.core.params import ParamError
    stand_in = StandIn({"inputs": [{"name": "images", "shape": [2, 3, 32, 32]}],
                        "outputs": [{"name": "logits", "shape": [2, 1000]}]}, Plan([]))
    with pytest.raises(ParamError, match=r"^--channels-last does not apply to Core ML, which "
                                         r"chooses its own layout\.$"):
        _run(monkeypatch, stand_in, "ne", channels_last=True)
    assert stand_in.loads == []


def test_an_fp32_model_off_the_neural_engine_says_how_to_put_it_there():
    from siliconbench.core.frameworks.coreml.infer import plan_shares, plan_words
    flags, note = plan_words(plan_shares(Plan([("conv", CPU, 1.0)])), "ne", "float32")
    assert flags == ["mostly_off_neural_engine"]
    assert note.endswith("(the Neural Engine computes in float16: --precision mixed converts "
                         "to it)")


# ---------------------------------------------------------------- published figures

def test_woolfels_densenet121_figures_are_core_ml_points_a_run_makes():
    """woolfel/ml-macos-performance's results.md: DenseNet121 at batch 1. Its 'ANE' is
    computeUnits = .all (MLMacosPerf/ViewController.swift), so those rows are the All unit."""
    import json as json_

    from siliconbench.core import reference
    from siliconbench.core.compare_stats import compare, resolve_sides
    from siliconbench.core.frameworks.coreml.adapter import UNITS
    refs = [r for r in reference.references() if r.framework == "coreml"]
    assert len(refs) == 12
    models = json_.loads((ROOT / "siliconbench" / "resources" / "torchvision_models.json").read_text())["models"]
    for r in refs:
        assert r.workload == "infer" and r.device in UNITS and r.params["model"] in models
        assert {row.metric for row in r.rows} == {"samples_per_s", "batch_time"}
        assert "ml-macos-performance" in r.provenance["source"]

    def ms(ref_id: str) -> float:
        [rec] = reference.find(ref_id)
        return next(row.value for row in rec.rows if row.metric == "batch_time")
    # The figures as published: the M1 Air's Neural Engine ahead of the M1 Max's, the GPU not.
    assert (ms("pub-coreml-densenet121-m1-air-2021-all"),
            ms("pub-coreml-densenet121-m1max-2021-all")) == (1.8, 2.051)
    assert (ms("pub-coreml-densenet121-m1-air-2021-gpu"),
            ms("pub-coreml-densenet121-m1max-2021-gpu")) == (16.01, 10.757)
    assert ms("pub-coreml-densenet121-m2max-2023-all") == 1.274
    cmp = compare(resolve_sides(["pub-coreml-densenet121-m1-air-2021-all",
                                 "pub-coreml-densenet121-m1max-2021-all"]))
    ips = next(row for row in cmp.rows if row.metric == "samples_per_s")
    assert ips.cells[1].ratio == pytest.approx(487.6 / 555.7)


WORKER_ON_A_MAC = """
import json, platform, sys
platform.system = lambda: "Darwin"                       # a Mac with macOS 14.5, as far as
platform.mac_ver = lambda: ("14.5", ("", "", ""), "arm64")   # Core ML's part can tell
from tests.frameworks.test_coreml import CPU, NE, Plan, StandIn
stand_in = StandIn(json.loads(sys.argv[1]), Plan([("conv", NE, 0.95), ("softmax", CPU, 0.05)]))
sys.modules["coremltools"] = stand_in.module
import siliconbench.core.frameworks.coreml.adapter as adapter
from siliconbench.core import worker
adapter.cpu_name = lambda: "Apple M1 Max"
worker._peak = lambda *args: None
events = []
rc = worker.run(json.loads(sys.argv[2]), events.append)
print(json.dumps({"rc": rc, "events": events, "loads": stand_in.loads,
                  "torch": "torch" in sys.modules}))
"""


@needs_coremltools
def test_the_worker_runs_core_ml_end_to_end_against_the_stand_in(converted, siliconbench_home):
    """The run's own worker (isolate('coreml'), the adapter, the infer workload) in a child
    process that takes itself for a Mac, with the stand-in for coremltools."""
    import os

    from siliconbench.core.frameworks.coreml import infer as coreml_infer
    package, answer = converted
    cached = coreml_infer.package_path(MODEL, SIZE, BATCH, "float16")
    shutil.copytree(package, cached)
    shutil.copy(package.with_suffix(".json"), cached.with_suffix(".json"))
    spec = {"workload": "infer", "framework": "coreml", "device": "ne", "quick": True,
            "params": {"model": MODEL, "image_size": SIZE, "batch_size": BATCH, "images": 4,
                       "data": "both", "precision": "mixed", "channels_last": False,
                       "duration": None, "grow": False, "budget_s": None}}
    env = {**os.environ, "SILICONBENCH_MEASURE": json.dumps({"max_time_s": 0.1,
                                                             "max_warmup_s": 0.05})}
    done = subprocess.run([sys.executable, "-c", WORKER_ON_A_MAC, json.dumps(answer["spec"]),
                           json.dumps(spec)], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["rc"] == 0 and out["torch"] is False, out["events"][-1]
    started = next(e for e in out["events"] if e["event"] == "started")
    assert started["device_name"] == "Apple M1 Max · CPU + Neural Engine"
    assert started["software"]["coremltools"].startswith("9.")
    assert {tuple(x) for x in out["loads"]} == {(str(cached.with_suffix(".mlmodelc")),
                                                 "CPU_AND_NE")}
    rows = [e["row"] for e in out["events"] if e["event"] == "row"]
    paths = {r["params"]["data"] for r in rows if r["metric"] == "samples_per_s"}
    assert paths == {"device", "host"}
    ratio = next(r for r in rows if r["metric"] == "host_device_ratio")
    assert ratio["value"] > 0
    ips = next(r for r in rows if r["metric"] == "samples_per_s")
    assert ips["note"].startswith("Core ML's compute plan (2 ops): 95% on Neural Engine")
    assert "mostly_off_neural_engine" not in ips["flags"]
    memory = next(r for r in rows if r["metric"] == "peak_memory")
    assert memory["note"] == "process peak resident memory" and memory["value"] > 0


def test_the_quick_suite_runs_nothing_on_core_ml():
    """Every Core ML run of a new shape converts the model first (tens of seconds): the quick
    suite's inference entry is PyTorch's, as its summary says, and no other entry runs on
    Core ML."""
    from siliconbench.core.frameworks import DeviceInfo
    from siliconbench.core.frameworks.coreml.adapter import UNITS
    from siliconbench.core.suites import expand
    units = [DeviceInfo("coreml", u, f"Apple M1 · {label}", kind, 16 << 30)
             for u, (_, label, kind) in UNITS.items()]
    mps = DeviceInfo("torch", "mps", "Apple M1 GPU", "gpu", 16 << 30)
    specs = expand("quick", units + [mps])
    assert {s.framework for s in specs} == {"torch"}
    assert ("infer", "mps") in {(s.workload, s.device) for s in specs}
