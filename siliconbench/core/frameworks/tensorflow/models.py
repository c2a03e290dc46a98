"""TensorFlow's models, in Keras as the published runs built them: keras.applications CNNs,
keras-hub DistilBERT and BERT-Large from their configs, the CIFAR-10 MLPs; the timed step, the
CNNs' FLOP count and the --check twin on the CPU that its parts of train and mlp share."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from siliconbench.core.kit.encoders import EncoderConfig
from siliconbench.core.kit.training import NUM_CLASSES, OPTIMIZERS
from siliconbench.core.params import ParamError
from siliconbench.core.text import first_line

CNNS = {"resnet50": "ResNet50", "mobilenet_v2": "MobileNetV2"}


def compare_with_cpu(ctx, build: Callable[[bool], object], batches: list, steps: int,
                     mixed: bool, xla: bool) -> tuple[list[float], list[float]]:
    """--check on Keras: the model built and trained on the run's device (its precision, XLA if
    asked) and a twin with the same weights trained on the CPU in float32, on the same
    CPU-made batches for `steps` steps; the two loss curves (siliconbench.core.kit.checks compares
    them). `build(jit_compile)` returns a compiled model with no dropout."""
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
    return ours, reference


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


def labels(tf, n: int):
    return tf.random.uniform((n,), 0, NUM_CLASSES, dtype=tf.int32)


def cnn(name: str, image_size: int):
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
                         f"{first_line(e)}") from None
    # Logits in float32 under mixed precision, as Keras's mixed-precision guide has it.
    logits = keras.layers.Dense(NUM_CLASSES, dtype="float32")(base.output)
    model = keras.Model(base.input, logits)
    return model, lambda n: tf.random.normal((n, image_size, image_size, 3))


def encoder(name: str, config: EncoderConfig, seq_len: int, dropout: bool = True):
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
            keras_hub.models.DistilBertBackbone(**sizes, **no_dropout), NUM_CLASSES,
            preprocessor=None, **no_dropout)
    else:
        model = keras_hub.models.BertTextClassifier(
            keras_hub.models.BertBackbone(**sizes, **no_dropout), NUM_CLASSES,
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


def mlp_model(widths: list[int], image_shape: tuple, jit: bool = False):
    """The published Keras MLP, compiled: Dense(w, ReLU) per width, Dense(10, sigmoid),
    categorical cross-entropy, SGD."""
    import keras
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input(image_shape), keras.layers.Flatten()]
        + [keras.layers.Dense(w, activation="relu") for w in widths]
        + [keras.layers.Dense(10, activation="sigmoid")])
    optimizer, lr = OPTIMIZERS["sgd"]
    model.compile(optimizer=getattr(keras.optimizers, optimizer)(learning_rate=lr),
                  loss="categorical_crossentropy", metrics=["accuracy"], jit_compile=jit)
    return model
