"""Where the power comes from: AC or battery, the charge, Low Power Mode. `pmset` on a Mac,
/sys/class/power_supply on Linux. Re-read whenever asked (a laptop is plugged in and out while
the app runs); the machine probe records it once."""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from siliconbench.core.machine import commands
from siliconbench.core.machine.commands import attempt
from siliconbench.core.machine.record import MachineInfo, to_int

POWER_SUPPLY_DIR = Path("/sys/class/power_supply")


@dataclass
class PowerStatus:
    """Where the power comes from right now; it changes while the app runs, so it is re-read."""

    power_source: str = "unknown"  # "ac", "battery" or "unknown"
    battery_percent: int | None = None
    low_power_mode: bool | None = None


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


def parse_power_supplies(supplies: dict[str, dict[str, str]]) -> dict[str, Any]:
    """AC or battery from Linux /sys/class/power_supply entries ({name: {attribute: text}})."""
    source = "unknown"
    percent = None
    battery_status = None
    for attributes in supplies.values():
        kind = attributes.get("type", "").strip()
        if kind == "Battery":
            if percent is None:
                percent = to_int(attributes.get("capacity"))
                battery_status = attributes.get("status", "").strip()
        elif attributes.get("online", "").strip() == "1":
            source = "ac"
    if source == "unknown" and battery_status:
        source = "battery" if battery_status == "Discharging" else "ac"
    return {"power_source": source, "battery_percent": percent}


def power_status() -> PowerStatus:
    """Read the power source now (not cached: a laptop is plugged in and out during a session)."""
    system = platform.system()
    if system == "Darwin":
        return power_status_macos()
    if system == "Linux":
        return power_status_linux()
    return PowerStatus()


def power_status_macos() -> PowerStatus:
    status = PowerStatus()
    batt = attempt(lambda: parse_pmset_batt(commands.run_command(["pmset", "-g", "batt"])))
    if batt:
        status.power_source = batt["power_source"]
        status.battery_percent = batt["battery_percent"]
    status.low_power_mode = attempt(
        lambda: parse_pmset_lowpower(commands.run_command(["pmset", "-g"]))
    )
    return status


def _read_power_supplies() -> dict[str, dict[str, str]]:
    supplies: dict[str, dict[str, str]] = {}
    for entry in sorted(POWER_SUPPLY_DIR.iterdir()):
        attributes = {}
        # Each kind of supply has only some of these attributes.
        for name in ("type", "online", "status", "capacity"):
            try:
                attributes[name] = commands.read_text(entry / name).strip()
            except OSError:
                continue
        supplies[entry.name] = attributes
    return supplies


def power_status_linux() -> PowerStatus:
    status = PowerStatus()
    decided = attempt(lambda: parse_power_supplies(_read_power_supplies()))
    if decided:
        status.power_source = decided["power_source"]
        status.battery_percent = decided["battery_percent"]
    return status


def apply_power(info: MachineInfo, status: PowerStatus) -> None:
    info.power_source = status.power_source
    info.battery_percent = status.battery_percent
    info.low_power_mode = status.low_power_mode
