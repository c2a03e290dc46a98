"""A comparison as the app's Compare tab builds and words it, without Qt: its sides (one per
device, or one per run), lettered A, B, ...; the published references described and matched
with runs; the verdict table's headers, cells and tooltips, and the summary line over it.
siliconbench.core.compare holds the statistics."""

from __future__ import annotations

from siliconbench.core import reference
from siliconbench.core.compare import (
    CONFIDENCE,
    ComparedRow,
    Comparison,
    Side,
    cell_words,
    direction,
    row_key,
)
from siliconbench.core.numbers import metric_heading, p_value, quantity, ratio
from siliconbench.core.report import cell_text, point_label
from siliconbench.core.results import RunRecord

FIXED = ["Workload", "Metric", "Point"]   # the verdict table's columns before the sides'


# ---------------------------------------------------------------- sides

def sides_for(records: list[RunRecord]) -> list[Side]:
    """One side per device (a host's GPU and its CPU are two sides, each named by its device:
    'NVIDIA H200' beside 'AMD EPYC'); runs of a single device are compared run by run, each
    under its identity (device · framework device · time)."""
    machines: dict[str, list[RunRecord]] = {}
    for rec in records:
        machines.setdefault(rec.device_label, []).append(rec)
    if len(machines) >= 2:
        sides = [Side(label, recs) for label, recs in machines.items()]
    else:
        sides = [Side(rec.identity, [rec]) for rec in records]
    return sides


def reference_side(rec: RunRecord) -> Side:
    return Side(rec.identity, [rec])


def side_letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else str(i + 1)


def side_name(side: Side) -> str:
    """A side's label, '(published)' after it where it is a published figure that does not
    say so already (the command's column heads say it the same way)."""
    return side.label + (" (published)" if side.published and "published" not in side.label
                         else "")


# ---------------------------------------------------------------- published references

def measured_points(rec: RunRecord) -> str:
    """What a published record measured, in words: 'samples_per_s at batch_size=64, ...'."""
    seen: list[str] = []
    for row in rec.rows:
        text = metric_heading(row.metric, row.unit) + \
            (f" at {point_label(row.params)}" if row.params else "")
        if text not in seen:
            seen.append(text)
    return "; ".join(seen[:4]) + (f"; and {len(seen) - 4} more" if len(seen) > 4 else "")


def reference_details(rec: RunRecord) -> str:
    """A published reference at a glance: what, with which parameters, on what, from where."""
    prov = rec.provenance or {}
    params = point_label(rec.params) if rec.params else "its defaults"
    lines = [f"Measured: {rec.workload} on {rec.framework} {rec.device}, parameters {params}",
             f"Rows: {measured_points(rec)}",
             f"Machine: {rec.machine_label} — {prov.get('hardware', '')}".rstrip(" —"),
             f"Source: {prov.get('source', 'unknown')}"
             + (f" ({prov['software']})" if prov.get("software") else "")]
    return "\n".join(lines)


def reference_line(rec: RunRecord) -> str:
    """The reference in one line: what it measured and whose figure it is."""
    params = point_label(rec.params) if rec.params else "defaults"
    source = (rec.provenance or {}).get("source", "unknown source")
    return f"Measured {rec.workload} ({params}) on {rec.framework} {rec.device}, " \
        f"{rec.machine_label}; source: {source}. Hover for its rows."


def spec_params(rec: RunRecord) -> dict:
    """The workload parameters that repeat a reference: its own, and the point parameters
    of its rows that are parameters too (a row's 'size' is the 'sizes' parameter)."""
    from siliconbench.core.catalogue import workload
    names = {p.name for p in workload(rec.workload).params}
    params: dict = {}
    for row in rec.rows:
        for k, v in row.params.items():
            if k in names:
                params.setdefault(k, v)
            elif f"{k}s" in names:
                params.setdefault(f"{k}s", [])
                if v not in params[f"{k}s"]:
                    params[f"{k}s"].append(v)
    params.update({k: v for k, v in rec.params.items() if k in names})
    return params


def matches(rec: RunRecord, ref: RunRecord) -> bool:
    """Whether a run and a published reference share at least one row to compare."""
    keys = {row_key(ref.workload, r) for r in ref.rows}
    return any(row_key(rec.workload, r) in keys for r in rec.rows if r.value is not None)


def matching_references(records: list[RunRecord]) -> list[RunRecord]:
    return [ref for ref in reference.references() if any(matches(r, ref) for r in records)]


# ---------------------------------------------------------------- what the tab says

def summary_text(cmp: Comparison | None, records: list[RunRecord],
                 references: list[RunRecord]) -> str:
    """The line over the table: how many rows were compared and the sides' letters, or why
    there is nothing to compare (with a reference no selected run matches: how to match it)."""
    if cmp is None:
        return ("Select two or more runs under Results (from one machine or several), or "
                "one run and a published reference.")
    sides = "   ".join(f"{side_letter(i)} = {s.label}" for i, s in enumerate(cmp.sides))
    if not cmp.rows:
        missing = [r for r in references if not any(matches(x, r) for x in records)]
        if missing:
            ref = missing[0]
            return (f"Nothing to compare: no selected run measured what {ref.identity} "
                    f"did ({ref.workload} with {point_label(spec_params(ref))}). Choose a "
                    "device under “Run on” and press Run It Here, then select that run."
                    f"\n{sides}")
        return f"Nothing to compare: the selected runs share no workload and point.\n{sides}"
    left = f" · {cmp.left_out} row(s) only one side has left out" if cmp.left_out else ""
    return f"{len(cmp.rows)} row(s) compared{left}. {sides}"


def headers(sides: list[Side]) -> list[str]:
    """The verdict table's columns: FIXED, a letter per side, then 'B vs A' per other side."""
    return FIXED + [side_letter(i) for i in range(len(sides))] + [
        f"{side_letter(i)} vs A" for i in range(1, len(sides))]


def verdict_header_tip(sides: list[Side], i: int) -> str:
    """The tooltip of side i's verdict column."""
    return (f"{side_letter(i)} ({sides[i].label}) against A ({sides[0].label}), or the "
            "side named in brackets: how many times faster or slower, and what the "
            "statistics say")


def row_texts(row: ComparedRow) -> list[str]:
    """A row of the verdict table: FIXED's texts, each side's median (its interval is in the
    tooltip and the chart's whiskers, so the verdicts fit beside it without scrolling), then
    each other side's verdict in words."""
    cells = [row.workload, metric_heading(row.metric, row.unit), point_label(row.params)]
    cells += [quantity(c.value, row.unit) if c else "" for c in row.cells]
    return cells + [verdict_text(row, k) for k in range(1, len(row.cells))]


def verdict_text(row: ComparedRow, k: int) -> str:
    """Side k's verdict on a row ('1.23× faster'), '' where it has none."""
    c = row.cells[k]
    if c is None or not c.verdict:
        return ""
    # A row another side is the baseline of says so.
    vs = f" (vs {side_letter(row.baseline)})" if row.baseline != 0 else ""
    return cell_words(c, direction(row.metric, row.unit)) + vs


def verdict_tip(row: ComparedRow, k: int) -> str:
    """Side k's verdict with the ratio of medians and the test's p-value."""
    cell = row.cells[k]
    tip = [f"{side_letter(k)} vs {side_letter(row.baseline)}: {verdict_text(row, k)}",
           f"Ratio of medians: {ratio(cell.ratio)}"]
    if cell.p_value is not None:
        tip.append(f"Mann-Whitney p = {p_value(cell.p_value)}, {cell.n or 0} blocks")
    return "\n".join(tip)


def value_tip(side: Side, row: ComparedRow, k: int) -> str:
    """Side k's value with its interval, how many blocks it stands on, its flags and note."""
    c = row.cells[k]
    tip = [f"{side.label}: {cell_text(c, row.unit)}"]
    if c.n:
        tip.append(f"{c.n} blocks; [ ]: {CONFIDENCE:.0%} interval of the median")
    tip += c.flags + ([c.note] if c.note else [])
    return "\n".join(tip)


def chart_groups(cmp: Comparison) -> list[tuple[str, str, str]]:
    """(workload, metric, unit) of each chart the comparison can draw, in row order."""
    groups: list[tuple[str, str, str]] = []
    for r in cmp.rows:
        key = (r.workload, r.metric, r.unit)
        if key not in groups:
            groups.append(key)
    return groups
