"""TensorFlow's part of train (siliconbench.core.workloads.train), in Keras as the published runs were:
keras.applications CNNs and keras-hub DistilBERT and BERT-Large built from their configs,
mixed precision by Keras's policy, XLA by --xla, FLOPs counted from the layers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from siliconbench.core.frameworks.tensorflow import models
from siliconbench.core.kit.encoders import ENCODERS, encoder_config, encoder_train_flops
from siliconbench.core.kit.training import OPTIMIZERS, ROTATING_BATCHES, warn_ignored

IGNORED = {
    "compile": "is torch.compile or mx.compile (on TensorFlow, --xla compiles the step)",
    "channels_last": "is a torch layout (Keras images are channels-last already)",
}


@contextmanager
def training(ctx, params: dict, batch_size: int) -> Iterator[Training]:
    import tensorflow as tf
    with tf.device(ctx.device.native):
        yield Training(ctx, params, batch_size)


class Training:
    def __init__(self, ctx, params: dict, batch_size: int) -> None:
        import keras
        import tensorflow as tf
        name = params["model"]
        self.ctx, self.params, self.batch_size = ctx, params, batch_size
        self.is_image = name not in ENCODERS
        warn_ignored(ctx, params, IGNORED)
        if params["layers"] and self.is_image:
            ctx.warn("--layers applies to transformers only; ignored.")
        mixed = params["precision"] == "mixed"
        self.dtype = "float16" if mixed else "float32"
        # The policy is global and read when layers are built.
        keras.mixed_precision.set_global_policy("mixed_float16" if mixed else "float32")
        ctx.record_settings(precision="mixed-fp16" if mixed else "fp32", xla=params["xla"])
        self.config = None if self.is_image else encoder_config(name, params["layers"],
                                                                params["seq_len"])
        self.unit = "img/s" if self.is_image else "seq/s"
        self.model, self.make_inputs = self.build(params["xla"])
        self.batches = [(self.make_inputs(batch_size), models.labels(tf, batch_size))
                        for _ in range(ROTATING_BATCHES)]
        self.step = models.rotating_steps(self.model, self.batches)

    def build(self, jit: bool, dropout: bool = True):
        """The model, compiled, and a maker of its inputs."""
        import keras
        params = self.params
        keras.utils.set_random_seed(0)
        if self.is_image:
            model, make_inputs = models.cnn(params["model"], params["image_size"])
        else:
            model, make_inputs = models.encoder(params["model"], self.config, params["seq_len"],
                                                dropout)
        optimizer, lr = OPTIMIZERS["sgd" if self.is_image else "adam"]
        # jit_compile is explicit: Keras's "auto" turns XLA on wherever there is a GPU, and
        # the published runs without --xla had none. Mixed precision wraps the optimizer in
        # loss scaling (Keras does it at compile).
        model.compile(optimizer=getattr(keras.optimizers, optimizer)(learning_rate=lr),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      jit_compile=jit)
        # The optimizer's variables (Adam's moments, the loss scale) made now: made inside the
        # first step instead, they make TensorFlow trace the step twice (2.6 s more for a
        # one-layer DistilBERT here, more for a real model).
        model.optimizer.build(model.trainable_variables)
        return model, make_inputs

    def flops(self) -> tuple[float, dict]:
        if self.is_image:
            return self.batch_size * models.cnn_train_flops_per_image(self.model), {
                "flops_counted": "analytic: the Conv2D, DepthwiseConv2D and Dense layers' "
                                 "multiply-adds from the model's shapes, backward twice the "
                                 "forward (once where no weight lies upstream)"}
        return encoder_train_flops(self.config, self.batch_size, self.params["seq_len"]), {
            "flops_counted": "analytic: the encoder layers' matmuls, backward twice the forward"}

    def compile(self) -> None:
        """--compile is not TensorFlow's (IGNORED says so): --xla compiled the step."""

    def verified(self) -> tuple[list[str], str | None]:
        return [], None         # soft placement is off: an op without a kernel here raises

    def release(self) -> None:
        del self.model, self.batches, self.step

    def check(self, size: int, steps: int) -> tuple[list[float], list[float]]:
        import tensorflow as tf
        with tf.device("/CPU:0"):
            batches = [(self.make_inputs(size), models.labels(tf, size))
                       for _ in range(ROTATING_BATCHES)]
        return models.compare_with_cpu(self.ctx, lambda jit: self.build(jit, dropout=False)[0],
                                       batches, steps, self.dtype != "float32",
                                       self.params["xla"])
