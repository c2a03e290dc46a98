"""train and mlp on TensorFlow, in Keras as the published runs were: keras.applications CNNs,
keras-hub DistilBERT and BERT-Large built from their configs, the CIFAR-10 MLPs; same rows."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

import numpy as np

from core.params import ParamError
from core.workloads import mlp as mlp_spec
from core.workloads import shared
from core.workloads.shared import ROTATING_BATCHES
from core.workloads.train import PUBLISHED_BATCH, TRANSFORMER_MODELS

CNNS = {"resnet50": "ResNet50", "mobilenet_v2": "MobileNetV2"}
IGNORED = {
    "compile": "is torch.compile or mx.compile (on TensorFlow, --xla compiles the step)",
    "channels_last": "is a torch layout (Keras images are channels-last already)",
}


def train(ctx, params: dict) -> None:
    import keras
    import tensorflow as tf

    name = params["model"]
    batch_size = params["batch_size"] or PUBLISHED_BATCH[name]
    is_image = name not in TRANSFORMER_MODELS
    shared.warn_ignored(ctx, params, IGNORED)
    if params["layers"] and is_image:
        ctx.warn("--layers applies to transformers only; ignored.")
    mixed = params["precision"] == "mixed"
    total = 4 if params["check"] else 3
    # The policy is global and read when layers are built.
    keras.mixed_precision.set_global_policy("mixed_float16" if mixed else "float32")
    ctx.record_settings(precision="mixed-fp16" if mixed else "fp32", xla=params["xla"])
    config = None if is_image else shared.encoder_config(name, params["layers"],
                                                         params["seq_len"])

    def build(jit: bool, dropout: bool = True):
        """The model, compiled, and a maker of its inputs."""
        keras.utils.set_random_seed(0)
        if is_image:
            model, make_inputs = _cnn(name, params["image_size"])
        else:
            model, make_inputs = _encoder(name, config, params["seq_len"], dropout)
        optimizer, lr = shared.OPTIMIZERS["sgd" if is_image else "adam"]
        # jit_compile is explicit: Keras's "auto" turns XLA on wherever there is a GPU, and
        # the published runs without --xla had none. Mixed precision wraps the optimizer in
        # loss scaling (Keras does it at compile).
        model.compile(optimizer=getattr(keras.optimizers, optimizer)(learning_rate=lr),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      jit_compile=jit)
        return model, make_inputs

    with tf.device(ctx.device.native), shared.out_of_memory_at(batch_size):
        ctx.progress(0, total, "building the model")
        model, make_inputs = build(params["xla"])
        if is_image:
            unit = "img/s"
            flops = batch_size * cnn_train_flops_per_image(model)
            counted = ("analytic: the Conv2D, DepthwiseConv2D and Dense layers' multiply-adds "
                       "from the model's shapes, backward twice the forward (once where no "
                       "weight lies upstream)")
        else:
            unit = "seq/s"
            flops = shared.encoder_train_flops(config, batch_size, params["seq_len"])
            counted = "analytic: the encoder layers' matmuls, backward twice the forward"
        batches = [(make_inputs(batch_size), _labels(tf, batch_size, shared.NUM_CLASSES))
                   for _ in range(ROTATING_BATCHES)]
        ctx.record_settings(flops_per_step=flops, flops_counted=counted)
        ctx.progress(1, total, "measuring")
        ctx.adapter.reset_peak_memory(ctx.device)
        m = shared.measure_run(ctx, rotating_steps(model, batches), params["duration"])
        point = {"model": name, "batch_size": batch_size,
                 "precision": "mixed" if mixed else "fp32"}
        shared.emit_throughput(ctx, m, batch_size, unit, point, flops,
                               "float16" if mixed else "float32", [], memory=True,
                               more_after=shared.sustained_rows(m, batch_size, unit, point))
        del model, batches

        if params["check"]:
            ctx.progress(3, total, "comparing with the CPU")
            size = min(batch_size, shared.CHECK_BATCH)
            with tf.device("/CPU:0"):
                check_batches = [(make_inputs(size), _labels(tf, size, shared.NUM_CLASSES))
                                 for _ in range(ROTATING_BATCHES)]
            ctx.row(compare_with_cpu(ctx, lambda jit: build(jit, dropout=False)[0],
                                     check_batches, params["check_steps"], mixed,
                                     params["xla"], {**point, "batch_size": size}))
    ctx.progress(total, total, "done")


def compare_with_cpu(ctx, build: Callable[[bool], object], batches: list, steps: int,
                     mixed: bool, xla: bool, point: dict):
    """--check on Keras: the model built and trained on the run's device (its precision, XLA if
    asked) and a twin with the same weights trained on the CPU in float32, on the same
    CPU-made batches for `steps` steps; the loss curves compared by shared.loss_check_row.
    `build(jit_compile)` returns a compiled model with no dropout."""
    import keras
    import tensorflow as tf
    policy = keras.mixed_precision.global_policy()
    curves, weights = [], None
    try:
        for device, mixed_here, jit in ((ctx.device.native, mixed, xla),
                                        ("/CPU:0", False, False)):
            keras.mixed_precision.set_global_policy("mixed_float16" if mixed_here
                                                    else "float32")
            with tf.device(device):
                model = build(jit)
                if weights is None:
                    weights = model.get_weights()
                else:
                    model.set_weights(weights)
                curves.append([float(model.train_on_batch(*batches[i % len(batches)],
                                                          return_dict=True)["loss"])
                               for i in range(steps)])
            del model
    finally:
        keras.mixed_precision.set_global_policy(policy)
    ours, reference = curves
    return shared.loss_check_row(ctx, ours, reference,
                                 shared.check_tolerance("float16" if mixed else None), point)


def rotating_steps(model, batches: list):
    """One call = one train_on_batch on the next batch in turn. train_on_batch returns the
    loss as a NumPy value, copied from the device, so each call has finished when it returns;
    the protocol's sync then only confirms it."""
    turn = itertools.count()

    def step() -> None:
        x, y = batches[next(turn) % len(batches)]
        model.train_on_batch(x, y)
    return step


def cnn_train_flops_per_image(model) -> float:
    """FLOPs of one image's training step, counted as torch's FLOP counter counts a torchvision
    CNN (convolutions and matmuls; batch norm, activations and pooling left out): 2 per
    multiply-add, forward from each layer's kernel and output shapes; backward is the gradient
    of the input and of the kernel, each as costly as the forward, except that no input
    gradient is computed where no weight lies upstream (the stem convolution)."""
    import keras
    trained = set()       # ids of the tensors whose values depend on a trainable weight
    total = 0.0
    for layer in model.layers:                  # a functional model's layers are in order
        if isinstance(layer, keras.layers.InputLayer):
            continue
        inputs = layer.input if isinstance(layer.input, (list, tuple)) else [layer.input]
        upstream = any(id(t) in trained for t in inputs)
        if upstream or layer.trainable_weights:
            trained.add(id(layer.output))
        if isinstance(layer, keras.layers.DepthwiseConv2D):
            kh, kw, channels, multiplier = layer.kernel.shape
            _, h, w, _ = layer.output.shape
            forward = 2.0 * h * w * kh * kw * channels * multiplier
        elif isinstance(layer, keras.layers.Conv2D):    # kernel: (kh, kw, in / groups, out)
            _, h, w, _ = layer.output.shape
            forward = 2.0 * h * w * float(np.prod(layer.kernel.shape))
        elif isinstance(layer, keras.layers.Dense):
            rows = float(np.prod(layer.input.shape[1:-1]))  # 1 for a (batch, features) input
            forward = 2.0 * rows * float(np.prod(layer.kernel.shape))
        else:
            continue
        total += forward * (3 if upstream else 2)
    return total


def _labels(tf, n: int, classes: int):
    return tf.random.uniform((n,), 0, classes, dtype=tf.int32)


def _cnn(name: str, image_size: int):
    """keras.applications without its top (weights=None: nothing is downloaded), global
    average pooling and Dense(8), as the published benchmark built it."""
    import keras
    import tensorflow as tf
    try:
        base = getattr(keras.applications, CNNS[name])(
            weights=None, include_top=False, input_shape=(image_size, image_size, 3),
            pooling="avg")
    except ValueError as e:
        raise ParamError(f"--image-size {image_size} does not fit Keras's {name}: "
                         f"{shared.first_line(e)}") from None
    # Logits in float32 under mixed precision, as Keras's mixed-precision guide has it.
    logits = keras.layers.Dense(shared.NUM_CLASSES, dtype="float32")(base.output)
    model = keras.Model(base.input, logits)
    return model, lambda n: tf.random.normal((n, image_size, image_size, 3))


def _encoder(name: str, config: shared.EncoderConfig, seq_len: int, dropout: bool = True):
    """keras-hub's DistilBERT or BERT backbone from the config (no weights downloaded) with
    its classifier head (8 classes, logits), and random tokens for it. Without dropout (for
    --check, where the device's and the CPU's random masks would differ) every rate is 0."""
    import keras_hub
    import tensorflow as tf
    sizes = {"vocabulary_size": config.vocab, "num_layers": config.layers,
             "num_heads": config.heads, "hidden_dim": config.hidden,
             "intermediate_dim": config.ffn, "max_sequence_length": config.max_positions}
    no_dropout = {} if dropout else {"dropout": 0.0}
    if name == "distilbert":
        model = keras_hub.models.DistilBertTextClassifier(
            keras_hub.models.DistilBertBackbone(**sizes, **no_dropout), shared.NUM_CLASSES,
            preprocessor=None, **no_dropout)
    else:
        model = keras_hub.models.BertTextClassifier(
            keras_hub.models.BertBackbone(**sizes, **no_dropout), shared.NUM_CLASSES,
            preprocessor=None, **no_dropout)
    needs_segments = name != "distilbert"

    def tokens(n: int) -> dict:
        shape = (n, seq_len)
        x = {"token_ids": tf.random.uniform(shape, 0, config.vocab, dtype=tf.int32),
             "padding_mask": tf.ones(shape, dtype=tf.int32)}
        if needs_segments:
            x["segment_ids"] = tf.zeros(shape, dtype=tf.int32)
        return x
    return model, tokens


def mlp(ctx, params: dict) -> None:
    """The CIFAR-10 MLPs as the published Keras scripts ran them: model.fit on the images in
    host memory, shuffled, batch 32, SGD, sigmoid outputs with categorical cross-entropy."""
    import keras
    import tensorflow as tf

    preset, batch_size = params["preset"], params["batch_size"]
    data, count, epochs, widths_list, flags = mlp_spec.prepare(ctx, params)
    x = data.images[:count].astype(np.float32) / 255
    y = keras.utils.to_categorical(data.labels[:count], 10)
    total = len(widths_list) * (epochs + 1) + (1 if params["check"] else 0)
    done = 0

    class EpochTimer(keras.callbacks.Callback):
        """Each epoch's seconds as model.fit runs it, and the run's progress."""

        def __init__(self, label: str, at: int) -> None:
            super().__init__()
            self.label, self.at, self.seconds = label, at, []

        def on_epoch_begin(self, epoch, logs=None) -> None:
            ctx.progress(self.at + epoch, total, f"{self.label}: epoch {epoch + 1} of {epochs}")
            self.t0 = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None) -> None:
            self.seconds.append(time.perf_counter() - self.t0)

    with tf.device(ctx.device.native), shared.out_of_memory_at(batch_size):
        for widths in widths_list:
            label = f"depth {len(widths)}" if preset == "depth-sweep" else preset
            timer = EpochTimer(label, done)
            start = time.perf_counter()      # the published seconds include the model build
            model = _mlp_model(widths, x.shape[1:])
            history = model.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=True,
                                verbose=0, callbacks=[timer]).history
            fit = mlp_spec.Fit(model, time.perf_counter() - start, timer.seconds,
                               history["loss"], history["accuracy"], count)
            done += epochs
            ctx.progress(done, total, f"{label}: measuring samples/s")
            batches = [(tf.constant(bx), tf.constant(by))
                       for bx, by in mlp_spec.rotating_batches(x, y, count, batch_size)]
            m = ctx.measure(rotating_steps(model, batches))
            done += 1
            shared.emit_mlp_point(ctx, m, preset, widths, batch_size, flags, fit)

        if params["check"]:
            ctx.progress(done, total, "comparing with the CPU")
            widths = widths_list[0]
            with tf.device("/CPU:0"):
                batches = [(tf.constant(bx), tf.constant(by))
                           for bx, by in mlp_spec.rotating_batches(x, y, count, batch_size)]
            row = compare_with_cpu(ctx, lambda jit: _mlp_model(widths, x.shape[1:], jit),
                                   batches, params["check_steps"], False, False,
                                   mlp_spec.point_for(preset, widths))
            row.flags += flags
            ctx.row(row)
    ctx.progress(total, total, "done")


def _mlp_model(widths: list[int], image_shape: tuple, jit: bool = False):
    """The published Keras MLP, compiled: Dense(w, ReLU) per width, Dense(10, sigmoid),
    categorical cross-entropy, SGD."""
    import keras
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input(image_shape), keras.layers.Flatten()]
        + [keras.layers.Dense(w, activation="relu") for w in widths]
        + [keras.layers.Dense(10, activation="sigmoid")])
    optimizer, lr = shared.OPTIMIZERS["sgd"]
    model.compile(optimizer=getattr(keras.optimizers, optimizer)(learning_rate=lr),
                  loss="categorical_crossentropy", metrics=["accuracy"], jit_compile=jit)
    return model
