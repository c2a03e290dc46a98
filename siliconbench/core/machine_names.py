"""The names people give their machines ("MacBook Pro 14 M1 Max"), kept by the machine's
hardware key (siliconbench.core.machine.MachineInfo.key), so a name given once labels the machine's future
runs too, from the app and the command alike. A small JSON file beside the results store.

A name or label is bounded where it is entered (Name Machine, --label) by LABEL_MAX, the
length the run record's schema accepts for `label` (siliconbench/resources/run_record.schema.json): a run
labelled longer would be refused when its export is imported."""

from __future__ import annotations

import json
from typing import Any

from siliconbench.core import files

FILE = "machine-names.json"
LABEL_MAX = 200         # the schema's "label": {"maxLength": 200}
FILE_LIMIT = 1 << 20    # a thousand machines' names take 250 KB


def path():
    """machine-names.json beside the results store."""
    from siliconbench.core.store import home
    return home() / FILE


def machine_key(machine: dict[str, Any]) -> str:
    from siliconbench.core.machine import MachineInfo
    return MachineInfo.from_dict(machine).key()


def label_problem(label: str) -> str | None:
    """Why `label` cannot name a machine or a run (one sentence), or None when it can."""
    if len(label) > LABEL_MAX:
        return (f"A machine's name is at most {LABEL_MAX} characters (the run record's limit); "
                f"this one has {len(label):,}.")
    return None


def _load(strict: bool) -> dict[str, str]:
    """The names in the file; a file that is not there, or whose text is not a names file,
    holds none. A file that cannot be read (not a regular file, too large, no permission):
    none either, or with strict=True an OSError with one sentence, so a name given is never
    written over names that were only unreadable."""
    try:
        text = files.read_small(path(), FILE_LIMIT, "machine names file")
    except FileNotFoundError:
        return {}
    except OSError as e:
        if strict:
            raise
        from siliconbench.core.logs import log
        log.warning("machine names not read: %s", e)
        return {}
    try:
        found = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, str) and v
            and label_problem(v) is None}


def names() -> dict[str, str]:
    """{hardware key: name}; empty when none was given or the file is unreadable (a name is a
    convenience: a damaged file must not stop a run)."""
    return _load(strict=False)


def name_for(machine: dict[str, Any]) -> str | None:
    """This machine's name: given to its host, else one given to its hardware's fingerprint
    before records told hosts apart (MachineInfo.hardware_key)."""
    if not machine:
        return None
    from siliconbench.core.machine import MachineInfo
    info = MachineInfo.from_dict(machine)
    found = names()
    return found.get(info.key()) or found.get(info.hardware_key())


def runs_to_name(records: list, chosen: list, name: str) -> tuple[list[str], list]:
    """What Name Machine does to the store's `records` when the machines of the `chosen` runs
    are named `name`: (the ids of those machines' runs to label, the runs among them that
    carry another name than `name` and than the chosen runs' own: an imported run's "Lab
    Mac", which is never written over without asking). A machine is its host (MachineInfo.key);
    a published figure is no machine of the user's."""
    keys = {machine_key(r.machine) for r in chosen if r.machine and r.source != "published"}
    own = {r.label for r in chosen if r.label}
    name = (name or "").strip()
    ids, other = [], []
    for rec in records:
        if rec.source == "published" or not rec.machine or machine_key(rec.machine) not in keys:
            continue
        ids.append(rec.id)
        if rec.label and rec.label != name and rec.label not in own:
            other.append(rec)
    return ids, other


def set_name(machine: dict[str, Any], name: str | None) -> None:
    """Name this machine for its future runs; None or "" forgets the name."""
    set_names([machine], name)


def set_names(machines: list[dict[str, Any]], name: str | None) -> None:
    """Name these machines for their future runs, in one write; None or "" forgets their
    names. ValueError (one sentence) for a name over LABEL_MAX; OSError when the file cannot be
    read or written (a folder, a FIFO, a full disk), the file then as it was."""
    name = (name or "").strip()
    problem = label_problem(name)
    if problem:
        raise ValueError(problem)
    if not machines:
        return
    found = _load(strict=True)
    for machine in machines:
        key = machine_key(machine)
        if name:
            found[key] = name
        else:
            found.pop(key, None)
    where = path()
    where.parent.mkdir(parents=True, exist_ok=True)
    files.write_atomic(where, json.dumps(found, indent=1, sort_keys=True), own=True)  # never half-written
