"""Export runs: tidy CSV (one line per result row) and JSON (the full records, which import
reads back unchanged but for the doubt an untrusted power carries in its flags)."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from pathlib import Path

from siliconbench.core.columns import ROW_COLUMNS, point_headers, point_keys, without_empty
from siliconbench.core.results import RunRecord, records_to_json

# SiliconBench's own result files: the JSON export under a name the Mac app registers for
# (setup_app.py's document type), so a double click opens them in the app.
RESULT_SUFFIX = ".sbresults"
FORMAT_BY_SUFFIX = {".csv": "csv", ".json": "json", RESULT_SUFFIX: "json"}

# The run's columns, before each row's point and its own (siliconbench.core.columns).
RUN_COLUMNS = ["run_id", "created_at", "machine", "device", "device_name", "framework",
               "workload", "status", "source", "run"]
# Columns every CSV has, filled or not; any other that no line fills is left out.
ALWAYS = [*RUN_COLUMNS, "metric", "value", "unit", "flags"]

# Spreadsheets run a cell that starts with one of these as a formula (CSV injection), also
# after leading spaces or control characters, which they skip.
_FORMULA_START = ("=", "+", "-", "@")


def csv_cell(value):
    """A value as a CSV cell no spreadsheet runs (OWASP's advice): text that starts, once
    whitespace and control characters are skipped, with = + - or @ gets a leading quote.
    Numbers stay numbers; None is an empty cell."""
    if value is None:
        return ""
    if not isinstance(value, str):
        return value
    start = next((ch for ch in value if ch.isprintable() and not ch.isspace()), "")
    if start in _FORMULA_START or value[:1] in ("\t", "\r"):
        return "'" + value
    return value


def csv_text(header: list, lines: list[list]) -> str:
    """Header and lines as CSV, every cell (the header's too) through csv_cell. Lines end in
    CRLF (RFC 4180): then the csv module quotes every cell holding a CR or an LF, so a CR in a
    label cannot start a new row in a reader that takes a bare CR as a line break."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow([csv_cell(v) for v in header])
    w.writerows([[csv_cell(v) for v in line] for line in lines])
    return buf.getvalue()


def csv_table(records: list[RunRecord]) -> tuple[list[str], list[list]]:
    """(header, lines): run columns, the point's parameters, the value and its statistics,
    without the columns none of these rows fills (ALWAYS stay). A power no energy counter
    measured keeps its raw figure, with 'power not trusted: why' in its flags."""
    keys = point_keys(row for rec in records for row in rec.rows)
    row_keys = [c.key for c in ROW_COLUMNS]
    header = RUN_COLUMNS + point_headers(keys, RUN_COLUMNS + row_keys) + row_keys
    lines = []
    for rec in records:
        run_part = [rec.id, rec.created_at, rec.machine_label, rec.device, rec.device_name,
                    rec.framework, rec.workload, rec.status, rec.source, rec.identity]
        for row in rec.rows:
            lines.append(run_part + [row.params.get(k) for k in keys]
                         + [c.value(row) for c in ROW_COLUMNS])
    return without_empty(header, lines, ALWAYS)


def to_csv(records: list[RunRecord]) -> str:
    return csv_text(*csv_table(records))


def to_json(records: list[RunRecord], paths: bool = False) -> str:
    """The records with every raw value; an untrusted power's doubt in its row's flags. A
    user's model file (--model-path) by its name alone unless `paths`: an export leaves the
    machine, and the folders a file sits in are the user's business."""
    if not paths:
        records = [replace(r, params={**r.params, "model_path": Path(r.params["model_path"])
                                      .name}) if r.params.get("model_path") else r
                   for r in records]
    return records_to_json(records, doubts=True)
