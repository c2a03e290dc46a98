"""This Mac, from `sysctl`, `system_profiler` and `sw_vers`: each parser a pure function of
one command's output, tested on captures real Macs printed (tests/data/macos), and the Mac
model names from siliconbench/resources/mac_models.json."""

from __future__ import annotations

import functools
import json
import platform
import re
from typing import Any

from siliconbench import resources
from siliconbench.core.machine import commands
from siliconbench.core.machine.commands import attempt
from siliconbench.core.machine.power import apply_power, power_status_macos
from siliconbench.core.machine.record import (
    MachineInfo,
    chip_generation,
    host_hash,
    named_tiers,
    tier,
    to_int,
)

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

_SIZE_UNITS = {"KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}


def parse_sysctl(text: str) -> dict[str, Any]:
    """Parse macOS `sysctl KEY...` output ("key: value" lines) into MachineInfo fields.

    Reads any such listing, `sysctl hw` and `sysctl -a` included.
    """
    raw: dict[str, str] = {}
    for line in text.splitlines():
        key, separator, value = line.partition(":")
        if separator:
            raw.setdefault(key.strip(), value.strip())
    translated = to_int(raw.get("sysctl.proc_translated"))
    brand = raw.get("machdep.cpu.brand_string") or None
    return {
        "memory_bytes": to_int(raw.get("hw.memsize")),
        "cpu_cores": to_int(raw.get("hw.ncpu")),
        "cpu_physical_cores": to_int(raw.get("hw.physicalcpu")),
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
        "gpu_cores": to_int(gpu.get("sppci_cores")) if gpu else None,
        # IOPlatformUUID, kept only as its one-way hash: which Mac, of identical ones.
        "host_id": host_hash(hardware.get("platform_UUID")),
    }


def parse_sw_vers(text: str) -> str | None:
    """Parse `sw_vers`: the macOS version, e.g. '14.5'."""
    for line in text.splitlines():
        key, separator, value = line.partition(":")
        if separator and key.strip() == "ProductVersion":
            return value.strip() or None
    return None


@functools.cache
def mac_model_names() -> dict[str, str]:
    """Apple Silicon model identifier -> marketing name, from
    siliconbench/resources/mac_models.json."""
    text = resources.read_text("mac_models.json")
    return {key: value for key, value in json.loads(text).items() if not key.startswith("_")}


def mac_model_name(identifier: str | None) -> str | None:
    """The marketing name of a Mac model: 'MacBookPro18,4' -> 'MacBook Pro (14-inch, 2021)'."""
    if not identifier:
        return None
    return attempt(lambda: mac_model_names().get(identifier))


def probe_macos() -> MachineInfo:
    """Describe this Mac from sysctl, system_profiler, pmset and sw_vers."""
    info = MachineInfo(os_name="macOS")
    readings = {
        "sysctl": attempt(
            lambda: parse_sysctl(commands.run_command(["sysctl", *SYSCTL_KEYS]))
        ),
        "system_profiler": attempt(
            lambda: parse_system_profiler(
                commands.run_command(
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
        ("sw_vers", lambda: parse_sw_vers(commands.run_command(["sw_vers"]))),
        ("platform.mac_ver", lambda: platform.mac_ver()[0] or None),
    ):
        info.os_version = attempt(read_version)
        if info.os_version:
            info.sources["os_version"] = source
            break
    apply_power(info, power_status_macos())
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
    top_name = "super" if performance or chip_generation(chip) >= 5 else "performance"
    pairs = ((top_name, top), ("performance", performance), ("efficiency", efficiency))
    return total, named_tiers([tier(name, cores) for name, cores in pairs if cores])


def _tiers_from_perflevels(raw: dict[str, str]) -> list[dict[str, Any]] | None:
    """CPU tiers from sysctl's hw.perflevelN keys, by the names the Mac gives them.

    Level 0 is the fastest kind of core. macOS 12 printed the levels without names; every chip
    it ran on had Performance and Efficiency levels, in that order.
    """
    levels = to_int(raw.get("hw.nperflevels"))
    if levels is None:
        levels = sum(1 for n in range(MAX_PERF_LEVELS) if f"hw.perflevel{n}.physicalcpu" in raw)
    tiers = []
    for n in range(levels):
        cores = to_int(raw.get(f"hw.perflevel{n}.physicalcpu"))
        if cores is None:
            return None  # a partial listing: no tier split rather than a wrong one
        name = raw.get(f"hw.perflevel{n}.name") or ("performance", "efficiency", None)[min(n, 2)]
        tiers.append(tier(name, cores))
    return named_tiers(tiers) if tiers else None


def _pick_gpu(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    # Intel Macs list the integrated GPU first; the discrete one is what benchmarks use.
    entries = [entry for entry in entries if isinstance(entry, dict)]
    for entry in entries:
        if entry.get("sppci_bus") not in (None, "spdisplays_builtin"):
            return entry
    return entries[0] if entries else None
