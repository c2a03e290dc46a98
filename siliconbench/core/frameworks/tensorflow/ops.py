"""TensorFlow's array operations for the GEMM and bandwidth workloads (siliconbench.core.frameworks.ops)."""

from __future__ import annotations

import numpy as np

from siliconbench.core.frameworks.ops import Step, TensorOps


class TensorFlowOps(TensorOps):
    """Eager ops pinned to the device with soft placement off (the adapter's resolve), so an op
    without a kernel there raises instead of running on the CPU. A block is closed by fetching
    one element of the last result."""

    scale_kernel = "s * c"
    add_kernel = "a + b"
    triad_kernel = "b + s * c (two kernels: TensorFlow has no fused op for it)"
    read_kernel = "tf.reduce_sum(a)"
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
    # 0.5 s: at 0.25 s an N=2048 product on a 2-core CPU (0.14 s) was timed one per call, not
    # the classic way, and rounds of benchmarks/tf_gemm_fidelity.py fell to 0.89.
    CHAIN_MAX = 10
    CHAIN_CALL_S = 0.5

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

    def scale(self, c, s: float) -> Step:
        return lambda: s * c

    def add(self, a, b) -> Step:
        return lambda: a + b

    def triad(self, b, c, s: float) -> Step:
        return lambda: b + s * c

    def read(self, a) -> Step:
        return lambda: self.tf.reduce_sum(a)

    def timed(self, step):
        from siliconbench.core.frameworks.tensorflow.adapter import fetch
        tf, device = self.tf, self.device.native
        last: list = []

        def call() -> None:
            with tf.device(device):
                last[:] = [step()]

        def sync() -> None:
            if last:
                fetch(last[0])
        return call, sync


Ops = TensorFlowOps
