"""Inference throughput of a torchvision classifier on generated images (the image-benchmark
experiment), with inputs made on the device or prepared on the host each batch as the
original benchmark did, where the host pipeline, not the GPU, set the pace.

The protocol is here: the data paths swept, the measurement (normal or sustained), the
latency pass, the rows and the host/device ratio. A framework supports infer with a module
siliconbench.core.frameworks.<name>.infer that is an InferPart (below): its inference() yields
an Inference, the classifier a run times."""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from siliconbench.core.catalogue import Workload
from siliconbench.core.numbers import duration
from siliconbench.core.params import Param, ParamError, resource_choices
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize
from siliconbench.core.workloads.train import DURATION_PARAM

if TYPE_CHECKING:  # the catalogue loads this module for the app's window: no more than it needs
    from siliconbench.core.context import RunContext

PERCENTILES = (50, 90, 99)

WORKLOAD = Workload(
    name="infer",
    title="Inference throughput",
    summary="Images per second of any torchvision classifier, on data made on the device or "
            "prepared on the host.",
    order=40,
    metric="samples_per_s",
    module=__name__,
    checks="check_params",
    params=(
        Param("model", "choice", "resnet50", "A torchvision classification model, e.g. "
                                             "resnet50, mobilenet_v2, efficientnet_b0, vit_b_16.",
              choices=resource_choices("torchvision_models.json", "models")),
        Param("batch_size", "int", 64, "Images per batch.", min=1, max=100_000),
        Param("images", "int", 1000, "Images in the pass that gives the per-batch latencies "
                                     "and the progress, rounded up to whole batches.", min=1,
              max=1_000_000),
        Param("data", "choice", "device", "device: images made on the device (measures the "
              "device); host: made and preprocessed on the CPU each batch, then copied, as "
              "the original benchmark (measures the pipeline); both: the two and their ratio.",
              choices=("device", "host", "both")),
        Param("image_size", "int", 224, "Image height and width in pixels.", min=16, max=1024),
        Param("precision", "choice", "fp32", "fp32, or mixed: autocast to float16 or bfloat16 "
              "where the device supports it.", choices=("fp32", "mixed")),
        Param("channels_last", "bool", False, "NHWC memory layout."),
        DURATION_PARAM,
        Param("grow", "bool", False, "Double the batch size from --batch-size until img/s "
              "stops rising by 3%, memory runs out or the time budget is reached (the quick "
              "suite's way to find the device's best batch)."),
        Param("budget_s", "float", None, "Seconds --grow may take.", min=1, max=86400,
              auto="no limit", title="Time budget (s)"),
    ),
)


class ImageFeed(Protocol):
    """Batches of images for the model, one per call."""

    def __call__(self, n: int) -> Any:
        """A batch of `n` images on the device."""


class Inference(Protocol):
    """The seeded, untrained classifier on the run's device in inference mode."""
    made: list    # ROTATING_BATCHES batches of images made on the device
    flops: float  # FLOPs of one forward of a batch
    dtype: str    # what the forward computes in, as the peak table names it

    @property
    def flags(self) -> list[str]:
        """Flags for what did not run on the device so far (read when rows are made)."""

    @property
    def note(self) -> str | None:
        """What did not run on the device so far, in words; None when all did."""

    def forward(self, x: Any) -> Any:
        """The model's output for a batch: the timed work."""

    def host_images(self) -> ImageFeed:
        """A feed whose batches are made and preprocessed on the host, then copied."""


@runtime_checkable
class InferPart(Protocol):
    """siliconbench.core.frameworks.<name>.infer, the module."""

    def inference(self, ctx: RunContext, params: dict, batch_size: int
                  ) -> AbstractContextManager[Inference]:
        """Builds the classifier and its batches (ParamError for an unknown model) and
        records its precision; leaving it says what did not run on the device."""


def percentile(values: list[float], q: int) -> float:
    if len(values) == 1:
        return values[0]
    import statistics  # at run time: listing the workloads (the app's first paint) needs none
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def check_params(params: dict, framework: str | None = None) -> None:
    images, batch_size = params["images"], params["batch_size"]
    if images < batch_size:
        raise ParamError(f"--images ({images}) must be at least --batch-size ({batch_size}).")


def run(ctx, params: dict) -> None:
    if params.get("grow"):
        return _grow(ctx, params)
    _run_batch(ctx, params, params["batch_size"])


def _run_batch(ctx, params: dict, batch_size: int, step: tuple[int, int] = (0, 1)
               ) -> tuple[dict[str, float], bool]:
    """Every data path at one batch size: its rows; img/s per path and whether any was noisy.
    `step` (k, of n) places its progress inside a --grow run's."""
    from siliconbench.core.frameworks import implementation
    from siliconbench.core.kit.errors import out_of_memory_at
    from siliconbench.core.kit.rows import measure_run, memory_row, sustained_rows, throughput_rows

    images = params["images"]
    part: InferPart = implementation(ctx.framework, "infer")
    paths = ["device", "host"] if params["data"] == "both" else [params["data"]]
    k, n = step
    total = n * len(paths) * images

    def progress(done: float, _total: float, message: str = "") -> None:
        ctx.progress(k * len(paths) * images + done, total, message)
    rates: dict[str, float] = {}
    noisy = False
    with out_of_memory_at(batch_size), part.inference(ctx, params, batch_size) as model:
        # The point as the published results give it (siliconbench/resources/reference); image size,
        # precision and layout are the run's parameters.
        point = {"model": params["model"], "batch_size": batch_size}
        for i, path in enumerate(paths):
            feed = DeviceImages(model.made) if path == "device" else model.host_images()
            progress(i * images, 0, f"{path} data: measuring")
            ctx.adapter.reset_peak_memory(ctx.device)
            m = measure_run(ctx, Batches(model.forward, feed, batch_size), params["duration"],
                            f"{path} data: ")
            latencies = latency_pass(Progress(ctx, progress), model.forward, feed, batch_size,
                                     images, i, len(paths), path)
            here = {**point, "data": path}
            rows = throughput_rows(ctx, m, batch_size, "img/s", here, model.flops, model.dtype,
                                   model.flags, model.note, time_metric="batch_time")
            rates[path] = rows[0].value
            noisy = noisy or "noisy" in rows[0].flags
            said = latency_note(len(latencies), batch_size)
            for q in PERCENTILES:
                rows.append(Row("batch_latency", percentile(latencies, q), "ms",
                                {**here, "percentile": q}, summarize(latencies), model.flags,
                                f"{model.note}; {said}" if model.note else said, None,
                                latencies))
            rows.append(memory_row(ctx, here, model.flags))
            rows += sustained_rows(m, batch_size, "img/s", here)
            for row in rows:
                ctx.row(row)
        if len(rates) == 2:
            ctx.row(Row("host_device_ratio", rates["host"] / rates["device"], "", point, None,
                        model.flags, "img/s with host-prepared data over img/s with data made "
                        "on the device: below 1, the input pipeline limits, not the device"))
    progress(len(paths) * images, 0, "done" if k + 1 == n else f"batch size {batch_size} done")
    return rates, noisy


class Progress:
    """The context as latency_pass sees it, with progress placed by `report`."""

    def __init__(self, ctx, report) -> None:
        self.sync, self.progress = ctx.sync, report


GROW_GAIN = 1.03          # --grow stops once a doubled batch gains less than 3% img/s
GROW_LARGEST = 65536      # --grow's last candidate batch size


def _grow(ctx, params: dict) -> None:
    """--grow: the batch size doubles from --batch-size until img/s stops rising by 3% (a
    noisy point does not stop it: the budget does), the device runs out of memory, or the next
    batch size's predicted time does not fit in --budget-s (next_batch_s: the last one's
    fixed part, building the model, plus its measured part at twice the time per batch)."""
    import time
    budget = params.get("budget_s") or float("inf")
    started = time.monotonic()
    sizes = [params["batch_size"]]
    while sizes[-1] * 2 <= GROW_LARGEST:
        sizes.append(sizes[-1] * 2)
    best, predicted, why = 0.0, 0.0, "the largest candidate reached"
    for k, batch in enumerate(sizes):
        left = budget - (time.monotonic() - started)
        if k and predicted > left:
            why = (f"batch size {batch} would take about {duration(predicted)}, past the "
                   f"{duration(max(left, 0.0))} left of the time budget")
            break
        t0 = time.monotonic()
        images = max(params["images"], batch)
        try:
            rates, noisy = _run_batch(ctx, {**params, "images": images}, batch,
                                      (k, len(sizes)))
        except MemoryError as e:
            if not k:
                raise
            why = str(e)
            break
        rate = max(rates.values())
        predicted = next_batch_s(time.monotonic() - t0, batch / min(rates.values()), batch,
                                 images, len(rates), params["images"], ctx.settings)
        if rate < best * GROW_GAIN and not noisy:
            why = (f"batch size {batch} gained less than {round((GROW_GAIN - 1) * 100)}% over "
                   "the best before it")
            break
        best = max(best, rate)
    ctx.record_settings(grow=f"batch sizes doubled from {params['batch_size']}: {why}")
    ctx.progress(1, 1, "done")


def next_batch_s(took_s: float, call_s: float, batch: int, images: int, paths: int,
                 wanted_images: int, settings) -> float:
    """Predicted seconds of --grow's next batch size (2 x batch) from this one's: what did not
    depend on the batch (building the model, counting its FLOPs) stays, and the measurement
    and latency pass of each data path are predicted at twice the time per batch."""
    from siliconbench.core.measure import point_seconds
    measured = paths * (point_seconds(call_s, settings)
                        + latency_batches(batch, images) * call_s)
    fixed = max(took_s - measured, 0.0)
    nxt = 2 * batch
    return fixed + paths * (point_seconds(2 * call_s, settings)
                            + latency_batches(nxt, max(wanted_images, nxt)) * 2 * call_s)


def latency_batches(batch_size: int, images: int) -> int:
    """Batches in the latency pass: `images` rounded up to whole batches."""
    return -(-images // batch_size)


def latency_pass(ctx, forward, feed, batch_size: int, images: int, index: int, paths: int,
                 label: str) -> list[float]:
    """Run at least `images` images in whole batches, each synchronised: milliseconds per
    batch. Every batch has the measured batch size: a last, partial batch is a shape the model
    never ran, and on the H200 (ResNet50, 1000 images in batches of 256) that batch of 232 took
    80 ms against 16.8 ms for the others (cuDNN choosing kernels for the new shape), which was
    the whole "p99 3.6x p50" tail."""
    latencies: list[float] = []
    for k in range(1, latency_batches(batch_size, images) + 1):
        t0 = time.perf_counter()
        forward(feed(batch_size))
        ctx.sync()
        latencies.append((time.perf_counter() - t0) * 1e3)
        done = min(k * batch_size, images)
        ctx.progress(index * images + done, paths * images, f"{label} data")
    return latencies


def latency_note(batches: int, batch_size: int) -> str:
    """What a latency percentile rests on: with fewer than 100 batches p99 is the slowest few."""
    note = f"from {batches} synchronised batch{'es' * (batches != 1)} of {batch_size}"
    if batches < 100:
        note += ("; fewer than 100 batches: p99 (and p90 below 10) is set by the slowest "
                 "batch or two; raise --images for a tail")
    return note


class Batches:
    """One call for the timing protocol: the next batch from `feed` through the model."""

    def __init__(self, forward, feed, batch_size: int) -> None:
        self.forward, self.feed, self.batch_size = forward, feed, batch_size

    def __call__(self):
        return self.forward(self.feed(self.batch_size))


class DeviceImages:
    """Batches already on the device, taken in turn."""

    def __init__(self, made: list) -> None:
        self.made, self.next = made, 0

    def __call__(self, n: int):
        x = self.made[self.next % len(self.made)]
        self.next += 1
        return x[:n]
