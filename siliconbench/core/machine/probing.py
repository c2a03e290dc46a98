"""This machine, described once per process by its OS's probe, with the installed framework
versions (read from package metadata: nothing is imported)."""

from __future__ import annotations

import functools
import importlib.metadata
import os
import platform

from siliconbench.core.machine.commands import attempt
from siliconbench.core.machine.linux import probe_linux, probe_other
from siliconbench.core.machine.mac import probe_macos
from siliconbench.core.machine.record import MachineInfo

# Distribution names to look for, per framework; the first one installed wins.
FRAMEWORK_DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "torch": ("torch",),
    "torchvision": ("torchvision",),
    "tensorflow": ("tensorflow", "tensorflow-macos", "tensorflow-cpu"),
    "tensorflow-metal": ("tensorflow-metal",),
    "mlx": ("mlx",),
    "transformers": ("transformers",),
    "keras": ("keras",),
}


def framework_versions() -> dict[str, str]:
    """Installed versions of the ML frameworks, read from package metadata (nothing is imported)."""
    versions: dict[str, str] = {}
    for framework, distributions in FRAMEWORK_DISTRIBUTIONS.items():
        for distribution in distributions:
            try:
                versions[framework] = importlib.metadata.version(distribution)
                break
            except importlib.metadata.PackageNotFoundError:
                continue
    return versions


def probe() -> MachineInfo:
    """Describe this machine.

    Probed once per process, as hardware does not change while it runs; each call returns its own
    copy, so a caller may change it. power_status() re-reads the power source.
    """
    return MachineInfo.from_dict(_probe_once().to_dict())


@functools.cache
def _probe_once() -> MachineInfo:
    system = platform.system()
    if system == "Darwin":
        info = probe_macos()
    elif system == "Linux":
        info = probe_linux()
    else:
        info = probe_other()
    info.arch = platform.machine() or None
    if info.cpu_cores is None:
        info.cpu_cores = os.cpu_count()
    info.python_version = platform.python_version()
    info.frameworks = attempt(framework_versions) or {}
    return info
