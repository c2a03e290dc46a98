"""PyTorch adapter: devices (cpu, mps, cuda:N), synchronisation and memory of each."""

from __future__ import annotations

import platform
from collections.abc import Callable

from siliconbench.core.frameworks import (
    DeviceInfo,
    UnknownDevice,
    apple_gpu_name,
    cpu_name,
    host_memory,
)

NAME = "torch"


def _torch():
    import torch
    return torch


NO_MPS_COLLECTIVES = ("PyTorch has no collective backend for MPS tensors: distributed runs "
                      "(all-reduce, scaling) use gloo on the CPU.")


def software() -> dict:
    torch = _torch()
    info = {"torch": torch.__version__}
    if torch.version.cuda:
        info["cuda"] = torch.version.cuda
        if torch.backends.cudnn.is_available():
            info["cudnn"] = str(torch.backends.cudnn.version())
    if torch.backends.mps.is_built():
        info["mps_built"] = True
    return info


def devices() -> list[DeviceInfo]:
    torch = _torch()
    out = [DeviceInfo(NAME, "cpu", cpu_name(), "cpu", host_memory())]
    if torch.backends.mps.is_built():
        if torch.backends.mps.is_available():
            out.append(DeviceInfo(NAME, "mps", apple_gpu_name(), "gpu", host_memory(),
                                  note=NO_MPS_COLLECTIVES))
        else:
            out.append(DeviceInfo(NAME, "mps", "Apple GPU", "gpu", usable=False,
                                  reason="MPS needs macOS 12.3 or later on an Apple Silicon Mac."))
    if torch.backends.cuda.is_built():
        if torch.cuda.is_available():
            for i in range(torch.cuda.device_count()):
                p = torch.cuda.get_device_properties(i)
                out.append(DeviceInfo(NAME, f"cuda:{i}", p.name, "gpu", p.total_memory))
        elif platform.system() != "Darwin":
            out.append(DeviceInfo(NAME, "cuda", "NVIDIA GPU", "gpu", usable=False,
                                  reason="No NVIDIA GPU or driver was found."))
    return out


def resolve(device_id: str):
    """'cpu', 'mps', 'cuda', 'cuda:1' -> torch.device, or UnknownDevice with the valid ids."""
    torch = _torch()
    listed = {d.id: d for d in devices()}
    ids = [i for i, d in listed.items() if d.usable]
    wanted = "cuda:0" if device_id == "cuda" else device_id
    if wanted not in ids:
        base = listed.get(device_id) or listed.get(wanted)
        if base is not None and not base.usable:
            raise UnknownDevice(f"PyTorch device {device_id!r} is not usable here: {base.reason}")
        raise UnknownDevice(f"PyTorch has no device {device_id!r} here; "
                            f"choose one of {', '.join(ids)}.")
    return torch.device(wanted)


def device_name(dev) -> str:
    torch = _torch()
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    if dev.type == "mps":
        return apple_gpu_name()
    return cpu_name()


def synchronizer(dev) -> Callable[[], None]:
    torch = _torch()
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    if dev.type == "mps":
        return torch.mps.synchronize
    return lambda: None  # CPU ops return when their result is computed


def free_memory(dev) -> int | None:
    """Bytes a new allocation may take on the device, or None when unknown."""
    torch = _torch()
    if dev.type == "cuda":
        free, _total = torch.cuda.mem_get_info(dev)
        return free
    import psutil
    available = psutil.virtual_memory().available
    if dev.type == "mps":
        # Metal refuses allocations beyond its working-set limit even when RAM is free.
        limit = torch.mps.recommended_max_memory() - torch.mps.driver_allocated_memory()
        return min(available, limit)
    return available


def reset_peak_memory(dev) -> None:
    torch = _torch()
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)


def peak_memory(dev) -> int | None:
    """Peak bytes allocated on the device since the last reset (CUDA), the driver's current
    allocation (MPS has no peak counter), or None (CPU: see the run's telemetry)."""
    torch = _torch()
    if dev.type == "cuda":
        return torch.cuda.max_memory_allocated(dev)
    if dev.type == "mps":
        return torch.mps.driver_allocated_memory()
    return None


def empty_cache(dev) -> None:
    torch = _torch()
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    elif dev.type == "mps":
        torch.mps.empty_cache()


def caveat(dev) -> None:
    """What a run on `dev` must say about its numbers (see the MLX adapter): nothing here."""
    return None
