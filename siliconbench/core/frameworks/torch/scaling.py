"""PyTorch's part of the scaling workload (interface: siliconbench/core/workloads/scaling.py): a replica of
the CIFAR-10 MLP, a torchvision CNN or a transformer on each rank of the process group
torchrun started (gloo on CPUs, NCCL on CUDA), wrapped in DistributedDataParallel, which
averages the gradients in buckets while the backward pass runs."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from siliconbench.core.frameworks.torch import models
from siliconbench.core.frameworks.torch.allreduce import Group, join
from siliconbench.core.frameworks.torch.train import task_for
from siliconbench.core.hosts import world_size
from siliconbench.core.kit.training import ROTATING_BATCHES

MLP_CLASSES = 10


class Replica:
    group: Group

    def __init__(self, ctx, params: dict) -> None:
        from torch.nn.parallel import DistributedDataParallel
        self.group = join(ctx, params["backend"], world_size(params))
        self.dist, dev, batch = self.group.dist, ctx.device, params["batch_size"]
        torch.manual_seed(0)
        if params["model"] == "mlp":
            model = models.mlp(params["widths"])
            loss, optimizer = models.sigmoid_categorical_crossentropy, "sgd"

            def data(n: int) -> tuple[torch.Tensor, torch.Tensor]:
                return (torch.randn(n, 3, 32, 32, device=dev),
                        torch.randint(0, MLP_CLASSES, (n,), device=dev))
        else:
            task = task_for(params, dropout=False)
            model, loss, optimizer = task.build(), F.cross_entropy, task.optimizer

            def data(n: int) -> tuple[torch.Tensor, torch.Tensor]:
                return task.batch(n, dev)
        model = model.to(dev).train()
        # DDP broadcasts rank 0's weights at construction: every replica starts alike.
        self.model = DistributedDataParallel(
            model, device_ids=[dev] if dev.type == "cuda" else None)
        torch.manual_seed(1 + self.group.rank)      # each rank trains on data of its own
        batches = [data(batch) for _ in range(ROTATING_BATCHES)]
        self.step = models.TrainStep(self.model, optimizer, loss, batches)
        params_ = [p for p in model.parameters() if p.requires_grad]
        # One flat buffer as large as all gradients, averaged as DDP does (sum, / world).
        self._flat = torch.zeros(sum(p.numel() for p in params_), device=dev)
        self.describe = ("all_reduce (sum) and division by the world size of one flat buffer "
                         "as large as all gradients, on its own (DDP reduces the same bytes "
                         "in 25 MB buckets, overlapped with the backward pass)")

    def all_reduce(self) -> None:
        self.dist.all_reduce(self._flat)
        self._flat.div_(self.group.size)

    def spread(self) -> float:
        flat = torch.cat([p.detach().reshape(-1) for p in self.model.module.parameters()])
        if self.group.size == 1:
            return 0.0
        high, low = flat.clone(), flat.clone()
        self.dist.all_reduce(high, op=self.dist.ReduceOp.MAX)
        self.dist.all_reduce(low, op=self.dist.ReduceOp.MIN)
        return float((high - low).max().item())


def replica(ctx, params: dict) -> Replica:
    return Replica(ctx, params)
