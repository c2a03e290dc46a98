"""A comparison as the app, the command and the report build and word it, without Qt: its
sides (one per run identity: machine, device, framework and measurement settings; repeats
together), lettered A, B, ... and named apart; each workload's best vs best; the published
references described and matched with runs; the verdict table's headers, cells and
tooltips, and the summary line over it. siliconbench.core.compare holds the statistics."""

from __future__ import annotations

from typing import Any

from siliconbench.core import reference
from siliconbench.core.compare import (
    CONFIDENCE,
    BestRow,
    ComparedRow,
    Comparison,
    Side,
    cell_for,
    cell_words,
    compare,
    direction,
    ratio_words,
    row_key,
    unique_labels,
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

FIXED = ["Workload", "Metric", "Point"]   # the verdict table's columns before the sides'


# ---------------------------------------------------------------- sides

def machine_identity(rec: RunRecord) -> tuple:
    """The machine a run was made on: its name where it was given one, else its hardware's
    fingerprint (siliconbench.core.machine.MachineInfo.key) with its core count. Two hosts
    whose CPUs report one name ('Intel(R) Xeon(R) Processor': a 2-core VM, a GPU server's
    16 cores) are two machines."""
    if rec.label:
        return ("name", rec.label)
    from siliconbench.core.machine import MachineInfo
    info = MachineInfo.from_dict(rec.machine or {})
    return ("hardware", info.key(), info.cpu_cores)


def run_identity(rec: RunRecord) -> tuple:
    """Machine, device and framework: what a run is a run of ('cuda' and 'cuda:0' alike)."""
    device = rec.device[:-2] if rec.device.endswith(":0") else rec.device
    return machine_identity(rec), rec.device_label, rec.framework, device


def _run_key(rec: RunRecord) -> tuple:
    """What a run must share with another to be its repeat, beside its identity: every
    setting that changes the measurement (siliconbench.core.pairing.run_traits; one a record
    does not name is unknown, so an older record is not taken for a newer one's repeat) and
    its models (an 8B and a 1B run never merge)."""
    models = sorted({str(row.params[k]) for row in rec.rows for k in ("preset", "model")
                     if k in row.params})
    return tuple(sorted(run_traits(rec).items())), tuple(models)


def group_runs(records: list[RunRecord]) -> list[list[RunRecord]]:
    """The runs in groups of one run identity each (machine, device, framework) whose runs of
    one workload share every setting that changes the measurement and their model (_run_key):
    repeats, and the identity's other workloads beside them. In the order the runs come."""
    groups: list[tuple[tuple, dict[str, tuple], list[RunRecord]]] = []
    for rec in records:
        who, mine = run_identity(rec), _run_key(rec)
        for ident, settings, recs in groups:
            if ident == who and settings.get(rec.workload, mine) == mine:
                settings.setdefault(rec.workload, mine)
                recs.append(rec)
                break
        else:
            groups.append((who, {rec.workload: mine}, [rec]))
    return [recs for _, _, recs in groups]


def sides_for(records: list[RunRecord]) -> list[Side]:
    """One side per run identity and measurement settings (group_runs), named apart
    (name_sides). Where every run is a repeat of one, the runs are compared run by run, each
    under its identity (device · framework device · time)."""
    groups = group_runs(records)
    if len(groups) == 1 and len(records) > 1:
        return [Side(rec.identity, [rec]) for rec in records]
    return name_sides([Side("", recs) for recs in groups])


def split_sides(sides: list[Side]) -> list[Side]:
    """The command's sides (one per argument) split by run identity (group_runs): a machine
    label or a result file holding torch and MLX runs is two sides, never one whose points
    mix them. Named apart (name_sides)."""
    out: list[Side] = []
    for side in sides:
        out += [side] if side.published else [Side("", recs)
                                              for recs in group_runs(side.records)]
    return name_sides(out)


def _settings_of(side: Side) -> dict:
    """{(workload, setting): value in words} of a side's runs: every setting that changes
    the measurement (run_traits), and the models they ran."""
    out: dict = {}
    for rec in side.records:
        out.update({(rec.workload, k): v for k, v in run_traits(rec).items()})
        for model in _run_key(rec)[1]:
            out[(rec.workload, "model")] = model
    return out


def _setting_text(key: tuple, value) -> str:
    from siliconbench.core.pairing import word
    return value if key[1] == "model" else f"{word(key[1])} {value}"


def _machine_facts(rec: RunRecord) -> dict[str, str]:
    """What tells machines of one name apart, in words."""
    from siliconbench.core.machine import MachineInfo
    from siliconbench.core.numbers import size
    m = rec.machine or {}
    info = MachineInfo.from_dict(m)
    # A binned chip's cores by tier ('14-core CPU: 10 performance + 4 efficiency').
    cores = info.cpu_summary() or (f"{info.cpu_cores} cores" if info.cpu_cores else "")
    return {"cores": cores,
            "memory": size(info.memory_bytes) if info.memory_bytes else "",
            "gpu": info.gpu_name or "no GPU",
            "os": " ".join(str(x) for x in (info.os_name, info.os_version) if x),
            "host": info.host_tag()}


def machine_details(records: list[RunRecord]) -> dict[tuple, str]:
    """{machine identity: what tells it apart from the other machines of these runs that
    bear its name ('16 cores, 126 GB, NVIDIA H100 80GB HBM3'), '' where its name is its own}."""
    named: dict[str, dict[tuple, RunRecord]] = {}
    for rec in records:
        named.setdefault(rec.machine_label, {}).setdefault(machine_identity(rec), rec)
    out: dict[tuple, str] = {}
    for machines in named.values():
        facts = {who: _machine_facts(rec) for who, rec in machines.items()}
        telling = [k for k in ("cores", "memory", "gpu", "os")
                   if len({f[k] for f in facts.values()}) > 1] or ["host"]
        for who, f in facts.items():
            out[who] = ", ".join(f[k] for k in telling if f[k]) if len(machines) > 1 else ""
    return out


def machine_names(records: list[RunRecord]) -> dict[str, str]:
    """{run id: its machine's name, told apart from other machines of that name}: 'Intel(R)
    Xeon(R) Processor [2 cores, 24 GB, no GPU]' beside '... [16 cores, 126 GB, NVIDIA H100
    80GB HBM3]'. What the Results' Machine filter lists."""
    details = machine_details(records)
    out = {}
    for rec in records:
        detail = details[machine_identity(rec)]
        out[rec.id] = rec.machine_label + (f" [{detail}]" if detail else "")
    return out


def base_name(rec: RunRecord) -> str:
    """What a side is called first: the user's name for its machine, else the Mac's model
    ('MacBook Pro (16-inch, 2023)'), else its device ('NVIDIA H200', 'AMD EPYC')."""
    return rec.label or (rec.machine or {}).get("model_name") or rec.device_label


def name_sides(sides: list[Side]) -> list[Side]:
    """Name measured sides by what sets them apart, in this order: the user's name for the
    machine, else its model (a Mac's) or device (base_name); then, only where two sides would
    still read alike, the chip, the machine's hardware ('[2 cores, ...]'), the framework and
    device, the settings that change the measurement ('TF32 on', the model), and last a
    short tag of the host ('host 3fa2c1': identical machines); then how many runs a side
    holds ('· 3 runs'). Published sides keep their names. Relabels in place and returns the
    sides."""
    from siliconbench.core.machine import MachineInfo
    for s in sides:
        if s.published and not s.label:
            s.label = s.records[0].identity
    measured = [s for s in sides if s.records and not s.published]
    names = {id(s): base_name(s.records[0]) for s in measured}

    def refine(part) -> None:
        alike: dict[str, list[Side]] = {}
        for s in measured:
            alike.setdefault(names[id(s)], []).append(s)
        for group in alike.values():
            texts = [part(s, group) for s in group]
            if len(set(texts)) > 1:
                for s, text in zip(group, texts):
                    names[id(s)] += text

    def chip(s: Side, _) -> str:
        m = s.records[0].machine or {}
        return f" · {m['chip']}" if m.get("chip") and m.get("model_name") else ""

    def hardware(s: Side, group: list[Side]) -> str:
        facts = [_machine_facts(o.records[0]) for o in group]
        mine = _machine_facts(s.records[0])
        telling = [k for k in ("cores", "memory", "gpu", "os")
                   if len({f[k] for f in facts}) > 1]
        detail = ", ".join(mine[k] for k in telling if mine[k])
        return f" [{detail}]" if detail else ""

    def settings(s: Side, group: list[Side]) -> str:
        mine = _settings_of(s)
        others = [_settings_of(o) for o in group if o is not s]
        differ = [k for k in mine if any(o.get(k) != mine[k] for o in others)]
        return "".join(dict.fromkeys(f" · {_setting_text(k, mine[k])}" for k in differ))

    def host(s: Side, _) -> str:
        info = MachineInfo.from_dict(s.records[0].machine or {})
        return f" · {info.host_tag()}" if s.records[0].machine else ""

    refine(chip)
    refine(hardware)
    refine(lambda s, _: f" · {s.records[0].framework} {run_identity(s.records[0])[3]}")
    refine(settings)
    refine(host)
    for s in measured:
        runs = len(s.records)
        s.label = names[id(s)] + (f" · {runs} runs" if runs > 1 else "")
    return unique_labels(sides)


def older_machine_notes(sides: list[Side]) -> list[str]:
    """A sentence per side of several runs some of whose records name no host (written
    before hosts were told apart): its runs may be of identical machines, counted as one."""
    from siliconbench.core.machine import MachineInfo
    out = []
    for s in sides:
        old = [r for r in s.records if r.machine and not s.published
               and not MachineInfo.from_dict(r.machine).told_apart]
        if len(s.records) > 1 and old:
            out.append(f"machine not told apart (older record): the {len(s.records)} runs of "
                       f"{s.label} may come from identical machines")
    return out


# ---------------------------------------------------------------- comparing

def compared(sides: list[Side]) -> Comparison:
    """The sides compared point by point (siliconbench.core.compare.compare), with each
    workload's best vs best beside (best_of_sides): what the app, the command and the
    report show."""
    cmp = compare(sides)
    cmp.best = best_of_sides(sides)
    cmp.warnings = list(dict.fromkeys(cmp.warnings + best_warnings(sides, cmp.best)))
    cmp.notes += older_machine_notes(sides)
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
    best point of the workload's headline metric (siliconbench.core.catalogue), with its
    ratio to the first side's best, each cell saying how its run is unlike the first's or not
    known to be alike (pairing). A best of 0 (one rank's bus bandwidth) is none."""
    from siliconbench.core.catalogue import catalogue
    from siliconbench.core.pairing import differences, unknown_text, unlike_text
    from siliconbench.core.telemetry import power_trusted
    declared = catalogue()
    best: dict[tuple, list[tuple[RunRecord, Row] | None]] = {}
    for i, side in enumerate(sides):
        for rec in side.records:
            w = declared.get(rec.workload)
            run = run_traits(rec)
            for row in rec.rows:
                if w is None or row.metric != w.metric or not row.value \
                        or not power_trusted(row):
                    continue
                kind = _kind(row.params, row_traits(rec, row, run))
                found = best.setdefault((rec.workload, kind), [None] * len(sides))
                lower = direction(row.metric, row.unit) == "lower"
                held = found[i]
                if held is None or (row.value < held[1].value if lower
                                    else row.value > held[1].value):
                    found[i] = (rec, row)
    out = []
    for (workload, kind), picked in best.items():
        present = [i for i, p in enumerate(picked) if p is not None]
        if len(present) < 2:
            continue
        cells = [cell_for(*p) if p is not None else None for p in picked]
        base, (brec, brow) = cells[present[0]], picked[present[0]]
        for i in present[1:]:
            cells[i].ratio = cells[i].value / base.value if base.value else None
            rec, row = picked[i]
            differ, unknown = differences(row_traits(brec, brow), row_traits(rec, row),
                                          brec.framework == rec.framework)
            cells[i].unlike = unlike_text(differ) or None
            cells[i].unknown = unknown_text(
                unknown, (side_letter(present[0]), side_letter(i))) or None
        out.append(BestRow(workload, brow.metric, brow.unit, cells,
                           [dict(p[1].params) if p is not None else None for p in picked],
                           present[0], " · ".join(kind_words(row_traits(brec, brow)))))
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
        if best:
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
    if c.n:
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
