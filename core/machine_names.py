"""The names people give their machines ("MacBook Pro 14 M1 Max"), kept by the machine's
hardware key (core.machine.MachineInfo.key), so a name given once labels the machine's future
runs too, from the app and the command alike. A small JSON file beside the results store."""

from __future__ import annotations

import json
from typing import Any

FILE = "machine-names.json"


def _path():
    from core.store import home
    return home() / FILE


def machine_key(machine: dict[str, Any]) -> str:
    from core.machine import MachineInfo
    return MachineInfo.from_dict(machine).key()


def names() -> dict[str, str]:
    """{hardware key: name}; empty when none was given or the file is unreadable (a name is a
    convenience: a damaged file must not stop a run)."""
    try:
        found = json.loads(_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, str) and v}


def name_for(machine: dict[str, Any]) -> str | None:
    return names().get(machine_key(machine)) if machine else None


def set_name(machine: dict[str, Any], name: str | None) -> None:
    """Name this machine for its future runs; None or "" forgets the name."""
    found = names()
    key = machine_key(machine)
    if name and name.strip():
        found[key] = name.strip()
    else:
        found.pop(key, None)
    path = _path()
    path.parent.mkdir(parents=True, exist_ok=True)
    from core.files import write_atomic
    write_atomic(path, json.dumps(found, indent=1, sort_keys=True))  # never a half-written file
