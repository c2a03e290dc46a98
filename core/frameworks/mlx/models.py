"""train and mlp on MLX: a BERT-style encoder sized like DistilBERT or BERT-Large and the
CIFAR-10 MLPs, built from mlx.nn; same parameters, protocol and rows as torch."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

from core.params import ParamError
from core.workloads import mlp as mlp_spec
from core.workloads import shared
from core.workloads.shared import ROTATING_BATCHES
from core.workloads.train import PUBLISHED_BATCH, TRANSFORMER_MODELS

IGNORED = {
    "channels_last": "applies to torch CNNs",
    "xla": "is TensorFlow's compiler",
}


class TrainStep:
    """Forward, loss, gradients, optimizer update, evaluated: MLX is lazy, so a call that did
    not mx.eval its results would compute nothing. Called without arguments it trains on the
    next of a few batches in turn."""

    def __init__(self, model, optimizer: str, loss_fn: Callable, batches: list) -> None:
        import mlx.optimizers as optim
        from mlx import nn
        cls, lr = shared.OPTIMIZERS[optimizer]
        self.model, self.batches = model, batches
        self.optimizer = getattr(optim, cls)(learning_rate=lr)

        def loss_and_logits(x, y):
            logits = model(x)
            return loss_fn(logits, y), logits
        grad = nn.value_and_grad(model, loss_and_logits)

        def train(x, y):
            (loss, logits), grads = grad(x, y)
            self.optimizer.update(model, grads)
            return loss, logits
        self._train = train
        self._turn = itertools.count()

    def __call__(self) -> None:
        self.on(*self.batches[next(self._turn) % len(self.batches)])

    def compile(self) -> None:
        """mx.compile the step (--compile): one traced graph, its element-wise ops fused. The
        model's and optimizer's state and the random state (dropout) are the graph's implicit
        inputs and outputs, as MLX's guide to compiling training steps has it."""
        import mlx.core as mx
        state = [self.model.state, self.optimizer.state, mx.random.state]
        self._train = mx.compile(self._train, inputs=state, outputs=state)

    def on(self, x, y, *also):
        """Train on (x, y); (loss, logits), evaluated with the model, the optimizer state and
        anything in `also` (running sums)."""
        import mlx.core as mx
        loss, logits = self._train(x, y)
        mx.eval(loss, logits, self.model.parameters(), self.optimizer.state, *also)
        return loss, logits


def encoder(config: shared.EncoderConfig, classes: int, dropout: float = 0.1):
    """Token and position embeddings, LayerNorm, post-norm encoder layers with GELU (BERT's
    and DistilBERT's layout), and a classifier on the first token."""
    import mlx.core as mx
    from mlx import nn

    class Encoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tokens = nn.Embedding(config.vocab, config.hidden)
            self.positions = nn.Embedding(config.max_positions, config.hidden)
            self.norm = nn.LayerNorm(config.hidden)
            self.layers = [nn.TransformerEncoderLayer(config.hidden, config.heads, config.ffn,
                                                      dropout=dropout, activation=nn.gelu,
                                                      norm_first=False)
                           for _ in range(config.layers)]
            self.head = nn.Linear(config.hidden, classes)

        def __call__(self, ids):
            x = self.norm(self.tokens(ids) + self.positions(mx.arange(ids.shape[1])))
            for layer in self.layers:
                x = layer(x, None)
            return self.head(x[:, 0])
    return Encoder()


def cross_entropy(logits, labels):
    from mlx import nn
    return nn.losses.cross_entropy(logits, labels, reduction="mean")


def train(ctx, params: dict) -> None:
    import mlx.core as mx

    name = params["model"]
    if name not in TRANSFORMER_MODELS:
        raise ParamError(f"{name} is not available on MLX; choose distilbert or bert-large.")
    batch_size = params["batch_size"] or PUBLISHED_BATCH[name]
    seq_len = params["seq_len"]
    config = shared.encoder_config(name, params["layers"], seq_len)
    shared.warn_ignored(ctx, params, IGNORED)
    if params["precision"] == "mixed":
        ctx.warn("--precision mixed is not available on MLX (it has no autocast); this run is "
                 "fp32.")
    ctx.record_settings(precision="fp32")
    total = 4 if params["check"] else 3
    with shared.out_of_memory_at(batch_size):
        ctx.progress(0, total, "building the model")
        mx.random.seed(0)
        model = encoder(config, shared.NUM_CLASSES)
        mx.eval(model.parameters())
        batches = [(mx.random.randint(0, config.vocab, (batch_size, seq_len)),
                    mx.random.randint(0, shared.NUM_CLASSES, (batch_size,)))
                   for _ in range(ROTATING_BATCHES)]
        step = TrainStep(model, "adam", cross_entropy, batches)
        if params["compile"]:
            compile_or_eager(ctx, step)
        flops = shared.encoder_train_flops(config, batch_size, seq_len)
        ctx.record_settings(flops_per_step=flops, flops_counted="analytic: the encoder "
                            "layers' matmuls, backward twice the forward")
        ctx.progress(1, total, "measuring")
        ctx.adapter.reset_peak_memory(ctx.device)
        m = shared.measure_run(ctx, step, params["duration"])
        point = {"model": name, "batch_size": batch_size, "precision": "fp32"}
        shared.emit_throughput(ctx, m, batch_size, "seq/s", point, flops, "float32", [],
                               memory=True,
                               more_after=shared.sustained_rows(m, batch_size, "seq/s", point))
        del step, model, batches

        if params["check"]:
            ctx.progress(3, total, "comparing with the CPU")
            size = min(batch_size, shared.CHECK_BATCH)
            check_batches = [(mx.random.randint(0, config.vocab, (size, seq_len)),
                              mx.random.randint(0, shared.NUM_CLASSES, (size,)))
                             for _ in range(ROTATING_BATCHES)]
            ctx.row(compare_with_cpu(ctx, lambda: encoder(config, shared.NUM_CLASSES, 0.0),
                                     "adam", cross_entropy, check_batches,
                                     params["check_steps"], {**point, "batch_size": size}))
    ctx.progress(total, total, "done")


def compile_or_eager(ctx, step: TrainStep) -> bool:
    """--compile: mx.compile the step (on the CPU MLX builds its fused kernels with the
    system's C++ compiler); where that fails the run says so and stays eager."""
    eager = step._train

    def attempt() -> None:
        step.compile()
        step()
    return shared.compile_or_eager(ctx, "mx.compile", attempt,
                                   lambda: setattr(step, "_train", eager))


def compare_with_cpu(ctx, build: Callable, optimizer: str, loss_fn: Callable, batches: list,
                     steps: int, point: dict):
    """--check on MLX: a model from `build()` (no dropout) trained for `steps` steps on the
    run's device, and a twin given the same weights trained on the CPU, on the same batches;
    the loss curves compared by shared.loss_check_row (MLX has no mixed precision: float32)."""
    import mlx.core as mx
    mx.random.seed(0)
    weights = build().parameters()
    curves = []
    for device in (ctx.device.native, mx.cpu):
        model = build()
        model.update(weights)      # MLX arrays are immutable: training replaces, never edits
        with mx.stream(device):
            step = TrainStep(model, optimizer, loss_fn, batches)
            curves.append([step.on(*batches[i % len(batches)])[0].item()
                           for i in range(steps)])
    ours, reference = curves
    return shared.loss_check_row(ctx, ours, reference, shared.check_tolerance(None), point)


def mlp_model(widths: list[int], inputs: int = 32 * 32 * 3, classes: int = 10):
    """Dense(w, ReLU) for each width -> Dense(classes), initialised as Keras does
    (Glorot-uniform weights, zero biases), like models.mlp for torch."""
    import mlx.core as mx
    from mlx import nn
    layers = []
    for width in [*widths, classes]:
        layer = nn.Linear(inputs, width)
        layer.weight = nn.init.glorot_uniform()(layer.weight)
        layer.bias = mx.zeros_like(layer.bias)
        layers += [layer, nn.ReLU()]
        inputs = width
    return nn.Sequential(*layers[:-1])


def sigmoid_categorical_crossentropy(logits, labels):
    """Keras's Dense(10, sigmoid) + categorical_crossentropy, as models' torch version."""
    import mlx.core as mx
    p = mx.sigmoid(logits)
    p = mx.clip(p / p.sum(axis=-1, keepdims=True), 1e-7, 1 - 1e-7)
    return -mx.take_along_axis(mx.log(p), labels[:, None], axis=-1).mean()


def mlp(ctx, params: dict) -> None:
    import mlx.core as mx

    preset, batch_size = params["preset"], params["batch_size"]
    data, count, epochs, widths_list, flags = mlp_spec.prepare(ctx, params)
    x = mx.array(data.images[:count]).astype(mx.float32) / 255
    y = mx.array(data.labels[:count]).astype(mx.int32)
    total = len(widths_list) * (epochs + 1) + (1 if params["check"] else 0)
    done = 0
    with shared.out_of_memory_at(batch_size):
        for widths in widths_list:
            label = f"depth {len(widths)}" if preset == "depth-sweep" else preset
            start = time.perf_counter()      # the published seconds include the model build
            mx.random.seed(0)
            step = TrainStep(mlp_model(widths), "sgd", sigmoid_categorical_crossentropy,
                             [(x[:batch_size], y[:batch_size])])
            epoch_seconds, losses, accuracies = [], [], []
            for epoch in range(epochs):
                ctx.progress(done + epoch, total, f"{label}: epoch {epoch + 1} of {epochs}")
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
            fit = mlp_spec.Fit(step, time.perf_counter() - start, epoch_seconds, losses,
                               accuracies, count)
            done += epochs
            ctx.progress(done, total, f"{label}: measuring samples/s")
            step.batches = mlp_spec.rotating_batches(x, y, count, batch_size)
            m = ctx.measure(step)
            done += 1
            shared.emit_mlp_point(ctx, m, preset, widths, batch_size, flags, fit)

        if params["check"]:
            ctx.progress(done, total, "comparing with the CPU")
            widths = widths_list[0]
            row = compare_with_cpu(ctx, lambda: mlp_model(widths), "sgd",
                                   sigmoid_categorical_crossentropy,
                                   mlp_spec.rotating_batches(x, y, count, batch_size),
                                   params["check_steps"], mlp_spec.point_for(preset, widths))
            row.flags += flags
            ctx.row(row)
    ctx.progress(total, total, "done")
