"""TensorFlow's part of mlp (siliconbench.core.workloads.mlp): the CIFAR-10 MLPs as the published Keras
scripts ran them, model.fit on the images in host memory, shuffled, SGD, sigmoid outputs with
categorical cross-entropy on one-hot labels, each epoch timed by a callback."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from siliconbench.core.frameworks.tensorflow import models


@contextmanager
def session(ctx, images: np.ndarray, labels: np.ndarray) -> Iterator[Session]:
    import tensorflow as tf
    with tf.device(ctx.device.native):
        yield Session(ctx, *_arrays(images, labels))


def _arrays(images: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    import keras
    return images.astype(np.float32) / 255, keras.utils.to_categorical(labels, 10)


def _constants(batches: list) -> list:
    import tensorflow as tf
    return [tuple(tf.constant(a) for a in _arrays(x, y)) for x, y in batches]


@dataclass
class Session:
    """The CIFAR-10 data, ready to fit Keras MLPs of any widths."""
    ctx: Any
    x: np.ndarray               # the images on the host, float32 in [0, 1]
    y: np.ndarray               # one-hot labels

    def fit(self, widths: list[int], epochs: int, batch_size: int,
            on_epoch: Callable[[int], None]) -> tuple:
        import keras

        class EpochTimer(keras.callbacks.Callback):
            """Each epoch's seconds as model.fit runs it, and the run's progress."""

            def __init__(self) -> None:
                super().__init__()
                self.seconds = []

            def on_epoch_begin(self, epoch, logs=None) -> None:
                on_epoch(epoch)
                self.t0 = time.perf_counter()

            def on_epoch_end(self, epoch, logs=None) -> None:
                self.seconds.append(time.perf_counter() - self.t0)

        timer = EpochTimer()
        model = models.mlp_model(widths, self.x.shape[1:])
        history = model.fit(self.x, self.y, batch_size=batch_size, epochs=epochs, shuffle=True,
                            verbose=0, callbacks=[timer]).history
        return model, timer.seconds, history["loss"], history["accuracy"]

    def step(self, trained, batches: list) -> Callable[[], None]:
        return models.rotating_steps(trained, _constants(batches))

    def flops(self, step) -> None:
        return None             # Keras counts none: the workload's analytic count

    def verified(self, step) -> tuple[list[str], str | None]:
        return [], None         # soft placement is off: an op without a kernel here raises

    def check(self, widths: list[int], batches: list, steps: int) -> tuple:
        import tensorflow as tf
        with tf.device("/CPU:0"):
            on_cpu = _constants(batches)
        return models.compare_with_cpu(
            self.ctx, lambda jit: models.mlp_model(widths, self.x.shape[1:], jit), on_cpu,
            steps, False, False)
