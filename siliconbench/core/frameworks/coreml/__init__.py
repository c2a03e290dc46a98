"""Core ML: Apple's inference framework, driven through coremltools. Its devices are Core ML's
compute units (CPU only, CPU + GPU, CPU + Neural Engine, All), the only way to reach the
Neural Engine. It runs the infer workload only: the model is converted from torchvision in a
child process (convert.py), then predicted through coremltools (infer.py, macOS only).

Core ML runs on macOS alone, so its registry entry (FRAMEWORK) counts it as installed only on a
Mac with macOS 13 or later (CPU + Neural Engine needs 13), and says so in one sentence
elsewhere: the device list shows that sentence and a run is refused with it. Nothing here
imports coremltools."""

from __future__ import annotations

import platform

from siliconbench.core.frameworks import FrameworkInfo

MIN_MACOS = (13, 0)
MACOS_ONLY = ("Core ML runs on macOS 13 or later only (it is Apple's framework), so its "
              "compute units cannot be measured on this system.")


def macos_version(release: str | None = None) -> tuple[int, ...]:
    """macOS's version as numbers ((14, 5) for '14.5'); () on another system."""
    if release is None:
        if platform.system() != "Darwin":
            return ()
        release = platform.mac_ver()[0]
    try:
        return tuple(int(part) for part in release.split("."))
    except ValueError:
        return ()


def runs_here(release: str | None = None) -> bool:
    version = macos_version(release)
    return bool(version) and version >= MIN_MACOS


class CoreMLInfo(FrameworkInfo):
    """A framework entry that is "installed" only where Core ML can run."""

    def installed(self) -> bool:
        return runs_here() and super().installed()

    def missing_reason(self) -> str:
        return super().missing_reason() if runs_here() else MACOS_ONLY


FRAMEWORK = CoreMLInfo("coreml", "Core ML", "coremltools",
                       "siliconbench.core.frameworks.coreml.adapter", "coreml",
                       workloads=("infer",), rank=4)
