"""The run record: what was measured, where, how, and the tidy result rows. JSON in and out,
validated against resources/run_record.schema.json whenever it comes from outside."""

from __future__ import annotations

import datetime as _dt
import json
import uuid
from dataclasses import asdict, dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from core.stats import Stats

SCHEMA_VERSION = 1
FILE_FORMAT = "siliconbench-results"
STATUSES = ("ok", "failed", "cancelled")

# Flags a row can carry; the GUI and exports explain them with these words.
FLAGS = {
    "noisy": "spread stayed above 10% (IQR/median) or warm-up never settled",
    "above_peak": "above the device's physical peak: a measurement error (missing sync?)",
    "unsupported": "the device cannot do this; see the note",
    "fallback": "ran on another device than asked (silent CPU fallback)",
    "synthetic": "synthetic data, not the real data set",
    "wrong_result": "the result differs from a float64 reference beyond the dtype's tolerance",
    "skipped": "not measured: it would take too long on this device; see the note",
}


class NotAResultFile(ValueError):
    """A file or document that is not a SiliconBench result; the message is one sentence."""


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass
class Row:
    metric: str                       # "tflops", "gb_per_s", "samples_per_s", ...
    value: float | None               # None when unsupported
    unit: str
    params: dict[str, Any]            # the point: size, dtype, ...
    stats: Stats | None = None
    flags: list[str] = field(default_factory=list)
    note: str | None = None
    pct_of_peak: float | None = None
    samples: list[float] = field(default_factory=list)  # per-block values, for comparisons

    def to_dict(self) -> dict:
        d = asdict(self)
        d["stats"] = self.stats.to_dict() if self.stats else None
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Row":
        d = dict(d)
        d["stats"] = Stats.from_dict(d["stats"]) if d.get("stats") else None
        return cls(**{k: d.get(k) for k in ("metric", "value", "unit", "params", "stats",
                                             "note", "pct_of_peak")},
                   flags=list(d.get("flags") or []), samples=list(d.get("samples") or []))


@dataclass
class RunRecord:
    workload: str
    framework: str
    device: str
    params: dict[str, Any]
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    schema: int = SCHEMA_VERSION
    status: str = "ok"
    reason: str | None = None          # why it failed or was cancelled, one sentence
    label: str | None = None           # the user's name for the machine
    device_name: str | None = None
    created_at: str = field(default_factory=now_iso)
    finished_at: str | None = None
    machine: dict[str, Any] = field(default_factory=dict)
    software: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)  # measurement settings, tf32, ...
    rows: list[Row] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    source: str = "measured"           # measured | published
    stderr_tail: str = ""              # the child's last stderr lines, to understand a failure
    # Sampled by the parent while the run went on (core.telemetry): {"interval_s", "series":
    # {name: {"unit", "t", "v"}}, "summary", "notes"}; None for older and published records.
    telemetry: dict[str, Any] | None = None
    # Where a published figure comes from (source, hardware, software, settings); None for
    # measured runs.
    provenance: dict[str, Any] | None = None

    @property
    def machine_label(self) -> str:
        if self.label:
            return self.label
        m = self.machine
        return m.get("model_name") or m.get("chip") or m.get("cpu_model") or "unknown machine"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["rows"] = [r.to_dict() for r in self.rows]
        return d

    @classmethod
    def from_dict(cls, d: dict, validate_schema: bool = True) -> "RunRecord":
        """validate_schema=False only for the store's own records: SiliconBench wrote them or
        validated them on import, and checking every row again makes a large store slow."""
        if validate_schema:
            validate(d)
        d = dict(d)
        d["rows"] = [Row.from_dict(r) for r in d.get("rows", [])]
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in known})


@cache
def _schema() -> dict:
    text = resources.files("resources").joinpath("run_record.schema.json").read_text()
    return json.loads(text)


@cache
def _validator():
    """One validator for the schema: jsonschema.validate() checks the schema itself on every
    call, which made loading the 14 published references take seconds."""
    import jsonschema  # only needed for outside data; keeps the run path light
    cls = jsonschema.validators.validator_for(_schema())
    return cls(_schema())


def validate(d: Any) -> None:
    """Raise NotAResultFile with one sentence unless `d` is a run record of a known schema."""
    import jsonschema  # only needed for outside data; keeps the run path light

    if not isinstance(d, dict) or "workload" not in d or "rows" not in d:
        raise NotAResultFile("it is not a SiliconBench run record")
    if isinstance(d.get("schema"), int) and d["schema"] > SCHEMA_VERSION:
        raise NotAResultFile(f"it was written by a newer SiliconBench (schema {d['schema']}); "
                             "update SiliconBench to read it")
    e = jsonschema.exceptions.best_match(_validator().iter_errors(d))  # as validate() picks
    if e is not None:
        where = "/".join(str(p) for p in e.absolute_path) or "the record"
        raise NotAResultFile(f"it is a damaged run record ({where}: {e.message})") from None


def records_from_json(text: str) -> list[RunRecord]:
    """Parse an export file (or a single run record) into records; NotAResultFile otherwise."""
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise NotAResultFile("it is not JSON") from None
    if isinstance(doc, dict) and doc.get("format") == FILE_FORMAT:
        runs = doc.get("runs")
        if not isinstance(runs, list):
            raise NotAResultFile("it has no list of runs")
        return [RunRecord.from_dict(r) for r in runs]
    return [RunRecord.from_dict(doc)]


def records_to_json(records: list[RunRecord]) -> str:
    doc = {"format": FILE_FORMAT, "schema": SCHEMA_VERSION, "exported_at": now_iso(),
           "runs": [r.to_dict() for r in records]}
    return json.dumps(doc, indent=1, sort_keys=True)
