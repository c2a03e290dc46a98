"""The array operations the GEMM and bandwidth workloads need: the interface (TensorOps, an
abstract base class) that each framework package fills in its ops.py, so those workloads keep
one sweep and differ only there: building inputs, the timed operations, and how a timed call
is closed (each framework synchronises its own way). It lives here, not in
siliconbench/core/workloads, because the framework packages subclass it and frameworks sit
below workloads."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from siliconbench.core.text import first_line

Step = Callable[[], Any]            # one timed operation; returns its (possibly lazy) result


class TensorOps(ABC):
    """What a workload does with arrays on the run's device. Subclasses fill in one framework
    (each abstract method at least); `errors` are the exceptions with which it refuses an op
    the device cannot run."""

    errors: tuple[type[BaseException], ...] = ()
    # Labels for the record: which kernel each of STREAM's four is on this framework.
    copy_kernel = ""
    scale_kernel = ""
    add_kernel = ""
    triad_kernel = ""
    # The read kernel beside them (a sum over one array): what a decode, which only reads,
    # can stream where a core's writes also read their line first (x86's write-allocate).
    read_kernel = ""
    # For the record: what one timed GEMM call is on this framework.
    gemm_call = "one product"

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.device = ctx.device
        self.label = ctx.device_id

    @property
    def tf32_capable(self) -> bool:
        """Whether float32 products may use TF32 tensor cores here (CUDA GPUs)."""
        return False

    def set_tf32(self, enabled: bool) -> None:
        pass

    @abstractmethod
    def itemsize(self, dtype: str) -> int:
        """Bytes per element of `dtype`."""
        raise NotImplementedError

    @abstractmethod
    def random(self, shape: tuple[int, ...], dtype: str):
        """Standard-normal values of `dtype` on the device (never zeros or constants)."""
        raise NotImplementedError

    @abstractmethod
    def to_numpy(self, x) -> np.ndarray:
        """The values as float64 on the host (for reference checks, never timed)."""
        raise NotImplementedError

    @abstractmethod
    def matmul(self, a, b) -> Step:
        """The step that multiplies `a` by `b`."""
        raise NotImplementedError

    def gemm_step(self, a, b) -> tuple[Step, int]:
        """The step the GEMM sweep times and how many N x N products one call of it makes:
        one product, except where the framework's own method differs (TensorFlow)."""
        return self.matmul(a, b), 1

    @abstractmethod
    def copy(self, src) -> Step:
        """The step that copies `src` with the framework's copy kernel."""
        raise NotImplementedError

    @abstractmethod
    def scale(self, c, s: float) -> Step:
        """STREAM's scale: b = s * c, into an array of its own."""
        raise NotImplementedError

    @abstractmethod
    def add(self, a, b) -> Step:
        """STREAM's add: c = a + b, into an array of its own."""
        raise NotImplementedError

    @abstractmethod
    def triad(self, b, c, s: float) -> Step:
        """STREAM's triad: a = b + s * c, into an array of its own."""
        raise NotImplementedError

    @abstractmethod
    def read(self, a) -> Step:
        """The read kernel: the sum of `a`'s elements, one array read, nothing written back
        but the sum."""
        raise NotImplementedError

    def use_plain_copy(self) -> bool:
        """The device lacks the framework's copy kernel: copy as x + 0 from now on, which
        reads and writes the same bytes. False when there is no other way to copy."""
        return False

    def timed(self, step: Step) -> tuple[Callable[[], None], Callable[[], None]]:
        """(call, sync) for the timing protocol: call runs the step once, sync waits until
        every call so far has finished on the device."""
        return step, self.ctx.sync

    def run_once(self, step: Step) -> None:
        call, sync = self.timed(step)
        call()
        sync()

    def seconds_once(self, step: Step) -> float:
        """One warmed, synchronised call of `step`, timed: a rough rate for planning, never a
        result (the protocol measures those)."""
        self.run_once(step)                     # warm: the first call allocates
        t0 = time.perf_counter()
        self.run_once(step)
        return time.perf_counter() - t0

    def failure(self, attempt: Callable[[], None]) -> str | None:
        """None when `attempt` runs, else the framework's reason it cannot on this device."""
        try:
            attempt()
        except self.errors as e:
            return first_line(e)
        return None

    def release(self) -> None:
        """Give memory the last arrays held back to the device (their names are deleted)."""
        self.ctx.adapter.empty_cache(self.device)


def for_run(ctx) -> TensorOps:
    """The operations of the run's framework (its package's ops.Ops), on its device."""
    from siliconbench.core.frameworks import implementation
    return implementation(ctx.framework, "ops").Ops(ctx)
