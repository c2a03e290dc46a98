"""MLX's array operations for the GEMM and bandwidth workloads (siliconbench.core.frameworks.ops)."""

from __future__ import annotations

import numpy as np

from siliconbench.core.frameworks.ops import Step, TensorOps
from siliconbench.core.text import first_line


class MlxOps(TensorOps):
    """MLX is lazy: every call is handed to the device with mx.async_eval (or nothing would be
    computed), and a block is closed by evaluating the last result and synchronising."""

    copy_kernel = "x + 0 (MLX's Python API has no copy op)"
    scale_kernel = "s * c"
    add_kernel = "a + b"
    triad_kernel = "b + s * c fused by mx.compile (one kernel)"
    read_kernel = "mx.sum(a)"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        import mlx.core as mx
        self.mx = mx
        self.errors = (ValueError, RuntimeError, TypeError)

    def itemsize(self, dtype: str) -> int:
        return getattr(self.mx, dtype).size

    def random(self, shape, dtype):
        mx = self.mx
        x = mx.random.normal(shape, dtype=getattr(mx, dtype), stream=self.device.native)
        mx.eval(x)
        return x

    def to_numpy(self, x) -> np.ndarray:
        mx = self.mx
        if x.dtype in (mx.bfloat16, mx.float16):
            x = x.astype(mx.float32, stream=mx.cpu)  # exact; numpy has no bfloat16
        return np.array(x, dtype=np.float64)

    def matmul(self, a, b) -> Step:
        return lambda: self.mx.matmul(a, b)

    def copy(self, src) -> Step:
        return lambda: src + 0

    def scale(self, c, s: float) -> Step:
        return lambda: s * c

    def add(self, a, b) -> Step:
        return lambda: a + b

    def triad(self, b, c, s: float) -> Step:
        mx = self.mx
        try:
            fused = mx.compile(lambda y, z: y + s * z)
            mx.eval(fused(b[:4], c[:4]))
        except self.errors as e:
            # The CPU's compiled kernels are built by a C++ compiler at run time; without one
            # the two plain kernels still give a number, and the record says which ran.
            self.triad_kernel = f"b + s * c (two kernels: mx.compile failed: {first_line(e)})"
            return lambda: b + s * c
        return lambda: fused(b, c)

    def read(self, a) -> Step:
        return lambda: self.mx.sum(a)

    def timed(self, step):
        mx, device = self.mx, self.device.native
        last: list = []

        def call() -> None:
            out = step()
            mx.async_eval(out)
            last[:] = [out]

        def sync() -> None:
            if last:
                mx.eval(last[0])
            mx.synchronize(device)
        return call, sync


Ops = MlxOps
