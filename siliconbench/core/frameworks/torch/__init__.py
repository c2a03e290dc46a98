"""PyTorch: its adapter, array ops, models and its part of each workload it supports."""

from siliconbench.core.frameworks import FrameworkInfo

FRAMEWORK = FrameworkInfo(
    "torch", "PyTorch", "torch", "siliconbench.core.frameworks.torch.adapter", "torch",
    workloads=("gemm", "bandwidth", "train", "infer", "mlp", "memory", "llm", "allreduce",
               "scaling", "scaling-world"),
    rank=0, first_choice=0)     # PyTorch runs every workload: a first launch prefers it
