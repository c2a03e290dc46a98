"""Core ML's part of infer (siliconbench.core.workloads.infer): the torchvision classifier the PyTorch run
builds (same name, weights=None, seed 0), converted once per (model, image size, batch size,
precision) to an mlprogram in the data folder and predicted through coremltools on the run's
compute unit. Runs on macOS 13+ only; written against coremltools 9.0's source:

- conversion: a child process (convert.py; the TensorFlow/triton segfault), its time recorded
  in the run's settings and never timed as inference;
- the package is compiled once to an .mlmodelc beside it (coremltools/models/utils.py,
  compile_model(model, destination_path)) and loaded twice with CompiledMLModel(path,
  compute_units) (coremltools/models/_compiled_model.py): the first load is when Core ML
  specialises the model for the unit (for the Neural Engine, its compiler runs unless Core ML's
  own cache has the result), the second shows the warm load; both recorded apart;
- MLComputePlan.load_from_path(compiled path, compute_units) (coremltools/models/
  compute_plan.py, coremltools >= 8.1, Core ML's plan API of macOS 14.4) says for each op of
  the program which unit Core ML prefers and its estimated share of the work: every row's note
  gives the shares, and a row of the CPU + Neural Engine unit whose work was mostly planned
  elsewhere is flagged, because a compute unit allows a unit, it does not pin the model to it;
- predict({"images": batch}) returns numpy arrays only when done: the protocol's
  synchronisation has nothing to wait for. Inputs are resident numpy arrays of the model's
  input type (float16 for the FP16 package), made once."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from siliconbench.core import files
from siliconbench.core.kit.training import ROTATING_BATCHES
from siliconbench.core.params import ParamError

# ImageNet normalisation, as the PyTorch run's host loader does it.
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
INPUT, OUTPUT = "images", "logits"
FOLDER = "coreml"                 # under the data folder (siliconbench.core.store.home())
# Bumped when convert.py changes what it makes: a package made by an older one is remade.
CONVERTER = 2   # 2: the record holds each file's fingerprint
RECORD_BYTES = 1 << 20   # a package's JSON record: its files' fingerprints, a few KB
# coremltools' compute device classes (coremltools/models/compute_device.py) by unit.
UNIT_OF_DEVICE = {"MLCPUComputeDevice": "CPU", "MLGPUComputeDevice": "GPU",
                  "MLNeuralEngineComputeDevice": "Neural Engine"}
# A CPU + Neural Engine row whose planned work is less than this on the Neural Engine says so.
MOSTLY = 0.5


class ConversionFailed(RuntimeError):
    """The child process could not convert the model; the message is its last line."""


@contextmanager
def inference(ctx, params: dict, batch_size: int) -> Iterator[Inference]:
    yield Inference(ctx, params, batch_size)


def _ct():
    import coremltools  # in a run's worker: torch and TensorFlow are refused there (isolate)
    return coremltools


class Inference:
    def __init__(self, ctx, params: dict, batch_size: int) -> None:
        if params["channels_last"]:
            raise ParamError("--channels-last does not apply to Core ML, which chooses its own "
                             "layout.")
        ct = _ct()
        self.dtype = "float16" if params["precision"] == "mixed" else "float32"
        self.image_size, self.device = params["image_size"], ctx.device
        unit = getattr(ct.ComputeUnit, ctx.device.native)
        if ctx.device.type in ("ne", "all"):
            # The worker's peak is the chip's GPU: no table figure covers the Neural Engine.
            ctx.peak = None
            ctx.record_settings(peak=None)
        ctx.progress(0, 0, "converting the model to Core ML (once; kept for later runs)")
        package, made = cached_package(params["model"], params["image_size"], batch_size,
                                       self.dtype)
        if made.get("rebuilt"):
            ctx.warn(made["rebuilt"])
        compiled = compiled_model(ct, package)
        t0 = time.perf_counter()
        ct.models.CompiledMLModel(str(compiled), unit)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.model = ct.models.CompiledMLModel(str(compiled), unit)
        second = time.perf_counter() - t0
        self.flops = made["flops"]
        shares = plan_of(ct, compiled, unit)
        self.flags, self.note = plan_words(shares, ctx.device.type, self.dtype)
        ctx.record_settings(coreml={
            "package": package.name, "compute_unit": ctx.device.native,
            "precision": self.dtype, "converted_s": made["convert_s"],
            "converted_in_this_run": made["fresh"], "first_load_s": first,
            "second_load_s": second, "compute_plan": shares})
        rng = np.random.default_rng(0)
        shape = (batch_size, 3, self.image_size, self.image_size)
        self.made = [rng.standard_normal(shape, dtype=np.float32).astype(self.dtype)
                     for _ in range(ROTATING_BATCHES)]
        out = self.forward(self.made[0])
        if out.shape != (batch_size, 1000):
            raise RuntimeError(f"Core ML gave an output of shape {out.shape}, expected "
                               f"({batch_size}, 1000)")

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.model.predict({INPUT: x})[OUTPUT]

    def host_images(self) -> HostImages:
        return HostImages(self.image_size, self.dtype)


class HostImages:
    """Each image made on the CPU as 8-bit pixels, converted to float and normalised on its
    own, the batch stacked: what the PyTorch run's host loader does, in numpy."""

    def __init__(self, size: int, dtype: str) -> None:
        self.size, self.dtype = size, dtype
        self.rng = np.random.default_rng(0)
        self.mean = np.array(MEAN, np.float32).reshape(3, 1, 1)
        self.std = np.array(STD, np.float32).reshape(3, 1, 1)

    def __call__(self, n: int) -> np.ndarray:
        images = []
        for _ in range(n):
            pixels = self.rng.integers(0, 256, (self.size, self.size, 3), dtype=np.uint8)
            images.append((pixels.transpose(2, 0, 1).astype(np.float32) / 255 - self.mean)
                          / self.std)
        return np.stack(images).astype(self.dtype)


# ---------------------------------------------------------------- the package, made once

def package_path(model: str, image_size: int, batch_size: int, dtype: str) -> Path:
    """Where the package for this point lives: one per model, shape, precision and the
    versions that made it (a new coremltools or torchvision converts again)."""
    from siliconbench.core.store import home
    versions = "-".join(f"{name}{_version(name)}" for name in
                        ("coremltools", "torch", "torchvision"))
    stem = f"{model}-{image_size}px-b{batch_size}-{dtype}-{versions}-c{CONVERTER}"
    return home() / FOLDER / (re.sub(r"[^A-Za-z0-9_.+-]", "_", stem) + ".mlpackage")


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def cached_package(model: str, image_size: int, batch_size: int, dtype: str
                   ) -> tuple[Path, dict]:
    """The package and what its conversion recorded ("fresh": converted by this call). Its
    JSON beside it, written last by the converter, says it is whole."""
    path = package_path(model, image_size, batch_size, dtype)
    made, why = kept_package(path)
    if made is not None:
        return path, {**made, "fresh": False}
    for old in (path, path.with_suffix(".json"), path.with_suffix(".mlmodelc")):
        files.remove(old)
    request = {"model": model, "image_size": image_size, "batch_size": batch_size,
               "precision": dtype, "out": str(path)}
    made = {**run_converter("convert", stdin=json.dumps(request)), "fresh": True}
    if why:
        made["rebuilt"] = f"the cached model {path.name} was damaged ({why}); rebuilt"
    return path, made


def kept_package(path: Path) -> tuple[dict | None, str | None]:
    """(what the conversion recorded, None) for a whole package kept from before; (None,
    why) for a damaged one (not a folder of regular files, a file missing, added or changed
    since it was converted: files.damage against the record); (None, None) when there is
    none or its record was never written (a conversion cut short)."""
    info = path.with_suffix(".json")
    if not os.path.lexists(info):
        return None, None
    try:
        made = json.loads(files.read_small(info, RECORD_BYTES, "Core ML package record",
                                           follow=False))
    except (OSError, ValueError) as e:
        return None, f"its record {info.name} cannot be read: {e}"
    if not isinstance(made, dict) or not isinstance(made.get("flops"), (int, float)):
        return None, f"its record {info.name} is not one the converter writes"
    why = files.damage(path, made.get("files"))
    return (None, why) if why else (made, None)


def run_converter(*args: str, stdin: str = "") -> dict:
    """convert.py in a child process (never coremltools in this one next to torch): its JSON."""
    root = str(Path(__file__).resolve().parents[4])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-m", "siliconbench.core.frameworks.coreml.convert", *args],
                          input=stdin, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ConversionFailed(f"converting to Core ML failed (exit {done.returncode}): {last}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compiled_model(ct, package: Path) -> Path:
    """The package compiled once to an .mlmodelc beside it (a temporary name renamed into
    place, so it is whole or absent)."""
    compiled = package.with_suffix(".mlmodelc")
    if compiled.is_dir() and not compiled.is_symlink():
        return compiled
    files.remove(compiled)      # a link, a file or a FIFO in its place
    staging = Path(tempfile.mkdtemp(prefix=".compiling-", dir=package.parent))
    try:
        ct.models.utils.compile_model(str(package), str(staging / compiled.name))
        try:
            os.replace(staging / compiled.name, compiled)
        except OSError:
            if not compiled.is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return compiled


# ---------------------------------------------------------------- where Core ML plans the ops

def plan_of(ct, compiled: Path, unit) -> dict:
    """The compute plan's shares for the compiled model on `unit`, or why there is none."""
    try:
        plan = ct.models.compute_plan.MLComputePlan.load_from_path(str(compiled), unit)
    except Exception as e:   # macOS before 14.4 has no plan API; coremltools says ValueError
        return {"unavailable": f"{type(e).__name__}: {e}"}
    return plan_shares(plan)


def _operations(block) -> Iterator:
    for op in block.operations:
        yield op
        for inner in op.blocks:
            yield from _operations(inner)


def plan_shares(plan) -> dict:
    """From an MLComputePlan: how many of the main function's ops Core ML prefers to run on
    each unit, and each unit's share of the estimated cost (MLComputePlanCost.weight, a
    fraction of the model's work). Ops with no device usage (constants) are not counted."""
    program = plan.model_structure.program
    if program is None:
        return {"unavailable": "the model is not an ML program"}
    ops: dict[str, int] = {}
    cost: dict[str, float] = {}
    for op in _operations(program.functions["main"].block):
        usage = plan.get_compute_device_usage_for_mlprogram_operation(op)
        if usage is None:
            continue
        device = type(usage.preferred_compute_device).__name__
        unit = UNIT_OF_DEVICE.get(device, device)
        ops[unit] = ops.get(unit, 0) + 1
        estimate = plan.get_estimated_cost_for_mlprogram_operation(op)
        cost[unit] = cost.get(unit, 0.0) + (estimate.weight if estimate is not None else 0.0)
    total = sum(cost.values())
    return {"ops": ops, "cost_share": {u: c / total for u, c in cost.items()} if total
            else None}


def plan_words(shares: dict, unit_id: str, dtype: str = "float16") -> tuple[list[str], str]:
    """(flags, note) for every row: where Core ML planned the work."""
    if "unavailable" in shares:
        return [], ("Core ML's compute plan is unavailable here (it needs macOS 14.4 and "
                    f"coremltools 8.1): {shares['unavailable']}; which unit ran is unknown")
    ops = shares["ops"]
    n = sum(ops.values())
    by = shares["cost_share"] or ({u: k / n for u, k in ops.items()} if n else {})
    what = "of the estimated work" if shares["cost_share"] else "of the ops"
    parts = [f"{share:.0%} on {u}" for u, share in sorted(by.items(), key=lambda kv: -kv[1])]
    note = f"Core ML's compute plan ({n} ops): {', '.join(parts) or 'no ops'} {what}"
    flags = []
    if unit_id == "ne" and by.get("Neural Engine", 0.0) < MOSTLY:
        flags.append("mostly_off_neural_engine")
        note += ("; most of it is not on the Neural Engine: the unit allows the Neural Engine, "
                 "Core ML chose the CPU for the ops it cannot run there")
        if dtype != "float16":
            note += " (the Neural Engine computes in float16: --precision mixed converts to it)"
    return flags, note
