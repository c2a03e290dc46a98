"""Core ML adapter: the compute units as devices, and what a run records of the software.

A compute unit is a permission, not a pin: with CPU + Neural Engine, Core ML runs on the
Neural Engine only the ops it can and falls back to the CPU for the rest (coremltools'
ComputeUnit, coremltools/__init__.py: ALL, CPU_AND_GPU, CPU_ONLY, CPU_AND_NE, the last on
macOS 13+). The infer workload reads the compute plan to say where the ops went.

Prediction returns only when it is done (MLModel.predict gives numpy arrays back), so there is
nothing to synchronise, and Core ML keeps no allocator count: a run's memory row is the
process's peak resident memory."""

from __future__ import annotations

import importlib.metadata
import platform
from collections.abc import Callable

from siliconbench.core.frameworks import Device, DeviceInfo, UnknownDevice, cpu_name, host_memory
from siliconbench.core.frameworks.coreml import MACOS_ONLY, runs_here

NAME = "coreml"

# --device id: (coremltools' ComputeUnit name, what the unit is called, DeviceInfo.kind)
UNITS: dict[str, tuple[str, str, str]] = {
    "cpu": ("CPU_ONLY", "CPU only", "cpu"),
    "gpu": ("CPU_AND_GPU", "CPU + GPU", "gpu"),
    "ne": ("CPU_AND_NE", "CPU + Neural Engine", "ne"),
    "all": ("ALL", "All units", "all"),
}


def version() -> str:
    return importlib.metadata.version("coremltools")


def software() -> dict:
    return {"coremltools": version(), "macos": platform.mac_ver()[0] or None}


def devices() -> list[DeviceInfo]:
    if not runs_here():
        return [DeviceInfo(NAME, "-", "Core ML", "-", usable=False, reason=MACOS_ONLY)]
    chip, memory = cpu_name(), host_memory()
    return [DeviceInfo(NAME, unit_id, f"{chip} · {label}", kind, memory)
            for unit_id, (_, label, kind) in UNITS.items()]


def resolve(device_id: str) -> Device:
    """'cpu', 'gpu', 'ne' or 'all' -> Device (native: the ComputeUnit's name)."""
    if not runs_here():
        raise UnknownDevice(MACOS_ONLY)
    wanted = device_id.strip().lower()
    if wanted not in UNITS:
        raise UnknownDevice(f"Core ML has no compute unit {device_id!r}; choose one of "
                            f"{', '.join(UNITS)} ({', '.join(u[1] for u in UNITS.values())}).")
    return Device(wanted, 0, UNITS[wanted][0])


def device_name(dev: Device) -> str:
    return f"{cpu_name()} · {UNITS[dev.type][1]}"


def synchronizer(dev: Device) -> Callable[[], None]:
    return lambda: None   # predict() returns the outputs: the work is done


def free_memory(dev: Device) -> int | None:
    import psutil
    return psutil.virtual_memory().available


def reset_peak_memory(dev: Device) -> None:
    pass


def peak_memory(dev: Device) -> int | None:
    return None


def empty_cache(dev: Device) -> None:
    pass


def caveat(dev: Device) -> None:
    return None
