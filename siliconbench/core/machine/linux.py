"""This Linux machine, from /proc, `lscpu`, /etc/os-release and NVML (its first NVIDIA GPU);
each parser a pure function of one file's or command's text, tested on tests/data/machine.
Another OS (Windows, BSD) is described from what the standard library knows."""

from __future__ import annotations

import os
import platform
import re
from typing import Any

from siliconbench.core.machine import commands
from siliconbench.core.machine.commands import attempt
from siliconbench.core.machine.power import apply_power, power_status_linux
from siliconbench.core.machine.record import MachineInfo, host_hash, to_int


def parse_cpuinfo(text: str) -> dict[str, Any]:
    """Parse /proc/cpuinfo: the CPU model and the number of logical CPUs."""
    model = None
    processors = 0
    for line in text.splitlines():
        key, separator, value = line.partition(":")
        key = key.strip()
        if not separator:
            continue
        if key == "processor":
            processors += 1
        elif key == "model name" and model is None:
            model = value.strip() or None
    return {"cpu_model": model, "cpu_cores": processors or None}


def parse_meminfo(text: str) -> int | None:
    """Parse /proc/meminfo: total memory in bytes."""
    match = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(match.group(1)) * 1024 if match else None


def parse_lscpu(text: str) -> dict[str, Any]:
    """Parse `lscpu`: CPU model, logical CPUs and physical cores."""
    raw: dict[str, str] = {}
    for line in text.splitlines():
        key, separator, value = line.partition(":")
        # Newer lscpu indents sub-items ("  Model name:"); the first value of a key is the CPU's.
        key = key.strip()
        if separator and key not in raw:
            raw[key] = value.strip()
    cores_per_socket = to_int(raw.get("Core(s) per socket"))
    sockets = to_int(raw.get("Socket(s)"))
    physical = cores_per_socket * sockets if cores_per_socket and sockets else None
    return {
        "cpu_model": raw.get("Model name") or None,
        "cpu_cores": to_int(raw.get("CPU(s)")),
        "cpu_physical_cores": physical,
    }


def parse_os_release(text: str) -> str | None:
    """Parse /etc/os-release: the distribution as people name it ('Debian GNU/Linux 12')."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, separator, value = line.strip().partition("=")
        if separator and not key.startswith("#"):
            values[key] = value.strip().strip("\"'")
    if values.get("PRETTY_NAME"):
        return values["PRETTY_NAME"]
    name = " ".join(v for v in (values.get("NAME"), values.get("VERSION_ID")) if v)
    return name or None


def nvidia_gpu() -> dict[str, Any] | None:
    """Name and memory of the first NVIDIA GPU through NVML; None without pynvml or a driver."""
    try:
        import pynvml  # nvidia-ml-py: optional, and only loads the driver library
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # pynvml raises its own NVMLError: no driver, no GPU
        return None
    try:
        if pynvml.nvmlDeviceGetCount() < 1:
            return None
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        name = pynvml.nvmlDeviceGetName(handle)
        if isinstance(name, bytes):  # older nvidia-ml-py
            name = name.decode("utf-8", errors="replace")
        memory = pynvml.nvmlDeviceGetMemoryInfo(handle).total
        uuid = attempt(lambda: pynvml.nvmlDeviceGetUUID(handle))
        if isinstance(uuid, bytes):
            uuid = uuid.decode("ascii", errors="replace")
        # The GPU's UUID beside the host's id, kept only as its one-way hash.
        found = {"gpu_name": name, "gpu_memory_bytes": int(memory)}
        if host_hash(uuid):
            found["gpu_id"] = host_hash(uuid)
        return found
    finally:
        attempt(pynvml.nvmlShutdown)


MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")


def machine_id_hash() -> str | None:
    """The one-way hash (host_hash) of this host's /etc/machine-id (systemd's, made once at
    install of the OS: the same across reinstalls of SiliconBench); None where there is none."""
    for name in MACHINE_ID_FILES:
        found = attempt(lambda name=name: host_hash(commands.read_text(name)))
        if found:
            return found
    return None


def probe_linux() -> MachineInfo:
    """Describe this Linux machine from /proc, lscpu, /etc/os-release, /sys and NVML."""
    info = MachineInfo(os_name="Linux")
    _fill(info, attempt(lambda: parse_cpuinfo(commands.read_text("/proc/cpuinfo"))))
    _fill(info, attempt(lambda: parse_lscpu(commands.run_command(["lscpu"]))))
    info.memory_bytes = attempt(lambda: parse_meminfo(commands.read_text("/proc/meminfo")))
    info.os_version = attempt(
        lambda: parse_os_release(commands.read_text("/etc/os-release"))
    ) or (platform.release() or None)
    _fill(info, attempt(nvidia_gpu))
    info.host_id = machine_id_hash()
    apply_power(info, power_status_linux())
    return info


def probe_other() -> MachineInfo:
    """Describe a machine of another OS (Windows, BSD) from what the standard library knows."""
    return MachineInfo(
        os_name=platform.system() or None,
        os_version=platform.release() or None,
        cpu_model=platform.processor() or None,
        cpu_cores=os.cpu_count(),
    )


def _fill(info: MachineInfo, values: dict[str, Any] | None) -> None:
    """Set the fields of info that are still unknown from values; earlier sources win."""
    for name, value in (values or {}).items():
        if value is not None and getattr(info, name) in (None, "unknown"):
            setattr(info, name, value)
