"""Side-by-side comparison of runs from several machines: per metric and point, each machine's
median with a 99% interval, the ratio, a verdict from a Mann-Whitney test (a difference under
5% never counts), and warnings when the runs are not comparable."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from siliconbench.core.numbers import times
from siliconbench.core.results import NotAResultFile, Row, RunRecord, records_from_file
from siliconbench.core.stats import summarize

CONFIDENCE = 0.99
ALPHA = 1 - CONFIDENCE           # the test's level matches the intervals shown
MIN_EFFECT = 0.05                # a difference under 5% is never reported as one

# Lower is better for times and costs: "faster" then means a lower value.
LOWER_IS_BETTER = {"step_time", "epoch_seconds", "train_seconds", "us_per_sample",
                   "joules_per_sample", "seconds", "latency", "time", "comm_share",
                   "replica_difference"}
LOWER_UNITS = {"s", "ms", "us", "µs", "ns", "s/epoch", "J/sample"}
# Neither faster nor slower: memory, power and heat are reported as higher or lower.
NEUTRAL = {"peak_memory", "power", "max_temperature", "max_thermal_pressure"}

PUBLISHED_VERDICT = "no statistics: published figure"
NO_SAMPLES_VERDICT = "no statistics: no per-block samples"
ZERO_BASE_VERDICT = "no ratio: the first side measured 0"
SAME = "no significant difference"
INCONCLUSIVE = "inconclusive"
FAR_APART = "far apart"
TOO_FEW = "too few samples (a quick run times few blocks)"
FEW_SAMPLES = 10                 # fewer blocks than the full protocol's minimum: a quick run
FAR_FACTOR = 2.0                 # disjoint ranges this far apart are a difference plain to see
INTERVAL_UNITS = {"°C", "C"}       # no true zero: differences, never ratios
RUNS_ESTIMATOR = "median of the runs' medians"   # a side of several runs, per point
RUNS_OVERLAP = "inconclusive: the runs' spread overlaps"   # repeats disagree more than sides


class UnknownSide(ValueError):
    """A compare argument names nothing SiliconBench knows; the message is one sentence."""


@dataclass
class Side:
    """One machine (column) of a comparison: its label and the runs that stand for it."""
    label: str
    records: list[RunRecord]

    @property
    def published(self) -> bool:
        return bool(self.records) and all(r.source == "published" for r in self.records)


@dataclass
class Cell:
    """One machine's value for one row of the comparison."""
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    confidence: float | None = None
    published: bool = False
    flags: list[str] = field(default_factory=list)
    note: str | None = None
    run_id: str = ""
    ratio: float | None = None          # value / the row's baseline value
    verdict: str | None = None          # against the baseline; None for the baseline itself
    p_value: float | None = None
    # Where no like run was there to pair with: how this cell's run differs from the
    # baseline's in what changes the measurement ('TF32 on vs off', 'precision mixed vs fp32').
    unlike: str | None = None
    # Where a setting that changes the measurement is named by one run only (an older
    # record): 'decode loop unknown for A (older record)'; the pair is not known to be alike.
    unknown: str | None = None
    # A side of several like runs: how many, and each run's own figure (its median), of
    # which `value` is the median (RUNS_ESTIMATOR); their range is the run-to-run spread.
    runs: int = 1
    run_values: list[float] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)     # every run it stands for
    samples: list[float] = field(default_factory=list, repr=False)

    @property
    def spread(self) -> tuple[float, float] | None:
        """The run-to-run spread (lowest and highest run's figure), None for one run."""
        return (min(self.run_values), max(self.run_values)) if self.runs > 1 else None


@dataclass
class ComparedRow:
    """One result row compared across the sides: a cell per side, and the side it is
    measured against."""
    workload: str
    metric: str
    unit: str
    params: dict[str, Any]
    cells: list[Cell | None]            # one per side; None where that side has no such row
    baseline: int                       # index of the side the ratios are relative to


@dataclass
class BestRow:
    """Each side's best point of a workload's headline metric (the catalogue's), for one
    kind of point, side by side: the answer Compare gives where the sides share no point (a
    CPU's sweep that stops at N=2048 beside a GPU's from N=4096), and beside the
    point-by-point rows where they do. A ratio of values only: the points differ, so no
    test. siliconbench.core.compare_words.best_of_sides makes them."""
    workload: str
    metric: str
    unit: str
    cells: list[Cell | None]            # one per side; None where it has no such headline
    points: list[dict[str, Any] | None]  # the point each side's best was measured at
    baseline: int                       # the first side that has one
    kind: str = ""                      # the arithmetic beyond the dtype: 'TF32'

    def to_dict(self) -> dict:
        return {**_fields(self, "cells"),
                "cells": [None if c is None else _fields(c, "samples") for c in self.cells]}


@dataclass
class Comparison:
    """Runs put side by side: the sides, their compared rows, and what could not be compared."""
    sides: list[Side]
    rows: list[ComparedRow]
    warnings: list[str]
    left_out: int = 0                   # results only one side measured (not compared)
    # Filled by siliconbench.core.compare_words.compared (it reads the workloads' headlines).
    best: list[BestRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)   # why a side has nothing drawn, ...

    def to_dict(self) -> dict:
        return {"sides": [{"label": s.label, "published": s.published,
                           "runs": [r.id for r in s.records]} for s in self.sides],
                "rows": [{**_fields(r, "cells"),
                          "cells": [None if c is None else _fields(c, "samples")
                                    for c in r.cells]} for r in self.rows],
                "best": [b.to_dict() for b in self.best],
                "warnings": self.warnings, "notes": self.notes, "left_out": self.left_out}


def _fields(obj, left_out: str) -> dict:
    """A dataclass's fields as a dict, one left out, without dataclasses.asdict's deep copy:
    that copied every cell's samples float by float only to drop them (25 ms a comparison)."""
    return {f.name: getattr(obj, f.name) for f in fields(obj) if f.name != left_out}


# ---------------------------------------------------------------- statistics

def direction(metric: str, unit: str) -> str:
    """'higher' or 'lower' (which is better), or 'neutral' for memory, power and heat."""
    if metric in NEUTRAL:
        return "neutral"
    if metric in LOWER_IS_BETTER or unit in LOWER_UNITS or unit.startswith("J/") \
            or metric.endswith(("_seconds", "_time", "_ms", "_per_sample")):
        return "lower"
    return "higher"


def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided p-value a Mann-Whitney test can reach with these sample sizes."""
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def verdict(base: list[float], other: list[float], better: str) -> tuple[str, float, float]:
    """(verdict, p-value, ratio of medians other/base) for two sets of per-block samples.
    A difference counts when Mann-Whitney rejects equality at ALPHA and the medians differ
    by at least MIN_EFFECT; `better` is direction()'s answer for the metric. Where the test
    cannot tell, the verdict says so and never reads as equality."""
    from scipy.stats import mannwhitneyu

    ratio = summarize(other).median / summarize(base).median
    p = float(mannwhitneyu(other, base, alternative="two-sided").pvalue)
    if math.isnan(p):    # both sets constant and equal
        p = 1.0
    if abs(ratio - 1) < MIN_EFFECT:
        return SAME, p, ratio
    word = _word(ratio, better)
    if p < ALPHA:
        return word, p, ratio
    if far_apart(base, other):
        return f"{FAR_APART}: {times(ratio)} {word}, ranges do not overlap; " \
               f"{_too_few_or_spread(base, other)}", p, ratio
    return f"{INCONCLUSIVE}: {_too_few_or_spread(base, other)}", p, ratio


def _word(ratio: float, better: str) -> str:
    higher = ratio > 1
    if better == "neutral":
        return "higher" if higher else "lower"
    return "faster" if higher == (better == "higher") else "slower"


def ratio_words(ratio: float | None, better: str) -> str:
    """Which side is ahead and by how much, one precision for every size: '≈6,420× slower',
    '1.23× faster', '2.00× higher' (memory, power), '' without a ratio."""
    if ratio is None or ratio <= 0 or not math.isfinite(ratio):
        return ""
    return f"{times(ratio)} {_word(ratio, better)}"


def cell_words(cell: Cell, better: str) -> str:
    """A compared cell as a person reads it: the ratio in words with its direction first,
    then what the statistics say where they do not simply agree, then how the runs were
    unlike where they could not be paired like with like."""
    if cell.verdict is None:
        return ""
    words = ratio_words(cell.ratio, better)
    if cell.verdict.startswith(FAR_APART) or not words:
        text = cell.verdict
    elif cell.verdict in ("faster", "slower", "higher", "lower"):
        text = words
    elif cell.verdict == SAME:
        text = f"{SAME} ({times(cell.ratio)})"
    else:
        text = f"{words} · {cell.verdict}"
    if cell.unlike:
        text += f" · unlike: {cell.unlike}"
    if cell.unknown:
        from siliconbench.core.pairing import NOT_KNOWN
        text += f" · {NOT_KNOWN}: {cell.unknown}"
    return text


def _too_few_or_spread(base: list[float], other: list[float]) -> str:
    if smallest_p(len(base), len(other)) >= ALPHA or min(len(base), len(other)) < FEW_SAMPLES:
        return TOO_FEW
    return "the spread is too wide to tell"


def far_apart(base: list[float], other: list[float]) -> bool:
    """Every sample of one side beyond every sample of the other, by FAR_FACTOR or more: a
    difference plain to see even where the test has too few samples to count it."""
    lo, hi = sorted((base, other), key=lambda xs: summarize(xs).median)
    return min(hi) >= FAR_FACTOR * max(lo) > 0


def cell_for(rec: RunRecord, row: Row) -> Cell:
    """One side's cell for a row of one of its runs: the median of its samples with its
    interval."""
    published = rec.source == "published"
    # Samples stand for a row's value where it is their median (the row has statistics); a
    # whole fit's time carries its epochs' times, which are not samples of that time.
    samples = list(row.samples) if row.stats is not None else []
    cell = Cell(row.value, published=published, flags=list(row.flags), note=row.note,
                run_id=rec.id, samples=samples)
    if samples and not published:
        s = summarize(samples, CONFIDENCE)
        cell.value, cell.ci_low, cell.ci_high, cell.n = s.median, s.ci_low, s.ci_high, s.n
        cell.confidence = CONFIDENCE
    elif row.stats is not None:
        cell.ci_low, cell.ci_high, cell.n = row.stats.ci_low, row.stats.ci_high, row.stats.n
        cell.confidence = row.stats.confidence
    return cell


def cell_for_runs(entries: list[tuple[RunRecord, Row]]) -> Cell:
    """A side's cell for a point it measured in one or more like runs. One run: cell_for.
    Several: each run's figure (its median), the cell's value their median (RUNS_ESTIMATOR:
    an outlier run does not move it), their range the run-to-run spread; the samples pooled
    for the test, the interval the pooled one's. The newest run's id, flags and note."""
    cells = [cell_for(rec, row) for rec, row in entries]
    if len(cells) == 1:
        return cells[0]
    from statistics import median
    newest = cells[-1]
    values = [c.value for c in cells if c.value is not None]
    pooled = [x for c in cells for x in c.samples]
    cell = Cell(median(values), published=any(c.published for c in cells),
                flags=list(dict.fromkeys(f for c in cells for f in c.flags)),
                note=newest.note, run_id=newest.run_id, samples=pooled,
                runs=len(values), run_values=values, run_ids=[c.run_id for c in cells])
    if pooled and not cell.published:
        s = summarize(pooled, CONFIDENCE)
        cell.ci_low, cell.ci_high, cell.n = s.ci_low, s.ci_high, s.n
        cell.confidence = CONFIDENCE
    return cell


def _difference(base: Cell, cell: Cell, unit: str) -> None:
    """A temperature in Celsius has no true zero: 50 °C is not 1.22× 41 °C. Such a cell
    reads as a difference ('9 °C higher'), never a ratio."""
    from siliconbench.core.numbers import quantity
    if base.value is None or cell.value is None:
        return
    cell.ratio = None
    diff = cell.value - base.value
    said = "the same" if not diff else \
        f"{quantity(abs(diff), unit)} {'higher' if diff > 0 else 'lower'}"
    cell.verdict = said if cell.verdict in (None, NO_SAMPLES_VERDICT, PUBLISHED_VERDICT) \
        or cell.verdict in ("higher", "lower") else f"{said} · {cell.verdict}"


def runs_overlap(base: Cell, cell: Cell) -> bool:
    """Whether the run-to-run spreads of two sides overlap, one of them of several runs
    (one run's spread is its figure): the repeats then disagree as much as the sides."""
    if base.runs < 2 and cell.runs < 2:
        return False
    a = base.spread or (base.value, base.value)
    b = cell.spread or (cell.value, cell.value)
    return a[0] <= b[1] and b[0] <= a[1]


def _judge(base: Cell, cell: Cell, better: str) -> None:
    if base.value is None or cell.value is None:
        return
    cell.ratio = cell.value / base.value if base.value else None
    if base.published or cell.published:
        cell.verdict = PUBLISHED_VERDICT
    elif not base.samples or not cell.samples:
        cell.verdict = NO_SAMPLES_VERDICT
    elif not base.value:    # one rank's bus bandwidth is 0 by definition: no ratio to it
        cell.verdict = ZERO_BASE_VERDICT
    else:
        cell.verdict, cell.p_value, cell.ratio = verdict(base.samples, cell.samples, better)
        # The test counts blocks; where a side is several runs, the runs must agree too.
        if cell.verdict != SAME and runs_overlap(base, cell):
            cell.verdict = RUNS_OVERLAP
    if cell.ratio is not None and (base.runs > 1 or cell.runs > 1) and base.value:
        # Of the runs' medians, as the values read; the words follow that ratio, by the
        # same 5% rule.
        cell.ratio = cell.value / base.value
        if cell.verdict in (SAME, RUNS_OVERLAP, "faster", "slower", "higher", "lower"):
            if abs(cell.ratio - 1) < MIN_EFFECT:
                cell.verdict = SAME
            elif cell.verdict == RUNS_OVERLAP:
                pass
            elif cell.verdict == SAME:
                cell.verdict = f"{INCONCLUSIVE}: the runs' medians differ, their blocks do not"
            else:
                cell.verdict = _word(cell.ratio, better)


# ---------------------------------------------------------------- matching

def row_key(workload: str, row: Row) -> tuple[str, str, str]:
    """Runs match on workload, metric and the point's parameters."""
    return workload, row.metric, json.dumps(row.params, sort_keys=True, default=str)


@dataclass
class _Group:
    """A side's runs of one point that are alike in every setting that changes the
    measurement (siliconbench.core.pairing): repeats, each with its row."""
    traits: dict[str, str]
    framework: str
    entries: list[tuple[RunRecord, Row]]


def _pick(side: Side) -> dict[tuple, list[_Group]]:
    """Each point's rows on one side, in groups of like runs (_Group): every run counts, not
    only the newest. A row without a value (a dtype the device does not support) is no
    measurement, and a power no energy counter measured is not compared either."""
    from siliconbench.core.pairing import row_traits, run_traits
    from siliconbench.core.telemetry import power_trusted
    picked: dict[tuple, list[_Group]] = {}
    for rec in sorted(side.records, key=lambda r: r.created_at):
        run = run_traits(rec)
        for row in rec.rows:
            if row.value is None or not power_trusted(row):
                continue
            traits = row_traits(rec, row, run)
            groups = picked.setdefault(row_key(rec.workload, row), [])
            for g in groups:
                if g.traits == traits and g.framework == rec.framework:
                    g.entries.append((rec, row))
                    break
            else:
                groups.append(_Group(traits, rec.framework, [(rec, row)]))
    return picked


def _alike(a: _Group, b: _Group) -> bool:
    """No setting both name differs (one only one names is unknown: marked, still paired)."""
    from siliconbench.core.pairing import differences
    return not differences(a.traits, b.traits, a.framework == b.framework)[0]


def compare(sides: list[Side]) -> Comparison:
    """Match rows across sides, like with like: workload, metric, point and every setting
    that changes the measurement (siliconbench.core.pairing: TF32, decode loop, model size,
    precision, ...); a setting one record lacks is unknown, and the pair says so. Where no
    two sides' runs of a point are alike, the sides' rows of that point are compared anyway,
    each cell saying how its run was unlike the baseline's. Each row's baseline is the first
    side that has it; a side of several runs stands by all of them (cell_for_runs)."""
    from siliconbench.core.comparability import (
        comparability_warnings,
        one_rank_notes,
        unknown_warnings,
        untrusted_power,
    )
    picks = [_pick(s) for s in sides]
    points: list[tuple] = []
    for p in picks:
        points += [k for k in p if k not in points]
    rows: list[ComparedRow] = []
    left_out = 0
    for point in points:
        groups = [(i, g) for i, p in enumerate(picks) for g in p.get(point, [])]
        clusters: list[dict[int, _Group]] = []
        for i, g in groups:
            for cl in clusters:
                if i not in cl and _alike(next(iter(cl.values())), g):
                    cl[i] = g
                    break
            else:
                clusters.append({i: g})
        paired = [cl for cl in clusters if len(cl) >= 2]
        if paired:
            left_out += sum(len(cl) for cl in clusters if len(cl) < 2)
            rows += [_row(point, cl, len(sides)) for cl in paired]
            continue
        # No like pair: one group per side (its first), marked with how it is unlike.
        chosen: dict[int, _Group] = {}
        for i, g in groups:
            chosen.setdefault(i, g)
        left_out += len(groups) - (len(chosen) if len(chosen) >= 2 else 0)
        if len(chosen) >= 2:
            rows.append(_row(point, chosen, len(sides)))
    warnings = comparability_warnings(sides, rows) + unknown_warnings(sides, rows) \
        + untrusted_power(sides)
    return Comparison(sides, rows, list(dict.fromkeys(warnings)), left_out,
                      notes=one_rank_notes(sides))


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else str(i + 1)


def _row(key: tuple, chosen: dict[int, _Group], n: int) -> ComparedRow:
    """One compared row from each side's group of like runs; judged against the first side,
    each other cell saying where its runs are unlike the first's or not known to be alike."""
    from siliconbench.core.pairing import differences, unknown_text, unlike_text
    present = sorted(chosen)
    base_i = present[0]
    base_row = chosen[base_i].entries[-1][1]
    cells: list[Cell | None] = [cell_for_runs(chosen[i].entries) if i in chosen else None
                                for i in range(n)]
    better = direction(base_row.metric, base_row.unit)
    base = chosen[base_i]
    for i in present[1:]:
        _judge(cells[base_i], cells[i], better)
        if base_row.unit in INTERVAL_UNITS:
            _difference(cells[base_i], cells[i], base_row.unit)
        differ, unknown = differences(base.traits, chosen[i].traits,
                                      base.framework == chosen[i].framework)
        cells[i].unlike = unlike_text(differ) or None
        cells[i].unknown = unknown_text(unknown, (_letter(base_i), _letter(i))) or None
    return ComparedRow(key[0], base_row.metric, base_row.unit, dict(base_row.params),
                       cells, base_i)


# ---------------------------------------------------------------- what the user names

def resolve_side(spec: str, store=None) -> Side:
    """A compare argument: a result file, a published reference id, a run id (or its first
    characters), or a machine label (all runs kept under it)."""
    from siliconbench.core import reference

    path = Path(spec)
    if path.is_file():
        try:
            records = records_from_file(path)   # bounded in size, as import reads it
        except (OSError, UnicodeDecodeError) as e:
            raise UnknownSide(f"{spec} cannot be read: {getattr(e, 'strerror', None) or e}.") \
                from None
        except NotAResultFile as e:
            raise UnknownSide(f"{spec} is not a SiliconBench result file: {e}.") from None
        labels = {r.device_label for r in records}
        return Side(labels.pop() if len(labels) == 1 else path.stem, records)
    published = reference.find(spec)
    if len(published) == 1:
        return Side(f"{published[0].device_label} (published)", published)
    if store is not None:
        runs = store.find(spec) if len(spec) >= 4 else []
        if len(runs) > 1:
            raise UnknownSide(f"{spec!r} matches {len(runs)} runs; give more of the id.")
        if runs:
            return Side(runs[0].device_label, runs)
        wanted = spec.casefold()
        labelled = [r for r in store.runs() if r.machine_label.casefold() == wanted]
        if labelled:
            return Side(labelled[0].machine_label, labelled)
    if len(published) > 1:
        raise UnknownSide(f"{spec!r} matches {len(published)} published references; give "
                          "more of the id (siliconbench reference lists them).")
    raise UnknownSide(f"{spec!r} is not a result file, a run id, a machine label or a "
                      "published reference (see siliconbench results and siliconbench "
                      "reference).")


def resolve_sides(specs: list[str], store=None) -> list[Side]:
    """Sides for the arguments, with labels made unique (two runs of one machine, say)."""
    return unique_labels([resolve_side(s, store) for s in specs])


def unique_labels(sides: list[Side]) -> list[Side]:
    """Label two sides of one machine apart: by run id where a side is one run, else by
    number. Relabels the sides in place and returns them."""
    seen: dict[str, int] = {}
    for side in sides:
        seen[side.label] = seen.get(side.label, 0) + 1
    for side in sides:
        if seen[side.label] > 1 and len(side.records) == 1:
            side.label = f"{side.label} [{side.records[0].id[:8]}]"
    counts: dict[str, int] = {}
    for side in sides:
        counts[side.label] = counts.get(side.label, 0) + 1
        if counts[side.label] > 1:
            side.label = f"{side.label} ({counts[side.label]})"
    return sides
