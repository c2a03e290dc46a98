"""Training throughput of the models people quote (tf-metal-experiments' table): ResNet50 and
MobileNetV2 with SGD, DistilBERT and BERT-Large with Adam, on synthetic data made on the device.

The protocol is here, the same on every framework: the default batch size, the phases, the
measurement (normal or sustained), the point and rows, the --check row. A framework supports
train with a module siliconbench.core.frameworks.<name>.train that is a TrainPart (below): its
training() yields a Training, the model and batches a run times."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from siliconbench.core.catalogue import Workload
from siliconbench.core.kit.encoders import ENCODERS
from siliconbench.core.params import Param

if TYPE_CHECKING:  # the catalogue loads this module for the app's window: no more than it needs
    from siliconbench.core.context import RunContext

TRANSFORMER_MODELS = tuple(ENCODERS)
TRAIN_MODELS = ("resnet50", "mobilenet_v2") + TRANSFORMER_MODELS
# The published M1 Max table's batch sizes (reference-results.md).
PUBLISHED_BATCH = {"resnet50": 64, "mobilenet_v2": 128, "distilbert": 64, "bert-large": 32}

# What the model and its data are; the memory workload sweeps the batch size of the same.
MODEL_PARAMS = (
    Param("model", "choice", "resnet50", "The model to train.", choices=TRAIN_MODELS),
    Param("precision", "choice", "fp32", "fp32, or mixed: autocast to float16 or bfloat16 "
          "where the device supports it (the run says so where it does not).",
          choices=("fp32", "mixed")),
    Param("channels_last", "bool", False, "CNNs: NHWC memory layout."),
    Param("image_size", "int", 224, "CNNs: image height and width in pixels.", min=16,
          max=1024),
    Param("seq_len", "int", 128, "Transformers: tokens per sequence.", min=1, max=512),
    Param("layers", "int", None, "Transformers: number of layers.", min=1, max=48,
          auto="the model's own: 6 for distilbert, 24 for bert-large"),
)
BATCH_PARAM = Param("batch_size", "int", None, "Samples per training step.", min=1,
                    max=100_000, auto="the published table's: 64 for resnet50 and distilbert, "
                                      "128 for mobilenet_v2, 32 for bert-large")
# Sustained mode, shared with infer, gemm, bandwidth and llm.
DURATION_PARAM = Param("duration", "float", None, "Sustained mode: run this many minutes and "
                       "report throughput every few seconds, the burst (first 30 s), the "
                       "sustained figure (last third) and their ratio, with the clocks, power "
                       "and heat the machine reported beside.", min=0.05, max=600,
                       auto="the normal protocol (until the timing is stable)")

WORKLOAD = Workload(
    name="train",
    title="Training throughput",
    summary="Training samples per second of ResNet50, MobileNetV2, DistilBERT and BERT-Large "
            "on synthetic data.",
    order=30,
    metric="samples_per_s",
    module=__name__,
    params=MODEL_PARAMS[:1] + (BATCH_PARAM,) + MODEL_PARAMS[1:] + (
        Param("compile", "bool", False, "Compile the training step: torch.compile, or "
                                        "mx.compile on MLX (on TensorFlow use --xla); the "
                                        "run says so where it cannot."),
        Param("check", "bool", False, "Also train the same seeded model on the same data on the "
                                      "CPU and compare the loss curves."),
        Param("check_steps", "int", 5, "Training steps the --check comparison takes.", min=2,
              max=1000),
        Param("xla", "bool", False, "TensorFlow: compile the training step with XLA "
                                    "(jit_compile), as the published RTX 3090 runs did."),
        DURATION_PARAM,
    ),
)


class Training(Protocol):
    """A model and ROTATING_BATCHES synthetic batches on the run's device, ready to train."""
    unit: str     # "img/s" or "seq/s"
    # What the step computes in, as the peak table names it: float32, or float16/bfloat16
    # under mixed precision.
    dtype: str

    def step(self) -> object:
        """One training step on the next batch: the timed call."""

    def flops(self) -> tuple[float, dict]:
        """(FLOPs of one step, settings saying how they were counted)."""

    def compile(self) -> None:
        """--compile; where compiling fails, warn and stay eager."""

    def verified(self) -> tuple[list[str], str | None]:
        """After measuring: (flags, note) for what did not run on the device."""

    def release(self) -> None:
        """Free the model and its batches."""

    def check(self, size: int, steps: int) -> tuple[list[float], list[float]]:
        """--check: (device losses, CPU losses) of one seeded model without dropout and its
        twin with the same weights, trained for `steps` steps on the same batches of `size`,
        on the device in its precision and on the CPU in float32."""


@runtime_checkable
class TrainPart(Protocol):
    """siliconbench.core.frameworks.<name>.train, the module."""

    def training(self, ctx: RunContext, params: dict, batch_size: int
                 ) -> AbstractContextManager[Training]:
        """Entering it warns about the parameters the framework does not apply (ParamError for
        a model it cannot build), records its precision, and builds the model and its batches
        on the device; leaving it says what did not run on the device."""


def run(ctx, params: dict) -> None:
    from siliconbench.core.frameworks import implementation
    from siliconbench.core.kit.checks import CHECK_BATCH, check_tolerance, loss_check_row
    from siliconbench.core.kit.errors import out_of_memory_at
    from siliconbench.core.kit.rows import measure_run, memory_row, sustained_rows, throughput_rows

    part: TrainPart = implementation(ctx.framework, "train")
    batch_size = params["batch_size"] or PUBLISHED_BATCH[params["model"]]
    total = 4 if params["check"] else 3
    ctx.progress(0, total, "building the model")
    with out_of_memory_at(batch_size), part.training(ctx, params, batch_size) as model:
        ctx.progress(1, total, "counting FLOPs")
        flops, counted = model.flops()
        if params["compile"]:
            model.compile()
        ctx.record_settings(flops_per_step=flops, **counted)
        ctx.progress(2, total, "measuring")
        ctx.adapter.reset_peak_memory(ctx.device)
        m = measure_run(ctx, model.step, params["duration"])
        flags, note = model.verified()
        # The point as the published tables give it (siliconbench/resources/reference), so runs compare
        # with them; image size, layers and the like are the run's parameters.
        point = {"model": params["model"], "batch_size": batch_size,
                 "precision": "fp32" if model.dtype == "float32" else "mixed"}
        rows = throughput_rows(ctx, m, batch_size, model.unit, point, flops, model.dtype,
                               flags, note)
        rows.append(memory_row(ctx, point, flags))
        rows += sustained_rows(m, batch_size, model.unit, point)
        for row in rows:
            ctx.row(row)
        model.release()

        if params["check"]:
            ctx.progress(3, total, "comparing with the CPU")
            size = min(batch_size, CHECK_BATCH)
            ours, reference = model.check(size, params["check_steps"])
            mixed = None if model.dtype == "float32" else model.dtype
            ctx.row(loss_check_row(ctx, ours, reference, check_tolerance(mixed),
                                   {**point, "batch_size": size}))
    ctx.progress(total, total, "done")
