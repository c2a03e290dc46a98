"""Framework adapters: is a framework installed and usable, which devices it sees, how to
synchronise one. Every framework import lives in these adapters (and in workloads), lazily."""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import asdict, dataclass


@dataclass
class DeviceInfo:
    framework: str
    id: str                      # what --device takes: cpu, mps, cuda:0, ...
    name: str
    kind: str                    # cpu | gpu
    memory_bytes: int | None = None
    usable: bool = True
    reason: str | None = None    # why not usable, and how to fix it

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class FrameworkInfo:
    name: str                    # the --framework value
    title: str
    module: str                  # the import name
    adapter: str                 # core.frameworks.<adapter module>
    extra: str                   # pip extra that installs it

    def installed(self) -> bool:
        """Cheap: finds the package without importing it."""
        return importlib.util.find_spec(self.module) is not None

    def missing_reason(self) -> str:
        return (f"{self.title} is not installed; add it with "
                f"pip install 'siliconbench[{self.extra}]'.")

    def load(self):
        """The adapter module (imports the framework on first use of its functions)."""
        return importlib.import_module(self.adapter)


FRAMEWORKS: dict[str, FrameworkInfo] = {
    "torch": FrameworkInfo("torch", "PyTorch", "torch", "core.frameworks.torch_adapter", "torch"),
}


class UnknownFramework(ValueError):
    pass


def framework(name: str) -> FrameworkInfo:
    try:
        return FRAMEWORKS[name]
    except KeyError:
        raise UnknownFramework(f"Unknown framework {name!r}; choose one of "
                               f"{', '.join(FRAMEWORKS)}.") from None


class UnknownDevice(ValueError):
    """The message is one sentence for the user."""
