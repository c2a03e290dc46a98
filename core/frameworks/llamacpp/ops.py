"""Host array operations for the llm workload's own triad (the decode bound where no triad of
the device is stored and none is published): llama.cpp has no array API, so on the CPU the
triad runs in numpy, which streams memory as any CPU triad does. Not on a GPU: numpy would
measure the host's memory, not the GPU's."""

from __future__ import annotations

import numpy as np

from core.frameworks.ops import TensorOps


CHUNK = 1 << 16          # elements: 256 KB of float32, inside any L2


class Ops(TensorOps):
    errors = (NotImplementedError,)
    copy_kernel = "numpy copyto"
    triad_kernel = "numpy multiply + add (out=)"

    def _host(self) -> None:
        if self.device.type != "cpu":
            raise NotImplementedError("llama.cpp has no array operations on the GPU")

    def itemsize(self, dtype: str) -> int:
        return np.dtype(dtype).itemsize

    def random(self, shape: tuple[int, ...], dtype: str):
        self._host()
        return np.random.default_rng(0).standard_normal(shape, dtype=np.float32).astype(dtype)

    def to_numpy(self, x) -> np.ndarray:
        return np.asarray(x, dtype=np.float64)

    def matmul(self, a, b):
        self._host()
        return lambda: a @ b

    def copy(self, src):
        self._host()
        out = np.empty_like(src)
        return lambda: np.copyto(out, src)

    def triad(self, a, b, c):
        """a * b + c in chunks whose product stays in the cache, so memory sees what the
        bandwidth workload counts: a, b and c read, the result written once."""
        self._host()
        out = np.empty_like(a)
        tmp = np.empty(CHUNK, a.dtype)

        def step():
            for i in range(0, a.size, CHUNK):
                j = min(i + CHUNK, a.size)
                np.multiply(a[i:j], b[i:j], out=tmp[:j - i])
                np.add(tmp[:j - i], c[i:j], out=out[i:j])
            return out
        return step
