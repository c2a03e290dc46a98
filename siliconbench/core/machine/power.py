"""Where the power comes from: AC or battery, the charge, the power mode as macOS names it (Low
Power, Automatic, High Power) and whether the lid is closed. `pmset` and `ioreg` on a Mac,
/sys/class/power_supply on Linux. Re-read whenever asked (a laptop is plugged in and out while
the app runs): the machine probe records it once, and every run at its start and end
(siliconbench.core.telemetry.sampler, the record's telemetry["power_state"]); Compare says
when two sides differ in it (power_state_warnings)."""

from __future__ import annotations

import dataclasses
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
    power_mode: str | None = None    # "Low Power", "Automatic", "High Power"; None: not told
    lid_closed: bool | None = None   # a MacBook's lid (clamshell); None: no lid, or unread

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


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


# pmset's power mode values as System Settings names them (Energy Mode). `lowpowermode` is
# the older key, and pmset takes it as a synonym of `powermode` (0, 1, 2 alike).
POWER_MODES = {0: "Automatic", 1: "Low Power", 2: "High Power"}


def _mode_line(words: list[str]) -> tuple[str, int] | None:
    if len(words) >= 2 and words[0] in ("powermode", "lowpowermode") and words[1].isdigit():
        return words[0], int(words[1])
    return None


def parse_pmset_mode(text: str) -> str | None:
    """The power mode in use from `pmset -g` ("Currently in use:"): `powermode` 0/1/2 on the
    macOS versions that have High Power Mode, `lowpowermode` 0/1 on those before; `powermode`
    wins when both are printed. None where neither is (a Mac without the setting)."""
    found: dict[str, int] = {}
    for line in text.splitlines():
        hit = _mode_line(line.split())
        if hit:
            found.setdefault(hit[0], hit[1])
    value = found.get("powermode", found.get("lowpowermode"))
    return None if value is None else POWER_MODES.get(value, f"mode {value}")


def parse_pmset_lowpower(text: str) -> bool | None:
    """Parse `pmset -g`: is Low Power Mode on? None where the machine does not report it."""
    mode = parse_pmset_mode(text)
    return None if mode is None else mode == "Low Power"


def parse_pmset_custom(text: str) -> dict[str, str]:
    """`pmset -g custom` -> the power mode each source is set to: {"AC Power": "High Power",
    "Battery Power": "Low Power"} (a desktop prints AC Power only)."""
    out: dict[str, str] = {}
    section = None
    for line in text.splitlines():
        if line.strip().endswith(":") and not line.startswith(" "):
            section = line.strip()[:-1]
            continue
        hit = _mode_line(line.split())
        if section and hit and (section not in out or hit[0] == "powermode"):
            out[section] = POWER_MODES.get(hit[1], f"mode {hit[1]}")
    return out


def parse_clamshell(text: str) -> bool | None:
    """`ioreg -r -k AppleClamshellState -d 1`: `"AppleClamshellState" = Yes` when the lid is
    closed, `No` when open; None on a Mac without a lid (no such key)."""
    match = re.search(r'"AppleClamshellState"\s*=\s*(Yes|No)', text)
    return None if match is None else match.group(1) == "Yes"


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
    status.power_mode = attempt(lambda: parse_pmset_mode(commands.run_command(["pmset", "-g"])))
    if status.power_mode is None and status.power_source in ("ac", "battery"):
        # "Currently in use" without the key: the mode the current source is set to.
        section = "AC Power" if status.power_source == "ac" else "Battery Power"
        custom = attempt(lambda: parse_pmset_custom(
            commands.run_command(["pmset", "-g", "custom"])))
        status.power_mode = (custom or {}).get(section)
    if status.power_mode is not None:
        status.low_power_mode = status.power_mode == "Low Power"
    status.lid_closed = attempt(lambda: parse_clamshell(commands.run_command(
        ["ioreg", "-r", "-k", "AppleClamshellState", "-d", "1"])))
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


# ---------------------------------------------------------------- two runs' power, compared

def run_power_states(rec) -> list[dict]:
    """A run's power states: at its start and end where the run kept them (telemetry
    ["power_state"]), else the one its machine probe saw (older records)."""
    kept = ((getattr(rec, "telemetry", None) or {}).get("power_state") or {})
    states = [kept[k] for k in ("start", "end") if isinstance(kept.get(k), dict)]
    if states:
        return states
    m = getattr(rec, "machine", None) or {}
    mode = m.get("power_mode") or ({True: "Low Power"}.get(m.get("low_power_mode")))
    return [{"power_source": m.get("power_source"), "power_mode": mode}]


def _facts(states: list[dict]) -> dict[str, str]:
    """What a run's states say, as words, each fact only where every state agrees on it or
    joined with "then" where it changed during the run."""
    words = {
        "power": lambda s: {"ac": "on AC", "battery": "on battery"}.get(
            s.get("power_source") or ""),
        "power mode": lambda s: s.get("power_mode") and f"in {s['power_mode']} mode",
        "lid": lambda s: {True: "with the lid closed", False: "with the lid open"}.get(
            s.get("lid_closed")),
    }
    out: dict[str, str] = {}
    for fact, say in words.items():
        seen = list(dict.fromkeys(w for w in map(say, states) if w))
        if seen:
            out[fact] = " then ".join(seen)
    return out


def power_state_warnings(label_a: str, rec_a, label_b: str, rec_b) -> list[str]:
    """One sentence per power fact (AC or battery, power mode, lid) that two runs differ in,
    or that changed during one of them: throughput under minutes of load depends on each."""
    a, b = _facts(run_power_states(rec_a)), _facts(run_power_states(rec_b))
    out = []
    for fact in ("power", "power mode", "lid"):
        if fact in a and fact in b and a[fact] != b[fact]:
            out.append(f"different {fact}: {label_a} ran {a[fact]}, {label_b} {b[fact]}")
        for label, facts in ((label_a, a), (label_b, b)):
            if " then " in facts.get(fact, ""):
                out.append(f"{label}'s {fact} changed during the run ({facts[fact]})")
    return list(dict.fromkeys(out))
