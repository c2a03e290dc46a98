"""The columns of a result row, defined once for every surface that lists rows: the CSV export
(siliconbench.core.export), the terminal (`siliconbench results --show`, `run`), the app's row
table (siliconbench.gui.row_table), and the point parameters and their CSV headers that the
comparison report shares (siliconbench.core.report).

Each column has its CSV key, the raw value a CSV keeps (full precision, never the text), and,
where a person sees it, its heading and its text (siliconbench.core.numbers: one way a figure
reads). A column with no heading is CSV only: on screen the value's text carries its unit and
the median is the value, p25 and p75 read as one p25–p75 cell, the interval's ends as one."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from siliconbench.core.numbers import (
    NOT_MEASURED,
    ci_text,
    metric_title,
    peak_text,
    spread_text,
    value_text,
)
from siliconbench.core.results import Row, power_doubt, shown_flags


@dataclass(frozen=True)
class Column:
    key: str                                    # the CSV header
    value: Callable[[Row], Any]                 # what CSV keeps
    heading: str | None = None                  # on screen; None: CSV only
    text: Callable[[Row], str] | None = None    # how the cell reads on screen
    figure: bool = False                        # a number: right-aligned in the terminal


def _stat(name: str) -> Callable[[Row], Any]:
    return lambda row: getattr(row.stats, name) if row.stats else None


def n_text(row: Row) -> str:
    """The timed blocks behind a measured value; nothing for a single figure."""
    return str(row.stats.n) if row.stats and row.value is not None else ""


def shown_value(row: Row) -> str:
    """The value with its unit; an em dash for a power no energy counter measured
    (siliconbench.core.results.power_doubt: its flag says why), as the app's table shows it."""
    return NOT_MEASURED if power_doubt(row) else value_text(row)


def peak_cell(row: Row) -> str:
    """'87% of peak', 'peak unknown'; nothing for a row without statistics: a published
    figure, or one derived or read once (peak memory, power, a loss difference) has no peak."""
    return peak_text(row) if row.stats else ""


ROW_COLUMNS: tuple[Column, ...] = (
    # A sustained run mixes metrics with the same unit (samples/s overall and per minute).
    Column("metric", lambda row: row.metric, "metric", lambda row: metric_title(row.metric)),
    # CSV keeps an untrusted power's raw figure, its flag beside it; a person sees a dash.
    Column("value", lambda row: row.value, "value", shown_value, figure=True),
    Column("unit", lambda row: row.unit),
    Column("median", _stat("median")),
    Column("p25", _stat("p25"), "p25–p75", spread_text, figure=True),
    Column("p75", _stat("p75")),
    Column("ci_low", _stat("ci_low"), "95% CI", ci_text, figure=True),
    Column("ci_high", _stat("ci_high")),
    Column("n", _stat("n"), "n", n_text, figure=True),
    Column("pct_of_peak", lambda row: row.pct_of_peak, "% of peak", peak_cell, figure=True),
    # Flags by their ids, as README's table and the JSON name them (the app says them in words),
    # and a power's doubt in words (siliconbench.core.results.shown_flags).
    Column("flags", lambda row: csv_flags(shown_flags(row)), "flags",
           lambda row: ", ".join(shown_flags(row))),
    Column("note", lambda row: row.note, "note", lambda row: row.note or ""),
)
SHOWN: tuple[Column, ...] = tuple(c for c in ROW_COLUMNS if c.heading)   # the app's table


def flags_and_note(row: Row) -> str:
    """'noisy: the note': flags and note in one cell; a power's doubt first, on its own
    ('power not trusted: why — board (NVML) power, mean of 1 sample ...')."""
    doubt = power_doubt(row)
    flags = [f for f in shown_flags(row) if f != doubt]
    return " — ".join(x for x in (doubt, ": ".join(x for x in (", ".join(flags), row.note)
                                                   if x)) if x)


# The terminal's: flags and note share a cell, which keeps its table from wrapping a long note.
TERMINAL: tuple[Column, ...] = tuple(replace(c, text=flags_and_note) if c.key == "flags" else c
                                     for c in SHOWN if c.key != "note")


def csv_flags(flags: Iterable[str]) -> str:
    return ";".join(flags)


def app_heading(heading: str) -> str:
    """A heading as the app's table heads it: a word capitalised ('Value'), a symbol as it is
    ('n', 'p25–p75', '95% CI')."""
    return heading[:1].upper() + heading[1:] if heading.isalpha() and len(heading) > 1 else heading


def point_keys(rows: Iterable[Any]) -> list[str]:
    """The parameters naming the rows' points (size, dtype, batch_size, ...), each once, in
    the order they first come: a column each, before the row's own."""
    keys: list[str] = []
    for row in rows:
        keys += [k for k in row.params if k not in keys]
    return keys


def point_headers(keys: list[str], taken: Iterable[str]) -> list[str]:
    """The CSV headers of the point's parameters: 'param_' before one named like a column
    already in the file."""
    taken = set(taken)
    return [k if k not in taken else f"param_{k}" for k in keys]


def without_empty(header: list[str], lines: list[list], keep: Iterable[str] = ()
                  ) -> tuple[list[str], list[list]]:
    """The table without the columns no line fills (a parameter or statistic none of these
    runs has), but those named in `keep`."""
    keep = set(keep)
    used = [j for j, name in enumerate(header)
            if name in keep or any(line[j] not in (None, "") for line in lines)]
    return [header[j] for j in used], [[line[j] for j in used] for line in lines]
