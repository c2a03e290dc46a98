"""MLX: its adapter, array ops, models and its part of each workload it supports."""

from siliconbench.core.frameworks import FrameworkInfo
from siliconbench.core.kit.encoders import ENCODERS  # what its train part builds (train.py)

FRAMEWORK = FrameworkInfo(
    "mlx", "MLX", "mlx", "siliconbench.core.frameworks.mlx.adapter", "mlx",
    workloads=("gemm", "bandwidth", "train", "mlp", "memory", "llm", "allreduce", "scaling",
               "scaling-world"),
    rank=2, first_choice=1, train_models=tuple(ENCODERS))
