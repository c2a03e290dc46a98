"""Named suites of runs (resources/suites.json), expanded over the machine's usable devices."""

from __future__ import annotations

import json
from importlib import resources

from core.frameworks import DeviceInfo
from core.runner import RunSpec
from core.workloads import workload


def load_suites() -> dict:
    text = resources.files("resources").joinpath("suites.json").read_text()
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


def expand(name: str, devices: list[DeviceInfo], label: str | None = None) -> list[RunSpec]:
    """One RunSpec per (suite entry, usable device of a framework the workload runs on)."""
    suites = load_suites()
    if name not in suites:
        raise ValueError(f"Unknown suite {name!r}; choose one of {', '.join(suites)}.")
    suite = suites[name]
    specs = []
    for entry in suite["runs"]:
        frameworks = entry.get("frameworks") or workload(entry["workload"]).frameworks
        for d in devices:
            if d.usable and d.framework in frameworks:
                specs.append(RunSpec(entry["workload"], d.framework, d.id,
                                     dict(entry.get("params", {})), label,
                                     quick=suite.get("quick_measure", False)))
    return specs
