"""MLX's part of mlp (siliconbench.core.workloads.mlp): the CIFAR-10 MLPs from mlx.nn, trained with its
TrainStep, each epoch's running sums evaluated with its steps."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from siliconbench.core.frameworks.mlx import models


@contextmanager
def session(ctx, images: np.ndarray, labels: np.ndarray) -> Iterator[Session]:
    yield Session(ctx, *_arrays(images, labels))


def _arrays(images: np.ndarray, labels: np.ndarray) -> tuple:
    import mlx.core as mx
    return mx.array(images).astype(mx.float32) / 255, mx.array(labels).astype(mx.int32)


@dataclass
class Session:
    """The CIFAR-10 data on the device, ready to fit MLPs of any widths."""
    ctx: Any
    x: Any                      # the images, float32 in [0, 1]
    y: Any                      # the labels, int32

    def fit(self, widths: list[int], epochs: int, batch_size: int,
            on_epoch: Callable[[int], None]) -> tuple:
        import mlx.core as mx
        x, y = self.x, self.y
        count = len(y)
        mx.random.seed(0)
        step = models.TrainStep(models.mlp_model(widths), "sgd",
                                models.sigmoid_categorical_crossentropy,
                                [(x[:batch_size], y[:batch_size])])
        epoch_seconds, losses, accuracies = [], [], []
        for epoch in range(epochs):
            on_epoch(epoch)
            t0 = time.perf_counter()
            order = mx.random.permutation(count)
            # Sums stay arrays, evaluated with each step: reading them would sync twice.
            loss_sum, correct = mx.array(0.0), mx.array(0)
            for i in range(0, count, batch_size):
                index = order[i:i + batch_size]
                batch_y = y[index]
                loss, logits = step.on(x[index], batch_y)
                loss_sum = loss_sum + loss * len(index)
                correct = correct + (logits.argmax(axis=1) == batch_y).sum()
            mx.eval(loss_sum, correct)
            epoch_seconds.append(time.perf_counter() - t0)
            losses.append(loss_sum.item() / count)
            accuracies.append(correct.item() / count)
        return step, epoch_seconds, losses, accuracies

    def step(self, trained: models.TrainStep, batches: list) -> models.TrainStep:
        trained.batches = [_arrays(x, y) for x, y in batches]
        return trained

    def flops(self, step) -> None:
        return None             # the workload's analytic count

    def verified(self, step) -> tuple[list[str], str | None]:
        return [], None         # MLX runs every op on the stream it is given

    def check(self, widths: list[int], batches: list, steps: int) -> tuple:
        return models.compare_with_cpu(self.ctx, lambda: models.mlp_model(widths), "sgd",
                                       models.sigmoid_categorical_crossentropy,
                                       [_arrays(x, y) for x, y in batches], steps)
