"""Who this machine is: chip or CPU, Mac model, GPU, memory, OS, power source, framework versions.
Probes per OS; each parser is a pure function of one command's text, tested on recorded outputs."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from siliconbench import resources
from siliconbench.core.numbers import size

COMMAND_TIMEOUT_S = 5.0

# Apple silicon has two levels today (M1-M4: Performance and Efficiency; M5 Pro/Max: Super and
# Performance); two more are asked for so that a further level is read, not dropped.
MAX_PERF_LEVELS = 4

# Keys every Mac knows come first: should a sysctl stop at a key it does not know rather than
# skip it (not seen in any capture), the keys it has printed by then are still read.
SYSCTL_KEYS = (
    "hw.memsize",
    "hw.ncpu",
    "hw.physicalcpu",
    "machdep.cpu.brand_string",
    "hw.model",
    # 1 when this Python is an x86_64 build running under Rosetta, which runs ML work far
    # slower than native and without the Apple GPU; results must say so.
    "sysctl.proc_translated",
    "hw.nperflevels",
    *(f"hw.perflevel{n}.{key}" for n in range(MAX_PERF_LEVELS) for key in ("physicalcpu", "name")),
)

# Where a fact is stated by more than one command, the most precise first: sysctl counts memory
# in bytes (system_profiler in rounded GB) and names the CPU core tiers as the Mac does
# (system_profiler's "proc 18:6:0:12" only numbers them); system_profiler's chip_type names
# the chip where sysctl's brand string may be the generic "Apple processor". Facts not listed
# come from whichever command states them.
MAC_SOURCE_ORDER: dict[str, tuple[str, ...]] = {
    "chip": ("system_profiler", "sysctl"),
}
DEFAULT_MAC_SOURCE_ORDER = ("sysctl", "system_profiler")

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

POWER_SUPPLY_DIR = Path("/sys/class/power_supply")

_GIB = 1024**3
_SIZE_UNITS = {"KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}


@dataclass
class MachineInfo:
    """A description of one machine, as recorded with every run."""

    os_name: str | None = None
    os_version: str | None = None
    arch: str | None = None
    cpu_model: str | None = None
    chip: str | None = None
    model_identifier: str | None = None
    model_name: str | None = None
    cpu_cores: int | None = None
    cpu_physical_cores: int | None = None
    # The CPU's core tiers as the Mac names them, fastest first: [{"name": "super", "cores": 6},
    # {"name": "performance", "cores": 12}]; one tier with name None where the machine has one
    # kind of core (Intel Macs, virtual Macs). None where the tiers are unknown (Linux).
    cpu_tiers: list[dict[str, Any]] | None = None
    gpu_name: str | None = None
    gpu_cores: int | None = None
    gpu_memory_bytes: int | None = None
    memory_bytes: int | None = None
    power_source: str = "unknown"
    battery_percent: int | None = None
    low_power_mode: bool | None = None
    rosetta: bool | None = None
    python_version: str | None = None
    frameworks: dict[str, str] = field(default_factory=dict)
    # Which command or file each probed fact came from: {"cpu_tiers": "sysctl", ...}.
    sources: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MachineInfo:
        # Records written by older or newer versions may lack fields or carry unknown ones.
        known = {f.name for f in dataclasses.fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        for name in ("frameworks", "sources"):
            if name in values:
                values[name] = dict(values[name] or {})
        if values.get("cpu_tiers") is None:
            values["cpu_tiers"] = _tiers_of_old_record(data)
        if values.get("power_source") is None:
            values.pop("power_source", None)
        return cls(**values)

    def summary(self) -> str:
        """One human line, e.g. 'Mac Studio (2023) · Apple M2 Ultra · 76-core GPU · ...'."""
        parts: list[str] = []
        if self.model_name:
            parts.append(self.model_name)
        processor = self.chip or self.cpu_model
        if processor:
            parts.append(processor)
        cpu = self.cpu_summary()
        if cpu:
            parts.append(cpu)
        if self.gpu_cores:
            parts.append(f"{self.gpu_cores}-core GPU")
        elif self.cpu_cores and not cpu:
            parts.append(f"{self.cpu_cores} cores")
        if self.memory_bytes:
            parts.append(size(self.memory_bytes))
        operating_system = self._operating_system()
        if operating_system:
            parts.append(operating_system)
        if self.gpu_name and self.gpu_name != processor:
            parts.append(self.gpu_name)
        if self.rosetta:
            parts.append("under Rosetta")
        if self.power_source == "ac":
            parts.append("AC power")
        elif self.power_source == "battery":
            battery = "battery"
            if self.battery_percent is not None:
                battery += f" {self.battery_percent}%"
            parts.append(battery)
        if self.low_power_mode:
            parts.append("Low Power Mode")
        return " · ".join(parts) if parts else "unknown machine"

    def cpu_summary(self) -> str | None:
        """'18-core CPU: 6 super + 12 performance', '3-core CPU', or None without tiers."""
        return describe_cpu_tiers(self.cpu_tiers)

    def key(self) -> str:
        """A short stable id of the hardware, to group runs made on the same machine."""
        identity = [
            self.model_identifier or _squash(self.cpu_model),
            self.chip,
            _squash(self.gpu_name),
            self.gpu_cores,
            # Whole GiB: Linux's MemTotal moves by a few MB between kernels.
            round(self.memory_bytes / _GIB) if self.memory_bytes else None,
        ]
        if self.cpu_tiers:
            # Binned chips of one name differ in their cores ("Apple M3 Max", 14 or 16 cores).
            identity.append([[tier.get("name"), tier.get("cores")] for tier in self.cpu_tiers])
        digest = hashlib.sha256(json.dumps(identity).encode("utf-8")).hexdigest()
        return digest[:12]

    def _operating_system(self) -> str | None:
        if not self.os_version:
            return self.os_name
        # A distribution name ("Debian GNU/Linux 12 (bookworm)") says enough on its own; a bare
        # version number ("14.5", a kernel release) needs the OS name in front.
        if self.os_name and self.os_version[:1].isdigit():
            return f"{self.os_name} {self.os_version}"
        return self.os_version


def virtual_mac(machine: dict[str, Any]) -> bool:
    """Whether a record's machine is a virtual Mac (CI runners, UTM, Tart): it has only the
    cores and memory its host lends it."""
    return str(machine.get("model_identifier") or "").startswith("VirtualMac") or str(
        machine.get("chip") or ""
    ).endswith("(Virtual)")


def other_cpu_of_same_chip(a: dict[str, Any], b: dict[str, Any]) -> tuple[str, str] | None:
    """The two CPUs, where two records' machines have one chip name but other core tiers
    (binned chips: an M3 Max has 14 or 16 cores); None otherwise."""
    first, second = MachineInfo.from_dict(a), MachineInfo.from_dict(b)
    cpus = first.cpu_summary(), second.cpu_summary()
    if first.chip and first.chip == second.chip and all(cpus) and cpus[0] != cpus[1]:
        return cpus[0], cpus[1]
    return None


@dataclass
class PowerStatus:
    """Where the power comes from right now; it changes while the app runs, so it is re-read."""

    power_source: str = "unknown"  # "ac", "battery" or "unknown"
    battery_percent: int | None = None
    low_power_mode: bool | None = None


# ---------------------------------------------------------------------------------------------
# Parsers: pure functions of one command's output or one file's text.


def parse_sysctl(text: str) -> dict[str, Any]:
    """Parse macOS `sysctl KEY...` output ("key: value" lines) into MachineInfo fields.

    Reads any such listing, `sysctl hw` and `sysctl -a` included.
    """
    raw: dict[str, str] = {}
    for line in text.splitlines():
        key, separator, value = line.partition(":")
        if separator:
            raw.setdefault(key.strip(), value.strip())
    translated = _to_int(raw.get("sysctl.proc_translated"))
    brand = raw.get("machdep.cpu.brand_string") or None
    return {
        "memory_bytes": _to_int(raw.get("hw.memsize")),
        "cpu_cores": _to_int(raw.get("hw.ncpu")),
        "cpu_physical_cores": _to_int(raw.get("hw.physicalcpu")),
        "cpu_tiers": _tiers_from_perflevels(raw),
        "cpu_model": brand,
        # The first macOS for Apple silicon (11.0) called every chip "Apple processor".
        "chip": brand if brand and brand.startswith("Apple ") and brand != "Apple processor"
        else None,
        "model_identifier": raw.get("hw.model") or None,
        "rosetta": None if translated is None else translated == 1,
    }


def parse_system_profiler(json_text: str | dict[str, Any]) -> dict[str, Any]:
    """Parse `system_profiler -json SPHardwareDataType SPDisplaysDataType` into MachineInfo fields.

    model_name is system_profiler's short machine_name ("MacBook Pro"); the probe replaces it by
    the full name from siliconbench/resources/mac_models.json when it knows the identifier.
    """
    data = json.loads(json_text) if isinstance(json_text, str) else json_text
    hardware = (data.get("SPHardwareDataType") or [{}])[0]
    chip = hardware.get("chip_type") or None
    cores, tiers = _parse_number_processors(hardware.get("number_processors"), chip)
    gpu = _pick_gpu(data.get("SPDisplaysDataType") or [])
    return {
        "chip": chip,
        "model_identifier": hardware.get("machine_model") or None,
        "model_name": hardware.get("machine_name") or None,
        "memory_bytes": _parse_size(hardware.get("physical_memory")),
        # "Total Number of Cores": physical cores (an 8-core Xeon with Hyper-Threading says 8).
        "cpu_physical_cores": cores,
        "cpu_tiers": tiers,
        "gpu_name": (gpu.get("sppci_model") or gpu.get("_name")) if gpu else None,
        "gpu_cores": _to_int(gpu.get("sppci_cores")) if gpu else None,
    }


def parse_pmset_batt(text: str) -> dict[str, Any]:
    """Parse `pmset -g batt`: the power source and, on a laptop, the battery charge."""
    source = "unknown"
    if "'AC Power'" in text:
        source = "ac"
    elif "'Battery Power'" in text:
        source = "battery"
    percent = None
    for line in text.splitlines():
        if "InternalBattery" in line:
            match = re.search(r"(\d+)%", line)
            percent = int(match.group(1)) if match else None
            break
    return {"power_source": source, "battery_percent": percent}


def parse_pmset_lowpower(text: str) -> bool | None:
    """Parse `pmset -g`: is Low Power Mode on? None where the machine does not report it."""
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "lowpowermode":
            return words[1] == "1"
        # Macs with a High Power Mode report "powermode": 0 automatic, 1 low, 2 high.
        if len(words) >= 2 and words[0] == "powermode":
            return words[1] == "1"
    return None


def parse_sw_vers(text: str) -> str | None:
    """Parse `sw_vers`: the macOS version, e.g. '14.5'."""
    for line in text.splitlines():
        key, separator, value = line.partition(":")
        if separator and key.strip() == "ProductVersion":
            return value.strip() or None
    return None


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
    cores_per_socket = _to_int(raw.get("Core(s) per socket"))
    sockets = _to_int(raw.get("Socket(s)"))
    physical = cores_per_socket * sockets if cores_per_socket and sockets else None
    return {
        "cpu_model": raw.get("Model name") or None,
        "cpu_cores": _to_int(raw.get("CPU(s)")),
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


def parse_power_supplies(supplies: dict[str, dict[str, str]]) -> dict[str, Any]:
    """AC or battery from Linux /sys/class/power_supply entries ({name: {attribute: text}})."""
    source = "unknown"
    percent = None
    battery_status = None
    for attributes in supplies.values():
        kind = attributes.get("type", "").strip()
        if kind == "Battery":
            if percent is None:
                percent = _to_int(attributes.get("capacity"))
                battery_status = attributes.get("status", "").strip()
        elif attributes.get("online", "").strip() == "1":
            source = "ac"
    if source == "unknown" and battery_status:
        source = "battery" if battery_status == "Discharging" else "ac"
    return {"power_source": source, "battery_percent": percent}


# ---------------------------------------------------------------------------------------------
# Running commands and reading files. Tests replace these two functions.


def run_command(args: list[str]) -> str:
    """Run a probe command and return its stdout. Raises OSError or TimeoutExpired."""
    result = subprocess.run(
        args,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        # Parsers read English labels ("Model name", "ProductVersion").
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )
    # sysctl exits non-zero when one key is unknown (perflevel on Intel Macs) yet prints the rest.
    return result.stdout


def read_text(path: str | Path) -> str:
    """Read a probe file. Raises OSError."""
    return Path(path).read_text(encoding="utf-8", errors="replace")


_T = TypeVar("_T")


def _attempt(step: Callable[[], _T]) -> _T | None:
    # One failing probe (missing binary, timeout, garbage output) must leave its fields None,
    # never stop the others.
    try:
        return step()
    except Exception:  # any failure of a probe step means "unknown"
        return None


def _fill(info: MachineInfo, values: dict[str, Any] | None) -> None:
    """Set the fields of info that are still unknown from values; earlier sources win."""
    for name, value in (values or {}).items():
        if value is not None and getattr(info, name) in (None, "unknown"):
            setattr(info, name, value)


# ---------------------------------------------------------------------------------------------
# Probes.


@functools.cache
def mac_model_names() -> dict[str, str]:
    """Apple Silicon model identifier -> marketing name, from siliconbench/resources/mac_models.json."""
    text = resources.read_text("mac_models.json")
    return {key: value for key, value in json.loads(text).items() if not key.startswith("_")}


def mac_model_name(identifier: str | None) -> str | None:
    """The marketing name of a Mac model: 'MacBookPro18,4' -> 'MacBook Pro (14-inch, 2021)'."""
    if not identifier:
        return None
    return _attempt(lambda: mac_model_names().get(identifier))


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


def power_status() -> PowerStatus:
    """Read the power source now (not cached: a laptop is plugged in and out during a session)."""
    system = platform.system()
    if system == "Darwin":
        return _power_status_macos()
    if system == "Linux":
        return _power_status_linux()
    return PowerStatus()


def _power_status_macos() -> PowerStatus:
    status = PowerStatus()
    batt = _attempt(lambda: parse_pmset_batt(run_command(["pmset", "-g", "batt"])))
    if batt:
        status.power_source = batt["power_source"]
        status.battery_percent = batt["battery_percent"]
    status.low_power_mode = _attempt(lambda: parse_pmset_lowpower(run_command(["pmset", "-g"])))
    return status


def _read_power_supplies() -> dict[str, dict[str, str]]:
    supplies: dict[str, dict[str, str]] = {}
    for entry in sorted(POWER_SUPPLY_DIR.iterdir()):
        attributes = {}
        # Each kind of supply has only some of these attributes.
        for name in ("type", "online", "status", "capacity"):
            try:
                attributes[name] = read_text(entry / name).strip()
            except OSError:
                continue
        supplies[entry.name] = attributes
    return supplies


def _power_status_linux() -> PowerStatus:
    status = PowerStatus()
    decided = _attempt(lambda: parse_power_supplies(_read_power_supplies()))
    if decided:
        status.power_source = decided["power_source"]
        status.battery_percent = decided["battery_percent"]
    return status


def probe_macos() -> MachineInfo:
    """Describe this Mac from sysctl, system_profiler, pmset and sw_vers."""
    info = MachineInfo(os_name="macOS")
    readings = {
        "sysctl": _attempt(lambda: parse_sysctl(run_command(["sysctl", *SYSCTL_KEYS]))),
        "system_profiler": _attempt(
            lambda: parse_system_profiler(
                run_command(
                    ["system_profiler", "-json", "SPHardwareDataType", "SPDisplaysDataType"]
                )
            )
        ),
    }
    _fill_by_precision(info, readings)
    known_name = mac_model_name(info.model_identifier)
    if known_name:
        info.model_name = known_name
        info.sources["model_name"] = "mac_models.json"
    for source, read_version in (
        ("sw_vers", lambda: parse_sw_vers(run_command(["sw_vers"]))),
        ("platform.mac_ver", lambda: platform.mac_ver()[0] or None),
    ):
        info.os_version = _attempt(read_version)
        if info.os_version:
            info.sources["os_version"] = source
            break
    _apply_power(info, _power_status_macos())
    return info


def _fill_by_precision(info: MachineInfo, readings: dict[str, dict[str, Any] | None]) -> None:
    """Set each field from the most precise command that states it, and record which one."""
    names = {name for values in readings.values() for name in (values or {})}
    for name in sorted(names):
        for source in MAC_SOURCE_ORDER.get(name, DEFAULT_MAC_SOURCE_ORDER):
            value = (readings.get(source) or {}).get(name)
            if value is not None:
                setattr(info, name, value)
                info.sources[name] = source
                break


def probe_linux() -> MachineInfo:
    """Describe this Linux machine from /proc, lscpu, /etc/os-release, /sys and NVML."""
    info = MachineInfo(os_name="Linux")
    _fill(info, _attempt(lambda: parse_cpuinfo(read_text("/proc/cpuinfo"))))
    _fill(info, _attempt(lambda: parse_lscpu(run_command(["lscpu"]))))
    info.memory_bytes = _attempt(lambda: parse_meminfo(read_text("/proc/meminfo")))
    info.os_version = _attempt(lambda: parse_os_release(read_text("/etc/os-release"))) or (
        platform.release() or None
    )
    _fill(info, _attempt(nvidia_gpu))
    _apply_power(info, _power_status_linux())
    return info


def probe_other() -> MachineInfo:
    """Describe a machine of another OS (Windows, BSD) from what the standard library knows."""
    return MachineInfo(
        os_name=platform.system() or None,
        os_version=platform.release() or None,
        cpu_model=platform.processor() or None,
        cpu_cores=os.cpu_count(),
    )


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
        return {"gpu_name": name, "gpu_memory_bytes": int(memory)}
    finally:
        _attempt(pynvml.nvmlShutdown)


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
    info.frameworks = _attempt(framework_versions) or {}
    return info


# ---------------------------------------------------------------------------------------------
# Small conversions.


def _apply_power(info: MachineInfo, status: PowerStatus) -> None:
    info.power_source = status.power_source
    info.battery_percent = status.battery_percent
    info.low_power_mode = status.low_power_mode


def _to_int(value: Any) -> int | None:
    if value is None:
        return None
    match = re.search(r"-?\d+", str(value))
    return int(match.group(0)) if match else None


def _parse_size(value: Any) -> int | None:
    """'64 GB' -> bytes. system_profiler counts memory in binary units."""
    match = re.search(r"([\d.]+)\s*(KB|MB|GB|TB)", str(value or ""), re.IGNORECASE)
    if not match:
        return None
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2).upper()])


def _parse_number_processors(
    value: Any, chip: str | None
) -> tuple[int | None, list[dict[str, Any]] | None]:
    """system_profiler's number_processors -> (physical cores, CPU tiers).

    Apple silicon prints 'proc TOTAL:TOP:EFFICIENCY' and, from macOS 26, a fourth number: the
    Performance tier of chips whose top tier is Super ('proc 18:6:0:12' on an M5 Max; 'proc
    24:16:8:0' on an M2 Ultra). Intel and virtual Macs, and Rosetta, print a bare count. The
    string names no tier: the top one is Super where a Performance tier follows it and on the
    M5 generation on, Performance before (sysctl, which names them, is read first). A bare
    count gives no tiers: under Rosetta an M1 prints 8 for its 4 + 4 cores.
    """
    numbers = [int(n) for n in re.findall(r"\d+", str(value if value is not None else ""))]
    if not numbers:
        return None, None
    total, counts = numbers[0], numbers[1:]
    if len(counts) < 2:
        return total, None
    top, efficiency, performance = counts[0], counts[1], (counts[2] if len(counts) > 2 else 0)
    if top + efficiency + performance != total:
        return total, None  # a layout this parser does not know
    top_name = "super" if performance or _chip_generation(chip) >= 5 else "performance"
    pairs = ((top_name, top), ("performance", performance), ("efficiency", efficiency))
    return total, _named_tiers([_tier(name, cores) for name, cores in pairs if cores])


def _tiers_from_perflevels(raw: dict[str, str]) -> list[dict[str, Any]] | None:
    """CPU tiers from sysctl's hw.perflevelN keys, by the names the Mac gives them.

    Level 0 is the fastest kind of core. macOS 12 printed the levels without names; every chip
    it ran on had Performance and Efficiency levels, in that order.
    """
    levels = _to_int(raw.get("hw.nperflevels"))
    if levels is None:
        levels = sum(1 for n in range(MAX_PERF_LEVELS) if f"hw.perflevel{n}.physicalcpu" in raw)
    tiers = []
    for n in range(levels):
        cores = _to_int(raw.get(f"hw.perflevel{n}.physicalcpu"))
        if cores is None:
            return None  # a partial listing: no tier split rather than a wrong one
        name = raw.get(f"hw.perflevel{n}.name") or ("performance", "efficiency", None)[min(n, 2)]
        tiers.append(_tier(name, cores))
    return _named_tiers(tiers) if tiers else None


def _tier(name: str | None, cores: int) -> dict[str, Any]:
    return {"name": name.strip().lower() if name else None, "cores": cores}


def _named_tiers(tiers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # One kind of core is no tier split, whatever macOS calls it ("Standard" on Intel and
    # virtual Macs).
    return [_tier(None, tiers[0]["cores"])] if len(tiers) == 1 else tiers


def _chip_generation(chip: str | None) -> int:
    """5 for 'Apple M5 Max', 0 where the name says none."""
    match = re.match(r"Apple M(\d+)", chip or "")
    return int(match.group(1)) if match else 0


def _tiers_of_old_record(data: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Tiers from the perf_cores/eff_cores of records written before tiers were named.

    Those read hw.perflevel0 as performance and hw.perflevel1 as efficiency cores, which holds
    for M1 to M4. On the M5 generation level 0 is Super, and level 1 Efficiency on the base chip
    but Performance on the M5 Pro and Max. A single level (Intel and virtual Macs) was stored
    as performance cores.
    """
    first, second = _to_int(data.get("perf_cores")), _to_int(data.get("eff_cores"))
    if not first:
        return None
    if not second:
        return [_tier(None, first)]
    chip = str(data.get("chip") or "")
    names = ("performance", "efficiency")
    if _chip_generation(chip) >= 5:
        names = ("super", "efficiency" if re.fullmatch(r"Apple M\d+", chip) else "performance")
    return [_tier(names[0], first), _tier(names[1], second)]


def describe_cpu_tiers(tiers: list[dict[str, Any]] | None) -> str | None:
    """'18-core CPU: 6 super + 12 performance'; '3-core CPU' for one kind of core."""
    if not tiers:
        return None
    total = sum(tier.get("cores") or 0 for tier in tiers)
    if len(tiers) == 1 or not all(tier.get("name") for tier in tiers):
        return f"{total}-core CPU"
    split = " + ".join(f"{tier['cores']} {tier['name']}" for tier in tiers)
    return f"{total}-core CPU: {split}"


def _pick_gpu(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    # Intel Macs list the integrated GPU first; the discrete one is what benchmarks use.
    entries = [entry for entry in entries if isinstance(entry, dict)]
    for entry in entries:
        if entry.get("sppci_bus") not in (None, "spdisplays_builtin"):
            return entry
    return entries[0] if entries else None


def _squash(text: str | None) -> str | None:
    return " ".join(text.split()) if text else None
