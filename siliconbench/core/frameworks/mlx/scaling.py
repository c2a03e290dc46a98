"""MLX's part of the scaling workload (interface: siliconbench/core/workloads/scaling.py): a replica of the
CIFAR-10 MLP or the BERT-style encoder on each rank of the group mlx.launch started, its
gradients averaged by nn.average_gradients every step."""

from __future__ import annotations

from siliconbench.core.frameworks.mlx import models
from siliconbench.core.frameworks.mlx.allreduce import Group, join
from siliconbench.core.hosts import world_size
from siliconbench.core.kit.encoders import ENCODERS, encoder_config
from siliconbench.core.kit.training import NUM_CLASSES, ROTATING_BATCHES
from siliconbench.core.params import ParamError

MLP_CLASSES = 10


class Replica:
    group: Group

    def __init__(self, ctx, params: dict) -> None:
        import mlx.core as mx
        from mlx import nn
        from mlx.utils import tree_map
        self.mx = mx
        name, batch = params["model"], params["batch_size"]
        if name != "mlp" and name not in ENCODERS:
            raise ParamError(f"{name} is not available on MLX; choose mlp, distilbert or "
                             "bert-large.")
        self.group = join(ctx, params["backend"], world_size(params))
        group = self.group.group
        mx.random.seed(0)
        if name == "mlp":
            model = models.mlp_model(params["widths"])
            loss, optimizer = models.sigmoid_categorical_crossentropy, "sgd"
        else:
            config = encoder_config(name, params["layers"], params["seq_len"])
            model = models.encoder(config, NUM_CLASSES, 0.0)
            loss, optimizer = models.cross_entropy, "adam"
        # Every replica starts from rank 0's weights, as DDP's first broadcast does.
        first = self.group.rank == 0
        model.update(tree_map(lambda w: mx.distributed.all_sum(
            w if first else mx.zeros_like(w), group=group), model.parameters()))
        mx.eval(model.parameters())
        # Each rank trains on data of its own.
        mx.random.seed(1 + self.group.rank)
        if name == "mlp":
            batches = [(mx.random.normal((batch, 32 * 32 * 3)),
                        mx.random.randint(0, MLP_CLASSES, (batch,)))
                       for _ in range(ROTATING_BATCHES)]
        else:
            batches = [(mx.random.randint(0, config.vocab, (batch, params["seq_len"])),
                        mx.random.randint(0, NUM_CLASSES, (batch,)))
                       for _ in range(ROTATING_BATCHES)]
        mx.eval(batches)

        def average(grads):
            return nn.average_gradients(grads, group=group)
        self.model = model
        self.step = models.TrainStep(model, optimizer, loss, batches, average)
        self._average = average
        # Gradient-shaped buffers for the all-reduce alone (the values do not matter).
        self._grads = tree_map(mx.zeros_like, model.trainable_parameters())
        mx.eval(self._grads)
        self.describe = ("nn.average_gradients (the call the step makes) on buffers of the "
                         "gradients' shapes, evaluated, on its own")

    def all_reduce(self) -> None:
        self.mx.eval(self._average(self._grads))

    def spread(self) -> float:
        mx = self.mx
        from mlx.utils import tree_flatten
        flat = mx.concatenate([w.reshape(-1) for _, w in tree_flatten(self.model.parameters())])
        group = self.group.group
        if self.group.size == 1:
            return 0.0
        high = mx.distributed.all_max(flat, group=group)
        low = mx.distributed.all_min(flat, group=group)
        return (high - low).max().item()


def replica(ctx, params: dict) -> Replica:
    return Replica(ctx, params)
