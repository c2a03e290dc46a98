"""MLX's part of train (siliconbench.core.workloads.train): the BERT-style encoders from mlx.nn (no CNNs:
a usage error), fp32 only (MLX has no autocast), mx.compile for --compile."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from siliconbench.core.frameworks.mlx import models
from siliconbench.core.kit.encoders import ENCODERS, encoder_config, encoder_train_flops
from siliconbench.core.kit.training import NUM_CLASSES, ROTATING_BATCHES, warn_ignored
from siliconbench.core.params import ParamError

IGNORED = {
    "channels_last": "applies to torch CNNs",
    "xla": "is TensorFlow's compiler",
}


@contextmanager
def training(ctx, params: dict, batch_size: int) -> Iterator[Training]:
    yield Training(ctx, params, batch_size)


class Training:
    unit = "seq/s"
    dtype = "float32"

    def __init__(self, ctx, params: dict, batch_size: int) -> None:
        import mlx.core as mx
        name = params["model"]
        if name not in ENCODERS:
            raise ParamError(f"{name} is not available on MLX; choose distilbert or "
                             "bert-large.")
        self.ctx, self.batch_size, self.seq_len = ctx, batch_size, params["seq_len"]
        self.config = encoder_config(name, params["layers"], self.seq_len)
        warn_ignored(ctx, params, IGNORED)
        if params["precision"] == "mixed":
            ctx.warn("--precision mixed is not available on MLX (it has no autocast); this run "
                     "is fp32.")
        ctx.record_settings(precision="fp32")
        mx.random.seed(0)
        model = models.encoder(self.config, NUM_CLASSES)
        mx.eval(model.parameters())
        self.step = models.TrainStep(model, "adam", models.cross_entropy,
                                     self.batches(batch_size))

    def batches(self, size: int) -> list:
        import mlx.core as mx
        return [(mx.random.randint(0, self.config.vocab, (size, self.seq_len)),
                 mx.random.randint(0, NUM_CLASSES, (size,)))
                for _ in range(ROTATING_BATCHES)]

    def flops(self) -> tuple[float, dict]:
        return encoder_train_flops(self.config, self.batch_size, self.seq_len), {
            "flops_counted": "analytic: the encoder layers' matmuls, backward twice the forward"}

    def compile(self) -> None:
        models.compile_or_eager(self.ctx, self.step)

    def verified(self) -> tuple[list[str], str | None]:
        return [], None         # MLX runs every op on the stream it is given

    def release(self) -> None:
        del self.step

    def check(self, size: int, steps: int) -> tuple[list[float], list[float]]:
        return models.compare_with_cpu(
            self.ctx, lambda: models.encoder(self.config, NUM_CLASSES, 0.0), "adam",
            models.cross_entropy, self.batches(size), steps)
