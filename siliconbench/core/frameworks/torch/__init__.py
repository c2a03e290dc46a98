"""PyTorch: its adapter, array ops, models and its part of each workload it supports."""
