"""The machine record kept with every run (MachineInfo) and what is read from records: a
one-line summary, a hardware key, virtual Macs, binned chips, CPU core tiers in words."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from siliconbench.core.numbers import size

_GIB = 1024**3


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
    # Which physical machine: a one-way hash (host_hash) of the OS's own id of it
    # (IOPlatformUUID on macOS, /etc/machine-id on Linux), and of the GPU's UUID beside it for
    # a machine with an NVIDIA GPU. Two identical MacBook Pros differ here and nowhere else;
    # the raw ids are never kept. None in records written before hosts were told apart.
    host_id: str | None = None
    gpu_id: str | None = None
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
        for name in ("host_id", "gpu_id"):
            # A received file's id is a hash's hex digits or nothing, never another type.
            if not (isinstance(values.get(name), str)
                    and re.fullmatch(r"[0-9a-f]{1,64}", values[name])):
                values.pop(name, None)
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
        """A short stable id of the machine, to group runs made on it: its hardware and, where
        the record has one, its host identity (host_id), so two machines of one model, chip and
        memory are two. A record without one keeps the hardware's fingerprint alone
        (hardware_key): its machine is not told apart from identical ones (told_apart)."""
        if not self.host_id:
            return self.hardware_key()
        digest = hashlib.sha256(json.dumps([self.hardware_key(), self.host_id]).encode("utf-8"))
        return digest.hexdigest()[:12]

    @property
    def told_apart(self) -> bool:
        """Whether the record names its host, not only its hardware (older records do not)."""
        return bool(self.host_id)

    def host_tag(self) -> str:
        """A short tag of the host, to tell identical machines apart ('host 3fa2c1'); of the
        hardware's fingerprint where the record has no host identity."""
        return "host " + (self.host_id or self.hardware_key())[:6]

    def hardware_key(self) -> str:
        """A short stable id of the hardware alone (model, chip, GPU, memory, core tiers):
        the same for two identical machines."""
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


HOST_SALT = "siliconbench host identity v1"


def host_hash(raw: str | None) -> str | None:
    """A one-way hash of an OS's or a GPU's id of a machine (salted with HOST_SALT, fixed so
    it is the same across reinstalls): what a record keeps instead of the id itself. None for
    an id that is missing or redacted: fewer than the 32 hex digits of a UUID or a
    machine-id ('XXXXXXXX-XXXX-...', 'E664D52B-5FBC-5A68-******')."""
    text = (raw or "").strip().lower()
    if len(re.sub(r"[^0-9a-f]", "", text)) < 32:
        return None
    return hashlib.sha256(f"{HOST_SALT}:{text}".encode()).hexdigest()[:16]


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


# ---------------------------------------------------------------------------------------------
# CPU core tiers and small conversions, shared with the probes' parsers.


def to_int(value: Any) -> int | None:
    if value is None:
        return None
    match = re.search(r"-?\d+", str(value))
    return int(match.group(0)) if match else None


def tier(name: str | None, cores: int) -> dict[str, Any]:
    return {"name": name.strip().lower() if name else None, "cores": cores}


def named_tiers(tiers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # One kind of core is no tier split, whatever macOS calls it ("Standard" on Intel and
    # virtual Macs).
    return [tier(None, tiers[0]["cores"])] if len(tiers) == 1 else tiers


def chip_generation(chip: str | None) -> int:
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
    first, second = to_int(data.get("perf_cores")), to_int(data.get("eff_cores"))
    if not first:
        return None
    if not second:
        return [tier(None, first)]
    chip = str(data.get("chip") or "")
    names = ("performance", "efficiency")
    if chip_generation(chip) >= 5:
        names = ("super", "efficiency" if re.fullmatch(r"Apple M\d+", chip) else "performance")
    return [tier(names[0], first), tier(names[1], second)]


def describe_cpu_tiers(tiers: list[dict[str, Any]] | None) -> str | None:
    """'18-core CPU: 6 super + 12 performance'; '3-core CPU' for one kind of core."""
    if not tiers:
        return None
    total = sum(tier.get("cores") or 0 for tier in tiers)
    if len(tiers) == 1 or not all(tier.get("name") for tier in tiers):
        return f"{total}-core CPU"
    split = " + ".join(f"{tier['cores']} {tier['name']}" for tier in tiers)
    return f"{total}-core CPU: {split}"


def _squash(text: str | None) -> str | None:
    return " ".join(text.split()) if text else None
