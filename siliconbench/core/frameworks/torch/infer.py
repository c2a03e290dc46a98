"""PyTorch's part of infer (siliconbench.core.workloads.infer): a torchvision classifier in inference mode,
autocast for mixed precision, images made on the device or by a host loader like the original
benchmark's, FLOPs from torch's counter, and the CPU-fallback watch."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from siliconbench.core.frameworks.torch import models
from siliconbench.core.kit.training import ROTATING_BATCHES

# ImageNet normalisation, what a torchvision classifier's preprocessing does to every image.
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


@contextmanager
def inference(ctx, params: dict, batch_size: int) -> Iterator[Inference]:
    watch = models.FallbackWatch()
    with watch.watching(), torch.inference_mode():
        yield Inference(ctx, params, batch_size, watch)
    watch.report(ctx)


class Inference:
    def __init__(self, ctx, params: dict, batch_size: int, watch: models.FallbackWatch) -> None:
        dev = ctx.device
        self.watch, self.device, self.image_size = watch, dev, params["image_size"]
        task = models.vision_task(params["model"], params["image_size"], num_classes=1000)
        self.memory_format = torch.channels_last if params["channels_last"] \
            else torch.contiguous_format
        self.amp = models.resolve_precision(ctx, params["precision"])
        self.dtype = models.dtype_name(self.amp)
        torch.manual_seed(0)
        self.model = task.build().to(dev, memory_format=self.memory_format).eval()
        self.made = [task.inputs(batch_size, dev).contiguous(memory_format=self.memory_format)
                     for _ in range(ROTATING_BATCHES)]
        self.flops = models.count_flops(lambda: self.forward(self.made[0]))
        watch.check_output(self.forward(self.made[0]), dev)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with models.autocast(self.device, self.amp):
            return self.model(x)

    def host_images(self) -> HostImages:
        return HostImages(self.image_size, self.device, self.memory_format)

    @property
    def flags(self) -> list[str]:
        return self.watch.flags

    @property
    def note(self) -> str | None:
        return self.watch.note


class HostImages:
    """A single-process loader like the original benchmark's: each image made on the CPU as
    8-bit pixels, converted to float and normalised on its own, the batch collated and copied
    to the device."""

    def __init__(self, size: int, device, memory_format) -> None:
        import torch
        self.torch, self.size, self.device, self.memory_format = torch, size, device, memory_format
        self.mean = torch.tensor(MEAN).view(3, 1, 1)
        self.std = torch.tensor(STD).view(3, 1, 1)

    def __call__(self, n: int):
        torch = self.torch
        images = []
        for _ in range(n):
            pixels = torch.randint(0, 256, (self.size, self.size, 3), dtype=torch.uint8)
            images.append(pixels.permute(2, 0, 1).float().div_(255).sub_(self.mean)
                          .div_(self.std))
        batch = torch.stack(images).contiguous(memory_format=self.memory_format)
        return batch.to(self.device)
