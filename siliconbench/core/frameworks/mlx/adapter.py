"""MLX adapter: devices (gpu through Metal or CUDA, cpu), the unified memory size, and
synchronisation (MLX is lazy: a workload evaluates its results, the device's stream is then
waited for)."""

from __future__ import annotations

import platform
import re
from collections.abc import Callable
from functools import cache

from siliconbench.core.frameworks import (
    Device,
    DeviceInfo,
    UnknownDevice,
    apple_gpu_name,
    cpu_name,
    host_memory,
)

NAME = "mlx"


class MlxUnusable(RuntimeError):
    """MLX is installed but cannot be imported; the message is one sentence."""


@cache
def _mx():
    try:
        import mlx.core as mx
    except ImportError as e:
        # `pip install mlx` on Linux brings no backend; `mlx[cpu]` (or `mlx[cuda12]`) does.
        raise MlxUnusable(f"MLX cannot be imported ({e}); on Linux install it with "
                          "pip install 'siliconbench[mlx]', which adds its CPU backend.") from e
    return mx


def _device_info(mx, device) -> dict:
    # mx.device_info replaced mx.metal.device_info (which only knows the Metal GPU).
    if hasattr(mx, "device_info"):
        return dict(mx.device_info(device))
    return dict(mx.metal.device_info()) if device == mx.gpu else {}


def _backend(mx) -> str | None:
    """'metal', 'cuda' or None: the GPU backend this MLX build can use here."""
    if mx.metal.is_available():
        return "metal"
    cuda = getattr(mx, "cuda", None)
    return "cuda" if cuda is not None and cuda.is_available() else None


def software() -> dict:
    mx = _mx()
    return {"mlx": mx.__version__, "gpu_backend": _backend(mx) or "none", "cpu_blas": blas()}


@cache
def blas() -> str:
    """The BLAS MLX's CPU multiplies with: Accelerate on macOS; elsewhere the library the
    mlx-cpu wheel loaded into this process (read once from /proc/self/maps)."""
    if platform.system() == "Darwin":
        return "Accelerate"
    _mx()
    try:
        from siliconbench.core.files import read_small
        return blas_from_maps(read_small("/proc/self/maps", 64 << 20, "memory map"))
    except OSError:
        return "unknown"


def blas_from_maps(maps: str) -> str:
    """'OpenBLAS', 'MKL', 'reference BLAS X.Y.Z' or 'unknown' from a /proc/PID/maps text."""
    paths = {line.split()[-1] for line in maps.splitlines() if "/" in line}
    names = [p.rsplit("/", 1)[-1] for p in paths]
    if any(n.startswith("libopenblas") for n in names):
        return "OpenBLAS"
    if any(n.startswith("libmkl") for n in names):
        return "MKL"
    for n in names:
        match = re.match(r"libblas[-.].*?so\.(\d+\.\d+\.\d+)$", n)
        if match:
            return f"reference BLAS {match.group(1)}"
    return "unknown"


def caveat(dev: Device) -> str | None:
    """What a run on `dev` must say about its numbers, or None."""
    which = blas() if dev.type == "cpu" else ""
    if not which.startswith("reference BLAS"):
        return None
    return (f"MLX's CPU here multiplies with the {which} bundled in the mlx-cpu wheel, not an "
            "optimised BLAS: its CPU numbers measure that library, far below this processor "
            "(on a Mac MLX uses Accelerate).")


def unified_memory() -> int | None:
    """Bytes of the Mac's unified memory as Metal reports it, or None without Metal."""
    mx = _mx()
    if _backend(mx) != "metal":
        return None
    return _device_info(mx, mx.gpu).get("memory_size")


def devices() -> list[DeviceInfo]:
    try:
        mx = _mx()
    except MlxUnusable as e:
        return [DeviceInfo(NAME, "cpu", cpu_name(), "cpu", usable=False, reason=str(e))]
    out = [DeviceInfo(NAME, "cpu", cpu_name(), "cpu", host_memory())]
    backend = _backend(mx)
    if backend == "metal":
        out.append(DeviceInfo(NAME, "gpu", apple_gpu_name(), "gpu", unified_memory()))
    elif backend == "cuda":
        info = _device_info(mx, mx.gpu)
        out.append(DeviceInfo(NAME, "gpu", str(info.get("device_name", "NVIDIA GPU")), "gpu",
                              info.get("total_memory") or info.get("memory_size")))
    elif platform.system() == "Darwin":
        out.append(DeviceInfo(NAME, "gpu", apple_gpu_name(), "gpu", usable=False,
                              reason="MLX finds no Metal GPU: it needs macOS 14 or later on an "
                                     "Apple Silicon Mac."))
    else:
        out.append(DeviceInfo(NAME, "gpu", "GPU", "gpu", usable=False,
                              reason="This MLX has no GPU backend (mlx[cpu]): MLX's GPU is "
                                     "Metal on an Apple Silicon Mac, or CUDA with mlx[cuda12]."))
    return out


def resolve(device_id: str) -> Device:
    """'cpu' or 'gpu' -> Device (native: the mx.Device), or UnknownDevice with the valid ids."""
    try:
        mx = _mx()
    except MlxUnusable as e:
        raise UnknownDevice(str(e)) from None
    listed = {d.id: d for d in devices()}
    wanted = device_id.strip().lower()
    wanted = "gpu" if wanted == "gpu:0" else wanted
    device = listed.get(wanted)
    if device is None or not device.usable:
        if device is not None:
            raise UnknownDevice(f"MLX device {device_id!r} is not usable here: {device.reason}")
        ids = [i for i, d in listed.items() if d.usable]
        raise UnknownDevice(f"MLX has no device {device_id!r} here; choose one of "
                            f"{', '.join(ids)}.")
    native = mx.Device(mx.cpu if wanted == "cpu" else mx.gpu)
    # Operations without an explicit stream (inside mx.compile too) run on this device.
    mx.set_default_device(native)
    return Device(wanted, 0, native)


def device_name(dev: Device) -> str:
    return next(d.name for d in devices() if d.id == dev.type)


def synchronizer(dev: Device) -> Callable[[], None]:
    """Waits for the device's stream. It cannot evaluate what a workload left lazy: a workload
    must mx.eval (or mx.async_eval) its results first, or nothing is computed at all."""
    mx = _mx()
    return lambda: mx.synchronize(dev.native)


def free_memory(dev: Device) -> int | None:
    import psutil
    available = psutil.virtual_memory().available
    mx = _mx()
    if dev.type == "gpu" and _backend(mx) == "metal":
        # Metal refuses allocations beyond its recommended working set even with RAM free.
        limit = _device_info(mx, mx.gpu).get("max_recommended_working_set_size")
        if limit:
            return min(available, int(limit) - mx.get_active_memory())
    return available


def reset_peak_memory(dev: Device) -> None:
    _mx().reset_peak_memory()


def peak_memory(dev: Device) -> int | None:
    """Peak bytes MLX's allocator held since the last reset (one allocator for all devices)."""
    return int(_mx().get_peak_memory())


def empty_cache(dev: Device) -> None:
    _mx().clear_cache()
