"""The two CIFAR-10 MLP experiments people ran on M1 Macs: the depth sweep (seconds to train
3 epochs at depth 5..20) and the 3000-1000 network (seconds per epoch, accuracy per epoch)."""

from __future__ import annotations

import time
from collections.abc import Callable

from core.params import Param, ParamError
from core.results import Row
from core.stats import summarize
from core.workloads import Workload
from core.workloads.shared import ROTATING_BATCHES

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
    frameworks=("torch", "tensorflow", "mlx"),
    metric="train_seconds",
    module=__name__,
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


def run(ctx, params: dict) -> None:
    if ctx.framework != "torch":     # Keras and MLX build their own MLPs; same data and rows
        from core.workloads.shared import models_for
        return models_for(ctx.framework).mlp(ctx, params)
    import torch

    from core.frameworks.torch import models

    dev = ctx.device
    preset, batch_size = params["preset"], params["batch_size"]
    data, count, epochs, widths_list, extra_flags = prepare(ctx, params)

    watch = models.FallbackWatch()
    total = len(widths_list) * (epochs + 1) + (1 if params["check"] else 0)
    done = 0
    with watch.watching(), models.out_of_memory_at(batch_size):
        x = torch.from_numpy(data.images[:count]).to(dev).float().div_(255)
        y = torch.from_numpy(data.labels[:count]).to(dev)
        for widths in widths_list:
            label = f"depth {len(widths)}" if preset == "depth-sweep" else preset
            point = point_for(preset, widths)

            fit = train_epochs(ctx, widths, x, y, epochs, batch_size,
                               lambda e, at=done, label=label: ctx.progress(
                                   at + e, total, f"{label}: epoch {e + 1} of {epochs}"))
            done += epochs
            ctx.progress(done, total, f"{label}: measuring samples/s")
            step = fit.step
            step.batches = rotating_batches(x, y, count, batch_size)
            flops = models.count_flops(step)
            m = ctx.measure(step)
            watch.check_output(step(), dev)
            done += 1
            flags = watch.flags + extra_flags
            rows = models.throughput_rows(ctx, m, batch_size, "img/s", point, flops, None,
                                          flags, watch.note)
            rows += fit.rows(point, flags, per_epoch=preset == "3000-1000")
            for row in rows:
                ctx.row(row)

        if params["check"]:
            ctx.progress(done, total, "comparing with the CPU")
            torch.manual_seed(0)
            model = models.mlp(widths_list[0])
            cpu_x = torch.from_numpy(data.images[:count]).float().div_(255)
            cpu_y = torch.from_numpy(data.labels[:count])
            batches = rotating_batches(cpu_x, cpu_y, count, batch_size)
            row = models.compare_with_cpu(ctx, model, "sgd",
                                          models.sigmoid_categorical_crossentropy, batches,
                                          None, params["check_steps"],
                                          point_for(preset, widths_list[0]))
            row.flags += extra_flags
            ctx.row(row)
    watch.report(ctx)
    ctx.progress(total, total, "done")


def prepare(ctx, params: dict) -> tuple:
    """What every framework's run starts with: (the CIFAR-10 data, the images to train on,
    epochs, each network's hidden widths, flags for every row), checked, warned about and
    recorded in the run's settings."""
    from core import cifar

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
    if count < batch_size:
        raise ParamError(f"--samples ({count}) must be at least --batch-size ({batch_size}).")
    ctx.record_settings(cifar=data.source, cifar_official=data.official, epochs=epochs,
                        samples=count)
    extra_flags = ["synthetic"] if synthetic else []
    return data, count, epochs, widths_list, extra_flags


def rotating_batches(x, y, count: int, batch_size: int) -> list[tuple]:
    """The first few training batches, timed in turn (any framework's arrays slice alike)."""
    return [(x[i * batch_size:(i + 1) * batch_size], y[i * batch_size:(i + 1) * batch_size])
            for i in range(min(ROTATING_BATCHES, count // batch_size))]


def point_for(preset: str, widths: list[int]) -> dict:
    """The point as the published results give it (resources/reference); epochs, batch size
    and sample count are the run's parameters."""
    return {"preset": preset, "depth": len(widths)} if preset == "depth-sweep" else \
        {"preset": preset}


class Fit:
    """One model.fit: its wall-clock, and the loss and accuracy of every epoch."""

    def __init__(self, step, seconds: float, epoch_seconds: list[float], losses: list[float],
                 accuracies: list[float], samples: int) -> None:
        self.step, self.seconds, self.epoch_seconds = step, seconds, epoch_seconds
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


def train_epochs(ctx, widths: list[int], x, y, epochs: int, batch_size: int,
                 on_epoch: Callable[[int], None]) -> Fit:
    """Build the MLP and train it as Keras's fit does: shuffled batches, the last one short."""
    import torch

    from core.frameworks.torch import models
    start = time.perf_counter()
    torch.manual_seed(0)
    model = models.mlp(widths).to(ctx.device)
    step = models.TrainStep(model, "sgd", models.sigmoid_categorical_crossentropy,
                            [(x[:batch_size], y[:batch_size])])
    count = len(y)
    epoch_seconds, losses, accuracies = [], [], []
    for epoch in range(epochs):
        on_epoch(epoch)
        t0 = time.perf_counter()
        order = torch.randperm(count).to(ctx.device)
        # Sums stay on the device: reading them each step would synchronise every step.
        loss_sum = torch.zeros((), device=ctx.device)
        correct = torch.zeros((), device=ctx.device, dtype=torch.long)
        for i in range(0, count, batch_size):
            index = order[i:i + batch_size]
            batch_y = y[index]
            loss, logits = step.on(x[index], batch_y)
            loss_sum += loss * len(index)
            correct += (logits.argmax(dim=1) == batch_y).sum()
        ctx.sync()
        epoch_seconds.append(time.perf_counter() - t0)
        losses.append(float(loss_sum) / count)
        accuracies.append(float(correct) / count)
    return Fit(step, time.perf_counter() - start, epoch_seconds, losses, accuracies, count)
