"""PyTorch's array operations for the GEMM and bandwidth workloads (siliconbench.core.frameworks.ops)."""

from __future__ import annotations

import numpy as np

from siliconbench.core.frameworks.ops import Step, TensorOps


class TorchOps(TensorOps):
    copy_kernel = "Tensor.copy_"
    scale_kernel = "torch.mul(c, s, out=b)"
    add_kernel = "torch.add(a, b, out=c)"
    triad_kernel = "torch.add(b, c, alpha=s, out=a) (one kernel)"
    read_kernel = "torch.sum(a)"

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

    def scale(self, c, s: float) -> Step:
        out = self.torch.empty_like(c)
        return lambda: self.torch.mul(c, s, out=out)

    def add(self, a, b) -> Step:
        out = self.torch.empty_like(a)
        return lambda: self.torch.add(a, b, out=out)

    def triad(self, b, c, s: float) -> Step:
        out = self.torch.empty_like(b)
        return lambda: self.torch.add(b, c, alpha=s, out=out)

    def read(self, a) -> Step:
        return lambda: self.torch.sum(a)


Ops = TorchOps
