"""TensorFlow adapter: devices (cpu, gpu through the Metal plugin or CUDA), whether the Metal
plugin loaded and why not, synchronisation by fetching a result, and memory."""

from __future__ import annotations

import importlib.metadata
import os
import platform
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

NAME = "tensorflow"
# The pair pyproject.toml pins for macOS arm64 (the evidence is there): tensorflow-metal's
# last release declares no TensorFlow version, and a mismatched pair fails at `import`.
METAL_PAIR = "tensorflow 2.18 with tensorflow-metal 1.2.0"
INSTALL = "pip install 'siliconbench[tensorflow]'"


class TensorFlowUnusable(RuntimeError):
    """TensorFlow is installed but cannot be imported; the message is one sentence."""


def _distribution_version(*names: str) -> str | None:
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _on_apple_silicon() -> bool:
    return platform.system() == "Darwin" and platform.machine() == "arm64"


@cache
def _tf():
    # C++ start-up chatter (oneDNN notices, "no CUDA driver") would bury a real error in the
    # stderr tail a failed run keeps; warnings and errors still come through.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    try:
        import tensorflow as tf
    except Exception as e:  # the Metal plugin is loaded by `import tensorflow` itself
        raise TensorFlowUnusable(_import_failure(e)) from e
    return tf


def _import_failure(exc: Exception) -> str:
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    tf_version = _distribution_version("tensorflow", "tensorflow-macos", "tensorflow-cpu")
    metal = _distribution_version("tensorflow-metal")
    if metal and ("metal" in text.lower() or "symbol not found" in text.lower()):
        return (f"TensorFlow {tf_version} cannot load its Metal plugin tensorflow-metal {metal} "
                f"({text[:160]}); the pair that loads together is {METAL_PAIR}: {INSTALL}, or "
                "pip uninstall tensorflow-metal to use TensorFlow on the CPU.")
    return f"TensorFlow {tf_version} cannot be imported: {text[:200]}."


def metal_plugin() -> str:
    """'loaded', or why the Metal plugin is not in use, in one sentence."""
    metal = _distribution_version("tensorflow-metal")
    if metal is None:
        if _on_apple_silicon():
            return (f"The Metal plugin (tensorflow-metal) is not installed, so TensorFlow has no "
                    f"GPU here; {INSTALL} installs {METAL_PAIR}.")
        return "The Metal plugin is for Apple Silicon Macs; not used here."
    tf = _tf()  # a plugin that does not match TensorFlow fails here, before any GPU is listed
    if tf.config.list_physical_devices("GPU"):
        return "loaded"
    return (f"tensorflow-metal {metal} loaded but lists no GPU (it needs macOS 12 or later on "
            "an Apple Silicon Mac).")


def software() -> dict:
    tf = _tf()
    info = {"tensorflow": tf.__version__, "metal_plugin": metal_plugin()}
    metal = _distribution_version("tensorflow-metal")
    if metal:
        info["tensorflow_metal"] = metal
    build = tf.sysconfig.get_build_info()
    if build.get("is_cuda_build"):
        info["cuda"] = build.get("cuda_version")
        info["cudnn"] = build.get("cudnn_version")
    return info


def _gpus():
    return _tf().config.list_physical_devices("GPU")


def _gpu_id(index: int, count: int) -> str:
    # One GPU (every Mac) is just "gpu", like MLX's; several are told apart as "gpu:N".
    return "gpu" if count == 1 else f"gpu:{index}"


def _gpu_name(tf, gpu) -> str:
    try:
        details = tf.config.experimental.get_device_details(gpu)
    except Exception:  # pluggable devices may not implement device details
        details = {}
    name = details.get("device_name")
    if name and name.upper() != "METAL":
        return name
    return apple_gpu_name() if _on_apple_silicon() else (name or "GPU")


def devices() -> list[DeviceInfo]:
    try:
        tf = _tf()
    except TensorFlowUnusable as e:
        return [DeviceInfo(NAME, "cpu", cpu_name(), "cpu", usable=False, reason=str(e))]
    out = [DeviceInfo(NAME, "cpu", cpu_name(), "cpu", host_memory())]
    gpus = _gpus()
    from siliconbench.core.machine import probe
    for i, gpu in enumerate(gpus):
        # Apple GPUs share the host's memory; for one NVIDIA GPU the machine probe has NVML's.
        memory = host_memory() if _on_apple_silicon() else \
            (probe().gpu_memory_bytes if len(gpus) == 1 else None)
        out.append(DeviceInfo(NAME, _gpu_id(i, len(gpus)), _gpu_name(tf, gpu), "gpu", memory))
    if not gpus:
        plugin = metal_plugin()
        if _on_apple_silicon():
            out.append(DeviceInfo(NAME, "gpu", apple_gpu_name(), "gpu", usable=False,
                                  reason=plugin))
        elif tf.sysconfig.get_build_info().get("is_cuda_build"):
            out.append(DeviceInfo(NAME, "gpu", "NVIDIA GPU", "gpu", usable=False,
                                  reason="No NVIDIA GPU or driver was found."))
    return out


def resolve(device_id: str) -> Device:
    """'cpu', 'gpu', 'gpu:N' -> Device, or UnknownDevice with the valid ids. Turns soft device
    placement off: an op the device cannot run must fail, never run silently on the CPU."""
    try:
        tf = _tf()
    except TensorFlowUnusable as e:
        raise UnknownDevice(str(e)) from None
    listed = {d.id: d for d in devices()}
    count = len(_gpus())
    wanted = device_id.strip().lower()
    if count == 1 and wanted == "gpu:0":
        wanted = "gpu"
    elif count > 1 and wanted == "gpu":
        wanted = "gpu:0"
    device = listed.get(wanted)
    if device is None or not device.usable:
        if device is not None:
            raise UnknownDevice(f"TensorFlow device {device_id!r} is not usable here: "
                                f"{device.reason}")
        ids = [i for i, d in listed.items() if d.usable]
        raise UnknownDevice(f"TensorFlow has no device {device_id!r} here; "
                            f"choose one of {', '.join(ids)}.")
    tf.config.set_soft_device_placement(False)
    if device.kind == "cpu":
        return Device("cpu", 0, "/CPU:0")
    index = int(wanted.partition(":")[2] or 0)
    for gpu in _gpus():
        try:
            # Otherwise TensorFlow takes all of a CUDA GPU's memory at the first op, and the
            # free memory a workload sizes its inputs by would read as none.
            tf.config.experimental.set_memory_growth(gpu, True)
        except (ValueError, RuntimeError):
            pass  # already initialised, or a device without the setting
    return Device("gpu", index, f"/GPU:{index}")


def device_name(dev: Device) -> str:
    if dev.type == "cpu":
        return cpu_name()
    tf = _tf()
    return _gpu_name(tf, _gpus()[dev.index])


def fetch(result) -> None:
    """Wait for `result` by copying one element of it to the host: TensorFlow's only
    synchronisation. A device runs its ops in order, so every op queued before is done too."""
    tf = _tf()
    tf.reshape(result, [-1])[0].numpy()


def synchronizer(dev: Device) -> Callable[[], None]:
    """Waits for all work queued on the device by fetching a fresh one-element result of it."""
    tf = _tf()

    def sync() -> None:
        with tf.device(dev.native):
            fetch(tf.zeros([1]) + 1)
    return sync


def free_memory(dev: Device) -> int | None:
    import psutil
    available = psutil.virtual_memory().available
    if dev.type == "cpu" or _on_apple_silicon():
        return available  # Apple GPUs allocate from the host's memory
    from siliconbench.core.machine import probe
    total = probe().gpu_memory_bytes
    if total is None or len(_gpus()) != 1:
        return None
    return total - _memory_info(dev).get("current", 0)


def _memory_info(dev: Device) -> dict:
    try:
        return _tf().config.experimental.get_memory_info(dev.native.lstrip("/"))
    except (ValueError, RuntimeError):  # devices without allocator statistics
        return {}


def reset_peak_memory(dev: Device) -> None:
    try:
        _tf().config.experimental.reset_memory_stats(dev.native.lstrip("/"))
    except (ValueError, RuntimeError):
        pass


def peak_memory(dev: Device) -> int | None:
    """Peak bytes TensorFlow's allocator held on the device since the last reset, or None
    where the device keeps no statistics (the CPU: see the run's telemetry)."""
    return None if dev.type == "cpu" else _memory_info(dev).get("peak")


def empty_cache(dev: Device) -> None:
    """TensorFlow keeps its allocator's memory until the process ends, which a run's does."""


def caveat(dev) -> None:
    """What a run on `dev` must say about its numbers (see the MLX adapter): nothing here."""
    return None
