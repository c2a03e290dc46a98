"""The two CIFAR-10 MLP experiments people ran on M1 Macs: the depth sweep (seconds to train
3 epochs at depth 5..20) and the 3000-1000 network (seconds per epoch, accuracy per epoch).

The protocol is here, the same on every framework: the data (CIFAR-10 or synthetic), the
networks, the timed fit, the measured step, the rows and the --check row. A framework supports
mlp with a module siliconbench.core.frameworks.<name>.mlp that is an MlpPart (below): its
session() yields an MlpSession, which fits and times the networks."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from siliconbench.core.catalogue import Workload
from siliconbench.core.kit.training import ROTATING_BATCHES
from siliconbench.core.params import Param, ParamError
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize

if TYPE_CHECKING:  # the catalogue loads this module for the app's window: no more than it needs
    from siliconbench.core.context import RunContext

PRESETS = ("depth-sweep", "3000-1000")
DEFAULT_EPOCHS = {"depth-sweep": 3, "3000-1000": 5}
DEFAULT_DEPTHS = [5, 10, 15, 20]
WIDE_WIDTHS = [3000, 1000]
DEPTH_WIDTH = 1024

WORKLOAD = Workload(
    name="mlp",
    title="CIFAR-10 MLP training",
    summary="Time to train the published CIFAR-10 MLPs: the depth sweep and the 3000-1000 "
            "network.",
    order=50,
    metric="train_seconds",
    module=__name__,
    checks="check_params",
    params=(
        Param("preset", "choice", "depth-sweep", "depth-sweep: Flatten -> depth x Dense(1024, "
              "ReLU) -> Dense(10, sigmoid); 3000-1000: Dense(3000) -> Dense(1000) -> Dense(10).",
              choices=PRESETS),
        Param("cifar", "str", None, "The CIFAR-10 python archive (cifar-10-python.tar.gz) or "
              "its extracted folder.", auto="the archive in SiliconBench's data folder, else "
                                             "synthetic data of the same shape",
              path=True),
        Param("download", "bool", False, "Download CIFAR-10 (163 MB) into SiliconBench's data "
                                         "folder if it is not there; the checksum is verified."),
        Param("epochs", "int", None, "Passes over the training images.", min=1, max=1000,
              auto="3 for depth-sweep, 5 for 3000-1000, as published"),
        Param("depths", "int_list", None, "depth-sweep: the depths to train.", min=1, max=200,
              auto="5,10,15,20"),
        Param("batch_size", "int", 32, "Images per step (32 is Keras's default, which the "
                                       "published runs used).", min=1, max=50_000),
        Param("samples", "int", None, "Train on the first N images only.", min=1, max=50_000,
              auto="all 50,000"),
        Param("check", "bool", False, "Also train the same seeded MLP on the same data on the "
                                      "CPU and compare the loss curves."),
        Param("check_steps", "int", 5, "Training steps the --check comparison takes.", min=2,
              max=1000),
    ),
)


class MlpSession(Protocol):
    """The training images and labels where the framework trains on them."""

    def fit(self, widths: list[int], epochs: int, batch_size: int,
            on_epoch: Callable[[int], None]) -> tuple[Any, list[float], list[float], list[float]]:
        """(trained, epoch seconds, losses, accuracies): builds the seeded MLP (Flatten,
        Dense(w, ReLU) per width, Dense(10, sigmoid), Glorot-uniform weights, zero biases,
        SGD) and trains it as Keras's model.fit does: shuffled batches, the last one short;
        on_epoch(e) before each epoch."""

    def step(self, trained: Any, batches: list) -> Callable[[], object]:
        """The timed call: one training step of `trained` on the next of `batches` (host
        (images, labels) pairs, put on the device once)."""

    def flops(self, step: Callable[[], object]) -> float | None:
        """FLOPs of one step counted by the framework, or None: the workload counts them."""

    def verified(self, step: Callable[[], object]) -> tuple[list[str], str | None]:
        """After measuring: (flags, note) for what did not run on the device."""

    def check(self, widths: list[int], batches: list, steps: int
              ) -> tuple[list[float], list[float]]:
        """--check: (device losses, CPU losses) of the seeded MLP trained for `steps` steps
        on `batches` on the device and on the CPU."""


@runtime_checkable
class MlpPart(Protocol):
    """siliconbench.core.frameworks.<name>.mlp, the module."""

    def session(self, ctx: RunContext, images: Any, labels: Any
                ) -> AbstractContextManager[MlpSession]:
        """Places the training images (uint8, N x 32 x 32 x 3, scaled to [0, 1] by the
        framework) and labels where the framework trains on them."""


def run(ctx, params: dict) -> None:
    from siliconbench.core.frameworks import implementation
    from siliconbench.core.kit.checks import check_tolerance, loss_check_row
    from siliconbench.core.kit.errors import out_of_memory_at
    from siliconbench.core.kit.rows import throughput_rows

    part: MlpPart = implementation(ctx.framework, "mlp")
    preset, batch_size = params["preset"], params["batch_size"]
    data, count, epochs, widths_list, extra_flags = prepare(ctx, params)
    images, labels = data.images[:count], data.labels[:count]
    batches = rotating_batches(images, labels, count, batch_size)
    total = len(widths_list) * (epochs + 1) + (1 if params["check"] else 0)
    done = 0
    with out_of_memory_at(batch_size), part.session(ctx, images, labels) as mlp:
        for widths in widths_list:
            label = f"depth {len(widths)}" if preset == "depth-sweep" else preset
            point = point_for(preset, widths)
            start = time.perf_counter()      # the published seconds include the model build
            trained, epoch_seconds, losses, accuracies = mlp.fit(
                widths, epochs, batch_size, lambda e, at=done, label=label: ctx.progress(
                    at + e, total, f"{label}: epoch {e + 1} of {epochs}"))
            fit = Fit(time.perf_counter() - start, epoch_seconds, losses, accuracies, count)
            done += epochs
            ctx.progress(done, total, f"{label}: measuring samples/s")
            step = mlp.step(trained, batches)
            flops = mlp.flops(step) or train_flops(widths, batch_size)
            m = ctx.measure(step)
            watched, note = mlp.verified(step)
            done += 1
            flags = watched + extra_flags
            rows = throughput_rows(ctx, m, batch_size, "img/s", point, flops, "float32", flags,
                                   note)
            rows += fit.rows(point, flags, per_epoch=preset == "3000-1000")
            for row in rows:
                ctx.row(row)

        if params["check"]:
            ctx.progress(done, total, "comparing with the CPU")
            ours, reference = mlp.check(widths_list[0], batches, params["check_steps"])
            row = loss_check_row(ctx, ours, reference, check_tolerance(None),
                                 point_for(preset, widths_list[0]))
            row.flags += extra_flags
            ctx.row(row)
    ctx.progress(total, total, "done")


def train_flops(widths: list[int], batch_size: int, inputs: int = 32 * 32 * 3,
                classes: int = 10) -> float:
    """FLOPs of one training step of the CIFAR-10 MLP: 2·in·out per sample per Dense layer
    forward, backward twice that."""
    sizes = [inputs, *widths, classes]
    return 3.0 * 2 * batch_size * sum(a * b for a, b in pairwise(sizes))


def prepare(ctx, params: dict) -> tuple:
    """What every framework's run starts with: (the CIFAR-10 data, the images to train on,
    epochs, each network's hidden widths, flags for every row), checked, warned about and
    recorded in the run's settings."""
    from siliconbench.core import cifar

    preset, batch_size = params["preset"], params["batch_size"]
    epochs = params["epochs"] or DEFAULT_EPOCHS[preset]
    if preset == "3000-1000" and params["depths"]:
        ctx.warn("--depths applies to the depth-sweep preset only; ignored.")
    widths_list = [[DEPTH_WIDTH] * d for d in params["depths"] or DEFAULT_DEPTHS] \
        if preset == "depth-sweep" else [WIDE_WIDTHS]

    try:
        data, why = cifar.find(params["cifar"], params["download"])
    except cifar.CifarError as e:
        raise ParamError(str(e)) from None
    synthetic = data is None
    if synthetic:
        ctx.warn(f"{why}; training on synthetic data of the same shape instead.")
        data = cifar.synthetic(params["samples"] or cifar.TRAIN_IMAGES)
    elif not data.official:
        ctx.warn(f"{data.source} is not verified as the published CIFAR-10 archive (its "
                 "checksum differs, or it is a folder): if it is a subset, the times are not "
                 "comparable with the published ones.")
    count = params["samples"] or len(data.labels)
    if count > len(data.labels):
        raise ParamError(f"--samples must be at most {len(data.labels)}, the images in "
                         f"{data.source}, not {count}.")
    _at_least_a_batch(count, batch_size)
    ctx.record_settings(cifar=data.source, cifar_official=data.official, epochs=epochs,
                        samples=count)
    extra_flags = ["synthetic"] if synthetic else []
    return data, count, epochs, widths_list, extra_flags


def check_params(params: dict, framework: str | None = None) -> None:
    if params.get("cifar"):     # a path that cannot be the data set: said before any question
        from siliconbench.core import cifar
        try:
            cifar.check_given(params["cifar"])
        except cifar.CifarError as e:
            raise ParamError(str(e)) from None
    if params["samples"]:       # 0: every image of the data, known once it is found
        _at_least_a_batch(params["samples"], params["batch_size"])


def _at_least_a_batch(count: int, batch_size: int) -> None:
    if count < batch_size:
        raise ParamError(f"--samples ({count}) must be at least --batch-size ({batch_size}).")


def rotating_batches(x, y, count: int, batch_size: int) -> list[tuple]:
    """The first few training batches, timed in turn (any framework's arrays slice alike)."""
    return [(x[i * batch_size:(i + 1) * batch_size], y[i * batch_size:(i + 1) * batch_size])
            for i in range(min(ROTATING_BATCHES, count // batch_size))]


def point_for(preset: str, widths: list[int]) -> dict:
    """The point as the published results give it (siliconbench/resources/reference); epochs, batch size
    and sample count are the run's parameters."""
    return {"preset": preset, "depth": len(widths)} if preset == "depth-sweep" else \
        {"preset": preset}


class Fit:
    """One model.fit: its wall-clock, and the loss and accuracy of every epoch."""

    def __init__(self, seconds: float, epoch_seconds: list[float], losses: list[float],
                 accuracies: list[float], samples: int) -> None:
        self.seconds, self.epoch_seconds = seconds, epoch_seconds
        self.losses, self.accuracies, self.samples = losses, accuracies, samples

    def rows(self, point: dict, flags: list[str], per_epoch: bool) -> list[Row]:
        """The published figures: the whole fit's seconds, steady-state seconds per epoch and
        microseconds per sample (the first epoch, which pays for warming up, left out when
        there are more), the final loss and accuracy; with per_epoch, every epoch's too."""
        steady = self.epoch_seconds[1:] or self.epoch_seconds
        per_sample = [s / self.samples * 1e6 for s in steady]
        out = [Row("train_seconds", self.seconds, "s", point, None, list(flags),
                   "the whole fit, model build included; samples: each epoch's seconds", None,
                   self.epoch_seconds),
               Row("epoch_seconds", summarize(steady).median, "s", point, summarize(steady),
                   list(flags), None, None, steady),
               Row("us_per_sample", summarize(per_sample).median, "µs", point,
                   summarize(per_sample), list(flags), None, None, per_sample),
               Row("final_loss", self.losses[-1], "", point, None, list(flags),
                   "mean training loss over the last epoch"),
               Row("final_accuracy", self.accuracies[-1], "fraction", point, None, list(flags),
                   "training accuracy over the last epoch, as Keras reports it")]
        for e in range(len(self.losses)) if per_epoch else []:
            here = {**point, "epoch": e + 1}
            out += [Row("loss", self.losses[e], "", here, None, list(flags)),
                    Row("accuracy", self.accuracies[e], "fraction", here, None, list(flags))]
        return out
