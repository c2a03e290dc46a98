"""How much of a device's memory a run plans to fill: what it needs (its arrays, a model's
weights, cache and activations) must fit in this share of the memory free before it starts,
the rest left to the framework's allocator, its workspaces and the system. Every workload
sizes its default sweep and refuses or skips its points by it, and siliconbench.core.estimate
holds a run to it before the run starts."""

from __future__ import annotations

MEMORY_SHARE = 0.8


def fits(need: float, free: float | None) -> bool:
    """Whether `need` bytes fit in the share of `free` bytes (None: not known, so it fits)."""
    return free is None or need <= MEMORY_SHARE * free
