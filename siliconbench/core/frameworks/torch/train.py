"""PyTorch's part of train (siliconbench.core.workloads.train): torchvision CNNs and transformers' DistilBERT
and BERT-Large built from code, autocast for mixed precision, torch.compile, FLOPs from torch's
counter, and the CPU-fallback watch."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F

from siliconbench.core.frameworks.torch import models
from siliconbench.core.kit.encoders import ENCODERS
from siliconbench.core.kit.training import NUM_CLASSES, ROTATING_BATCHES


def task_for(params: dict, dropout: bool = True) -> models.Task:
    """The models.Task the parameters name (CNN at image_size, transformer at seq_len)."""
    name = params["model"]
    if name in ENCODERS:
        return models.transformer_task(name, params["seq_len"], params["layers"], dropout)
    return models.vision_task(name, params["image_size"], NUM_CLASSES, dropout)


@contextmanager
def training(ctx, params: dict, batch_size: int) -> Iterator[Training]:
    task = task_for(params)
    if params["channels_last"] and not task.is_image:
        ctx.warn("--channels-last applies to CNNs only; ignored.")
    if params["layers"] and task.is_image:
        ctx.warn("--layers applies to transformers only; ignored.")
    watch = models.FallbackWatch()
    with watch.watching():
        yield Training(ctx, params, task, batch_size, watch)
    watch.report(ctx)


class Training:
    def __init__(self, ctx, params: dict, task: models.Task, batch_size: int,
                 watch: models.FallbackWatch) -> None:
        self.ctx, self.params, self.task, self.watch = ctx, params, task, watch
        self.unit = task.unit
        self.channels_last = params["channels_last"] and task.is_image
        self.amp = models.resolve_precision(ctx, params["precision"])
        self.dtype = models.dtype_name(self.amp)
        dev = ctx.device
        torch.manual_seed(0)
        model = task.build().to(dev).train()
        batches = [task.batch(batch_size, dev) for _ in range(ROTATING_BATCHES)]
        if self.channels_last:
            model = model.to(memory_format=torch.channels_last)
            batches = [(x.contiguous(memory_format=torch.channels_last), y) for x, y in batches]
        self.step = models.TrainStep(model, task.optimizer, F.cross_entropy, batches, self.amp)

    def flops(self) -> tuple[float, dict]:
        return models.count_flops(self.step), {"channels_last": self.channels_last}

    def compile(self) -> None:
        models.compile_or_eager(self.ctx, self.step)

    def verified(self) -> tuple[list[str], str | None]:
        self.watch.check_output(self.step(), self.ctx.device)
        return self.watch.flags, self.watch.note

    def release(self) -> None:
        del self.step
        self.ctx.adapter.empty_cache(self.ctx.device)

    def check(self, size: int, steps: int) -> tuple[list[float], list[float]]:
        torch.manual_seed(0)
        reference = task_for(self.params, dropout=False)
        cpu = torch.device("cpu")
        batches = [reference.batch(size, cpu) for _ in range(ROTATING_BATCHES)]
        return models.compare_with_cpu(self.ctx, reference.build(), reference.optimizer,
                                       F.cross_entropy, batches, self.amp, steps,
                                       self.channels_last)
