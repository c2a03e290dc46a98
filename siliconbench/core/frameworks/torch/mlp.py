"""PyTorch's part of mlp (siliconbench.core.workloads.mlp): the CIFAR-10 MLPs as nn.Sequential, trained with
its TrainStep on the device, FLOPs from torch's counter, and the CPU-fallback watch."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import torch

from siliconbench.core.frameworks.torch import models


@contextmanager
def session(ctx, images: np.ndarray, labels: np.ndarray) -> Iterator[Session]:
    watch = models.FallbackWatch()
    with watch.watching():
        yield Session(ctx, images, labels, watch)
    watch.report(ctx)


def _tensors(images: np.ndarray, labels: np.ndarray, device) -> tuple:
    return (torch.from_numpy(images).to(device).float().div_(255),
            torch.from_numpy(labels).to(device))


class Session:
    def __init__(self, ctx, images: np.ndarray, labels: np.ndarray,
                 watch: models.FallbackWatch) -> None:
        self.ctx, self.watch = ctx, watch
        self.x, self.y = _tensors(images, labels, ctx.device)

    def fit(self, widths: list[int], epochs: int, batch_size: int,
            on_epoch: Callable[[int], None]) -> tuple:
        dev, x, y = self.ctx.device, self.x, self.y
        torch.manual_seed(0)
        model = models.mlp(widths).to(dev)
        step = models.TrainStep(model, "sgd", models.sigmoid_categorical_crossentropy,
                                [(x[:batch_size], y[:batch_size])])
        count = len(y)
        epoch_seconds, losses, accuracies = [], [], []
        for epoch in range(epochs):
            on_epoch(epoch)
            t0 = time.perf_counter()
            order = torch.randperm(count).to(dev)
            # Sums stay on the device: reading them each step would synchronise every step.
            loss_sum = torch.zeros((), device=dev)
            correct = torch.zeros((), device=dev, dtype=torch.long)
            for i in range(0, count, batch_size):
                index = order[i:i + batch_size]
                batch_y = y[index]
                loss, logits = step.on(x[index], batch_y)
                loss_sum += loss * len(index)
                correct += (logits.argmax(dim=1) == batch_y).sum()
            self.ctx.sync()
            epoch_seconds.append(time.perf_counter() - t0)
            losses.append(float(loss_sum) / count)
            accuracies.append(float(correct) / count)
        return step, epoch_seconds, losses, accuracies

    def step(self, trained: models.TrainStep, batches: list) -> models.TrainStep:
        trained.batches = [_tensors(x, y, self.ctx.device) for x, y in batches]
        return trained

    def flops(self, step: models.TrainStep) -> float:
        return models.count_flops(step)

    def verified(self, step: models.TrainStep) -> tuple[list[str], str | None]:
        self.watch.check_output(step(), self.ctx.device)
        return self.watch.flags, self.watch.note

    def check(self, widths: list[int], batches: list, steps: int) -> tuple:
        torch.manual_seed(0)
        model = models.mlp(widths)
        cpu = torch.device("cpu")
        return models.compare_with_cpu(self.ctx, model, "sgd",
                                       models.sigmoid_categorical_crossentropy,
                                       [_tensors(x, y, cpu) for x, y in batches], None, steps)
