"""The frameworks: which ones SiliconBench knows (FrameworkInfo), whether one is installed and
usable, the devices they see, and each framework's part of a workload. Each framework is one
package here, siliconbench/core/frameworks/<name>/: adapter.py (the Adapter below: devices,
sync, memory, software, caveat), ops.py (array ops), models.py and one module per workload it
supports. Every framework import lives in those packages, lazily, and no framework package
imports another."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import platform
import re
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from siliconbench.core.params import ParamError


@dataclass
class DeviceInfo:
    """A device a framework can run on (or cannot, and why)."""
    framework: str
    id: str                      # what --device takes: cpu, mps, cuda:0, ...
    name: str
    kind: str                    # cpu | gpu
    memory_bytes: int | None = None
    usable: bool = True
    reason: str | None = None    # why not usable, and how to fix it
    note: str | None = None      # a limit of a usable device, shown beside "ready"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class FrameworkInfo:
    """A framework SiliconBench can drive: its names, its adapter, the pip extra that installs
    it and the workloads it runs. Each framework package declares its own as FRAMEWORK in its
    __init__.py; the registry below finds them."""
    name: str                    # the --framework value
    title: str
    module: str                  # the import name
    adapter: str                 # the adapter module, siliconbench.core.frameworks.<name>.adapter
    extra: str                   # pip extra that installs it
    install_note: str = ""       # what installing it takes, when more than a download
    workloads: tuple[str, ...] = ()   # the workloads it runs (its part: <workload>.py or ops)
    rank: int = 100              # where lists show it, lowest first
    first_choice: int | None = None   # a first launch ticks a device of the lowest; None: never
    # The models its train and memory parts build, where fewer than the workloads offer:
    # refused before a run starts (child.prepare), not after the estimate has asked.
    train_models: tuple[str, ...] | None = None

    def installed(self) -> bool:
        """Cheap: finds the package without importing it."""
        return importlib.util.find_spec(self.module) is not None

    def distribution(self) -> tuple[str, str] | None:
        """The installed package that provides it and its version, from package metadata
        (nothing is imported); None where it is not installed. The distribution named as its
        import name, else the first its pip extra installs (llama_cpp's: llama-cpp-python)."""
        from importlib import metadata
        names = [self.module]
        try:
            names += [re.match(r"[\w.-]+", r).group() for r in metadata.requires("siliconbench")
                      or () if re.search(rf"extra == ['\"]{re.escape(self.extra)}['\"]", r)][:1]
        except metadata.PackageNotFoundError:   # the Mac app has no metadata of its own
            pass
        for name in names:
            try:
                return name, metadata.version(name)
            except metadata.PackageNotFoundError:
                continue
        return None

    def missing_reason(self) -> str:
        from siliconbench.core.bundle import in_app_bundle
        if in_app_bundle():  # a signed bundle cannot take pip installs; a venv next to it can
            return (f"{self.title} is not in the Mac app; to measure it, install SiliconBench "
                    f"with pip install 'siliconbench[{self.extra}]' and run siliconbench "
                    "(its runs land in the same results store as the app's).")
        return (f"{self.title} is not installed; add it with "
                f"pip install 'siliconbench[{self.extra}]'{self.install_note}.")

    def load(self):
        """The adapter module (imports the framework on first use of its functions)."""
        return importlib.import_module(self.adapter)


def _discover() -> dict[str, FrameworkInfo]:
    """Every framework package here (siliconbench/core/frameworks/<name>/), by its FRAMEWORK:
    adding a framework is adding its folder (and its extra in pyproject.toml). Their
    __init__.py modules import no framework, so finding them costs milliseconds."""
    import pkgutil
    found = [importlib.import_module(f"{__name__}.{m.name}").FRAMEWORK
             for m in pkgutil.iter_modules(__path__) if m.ispkg]
    return {f.name: f for f in sorted(found, key=lambda f: (f.rank, f.name))}


FRAMEWORKS: dict[str, FrameworkInfo] = _discover()


def runs_on(workload) -> tuple[str, ...]:
    """The frameworks a workload (siliconbench.core.catalogue.Workload) runs on: those whose
    package declares it, in the registry's order; a test workload names its own."""
    return workload.frameworks or tuple(name for name, fw in FRAMEWORKS.items()
                                        if workload.name in fw.workloads)


@runtime_checkable
class Adapter(Protocol):
    """What a framework's adapter module (FrameworkInfo.adapter) provides: the worker, the run
    context and the workloads call each of these (tests/frameworks/test_framework_packages.py
    holds every adapter to it). `dev` is what resolve returned."""

    def devices(self) -> list[DeviceInfo]: ...          # usable or not, and why

    def resolve(self, device_id: str) -> Any: ...       # UnknownDevice: one sentence

    def device_name(self, dev) -> str: ...

    def software(self) -> dict: ...                     # versions every run records

    def caveat(self, dev) -> str | None: ...            # a sentence every run on dev carries

    def synchronizer(self, dev) -> Callable[[], None]: ...   # waits for the device's work

    def free_memory(self, dev) -> int | None: ...

    def reset_peak_memory(self, dev) -> None: ...

    def peak_memory(self, dev) -> int | None: ...

    def empty_cache(self, dev) -> None: ...


class UnknownFramework(ValueError):
    pass


def framework(name: str) -> FrameworkInfo:
    try:
        return FRAMEWORKS[name]
    except KeyError:
        raise UnknownFramework(f"Unknown framework {name!r}; choose one of "
                               f"{', '.join(FRAMEWORKS)}.") from None


class Unsupported(ParamError):
    """The framework has no part for a workload; a usage error, in one sentence."""


def implementation(framework_name: str, workload: str):
    """The framework's part of `workload`: the module siliconbench.core.frameworks.<framework>.<workload>
    (ops for the array operations GEMM and bandwidth share). The module imports its framework
    lazily, so finding it is cheap."""
    fw = framework(framework_name)
    name = f"siliconbench.core.frameworks.{fw.name}.{workload}"
    if importlib.util.find_spec(name) is None:
        raise Unsupported(f"The {workload} workload is not available on {fw.title}.")
    return importlib.import_module(name)


class UnknownDevice(ValueError):
    """The message is one sentence for the user."""


@dataclass(frozen=True)
class Device:
    """A resolved TensorFlow or MLX device. Their own handles ("/GPU:0", mx.gpu) have no `type`
    string, which the worker and the workloads branch on as they do on a torch.device."""
    type: str                    # cpu | gpu
    index: int = 0
    native: Any = None           # the framework's own handle


def cpu_name() -> str:
    from siliconbench.core.machine import probe
    m = probe()
    return m.chip or m.cpu_model or platform.processor() or "CPU"


def host_memory() -> int | None:
    import psutil
    return psutil.virtual_memory().total


def apple_gpu_name() -> str:
    from siliconbench.core.machine import probe
    m = probe()
    chip = m.chip or "Apple"
    return f"{chip} GPU ({m.gpu_cores}-core)" if m.gpu_cores else f"{chip} GPU"


class SecondFramework(ImportError):
    """Something tried to load a framework into a run's process that already has another.
    An ImportError, so libraries that probe for optional frameworks take it as "absent"."""


def _mixing(owner: FrameworkInfo, other: FrameworkInfo) -> str:
    return (f"{other.title} cannot be loaded into this process, which runs {owner.title}: "
            "SiliconBench keeps each framework in a process of its own.")


class _Refused(importlib.abc.Loader):
    def __init__(self, message: str) -> None:
        self.message = message

    def create_module(self, spec):
        raise SecondFramework(self.message)

    def exec_module(self, module) -> None:
        raise SecondFramework(self.message)


class _OneFramework(importlib.abc.MetaPathFinder):
    """Finds the other frameworks with a loader that refuses them. Finding must still work:
    libraries list optional packages with importlib.util.find_spec (torch._dynamo does for
    tensorflow), and a finder that raised would break them; only importing is refused."""

    def __init__(self, owner: FrameworkInfo) -> None:
        self.owner = owner
        self.refused = {fw.module: fw for fw in FRAMEWORKS.values() if fw.name != owner.name}

    def find_spec(self, name, path=None, target=None):
        other = self.refused.get(name.partition(".")[0])
        if other is None:
            return None  # not ours to refuse: the next finder looks for it
        return importlib.machinery.ModuleSpec(name, _Refused(_mixing(self.owner, other)))


def isolate(name: str) -> None:
    """Make this process `name`'s alone: refuse to import any other framework from now on.
    TensorFlow and PyTorch in one process fight over threads, allocators and CUDA contexts,
    so the worker calls this before it loads the framework a run or a device listing needs."""
    owner = framework(name)
    for fw in FRAMEWORKS.values():
        if fw.name != owner.name and fw.module in sys.modules:
            raise SecondFramework(_mixing(fw, owner))
    if not any(isinstance(f, _OneFramework) for f in sys.meta_path):
        sys.meta_path.insert(0, _OneFramework(owner))
