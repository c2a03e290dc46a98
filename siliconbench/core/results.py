"""The run record: what was measured, where, how, and the tidy result rows. JSON in and out,
validated against siliconbench/resources/run_record.schema.json whenever it comes from outside."""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from siliconbench.core.stats import Stats
from siliconbench.core.text import LoneSurrogate, clip, without_controls

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
    "wrong_result": "the result differs from its reference beyond the precision's tolerance "
                    "(a product: float64 on the host; an LLM: decoding with the cache against "
                    "the whole sequence)",
    "skipped": "not measured: it would take too long on this device; see the note",
    # Power rows (siliconbench.core.telemetry: power_trusted says which may be shown)
    "energy_counter": "power from the device's energy counter over the point's timed blocks",
    "power_samples": "power from 5 or more power samples inside the point's timed blocks",
    "too_short": "the point was too short to measure its power; see the note",
    "near_idle": "the power is within 5% of the idle power: the work barely showed in it",
    # How the point ran (NVIDIA's clock-event reasons, macOS thermal pressure)
    "power_capped": "measured at the board's power cap: the clocks were lowered to stay in it",
    "hw_slowdown": "the hardware slowed the clocks (HW slowdown or power brake)",
    "thermal_slowdown": "the clocks were lowered for temperature",
    "thermal_pressure": "measured under macOS thermal pressure (moderate or worse)",
}


# Flags that mean the number itself cannot be trusted, as opposed to "read with care" (noisy).
SERIOUS_FLAGS = ("above_peak", "wrong_result", "fallback")
# Flags that say how a power was measured well: marks of trust, never shown as a warning.
TRUST_FLAGS = ("energy_counter", "power_samples")

# Power and efficiency rows: shown only where TRUST_FLAGS say how the power was measured.
POWER_METRICS = ("power", "joules_per_sample", "samples_per_watt", "tflops_per_watt")
UNTRUSTED_POWER = "power not trusted"
# Short enough to be a flag of a record (the schema's 100 characters): JSON carries it.
_UNTRUSTED_WHY = "measured neither by an energy counter nor by 5+ samples over the point"


def power_doubt(row: Row) -> str | None:
    """'power not trusted: why' for a power or efficiency row whose power came neither from
    an energy counter over the point's timed blocks ("energy_counter") nor from 5 or more
    samples inside them ("power_samples"): the H200 records' 4.59 TFLOPS/W at 78.5 W was one
    1 s sample taken while the GPU idled. None for every other row. The one test of trust
    that the app's table, the terminal, the CSV and JSON exports, the HTML report and Compare
    (siliconbench.core.telemetry.power_trusted) all read."""
    if row.metric not in POWER_METRICS or set(TRUST_FLAGS) & set(row.flags):
        return None
    why = "no power was measured over the point" if row.value is None else _UNTRUSTED_WHY
    # A record older than the marks of trust whose note says "mean of 5 samples": the doubt
    # said "neither ... nor 5+ samples" beside it. Its samples were counted over a window
    # not checked against the timed blocks.
    counted = re.search(r"mean of (\d+) samples", row.note or "")
    if row.value is not None and counted and int(counted.group(1)) >= 5:
        why = (f"an older record: its {counted.group(1)} samples are not known to lie inside "
               "the timed blocks")
    return f"{UNTRUSTED_POWER}: {why}"


def run_power_doubt(rec: RunRecord) -> str | None:
    """power_doubt for a run's mean power (its telemetry summary's, over the whole run): that
    of its points' power rows, the first one doubted; a run with no power row of its own
    (its power never measured over a point) is doubted as a row without marks of trust."""
    rows = [r for r in rec.rows if r.metric == "power"] or [Row("power", 0.0, "W", {})]
    return next((d for d in map(power_doubt, rows) if d), None)


def missing_why(row: Row) -> str:
    """Why a point has no value, in its flag's word and its note: 'skipped: N=16384 would
    take about 29 s here, ...', 'unsupported: ...', 'too short: ...'."""
    flag = next((f for f in ("skipped", "unsupported", "too_short") if f in row.flags), None)
    words = flag.replace("_", " ") if flag else "not measured"
    return f"{words}: {row.note}" if row.note else words


def shown_flags(row: Row) -> list[str]:
    """The row's flags with its power doubt (power_doubt) after them: what an export's flags
    column and the terminal say. A doubt an earlier export wrote into the flags is said once."""
    flags = [f for f in row.flags if not f.startswith(UNTRUSTED_POWER)]
    doubt = power_doubt(row)
    return flags + [doubt] if doubt else flags


def doubtful_flags(row: Row) -> list[str]:
    """The flags that call for care (every flag but the marks of trust): what a surface
    paints in a warning colour."""
    return [f for f in shown_flags(row) if f not in TRUST_FLAGS]


class NotAResultFile(ValueError):
    """A file or document that is not a SiliconBench result; the message is one sentence."""


def new_id() -> str:
    import uuid  # here: it loads the platform module, which the app's first paint can do without
    return uuid.uuid4().hex


def now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


@dataclass
class Row:
    """One measured point of a run: a metric's value at some parameters, with its spread."""
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
        """The row as JSON-ready data; params is shared, not copied (see RunRecord.to_dict)."""
        return {"metric": self.metric, "value": self.value, "unit": self.unit,
                "params": self.params, "stats": self.stats.to_dict() if self.stats else None,
                "flags": list(self.flags), "note": self.note, "pct_of_peak": self.pct_of_peak,
                "samples": list(self.samples)}

    @classmethod
    def from_dict(cls, d: dict) -> Row:
        d = dict(d)
        d["stats"] = Stats.from_dict(d["stats"]) if d.get("stats") else None
        return cls(**{k: d.get(k) for k in ("metric", "value", "unit", "params", "stats",
                                             "note", "pct_of_peak")},
                   flags=list(d.get("flags") or []), samples=list(d.get("samples") or []))


@dataclass
class RunRecord:
    """One run as the store keeps it: what ran, where, with what, and its rows."""
    workload: str
    framework: str
    device: str
    params: dict[str, Any]
    id: str = field(default_factory=new_id)
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
    # Sampled by the parent while the run went on (siliconbench.core.telemetry): {"interval_s", "series":
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

    @property
    def device_label(self) -> str:
        """The device that ran it: the GPU's (or Apple chip's) name for an accelerator run,
        the CPU's for a CPU run; the user's (or a publication's) name for the machine where
        one was given. An H200 run on a Xeon host is 'NVIDIA H200', not 'Intel Xeon'."""
        if self.label:
            return self.label
        m = self.machine
        if self.device == "cpu":
            name = m.get("cpu_model") or self.device_name
        else:
            name = self.device_name or m.get("gpu_name")
        return name or m.get("chip") or self.machine_label

    @property
    def device_text(self) -> str:
        """The device that ran it and how it was addressed: 'NVIDIA H200 (torch cuda)'; what
        a listing of runs (the command's, the app's) heads its device column with."""
        return f"{self.device_name or self.device} ({self.framework} {self.device})"

    @property
    def identity(self) -> str:
        """The run's one name everywhere (legends, Compare columns, reports, exports):
        'device · framework device · when' ('published' for a published figure)."""
        return f"{self.device_label} · {self.framework} {self.device} · {self.when}"

    @property
    def when(self) -> str:
        if self.source == "published":
            return "published"
        try:
            t = _dt.datetime.fromisoformat(self.created_at).astimezone()
        except (TypeError, ValueError):
            return str(self.created_at)
        return t.strftime("%d %b %H:%M:%S")

    def to_dict(self) -> dict:
        """The record as JSON-ready data, for writing out: nested dicts (machine, settings,
        telemetry, ...) are the record's own, not copies. dataclasses.asdict copied every
        sample and telemetry point and made listing and exporting many runs slow."""
        d = {name: getattr(self, name) for name in self.__dataclass_fields__}
        d["rows"] = [r.to_dict() for r in self.rows]
        d["warnings"] = list(self.warnings)
        return d

    @classmethod
    def from_dict(cls, d: dict, validate_schema: bool = True) -> RunRecord:
        """validate_schema=False only for the store's own records: SiliconBench wrote them or
        validated them on import, and checking every row again makes a large store slow."""
        if validate_schema:
            validate(d)
        d = dict(d)
        d["rows"] = [Row.from_dict(r) for r in d.get("rows", [])]
        known = cls.__dataclass_fields__
        rec = cls(**{k: v for k, v in d.items() if k in known})
        if validate_schema:
            check_sense(rec)
        return rec


# What a record from outside may hold: numbers SiliconBench can compute with (a float64 holds
# every integer up to 2**53 exactly), and nesting far below Python's recursion limit.
MAX_INT = 2 ** 53
MAX_DEPTH = 32
# The largest result file import reads (siliconbench.core.files.read_small): an export of a thousand real
# runs is under 100 MB (the largest record here, an H200 all-reduce run, is 76 KB). The bounds
# on a record's strings, rows and samples are in the schema (siliconbench/resources/run_record.schema.json).
MAX_FILE_BYTES = 256 << 20


@cache
def _schema() -> dict:
    from siliconbench import resources
    text = resources.read_text("run_record.schema.json")
    return json.loads(text)


@cache
def _validator():
    """The schema compiled once to Python code (fastjsonschema): checking a record costs well
    under a millisecond, so importing a thousand runs takes seconds, not minutes."""
    import fastjsonschema
    # The $id is a name, not an address: without it refs resolve inside the document alone.
    schema = {k: v for k, v in _schema().items() if k != "$id"}
    return fastjsonschema.compile(schema, handlers={})


# Why a value breaks a rule, in words; never the value itself (it may be a megabyte).
_RULE_WORDS = {"type": "is of the wrong type", "enum": "is not an allowed value",
               "required": "lacks a required field", "pattern": "is not in the expected form",
               "minLength": "is empty", "maxLength": "is too long",
               "minimum": "is out of range", "maximum": "is out of range",
               "exclusiveMinimum": "is out of range", "exclusiveMaximum": "is out of range",
               "minItems": "has too few items", "maxItems": "has too many items",
               "oneOf": "is of the wrong kind",
               "additionalProperties": "has a field of the wrong kind"}
# The bounds no real run reaches (the schema's), said with their figure.
_BOUND_WORDS = {"maxLength": "is longer than {:,} characters",
                "maxItems": "has more than {:,} items",
                "maxProperties": "has more than {:,} fields"}


def validate(d: Any) -> None:
    """Raise NotAResultFile with one sentence unless `d` is a run record of a known schema."""
    import fastjsonschema

    if not isinstance(d, dict) or "workload" not in d or "rows" not in d:
        raise NotAResultFile("it is not a SiliconBench run record")
    version = d.get("schema")
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise NotAResultFile(f"it was written by a newer SiliconBench (schema {version}); "
                             "update SiliconBench to read it")
    try:
        _validator()(d)
    except fastjsonschema.JsonSchemaValueException as e:
        where = "/".join(clip(str(p), 24) for p in (e.path or [])[1:]) or "the record"
        if e.rule == "type":
            why = "should be " + " or ".join(_listed(e.rule_definition))
        elif e.rule == "required" and isinstance(e.value, dict):
            # The names come from the schema, not from the file.
            why = "lacks " + next((f for f in _listed(e.rule_definition) if f not in e.value),
                                  "a required field")
        elif e.rule in _BOUND_WORDS and isinstance(e.rule_definition, int):
            why = _BOUND_WORDS[e.rule].format(e.rule_definition) + ", more than any real run"
        else:
            why = _RULE_WORDS.get(e.rule or "", "breaks the record format")
        raise NotAResultFile(f"it is a damaged run record ({clip(where, 60)} {why})") from None


# Units whose figures are rates or durations: a measurement of one is above zero.
_TIMES = {"s", "ms", "us", "µs", "ns"}
# Point parameters a workload's own tables read (siliconbench.core.workloads.llm.llama_bench_table).
_POINT_NEEDS = {("llm", "prefill_tokens_per_s"): ("preset", "dtype", "batch", "prompt"),
                ("llm", "decode_tokens_per_s"): ("preset", "dtype", "batch", "gen_tokens",
                                                 "depth")}
# How far a row's value may be from its samples' median: float rounding only (the value is
# that median, siliconbench.core.stats).
_REL_TOLERANCE = 1e-6


def _positive_unit(unit: str) -> bool:
    return unit in _TIMES or unit.startswith("TFLOPS") or "/s" in unit


def _zero_by_definition(row: Row) -> bool:
    """All-reduce's bus bandwidth with one rank: 2(n-1)/n of the algorithm's is 0. A serving
    level's goodput where no request met the limits (`run serve --slo`) is 0 requests/s."""
    return (row.metric == "busbw" and row.params.get("ranks") == 1) or \
        row.metric == "goodput_req_s"


def check_sense(rec: RunRecord) -> None:
    """NotAResultFile unless the record's figures make sense, beyond the schema's shape: a
    rate or a time is above zero, a row's value agrees with its samples (the value is their
    median, or for a latency percentile lies among them), and the points a workload's tables
    read are there. Checked on every record from outside, so what is shown and what Compare
    reads from the samples are the same figure."""
    import statistics
    for name in ("created_at", "finished_at"):
        value = getattr(rec, name)
        if value is not None and not _is_date(value):
            raise NotAResultFile(f"its {name} {clip(repr(value), 40)} is not a date that "
                                 "exists")
    for i, row in enumerate(rec.rows):
        where = f"row {i + 1} ({clip(row.metric, 24)})"
        v = row.value
        if v is not None and _positive_unit(row.unit) and not (
                v > 0 or (v == 0 and _zero_by_definition(row))):
            raise NotAResultFile(f"its {where} claims {clip(repr(v), 24)} {clip(row.unit, 12)}"
                                 ", and a measured rate or time is above zero")
        if v is not None and row.samples and row.stats is not None:
            if "percentile" in row.params:
                lo, hi = min(row.samples), max(row.samples)
                agrees = lo * (1 - _REL_TOLERANCE) <= v <= hi * (1 + _REL_TOLERANCE)
            else:
                m = statistics.median(row.samples)
                agrees = abs(v - m) <= _REL_TOLERANCE * max(abs(v), abs(m)) + 1e-12
            if not agrees:
                raise NotAResultFile(f"its {where} gives a value that its samples do not "
                                     "(it should be their median)")
        for name in _POINT_NEEDS.get((rec.workload, row.metric), ()):
            if name not in row.params:
                raise NotAResultFile(f"its {where} lacks the point's {name}")


def _is_date(value: Any) -> bool:
    """An ISO 8601 time of a day that exists (not 30 February, not month 13), which this
    machine can show in its own time zone."""
    try:
        _dt.datetime.fromisoformat(value).astimezone()
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def _listed(types: Any) -> list[str]:
    return [str(t) for t in (types if isinstance(types, list) else [types])]


def _refuse_constant(name: str) -> float:
    raise NotAResultFile(f"it holds {name}, which is not a number JSON allows")


_NUMBERS = {float, int}
_TOO_LARGE = "it holds a number too large to use"


def _usable(value: float | int) -> bool:
    return math.isfinite(value) if type(value) is float else abs(value) <= MAX_INT


def _usable_numbers(values: list, ints: bool) -> bool:
    """All finite, and integers within MAX_INT: checked in C, as samples run to thousands."""
    try:
        total = math.fsum(values)   # inf or nan if one is; OverflowError past float range
    except OverflowError:
        return False
    return math.isfinite(total) and not (ints and max(map(abs, values)) > MAX_INT)


def _clean(doc: Any) -> Any:
    """The document with control characters taken out of every string (keys too), in place;
    NotAResultFile if it nests too deeply, holds text that is not valid Unicode, or a number
    that is not finite (1e999 parses as infinity) or an integer past MAX_INT."""
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise NotAResultFile("it is nested too deeply to be a run record")
        if isinstance(node, dict):
            if not all(k.isprintable() for k in node):
                cleaned = {without_controls(k): v for k, v in node.items()}
                node.clear()
                node.update(cleaned)
            items = node.items()
        elif isinstance(node, list):
            types = set(map(type, node))
            if types <= _NUMBERS:     # samples, series: checked in C
                if node and not _usable_numbers(node, int in types):
                    raise NotAResultFile(_TOO_LARGE)
                continue
            items = enumerate(node)
        else:
            continue
        for key, value in items:
            if isinstance(value, str):
                if not value.isprintable():
                    node[key] = without_controls(value)
            elif isinstance(value, (dict, list)):
                stack.append((value, depth + 1))
            elif type(value) in _NUMBERS and not _usable(value):
                raise NotAResultFile(_TOO_LARGE)
    return doc


def _count_rows(doc: Any) -> None:
    """Refuse a run of more rows than the schema allows before every value is walked (a
    million rows took 11 s to clean before the schema said no)."""
    limit = _schema()["properties"]["rows"]["maxItems"]
    runs = doc.get("runs") if isinstance(doc, dict) and doc.get("format") == FILE_FORMAT \
        else [doc]
    for run in runs if isinstance(runs, list) else []:
        rows = run.get("rows") if isinstance(run, dict) else None
        if isinstance(rows, list) and len(rows) > limit:
            raise NotAResultFile(f"it is a damaged run record (rows has more than {limit:,} "
                                 "items, more than any real run)")


def parse(text: str) -> Any:
    """JSON from outside as Python data, or NotAResultFile: standard JSON only (no NaN or
    Infinity), numbers SiliconBench can use, shallow nesting, control characters taken out."""
    text = text.removeprefix("\ufeff")   # a byte-order mark, as some editors on Windows write
    try:
        doc = json.loads(text, parse_constant=_refuse_constant)
    except NotAResultFile:
        raise
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise NotAResultFile("it is not JSON") from None
    except ValueError:      # Python parses no integer of over 4,300 digits
        raise NotAResultFile(_TOO_LARGE) from None
    except RecursionError:
        raise NotAResultFile("it is nested too deeply to be a run record") from None
    _count_rows(doc)
    try:
        return _clean(doc)
    except LoneSurrogate:
        raise NotAResultFile("it holds text that is not valid Unicode (a lone surrogate)") \
            from None


def records_from_json(text: str) -> list[RunRecord]:
    """Parse an export file (or a single run record) into records; NotAResultFile otherwise."""
    doc = parse(text)
    if isinstance(doc, dict) and doc.get("format") == FILE_FORMAT:
        runs = doc.get("runs")
        if not isinstance(runs, list):
            raise NotAResultFile("it has no list of runs")
        records = [RunRecord.from_dict(r) for r in runs]
        seen: set[str] = set()
        for rec in records:
            if rec.id in seen:
                raise NotAResultFile(f"it holds two runs with the id {clip(rec.id, 24)}, and "
                                     "each run has an id of its own")
            seen.add(rec.id)
        return records
    return [RunRecord.from_dict(doc)]


def records_from_file(path) -> list[RunRecord]:
    """The records in a result file; NotAResultFile if it is not one (OSError if it cannot be
    read). Only a regular file of at most MAX_FILE_BYTES is read (siliconbench.core.files.read_small: a
    FIFO or a link to /dev/zero is refused, not waited on or read for good). Bytes are decoded
    here, so text that is not UTF-8 is refused like any foreign file."""
    from siliconbench.core.files import NotReadable, read_small
    try:
        data = read_small(path, MAX_FILE_BYTES, "result file", encoding=None)
    except NotReadable as e:   # its sentence begins with the path, which the caller names
        raise NotAResultFile("it " + str(e).removeprefix(str(path)).strip().removesuffix(".")) \
            from None
    try:
        return records_from_json(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise NotAResultFile("it is not UTF-8 text") from None


def read_result_files(paths: list, name: Callable[[Any], str] = str
                      ) -> tuple[list[RunRecord], list[str]]:
    """The records of every file in `paths` that is a result file, and one sentence for each
    that is not, naming it (as `name` gives it): a bad file costs itself, not the others."""
    from pathlib import Path
    records: list[RunRecord] = []
    refused: list[str] = []
    for path in paths:
        shown = name(path)
        try:
            if Path(path).is_dir():
                refused.append(f"{shown} is a folder, not a result file.")
                continue
            records += records_from_file(path)
        except FileNotFoundError:
            refused.append(f"{shown}: no such file.")
        except OSError as e:
            refused.append(f"{shown} cannot be read: {e.strerror or e}.")
        except NotAResultFile as e:
            refused.append(f"{shown} is not a SiliconBench result file: {e}.")
    return records, refused


def dumps(obj: Any, **kwargs: Any) -> str:
    """Standard JSON, which every reader takes: a value that is not finite (none should be
    left, but a float division can make one) is written as null, never as NaN or Infinity."""
    try:
        return json.dumps(obj, allow_nan=False, **kwargs)
    except ValueError:
        return json.dumps(_finite(obj), allow_nan=False, **kwargs)


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def exported(rec: RunRecord) -> dict:
    """The record as JSON written for others (an export, --json): every raw value kept, each
    row's flags with its power doubt after them (shown_flags), so an untrusted power carries
    its flag wherever the file goes. Import reads it back as it was, the doubt in its flags."""
    d = rec.to_dict()
    d["rows"] = [r.to_dict() | {"flags": shown_flags(r)} for r in rec.rows]
    return d


def records_to_json(records: list[RunRecord], doubts: bool = False) -> str:
    """A result file of the records: as they are (a run the store could not keep comes back
    the same), or with doubts=True as others read them (exported: untrusted powers flagged)."""
    doc = {"format": FILE_FORMAT, "schema": SCHEMA_VERSION, "exported_at": now_iso(),
           "runs": [exported(r) if doubts else r.to_dict() for r in records]}
    return dumps(doc, indent=1, sort_keys=True)
