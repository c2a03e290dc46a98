"""A comparison as the app, the command and the report build and word it, without Qt: its
sides (one per run identity: machine, device, framework and measurement settings; repeats
together), lettered A, B, ... and named apart; each workload's best vs best; the published
references described and matched with runs; the verdict table's headers, cells and
tooltips, and the summary line over it. siliconbench.core.compare_stats holds the statistics."""

from __future__ import annotations

from typing import Any

from siliconbench.core import reference
from siliconbench.core.compare_stats import (
    CONFIDENCE,
    BestRow,
    Cell,
    ComparedRow,
    Comparison,
    Side,
    cell_for_runs,
    cell_words,
    compare,
    direction,
    ratio_words,
    row_key,
)
from siliconbench.core.numbers import metric_heading, p_value, quantity, ratio
from siliconbench.core.pairing import (  # noqa: F401  (measurement_settings: callers' name)
    NOT_SETTINGS,
    kind_words,
    measurement_settings,
    row_traits,
    run_traits,
)
from siliconbench.core.report import (
    best_point,
    best_title,
    best_words,
    cell_text,
    compared_sentence,
    point_label,
)
from siliconbench.core.results import Row, RunRecord
from siliconbench.core.sides import (  # noqa: F401  (the app's and the command's names)
    base_name,
    group_runs,
    machine_details,
    machine_identity,
    machine_names,
    name_sides,
    older_machine_notes,
    run_identity,
    sides_for,
    split_sides,
)

FIXED = ["Workload", "Metric", "Point"]   # the verdict table's columns before the sides'


# ---------------------------------------------------------------- comparing

def compared(sides: list[Side]) -> Comparison:
    """The sides compared point by point (siliconbench.core.compare_stats.compare), with each
    workload's best vs best beside (best_of_sides): what the app, the command and the
    report show."""
    cmp = compare(sides)
    cmp.best = best_of_sides(sides)
    cmp.warnings = list(dict.fromkeys(cmp.warnings + best_warnings(sides, cmp.best)))
    cmp.notes += unlike_kind_notes(sides, cmp.best) + older_machine_notes(sides)
    from siliconbench.core.telemetry.burst import burst_sustained_notes
    cmp.notes += burst_sustained_notes(sides)     # burst and sustained side by side
    return cmp


def _kind(params: dict[str, Any], traits: dict[str, str] | None = None) -> tuple:
    """What a point measures beyond its sizes: its parameters that are not numbers (dtype,
    model, preset, op, data), and the kind of arithmetic its run did (pairing.kind_words:
    TF32, a mixed precision). A best vs best compares like kinds only: a CPU's float32
    product with a GPU's plain float32 one, never with its TF32 one, nor a tiny LLM with an
    8B one."""
    return tuple(sorted((k, str(v)) for k, v in params.items()
                        if isinstance(v, bool) or not isinstance(v, (int, float)))) + \
        tuple(kind_words(traits or {}))


def best_of_sides(sides: list[Side]) -> list[BestRow]:
    """Per workload and kind of point (_kind) that two or more sides measured: each side's
    best point of the workload's headline metric (siliconbench.core.catalogue), a point of
    several runs standing by all of them (cell_for_runs: an outlier run is no side's best),
    with its ratio to the first side's best, each cell saying how its run is unlike the
    first's or not known to be alike (pairing). A best of 0 (one rank's bus bandwidth) is
    none."""
    from siliconbench.core.catalogue import catalogue
    from siliconbench.core.pairing import differences, unknown_text, unlike_text
    from siliconbench.core.telemetry import power_trusted
    declared = catalogue()
    # (workload, kind) -> per side: {point: [(run, row), ...]}
    found: dict[tuple, list[dict[tuple, list[tuple[RunRecord, Row]]]]] = {}
    for i, side in enumerate(sides):
        for rec in sorted(side.records, key=lambda r: r.created_at):
            w = declared.get(rec.workload)
            run = run_traits(rec)
            for row in rec.rows:
                if w is None or row.metric != w.metric or not row.value \
                        or not power_trusted(row):
                    continue
                kind = _kind(row.params, row_traits(rec, row, run))
                per_side = found.setdefault((rec.workload, kind), [{} for _ in sides])
                per_side[i].setdefault(row_key(rec.workload, row), []).append((rec, row))
    out = []
    for (workload, _), per_side in found.items():
        picked: list[tuple[Cell, list] | None] = []
        for points in per_side:
            cells = [(cell_for_runs(entries), entries) for entries in points.values()]
            cells = [c for c in cells if c[0].value]
            if not cells:
                picked.append(None)
                continue
            lower = direction(cells[0][1][-1][1].metric, cells[0][1][-1][1].unit) == "lower"
            picked.append((min if lower else max)(cells, key=lambda c: c[0].value))
        present = [i for i, p in enumerate(picked) if p is not None]
        if len(present) < 2:
            continue
        cells = [p[0] if p is not None else None for p in picked]
        base = cells[present[0]]
        brec, brow = picked[present[0]][1][-1]
        for i in present[1:]:
            cells[i].ratio = cells[i].value / base.value if base.value else None
            rec, row = picked[i][1][-1]
            differ, unknown = differences(row_traits(brec, brow), row_traits(rec, row),
                                          brec.framework == rec.framework)
            cells[i].unlike = unlike_text(differ) or None
            cells[i].unknown = unknown_text(
                unknown, (side_letter(present[0]), side_letter(i))) or None
        out.append(BestRow(workload, brow.metric, brow.unit, cells,
                           [dict(p[1][-1][1].params) if p is not None else None
                            for p in picked],
                           present[0], " · ".join(kind_words(row_traits(brec, brow)))))
    return out


def unlike_kind_notes(sides: list[Side], bests: list[BestRow]) -> list[str]:
    """Where sides measured one workload's headline at points of one dtype but of another
    kind of arithmetic (TF32 beside plain float32) and so have no best vs best between them,
    a sentence that says so: 'gemm: NVIDIA H200 measured float32 · TF32, AMD EPYC float32:
    unlike kinds, not compared best vs best'."""
    from siliconbench.core.catalogue import catalogue
    declared = catalogue()
    kinds: dict[tuple, dict[int, set[str]]] = {}
    for i, side in enumerate(sides):
        for rec in side.records:
            w = declared.get(rec.workload)
            run = run_traits(rec)
            for row in rec.rows:
                if w is None or row.metric != w.metric or not row.value:
                    continue
                plain = _kind(row.params)
                words = " · ".join([*(v for k, v in plain if k in ("dtype", "preset")),
                                    *kind_words(row_traits(rec, row, run))])
                kinds.setdefault((rec.workload, plain), {}).setdefault(i, set()).add(words)
    out = []
    for (workload, _), by_side in kinds.items():
        if len(by_side) < 2:
            continue
        paired = {i for b in bests if b.workload == workload
                  for i, c in enumerate(b.cells) if c is not None}
        if len({frozenset(k) for k in by_side.values()}) > 1 and \
                any(i not in paired for i in by_side):
            said = ", ".join(f"{sides[i].label} {' and '.join(sorted(k))}"
                             for i, k in by_side.items())
            out.append(f"not compared best vs best ({workload}): {said}, unlike kinds of "
                       "arithmetic")
    return out


def best_warnings(sides: list[Side], bests: list[BestRow]) -> list[str]:
    """The best vs best pairs not known to be alike: a setting that changes the measurement
    named by one run only ('not known to be alike (llm, best vs best): decode loop unknown
    for NVIDIA H200 (older record)')."""
    from siliconbench.core.pairing import NOT_KNOWN
    out = []
    for b in bests:
        for i, c in enumerate(b.cells):
            if c is not None and c.unknown:
                text = c.unknown
                for k in (b.baseline, i):
                    text = text.replace(f" for {side_letter(k)} (", f" for {sides[k].label} (")
                out.append(f"{NOT_KNOWN} ({b.workload}, best vs best): {text}")
    return out


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

def hidden_sides(cmp: Comparison) -> list[int]:
    """The sides that share no compared result with another, nor a best vs best row of the
    table (table_bests): the verdict table gives them no column."""
    rows = [*cmp.rows, *table_bests(cmp)]
    return [i for i in range(len(cmp.sides)) if not any(r.cells[i] for r in rows)]


def letters(indices: list[int]) -> str:
    names = [side_letter(i) for i in indices]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def hidden_sentence(cmp: Comparison) -> str:
    """Which sides the table leaves out and why, '' where none."""
    hidden = hidden_sides(cmp)
    if not hidden or not cmp.rows:
        return ""
    verb = "shares" if len(hidden) == 1 else "share"
    return (f"{letters(hidden)} {verb} no result with another side and "
            f"{'is' if len(hidden) == 1 else 'are'} not in the table.")


def unshared(cmp: Comparison, best: BestRow) -> list[int]:
    """The sides of a best vs best, other than its baseline, that share no compared row of
    its workload and metric with the baseline: where the point-by-point rows say nothing of
    the pair, the best vs best answers."""
    shared = [{i for i, c in enumerate(r.cells) if c is not None} for r in cmp.rows
              if (r.workload, r.metric) == (best.workload, best.metric)]
    return [k for k, c in enumerate(best.cells) if c is not None and k != best.baseline
            and not any({k, best.baseline} <= pair for pair in shared)]


def table_bests(cmp: Comparison) -> list[BestRow]:
    """The best vs best rows the verdict table shows under its point-by-point rows: those
    with a pair of sides that share no compared point (unshared)."""
    return [b for b in cmp.best if unshared(cmp, b)]


def best_lines(cmp: Comparison, only_unshared: bool = False,
               bests: list[BestRow] | None = None) -> list[str]:
    """A line per side's best vs best: 'gemm dtype=float32, best vs best: B 595× slower
    than A (B 0.0896 TFLOPS at size=128, A 53.3 TFLOPS at size=16384)'. With only_unshared,
    only pairs of sides that share no compared row of that metric (unshared): where the
    point-by-point rows say nothing of them. `bests`: these of cmp.best only."""
    out = []
    for b in cmp.best if bests is None else bests:
        base = b.baseline
        ks = unshared(cmp, b) if only_unshared else \
            [k for k, c in enumerate(b.cells) if c is not None and k != base]

        def said(i: int) -> str:
            return (f"{side_letter(i)} {quantity(b.cells[i].value, b.unit)} at "
                    f"{best_point(b, i)}")
        for k in ks:
            words = ratio_words(b.cells[k].ratio, direction(b.metric, b.unit))
            out.append(f"{best_title(b)}, best vs best: {side_letter(k)} "
                       f"{words + ' than' if words else 'beside'} {side_letter(base)} "
                       f"({said(k)}, {said(base)})")
    return out


def summary_text(cmp: Comparison | None, records: list[RunRecord],
                 references: list[RunRecord]) -> str:
    """The line over the table: how many results were compared, what the table leaves out,
    each workload's best vs best where the sides share no point, and the sides' letters; or
    why there is nothing to compare (with a reference no selected run matches: how to match
    it)."""
    if cmp is None:
        return ("Select two or more runs under Results (from one machine or several), or "
                "one run and a published reference.")
    sides = "   ".join(f"{side_letter(i)} = {s.label}" for i, s in enumerate(cmp.sides))
    notes = "".join(f" {n[:1].upper()}{n[1:]}." for n in cmp.notes)
    best = "".join(f"\n{line}." for line in best_lines(cmp, only_unshared=True))
    if not cmp.rows:
        missing = [r for r in references if not any(matches(x, r) for x in records)]
        if missing:
            ref = missing[0]
            return (f"Nothing to compare: no selected run measured what {ref.identity} "
                    f"did ({ref.workload} with {point_label(spec_params(ref))}). Choose a "
                    "device under “Run on” and press Run It Here, then select that run."
                    f"\n{sides}")
        if best or notes:
            return f"No point both sides measured.{notes}{best}\n{sides}"
        return f"Nothing to compare: the selected runs share no workload and point.\n{sides}"
    hidden = hidden_sentence(cmp)
    return (f"{compared_sentence(cmp)}{' ' + hidden if hidden else ''}{notes} {sides}"
            f"{best}")


def column_baseline(rows: list[ComparedRow], k: int) -> int:
    """The side that side k's verdict column is measured against: the baseline of most of
    its verdicts (the first side where none)."""
    bases = [r.baseline for r in rows if r.cells[k] is not None and r.baseline != k]
    return max(sorted(set(bases)), key=bases.count) if bases else 0


def headers(sides: list[Side], rows: list[ComparedRow] = ()) -> list[str]:
    """The verdict table's columns: FIXED, a letter per side, then 'B vs A' per other side,
    headed by the side its verdicts are against ('E vs D' where D is their baseline)."""
    return FIXED + [side_letter(i) for i in range(len(sides))] + [
        f"{side_letter(i)} vs {side_letter(column_baseline(list(rows), i))}"
        for i in range(1, len(sides))]


def verdict_header_tip(sides: list[Side], i: int, rows: list[ComparedRow] = ()) -> str:
    """The tooltip of side i's verdict column."""
    b = column_baseline(list(rows), i)
    return (f"{side_letter(i)} ({sides[i].label}) against {side_letter(b)} "
            f"({sides[b].label}), or the side named in brackets: how many times faster or "
            "slower, and what the statistics say")


def row_texts(row: ComparedRow, bases: list[int] | None = None) -> list[str]:
    """A row of the verdict table: FIXED's texts, each side's median (its interval is in the
    tooltip and the chart's whiskers, so the verdicts fit beside it without scrolling), then
    each other side's verdict in words. `bases`: each side's column baseline
    (column_baseline), the first side where not given."""
    cells = [row.workload, metric_heading(row.metric, row.unit), point_label(row.params)]
    cells += [quantity(c.value, row.unit) if c else "" for c in row.cells]
    return cells + [verdict_text(row, k, bases[k] if bases else 0)
                    for k in range(1, len(row.cells))]


BEST_POINT = "best vs best"   # the Point column of a best vs best row


def best_row_texts(best: BestRow, bases: list[int] | None = None,
                   only: list[int] | None = None) -> list[str]:
    """A best vs best row of the verdict table, as row_texts: 'best vs best' and the kind
    of point in the Point column, each side's best, then its words against the baseline's
    with the points they divide ('595× slower (size=128 vs size=16384)'); with `only`
    (unshared), only those sides' words: the point rows say the others'."""
    kind = best_title(best)[len(best.workload):].strip()
    cells = [best.workload, metric_heading(best.metric, best.unit),
             BEST_POINT + (f" · {kind}" if kind else "")]
    cells += [quantity(c.value, best.unit) if c else "" for c in best.cells]
    for k in range(1, len(best.cells)):
        said = only is None or k in only
        cells.append(best_verdict(best, k, bases[k] if bases else 0) if said else "")
    return cells


def best_verdict(best: BestRow, k: int, column_base: int = 0) -> str:
    """Side k's best against the baseline's, short enough for a verdict column ('595×
    slower (size=128 vs size=16384)': the row's Point says 'best vs best'); '' where k has
    none or is the baseline. best_words says it whole."""
    words = best_words(best, k, label=False)
    if not words:
        return ""
    vs = f", vs {side_letter(best.baseline)}" if best.baseline != column_base else ""
    return f"{words} ({best_point(best, k)} vs {best_point(best, best.baseline)}{vs})"


def best_value_tip(side: Side, best: BestRow, k: int) -> str:
    """Side k's best with its interval, the point it was measured at and its flags."""
    c = best.cells[k]
    tip = [f"{side.label}: best {cell_text(c, best.unit)} at {best_point(best, k)}"]
    if c.n:
        tip.append(f"{c.n} blocks; [ ]: {CONFIDENCE:.0%} interval of the median")
    tip.append("Best vs best: each side's best point, so no statistical test: the points "
               "differ.")
    return "\n".join(tip + c.flags + ([c.note] if c.note else []))


def verdict_text(row: ComparedRow, k: int, column_base: int = 0) -> str:
    """Side k's verdict on a row ('1.23× faster'), '' where it has none."""
    c = row.cells[k]
    if c is None or not c.verdict:
        return ""
    # A row whose baseline is not the one its column is headed by says so.
    vs = f" (vs {side_letter(row.baseline)})" if row.baseline != column_base else ""
    return cell_words(c, direction(row.metric, row.unit)) + vs


def verdict_tip(row: ComparedRow, k: int, column_base: int = 0) -> str:
    """Side k's verdict with the ratio of medians and the test's p-value."""
    cell = row.cells[k]
    tip = [f"{side_letter(k)} vs {side_letter(row.baseline)}: "
           f"{verdict_text(row, k, column_base)}",
           f"Ratio of medians: {ratio(cell.ratio)}"]
    if cell.p_value is not None:
        tip.append(f"Mann-Whitney p = {p_value(cell.p_value)}, {cell.n or 0} blocks")
    return "\n".join(tip)


def value_tip(side: Side, row: ComparedRow, k: int) -> str:
    """Side k's value with its interval, how many blocks it stands on, its flags and note."""
    c = row.cells[k]
    tip = [f"{side.label}: {cell_text(c, row.unit)}"]
    if c.spread:
        from siliconbench.core.compare_stats import RUNS_ESTIMATOR
        tip.append(f"The {RUNS_ESTIMATOR} of {c.runs} runs; [ ]: the lowest and highest "
                   "run (run-to-run spread), which the verdict weighs too")
        if c.n:
            tip.append(f"{c.n} blocks pooled for the test")
    elif c.n:
        tip.append(f"{c.n} blocks; [ ]: {CONFIDENCE:.0%} interval of the median")
    tip += c.flags + ([c.note] if c.note else [])
    return "\n".join(tip)


def chart_groups(cmp: Comparison) -> list[tuple[str, str, str]]:
    """(workload, metric, unit) of each chart the comparison can draw, in row order, then
    those of the table's best vs best rows (table_bests)."""
    groups: list[tuple[str, str, str]] = []
    for r in [*cmp.rows, *table_bests(cmp)]:
        key = (r.workload, r.metric, r.unit)
        if key not in groups:
            groups.append(key)
    return groups
