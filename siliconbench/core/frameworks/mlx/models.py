"""MLX's models, built from mlx.nn: a BERT-style encoder sized like DistilBERT or BERT-Large
and the CIFAR-10 MLPs; the training step, mx.compile and the --check twin on the CPU that its
parts of train and mlp share."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from siliconbench.core.kit import training
from siliconbench.core.kit.encoders import EncoderConfig
from siliconbench.core.kit.training import OPTIMIZERS


class TrainStep:
    """Forward, loss, gradients, optimizer update, evaluated: MLX is lazy, so a call that did
    not mx.eval its results would compute nothing. Called without arguments it trains on the
    next of a few batches in turn."""

    def __init__(self, model, optimizer: str, loss_fn: Callable, batches: list,
                 average: Callable | None = None) -> None:
        """`average`: what the gradients go through before the update (data-parallel
        training averages them over the ranks: nn.average_gradients)."""
        import mlx.optimizers as optim
        from mlx import nn
        cls, lr = OPTIMIZERS[optimizer]
        self.model, self.batches = model, batches
        self.optimizer = getattr(optim, cls)(learning_rate=lr)

        def loss_and_logits(x, y):
            logits = model(x)
            return loss_fn(logits, y), logits
        grad = nn.value_and_grad(model, loss_and_logits)

        def train(x, y):
            (loss, logits), grads = grad(x, y)
            if average is not None:
                grads = average(grads)
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


def encoder(config: EncoderConfig, classes: int, dropout: float = 0.1):
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


def compile_or_eager(ctx, step: TrainStep) -> bool:
    """--compile: mx.compile the step (on the CPU MLX builds its fused kernels with the
    system's C++ compiler); where that fails the run says so and stays eager."""
    eager = step._train

    def attempt() -> None:
        step.compile()
        step()
    return training.compile_or_eager(ctx, "mx.compile", attempt,
                                     lambda: setattr(step, "_train", eager))


def compare_with_cpu(ctx, build: Callable, optimizer: str, loss_fn: Callable, batches: list,
                     steps: int) -> tuple[list[float], list[float]]:
    """--check on MLX: a model from `build()` (no dropout) trained for `steps` steps on the
    run's device, and a twin given the same weights trained on the CPU, on the same batches;
    the two loss curves (siliconbench.core.kit.checks compares them; MLX has no mixed precision)."""
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
    return ours, reference


def mlp_model(widths: list[int], inputs: int = 32 * 32 * 3, classes: int = 10):
    """Dense(w, ReLU) for each width -> Dense(classes), initialised as Keras does
    (Glorot-uniform weights, zero biases), like the torch models' mlp."""
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
    """Keras's Dense(10, sigmoid) + categorical_crossentropy, as the torch models' version."""
    import mlx.core as mx
    p = mx.sigmoid(logits)
    p = mx.clip(p / p.sum(axis=-1, keepdims=True), 1e-7, 1 - 1e-7)
    return -mx.take_along_axis(mx.log(p), labels[:, None], axis=-1).mean()
