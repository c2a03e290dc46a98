"""The conversion of a torchvision classifier to a Core ML package, in a process of its own:

    python -m siliconbench.core.frameworks.coreml.convert convert   (a request as JSON on stdin)
    python -m siliconbench.core.frameworks.coreml.convert describe PATH

`convert` builds the model as the PyTorch infer run does (torchvision's get_model with
weights=None and 1000 classes, after torch.manual_seed(0): the same random weights), traces it
on one batch, counts its forward FLOPs with torch's counter, converts it to an mlprogram of the
requested precision with the batch size in its input shape, saves it to the request's "out"
(through a temporary folder renamed into place, so a package is whole or absent) and writes
"<out without .mlpackage>.json" beside it last: what the conversion took and the FLOPs. That
file is what says the package is complete, and holds each of its files' size, time and
sha256 (files.fingerprint), against which a package is checked before it is used. `describe` prints a package's spec as JSON (type,
inputs, outputs, the element types of the program's op outputs) for the tests.

Why a child process: on Linux, `import coremltools` segfaults when TensorFlow is installed
beside torch >= 2.9 (coremltools imports TensorFlow if it finds it, and TensorFlow 2.21 loaded
before triton crashes the process). Here torch and torchvision are imported first and
TensorFlow is made absent (sys.modules["tensorflow"] = None: import raises ImportError and
importlib.util.find_spec answers None) before coremltools is imported; coremltools' _deps
takes any failed import as "not installed" (coremltools/_deps/__init__.py, `import
tensorflow` in a bare try/except). A run's worker, which may not import torch, starts this."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from siliconbench.core.files import fingerprint, write_atomic

INPUT, OUTPUT = "images", "logits"
NUM_CLASSES = 1000


def _end_with_parent() -> None:
    """A conversion is minutes of CPU: it must not outlive the run that asked for it."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)
    threading.Thread(target=watch, daemon=True).start()


def _coremltools():
    import torch  # noqa: F401  before coremltools: see the module's docstring
    import torchvision  # noqa: F401
    if "tensorflow" not in sys.modules:
        sys.modules["tensorflow"] = None    # type: ignore[assignment]
    import coremltools
    return coremltools


def convert(request: dict) -> dict:
    ct = _coremltools()
    import numpy as np
    import torch
    import torchvision
    from torch.utils.flop_counter import FlopCounterMode

    out = Path(request["out"])
    size, batch = int(request["image_size"]), int(request["batch_size"])
    fp16 = request["precision"] == "float16"
    dtype = np.float16 if fp16 else np.float32
    started = time.perf_counter()
    torch.manual_seed(0)
    model = torchvision.models.get_model(request["model"], weights=None,
                                         num_classes=NUM_CLASSES).eval()
    example = torch.randn(batch, 3, size, size)
    with torch.no_grad():
        with FlopCounterMode(display=False) as counter:
            model(example)
        traced = torch.jit.trace(model, example)
    mlmodel = ct.convert(
        traced, convert_to="mlprogram",
        inputs=[ct.TensorType(name=INPUT, shape=tuple(example.shape), dtype=dtype)],
        outputs=[ct.TensorType(name=OUTPUT, dtype=dtype)],
        compute_precision=ct.precision.FLOAT16 if fp16 else ct.precision.FLOAT32,
        minimum_deployment_target=ct.target.macOS13)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".converting-", dir=out.parent))
    try:
        mlmodel.save(str(staging / out.name))
        try:
            os.replace(staging / out.name, out)
        except OSError:
            if not out.exists():   # another run put the same package there first: keep it
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    seconds = time.perf_counter() - started
    result = {"model": request["model"], "image_size": size, "batch_size": batch,
              "precision": request["precision"], "convert_s": seconds,
              "flops": float(counter.get_total_flops()), "converted_at": time.time(),
              "coremltools": ct.__version__, "torch": torch.__version__,
              "torchvision": torchvision.__version__,
              # Each file of the package as it was made: a damaged package is converted again.
              "files": fingerprint(out)}
    write_atomic(out.with_suffix(".json"), json.dumps(result), own=True)
    return result


def describe(path: str) -> dict:
    """What a package's spec says: its type, its inputs' and outputs' shapes and element
    types, and how many of the main function's op outputs are of each element type."""
    ct = _coremltools()
    from coremltools.proto import MIL_pb2
    spec = ct.utils.load_spec(path)

    def feature(f) -> dict:
        array = f.type.multiArrayType
        return {"name": f.name, "shape": list(array.shape),
                "dtype": ct.proto.FeatureTypes_pb2.ArrayFeatureType.ArrayDataType.Name(
                    array.dataType)}
    counts: dict[str, int] = {}
    if spec.WhichOneof("Type") == "mlProgram":
        main = spec.mlProgram.functions["main"]
        for op in main.block_specializations[main.opset].operations:
            for output in op.outputs:
                if output.type.WhichOneof("type") == "tensorType":
                    name = MIL_pb2.DataType.Name(output.type.tensorType.dataType)
                    counts[name] = counts.get(name, 0) + 1
    return {"type": spec.WhichOneof("Type"), "specification_version": spec.specificationVersion,
            "inputs": [feature(f) for f in spec.description.input],
            "outputs": [feature(f) for f in spec.description.output],
            "op_output_dtypes": counts}


def main(argv: list[str]) -> int:
    # Everything coremltools and torch print goes to stderr; stdout carries one JSON line.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _end_with_parent()
    if argv[:1] == ["convert"]:
        result = convert(json.load(sys.stdin))
    elif argv[:1] == ["describe"] and len(argv) == 2:
        result = describe(argv[1])
    else:
        print("usage: python -m siliconbench.core.frameworks.coreml.convert convert < request.json | "
              "describe PATH", file=sys.stderr)
        return 2
    out.write(json.dumps(result) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
