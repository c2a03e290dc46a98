"""Named suites of runs (resources/suites.json), expanded over the machine's usable devices."""

from __future__ import annotations

import json

import resources
from core.frameworks import DeviceInfo
from core.numbers import peak_text, value_text
from core.runner import RunSpec
from core.results import RunRecord
from core.workloads import headline, workload


def load_suites() -> dict:
    text = resources.read_text("suites.json")
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


def summary_lines(records: list[RunRecord]) -> list[str]:
    """A suite's outcome in a few lines: per device, each workload's headline (its best point,
    with % of the device's peak where known) or why the run has none."""
    devices: dict[str, list[RunRecord]] = {}
    for rec in records:
        where = f"{rec.device_name or rec.device} ({rec.framework} {rec.device})"
        devices.setdefault(where, []).append(rec)
    lines: list[str] = []
    for where, recs in devices.items():
        lines.append(where)
        for rec in recs:
            title = workload(rec.workload).title
            row = headline(rec)
            if rec.status != "ok":
                text = f"{rec.status}: {rec.reason or 'no reason given'}"
            elif row is None:
                text = "nothing measured"
            else:
                point = ", ".join(f"{k} {v}" for k, v in row.params.items())
                text = f"{value_text(row)} ({point}; {peak_text(row)})"
            lines.append(f"  {title}: {text}")
    return lines
