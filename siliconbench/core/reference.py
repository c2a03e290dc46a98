"""Published results SiliconBench reproduces, shipped in siliconbench/resources/reference/ as run records
with source "published" and their provenance: listed, shown labelled, usable in compare, and
never stored as measured runs."""

from __future__ import annotations

import json
from functools import cache

from siliconbench import resources
from siliconbench.core.results import NotAResultFile, RunRecord, dumps, records_from_json


class BadReference(RuntimeError):
    """A shipped reference file is broken (a packaging bug, not the user's doing)."""


@cache
def _load() -> tuple[RunRecord, ...]:
    folder = resources.FOLDER / "reference"
    records: list[RunRecord] = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        try:
            found = records_from_json(resources.read_text(f"reference/{entry.name}"))
        except NotAResultFile as e:
            raise BadReference(f"siliconbench/resources/reference/{entry.name} is not valid: {e}") from None
        for rec in found:
            if rec.source != "published" or not rec.provenance:
                raise BadReference(f"siliconbench/resources/reference/{entry.name}: {rec.id} must be "
                                   "source published, with its provenance")
        records += found
    ids = [r.id for r in records]
    if len(set(ids)) != len(ids):
        raise BadReference("two published references share an id")
    return tuple(records)


def references() -> list[RunRecord]:
    """Every published record (copies: callers may change them)."""
    return [RunRecord.from_dict(json.loads(dumps(r.to_dict())), validate_schema=False)
            for r in _load()]


def find(prefix: str) -> list[RunRecord]:
    """Published records whose id is `prefix`, or else starts with it."""
    found = [r for r in references() if r.id.startswith(prefix)]
    exact = [r for r in found if r.id == prefix]
    return exact or found
