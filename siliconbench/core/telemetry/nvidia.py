"""The NVIDIA source: the run's GPU through NVML (nvidia-ml-py), and which NVML index a device id
names under CUDA_VISIBLE_DEVICES."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import ClassVar

from siliconbench.core.telemetry.sources import Source, Values


def nvml_index(device: str, visible: str | None) -> int:
    """NVML index of a device id ('cuda', 'cuda:1', TensorFlow's 'gpu:1') under
    CUDA_VISIBLE_DEVICES: NVML numbers every GPU, CUDA renumbers the visible ones from 0."""
    _, _, number = device.partition(":")
    index = int(number) if number.isdigit() else 0
    ids = [v.strip() for v in (visible or "").split(",") if v.strip()]
    if ids and all(v.isdigit() for v in ids) and index < len(ids):
        return int(ids[index])
    return index


class NvmlSource(Source):
    """Board power, the energy counter, temperature, SM clock and memory of the run's NVIDIA
    GPU, through nvidia-ml-py (no root needed)."""

    name = "nvml"
    power_labels: ClassVar[dict[str, str]] = {"gpu_power_w": "board (NVML)"}

    def __init__(self, device: str) -> None:
        super().__init__()
        self.index = nvml_index(device, os.environ.get("CUDA_VISIBLE_DEVICES"))
        self._energy0: float | None = None
        self._broken: set[str] = set()

    def open(self, emit: Callable[[Values], None]) -> None:
        import pynvml
        self._nvml = pynvml
        pynvml.nvmlInit()
        self._handle = pynvml.nvmlDeviceGetHandleByIndex(self.index)

    def poll(self) -> Values:
        nv, h = self._nvml, self._handle
        readers: dict[str, tuple[str, Callable[[], float]]] = {
            "gpu_power_w": ("W", lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000),
            "gpu_energy_j": ("J", lambda: nv.nvmlDeviceGetTotalEnergyConsumption(h) / 1000),
            "gpu_temperature_c": ("°C", lambda: nv.nvmlDeviceGetTemperature(
                h, nv.NVML_TEMPERATURE_GPU)),
            "gpu_sm_clock_mhz": ("MHz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
            "gpu_memory_used_bytes": ("bytes", lambda: nv.nvmlDeviceGetMemoryInfo(h).used),
            # Why the clock is held where it is (a bit mask: power cap, thermal, ...): what
            # sustained mode names beside a drop.
            "gpu_throttle_reasons": ("mask", lambda: (
                getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
                or nv.nvmlDeviceGetCurrentClocksThrottleReasons)(h)),
        }
        out: Values = {}
        for name, (unit, read) in readers.items():
            if name in self._broken:
                continue
            try:
                value = float(read())
            except Exception as e:  # NVMLError_NotSupported on older GPUs: drop that series
                self._broken.add(name)
                self.notes.append(f"{name} unavailable from NVML: {e}")
                continue
            if name == "gpu_energy_j":   # the counter runs since the driver loaded
                self._energy0 = value if self._energy0 is None else self._energy0
                value -= self._energy0
            out[name] = (unit, value)
        return out

    def close(self) -> None:
        with contextlib.suppress(Exception):   # a driver that went away meanwhile
            self._nvml.nvmlShutdown()
