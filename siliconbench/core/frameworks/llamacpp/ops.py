"""Host array operations for the llm workload's own triad and read kernel (the decode bound where no triad of
the device is stored and none is published): llama.cpp has no array API, so on the CPU the
copy and the triad run in numpy, split across one thread per core (numpy's ufuncs let go of
the GIL), as llama.cpp's own threads read the weights. On one thread numpy read 17.2 GB/s on
this project's 2-core machine where torch's triad reads 33.2 GB/s and a llama-2-7b Q4_0
decode read its weights at 29.6 GB/s: the run held a real decode above its "bound" and
called it wrong. (torch itself cannot load here: a run keeps to its framework's process.)
Not on a GPU: numpy would measure the host's memory, not the GPU's."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from siliconbench.core.frameworks.ops import TensorOps

CHUNK = 1 << 16          # elements: 256 KB of float32, inside any L2


class Ops(TensorOps):
    errors = (NotImplementedError,)
    _pool: ThreadPoolExecutor | None = None
    copy_kernel = "numpy copyto, one thread per core"
    scale_kernel = "numpy multiply (out=), one thread per core"
    add_kernel = "numpy add (out=), one thread per core"
    triad_kernel = "numpy multiply + add (out=, in cached chunks), one thread per core"
    read_kernel = "numpy sum, one thread per core"

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

        def part(i: int, j: int) -> None:
            np.copyto(out[i:j], src[i:j])
        return self._on_every_core(src.size, part, out)

    def scale(self, c, s: float):
        self._host()
        out = np.empty_like(c)

        def part(lo: int, hi: int) -> None:
            np.multiply(c[lo:hi], c.dtype.type(s), out=out[lo:hi])
        return self._on_every_core(c.size, part, out)

    def add(self, a, b):
        self._host()
        out = np.empty_like(a)

        def part(lo: int, hi: int) -> None:
            np.add(a[lo:hi], b[lo:hi], out=out[lo:hi])
        return self._on_every_core(a.size, part, out)

    def triad(self, b, c, s: float):
        """b + s * c in chunks whose product stays in the cache, so memory sees what STREAM
        counts: b and c read, the result written once."""
        self._host()
        out = np.empty_like(b)
        scalar = b.dtype.type(s)

        def part(lo: int, hi: int) -> None:
            tmp = np.empty(CHUNK, b.dtype)
            for i in range(lo, hi, CHUNK):
                j = min(i + CHUNK, hi)
                np.multiply(c[i:j], scalar, out=tmp[:j - i])
                np.add(b[i:j], tmp[:j - i], out=out[i:j])
        return self._on_every_core(b.size, part, out)

    def read(self, a):
        self._host()
        sums = np.zeros(cores(), np.float64)
        edges = [a.size * k // len(sums) for k in range(len(sums) + 1)]

        def part(lo: int, hi: int) -> None:
            sums[edges.index(lo)] = a[lo:hi].sum()
        return self._on_every_core(a.size, part, sums)

    def _on_every_core(self, size: int, part, out: np.ndarray):
        """A step that runs part(lo, hi) over [0, size) in one slice per core, each on a
        thread of a pool kept for the run's calls, and returns `out` when all have."""
        n = cores()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(n)
        edges = [size * k // n for k in range(n + 1)]

        def step() -> np.ndarray:
            for done in [self._pool.submit(part, lo, hi) for lo, hi in zip(edges, edges[1:])]:
                done.result()
            return out
        return step

    def release(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        super().release()


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:       # macOS has no affinity call
        return os.cpu_count() or 1
