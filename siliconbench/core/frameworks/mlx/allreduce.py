"""MLX's part of the allreduce workload (interface: siliconbench/core/workloads/allreduce.py): the group
mlx.launch started (ring over TCP; JACCL, NCCL or MPI where the launcher chose them) and one
checked mx.distributed.all_sum."""

from __future__ import annotations

import os

from siliconbench.core.frameworks.mlx.launcher import refuse_backend
from siliconbench.core.params import ParamError


class Group:
    def __init__(self, ctx, backend: str, world: int) -> None:
        import mlx.core as mx
        self.mx = mx
        if backend == "auto":
            backend = "nccl" if mx.cuda.is_available() and ctx.device.type == "gpu" else "ring"
        # The parent refused these before starting (child.prepare); a rank says it again.
        if problem := refuse_backend(backend, ctx.device.type):
            raise ParamError(problem)
        mx.set_default_device(ctx.device.native)
        if world == 1:  # mlx.launch hands a lone rank an empty hostfile, which ring cannot read
            os.environ.pop("MLX_HOSTFILE", None)
        # strict: a rank that cannot join must fail, not measure alone as a group of one.
        self.group = mx.distributed.init(strict=world > 1, backend=backend)
        self.rank, self.size, self.backend = self.group.rank(), self.group.size(), backend
        if self.size != world:
            raise RuntimeError(f"{self.size} of {world} ranks joined the group.")

    def agree(self, x: float) -> float:
        mx = self.mx
        if self.size == 1:
            return x
        return mx.distributed.all_max(mx.array([x], mx.float32), group=self.group).item()

    def checked_all_sum(self, count, dtype, base, expected, probes) -> AllSum:
        return AllSum(self, count, getattr(self.mx, dtype), base, expected, probes)


class AllSum:
    def __init__(self, g: Group, count, dtype, base, expected, probes) -> None:
        import numpy as np
        mx = self.mx = g.mx
        self.group = g.group
        self.x = mx.tile(mx.array(base, mx.float32), count // 4).astype(dtype)
        self.expected = mx.array(expected, mx.float32).astype(dtype)
        self.probes = np.array(probes)
        self.probe_expected = np.array([expected[i % 4] for i in probes], np.float32)
        self.bf16 = dtype == mx.bfloat16
        self.wrong = 0
        self.y = None
        mx.eval(self.x, self.expected)

    def call(self) -> None:
        import numpy as np
        self.y = self.mx.distributed.all_sum(self.x, group=self.group)
        self.mx.eval(self.y)
        # Read in place (no copy, no further MLX op): bfloat16 as its top 16 bits of a float32.
        raw = np.frombuffer(memoryview(self.y).cast("B"),
                            np.uint16 if self.bf16 else np.float32)[self.probes]
        if self.bf16:
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        self.wrong += int((raw != self.probe_expected).any())

    def wrong_calls(self) -> int:
        return self.wrong

    def last_right(self) -> bool:
        mx = self.mx
        return bool(mx.all(self.y.reshape(-1, 4) == self.expected).item())

    def release(self) -> None:
        del self.x, self.y


def join(ctx, backend: str, world: int) -> Group:
    return Group(ctx, backend, world)
