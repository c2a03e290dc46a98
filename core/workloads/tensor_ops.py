"""The array operations the GEMM and bandwidth workloads need, one class per framework, so
those workloads keep one sweep and differ only here: building inputs, the timed operations, and
how a timed call is closed (each framework synchronises its own way)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from core.text import first_line

Step = Callable[[], Any]            # one timed operation; returns its (possibly lazy) result


class TensorOps:
    """What a workload does with arrays on the run's device. Subclasses fill in one framework;
    `errors` are the exceptions with which it refuses an op the device cannot run."""

    errors: tuple[type[BaseException], ...] = ()
    # Labels for the record: which kernel a copy and a triad (a*b+c) are on this framework.
    copy_kernel = ""
    triad_kernel = ""
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

    def itemsize(self, dtype: str) -> int:
        raise NotImplementedError

    def random(self, shape: tuple[int, ...], dtype: str):
        """Standard-normal values of `dtype` on the device (never zeros or constants)."""
        raise NotImplementedError

    def to_numpy(self, x) -> np.ndarray:
        """The values as float64 on the host (for reference checks, never timed)."""
        raise NotImplementedError

    def matmul(self, a, b) -> Step:
        raise NotImplementedError

    def gemm_step(self, a, b) -> tuple[Step, int]:
        """The step the GEMM sweep times and how many N x N products one call of it makes:
        one product, except where the framework's own method differs (TensorFlow)."""
        return self.matmul(a, b), 1

    def copy(self, src) -> Step:
        raise NotImplementedError

    def triad(self, a, b, c) -> Step:
        """a * b + c."""
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


class TorchOps(TensorOps):
    copy_kernel = "Tensor.copy_"
    triad_kernel = "torch.addcmul (one kernel)"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        import torch
        self.torch = torch
        self.errors = (RuntimeError, TypeError, NotImplementedError)

    @property
    def tf32_capable(self) -> bool:
        return self.device.type == "cuda"

    def set_tf32(self, enabled: bool) -> None:
        self.torch.backends.cuda.matmul.allow_tf32 = enabled

    def _dtype(self, dtype: str):
        return getattr(self.torch, dtype)

    def itemsize(self, dtype: str) -> int:
        return self.torch.empty((), dtype=self._dtype(dtype)).element_size()

    def random(self, shape, dtype):
        return self.torch.randn(*shape, device=self.device, dtype=self._dtype(dtype))

    def to_numpy(self, x) -> np.ndarray:
        return x.double().cpu().numpy()

    def matmul(self, a, b) -> Step:
        out = self.torch.empty_like(a)
        return lambda: self.torch.matmul(a, b, out=out)

    def copy(self, src) -> Step:
        dst = self.torch.empty_like(src)
        return lambda: dst.copy_(src)

    def triad(self, a, b, c) -> Step:
        out = self.torch.empty_like(a)
        return lambda: self.torch.addcmul(c, a, b, out=out)


class TensorFlowOps(TensorOps):
    """Eager ops pinned to the device with soft placement off (the adapter's resolve), so an op
    without a kernel there raises instead of running on the CPU. A block is closed by fetching
    one element of the last result."""

    triad_kernel = "a * b + c (two kernels: TensorFlow has no fused op for it)"
    gemm_call = ("a tf.function chaining up to 10 dependent products x <- x @ b (the classic "
                 "sweep's method); TFLOPS count every product")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        import tensorflow as tf
        self.tf = tf
        self.errors = (tf.errors.OpError, TypeError, ValueError)
        self.copy_kernel = "tf.raw_ops.DeepCopy"

    @property
    def tf32_capable(self) -> bool:
        return self.device.type == "gpu" and self.tf.test.is_built_with_cuda()

    def set_tf32(self, enabled: bool) -> None:
        # TensorFlow allows TF32 by default on CUDA; the record must say which was used.
        self.tf.config.experimental.enable_tensor_float_32_execution(enabled)

    def itemsize(self, dtype: str) -> int:
        return self.tf.as_dtype(dtype).size

    def random(self, shape, dtype):
        tf = self.tf
        values = np.random.default_rng().standard_normal(shape, dtype=np.float32)
        # Made and cast on the host, then copied over: a device that lacks a random or cast
        # kernel for the dtype must not pass for one that cannot multiply in it.
        with tf.device("/CPU:0"):
            host = tf.cast(tf.constant(values), dtype)
        with tf.device(self.device.native):
            return tf.identity(host)

    def to_numpy(self, x) -> np.ndarray:
        return np.asarray(x.numpy()).astype(np.float64)

    def matmul(self, a, b) -> Step:
        return lambda: self.tf.linalg.matmul(a, b)

    # A timed call chains products until it lasts about CHAIN_CALL_S, at most CHAIN_MAX of them.
    CHAIN_MAX = 10
    CHAIN_CALL_S = 0.25

    def gemm_step(self, a, b):
        """The classic TensorFlow sweep's method: one tf.function call chains k dependent
        products x <- x @ b, so the graph runs them back to back without a return to Python
        or a fetch between them (one eager product per call measured ~7% slower at N=2048 on
        a CPU, benchmarks/tf_gemm_fidelity.py). Dependent, so grappler cannot merge them; b
        is scaled by 1/sqrt(N) so the values stay near 1 (no overflow, no subnormals). k is
        what fits in CHAIN_CALL_S by one timed eager product, so huge CPU products are not
        run ten times per call."""
        tf = self.tf
        seconds = self.seconds_once(self.matmul(a, b))
        k = max(1, min(self.CHAIN_MAX, int(self.CHAIN_CALL_S / max(seconds, 1e-9))))
        with tf.device(self.device.native):
            scaled = b * tf.cast(1.0 / float(b.shape[0]) ** 0.5, b.dtype)

            @tf.function
            def chain(x):
                for _ in range(k):
                    x = tf.linalg.matmul(x, scaled)
                return x
        return (lambda: chain(a)), k

    def copy(self, src) -> Step:
        tf = self.tf
        if self.copy_kernel == "tf.raw_ops.DeepCopy":
            return lambda: tf.raw_ops.DeepCopy(x=src)
        return lambda: src + 0

    def use_plain_copy(self) -> bool:
        # Not every plugin registers DeepCopy; every device can add.
        if self.copy_kernel != "tf.raw_ops.DeepCopy":
            return False
        self.copy_kernel = "x + 0 (no DeepCopy kernel on this device)"
        return True

    def triad(self, a, b, c) -> Step:
        return lambda: a * b + c

    def timed(self, step):
        from core.frameworks.tensorflow_adapter import fetch
        tf, device = self.tf, self.device.native
        last: list = []

        def call() -> None:
            with tf.device(device):
                last[:] = [step()]

        def sync() -> None:
            if last:
                fetch(last[0])
        return call, sync


class MlxOps(TensorOps):
    """MLX is lazy: every call is handed to the device with mx.async_eval (or nothing would be
    computed), and a block is closed by evaluating the last result and synchronising."""

    copy_kernel = "x + 0 (MLX's Python API has no copy op)"
    triad_kernel = "a * b + c fused by mx.compile (one kernel)"

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

    def triad(self, a, b, c) -> Step:
        mx = self.mx
        try:
            fused = mx.compile(lambda x, y, z: x * y + z)
            mx.eval(fused(a[:4], b[:4], c[:4]))
        except self.errors as e:
            # The CPU's compiled kernels are built by a C++ compiler at run time; without one
            # the two plain kernels still give a number, and the record says which ran.
            self.triad_kernel = f"a * b + c (two kernels: mx.compile failed: {first_line(e)})"
            return lambda: a * b + c
        return lambda: fused(a, b, c)

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


OPS = {"torch": TorchOps, "tensorflow": TensorFlowOps, "mlx": MlxOps}


def for_run(ctx) -> TensorOps:
    """The operations of the run's framework, on its device."""
    return OPS[ctx.framework](ctx)
