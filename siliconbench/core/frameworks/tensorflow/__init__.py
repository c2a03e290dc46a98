"""TensorFlow (Keras): its adapter, array ops, models and its part of each workload it supports."""

from siliconbench.core.frameworks import FrameworkInfo

FRAMEWORK = FrameworkInfo(
    "tensorflow", "TensorFlow", "tensorflow", "siliconbench.core.frameworks.tensorflow.adapter",
    "tensorflow", workloads=("gemm", "bandwidth", "train", "mlp", "memory"),
    rank=1, first_choice=2)
