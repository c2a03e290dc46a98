"""Side-by-side comparison of runs from several machines: per metric and point, each machine's
median with a 99% interval, the ratio, a verdict from a Mann-Whitney test (a difference under
5% never counts), and warnings when the runs are not comparable."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from siliconbench.core.machine import other_cpu_of_same_chip, power_state_warnings, virtual_mac
from siliconbench.core.numbers import times
from siliconbench.core.results import FLAGS, NotAResultFile, Row, RunRecord, records_from_file
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
# Flags that make a number untrustworthy, not just different.
SUSPECT_FLAGS = ("fallback", "above_peak", "wrong_result", "noisy")

PUBLISHED_VERDICT = "no statistics: published figure"
NO_SAMPLES_VERDICT = "no statistics: no per-block samples"
ZERO_BASE_VERDICT = "no ratio: the first side measured 0"
SAME = "no significant difference"
INCONCLUSIVE = "inconclusive"
FAR_APART = "far apart"
TOO_FEW = "too few samples (a quick run times few blocks)"
FEW_SAMPLES = 10                 # fewer blocks than the full protocol's minimum: a quick run
FAR_FACTOR = 2.0                 # disjoint ranges this far apart are a difference plain to see


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
    samples: list[float] = field(default_factory=list, repr=False)


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
    test. siliconbench.core.comparison.best_of_sides makes them."""
    workload: str
    metric: str
    unit: str
    cells: list[Cell | None]            # one per side; None where it has no such headline
    points: list[dict[str, Any] | None]  # the point each side's best was measured at
    baseline: int                       # the first side that has one

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
    # Filled by siliconbench.core.comparison.compared (it reads the workloads' headlines).
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
    return f"{text} · unlike: {cell.unlike}" if cell.unlike else text


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


# ---------------------------------------------------------------- matching

def row_key(workload: str, row: Row) -> tuple[str, str, str]:
    """Runs match on workload, metric and the point's parameters."""
    return workload, row.metric, json.dumps(row.params, sort_keys=True, default=str)


_DEFAULT_PRECISIONS = {None, "", "fp32", "float32"}


def traits(rec: RunRecord, row: Row) -> tuple[tuple[str, str], ...]:
    """What about a run changes the measurement beyond its point, where it is not the
    default: TF32 on a float32 product (7x the plain float32's TFLOPS on an H200), a reduced
    or mixed precision, channels-last images. Like is paired with like on these."""
    out = []
    if rec.settings.get("tf32") and row.params.get("dtype", "float32") == "float32":
        out.append(("TF32", "on"))
    precision = row.params.get("precision") or rec.params.get("precision")
    if precision not in _DEFAULT_PRECISIONS:
        out.append(("precision", str(precision)))
    if rec.params.get("channels_last"):
        out.append(("channels-last", "on"))
    return tuple(out)


def _traits_text(a: tuple, b: tuple) -> str:
    """'TF32 on vs off, precision mixed vs fp32': how two runs' traits differ."""
    da, db = dict(a), dict(b)
    defaults = {"TF32": "off", "precision": "fp32", "channels-last": "off"}
    parts = [f"{k} {da.get(k, defaults.get(k, 'default'))} vs {db.get(k, defaults.get(k, 'default'))}"
             for k in dict.fromkeys([*da, *db]) if da.get(k) != db.get(k)]
    return ", ".join(parts)


def _pick(side: Side) -> dict[tuple, tuple[RunRecord, Row]]:
    """Each (key, traits)'s row on one side: the newest run's. A row without a value (a
    dtype the device does not support) is no measurement: a side with only such a row has
    not measured that point, and a point no side measured is not counted at all."""
    from siliconbench.core.telemetry import power_trusted
    picked: dict[tuple, tuple[RunRecord, Row]] = {}
    for rec in sorted(side.records, key=lambda r: r.created_at):
        for row in rec.rows:
            # A power no energy counter measured is not compared either.
            if row.value is None or not power_trusted(row):
                continue
            picked[(*row_key(rec.workload, row), traits(rec, row))] = (rec, row)
    return picked


def compare(sides: list[Side]) -> Comparison:
    """Match rows across sides, like with like: workload, metric, point and the traits that
    change the measurement (TF32, precision). Where no two sides share a row's traits, the
    sides' rows of that point are compared anyway, each cell saying how its run was unlike
    the baseline's. Each row's baseline is the first side that has it."""
    picks = [_pick(s) for s in sides]
    keys: list[tuple] = []
    for p in picks:
        keys += [k for k in p if k not in keys]
    rows: list[ComparedRow] = []
    left_out = 0
    like_points = {k[:3] for k in keys if sum(k in p for p in picks) >= 2}
    unlike: dict[tuple, list[tuple]] = {}   # point -> its keys no two sides share
    for key in keys:
        present = [i for i, p in enumerate(picks) if key in p]
        if len(present) < 2:
            if key[:3] in like_points:
                left_out += 1
            else:
                unlike.setdefault(key[:3], []).append(key)
            continue
        rows.append(_row(key, [p.get(key) for p in picks]))
    order = {key[:3]: i for i, key in reversed(list(enumerate(keys)))}
    for point, point_keys in unlike.items():
        # One key per side (the first side that has each, in key order); a point no second
        # side measured is left out.
        chosen: list[tuple | None] = [None] * len(sides)
        for key in point_keys:
            for i, p in enumerate(picks):
                if key in p and chosen[i] is None:
                    chosen[i] = key
        if sum(k is not None for k in chosen) < 2:
            left_out += len(point_keys)
            continue
        left_out += len(point_keys) - sum(k is not None for k in chosen)
        row = _row(point, [picks[i][k] if k is not None else None
                           for i, k in enumerate(chosen)])
        base_traits = chosen[row.baseline][3]
        for i, k in enumerate(chosen):
            if k is not None and i != row.baseline and row.cells[i] is not None:
                row.cells[i].unlike = _traits_text(k[3], base_traits) or None
        rows.append(row)
    # In the order the points came in, whether paired like with like or not.
    rows.sort(key=lambda r: order[row_key(r.workload, _Point(r.metric, r.params))])
    warnings = comparability_warnings(sides, picks, rows) + _untrusted_power(sides)
    return Comparison(sides, rows, list(dict.fromkeys(warnings)), left_out,
                      notes=one_rank_notes(sides))


def one_rank_notes(sides: list[Side]) -> list[str]:
    """A sentence per side whose all-reduce ran on one rank: its bus bandwidth is 0 by
    definition (nothing crosses between ranks), which no log axis can draw."""
    out = []
    for side in sides:
        if any(row.metric == "busbw" and row.params.get("ranks") == 1
               for rec in side.records if rec.workload == "allreduce" for row in rec.rows):
            out.append(f"{side.label} ran all-reduce on one rank: its bus bandwidth is 0 by "
                       "definition (nothing crosses between ranks), so no bus-bandwidth bar "
                       "or point is drawn for it")
    return out


def _untrusted_power(sides: list[Side]) -> list[str]:
    """A sentence per side whose power or efficiency rows were left out: measured without
    the device's energy counter or enough samples inside the point (siliconbench.core.telemetry)."""
    from siliconbench.core.telemetry import power_trusted
    out = []
    for side in sides:
        n = sum(not power_trusted(row) for rec in side.records for row in rec.rows)
        if n:
            out.append(f"{side.label}'s {n} power and efficiency figure{'s' * (n != 1)} left "
                       "out: not measured over the point by the device's energy counter (an "
                       "older run's power was one sample, often taken while the device idled)")
    return out


@dataclass
class _Point:
    """What row_key reads of a row: its metric and point."""
    metric: str
    params: dict


def _row(key: tuple, picked: list[tuple[RunRecord, Row] | None]) -> ComparedRow:
    """One compared row from each side's (run, row) or None; judged against the first."""
    present = [i for i, p in enumerate(picked) if p is not None]
    _, base_row = picked[present[0]]
    cells = [cell_for(*p) if p is not None else None for p in picked]
    better = direction(base_row.metric, base_row.unit)
    for i in present[1:]:
        _judge(cells[present[0]], cells[i], better)
    return ComparedRow(key[0], base_row.metric, base_row.unit, dict(base_row.params),
                       cells, present[0])


# ---------------------------------------------------------------- comparability

def _differences(a: dict, b: dict, skip: set[str] = frozenset()) -> list[str]:
    """'key a vs b' for the keys both dicts have with different scalar values."""
    out = []
    for k, va in a.items():
        if k in skip or k not in b or isinstance(va, (list, dict)) or va == b[k]:
            continue
        out.append(f"{k} {_fmt(va)} vs {_fmt(b[k])}")
    return out


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _os(rec: RunRecord) -> str | None:
    m = rec.machine
    return " ".join(str(x) for x in (m.get("os_name"), m.get("os_version")) if x) or None


def _pair_warnings(a: str, ra: RunRecord, b: str, rb: RunRecord, point_keys: set[str]) -> list[str]:
    w = ra.workload
    out: list[str] = []
    if ra.framework != rb.framework:
        out.append(f"other framework ({w}): {a} ran {ra.framework}, {b} {rb.framework}")
    else:
        va, vb = ra.software.get(ra.framework), rb.software.get(rb.framework)
        if va and vb and va != vb:
            out.append(f"other {ra.framework} version ({w}): {a} {va}, {b} {vb}")
    ma_, mb_ = ra.machine, rb.machine
    names = (ma_.get("os_name"), mb_.get("os_name"))
    versions = (ma_.get("os_version"), mb_.get("os_version"))
    # A published figure often names no OS version: that is unknown, not different.
    if (all(names) and names[0] != names[1]) or (all(versions) and versions[0] != versions[1]):
        out.append(f"other OS or OS version: {a} {_os(ra)}, {b} {_os(rb)}")
    cpus = other_cpu_of_same_chip(ma_, mb_)
    if cpus:
        out.append(f"same chip, other CPU cores: {a} {cpus[0]}, {b} {cpus[1]}")
    params = _differences(ra.params, rb.params, point_keys)
    if params:
        out.append(f"other parameters ({w}): {', '.join(params)} ({a} vs {b})")
    ma, mb = ra.settings.get("measure"), rb.settings.get("measure")
    if isinstance(ma, dict) and isinstance(mb, dict) and ma != mb:
        out.append(f"different measurement settings ({w}): {', '.join(_differences(ma, mb))} "
                   f"({a} vs {b}); one may be a --quick run")
    other = _differences(ra.settings, rb.settings, {"measure", "peak"})
    if other:
        out.append(f"other settings ({w}): {', '.join(other)} ({a} vs {b})")
    return out


def _machine_warnings(label: str, rec: RunRecord) -> list[str]:
    m, out = rec.machine, []
    summary = (rec.telemetry or {}).get("summary") or {}
    if m.get("power_source") == "battery" or summary.get("on_battery"):
        out.append(f"{label} ran on battery, which can hold a Mac below its full speed")
    if m.get("low_power_mode"):
        out.append(f"{label} had Low Power Mode on")
    if m.get("rosetta"):
        out.append(f"{label} ran under Rosetta (x86 Python on Apple Silicon)")
    if virtual_mac(m):
        out.append(f"{label} ran in a virtual Mac, on the cores and memory its host lent it")
    return out


def comparability_warnings(sides: list[Side], picks: list[dict], rows: list[ComparedRow]
                           ) -> list[str]:
    """Why the numbers of two sides may differ for reasons other than the machines."""
    out: list[str] = []
    by_workload: dict[str, list[ComparedRow]] = {}
    for row in rows:
        by_workload.setdefault(row.workload, []).append(row)
    for workload, wrows in by_workload.items():
        point_keys = {k for r in wrows for k in r.params}
        used: dict[int, RunRecord] = {}     # side -> newest run it contributed to this workload
        for r in wrows:
            for i, c in enumerate(r.cells):
                if c is not None:
                    rec = next(x for x in sides[i].records if x.id == c.run_id)
                    if i not in used or rec.created_at > used[i].created_at:
                        used[i] = rec
        order = sorted(used)
        base = order[0]
        for i in order:
            out += _machine_warnings(sides[i].label, used[i])
            if used[i].source == "published":
                src = (used[i].provenance or {}).get("source", "a publication")
                out.append(f"{sides[i].label} is no SiliconBench measurement but a figure from "
                           f"{src}: compared by value only; that experiment had its own "
                           "software and settings (see its provenance)")
            if i != base:
                out += _pair_warnings(sides[base].label, used[base], sides[i].label, used[i],
                                      point_keys)
                out += power_state_warnings(sides[base].label, used[base], sides[i].label,
                                            used[i])
        for r in wrows:
            present = [(sides[i].label, c) for i, c in enumerate(r.cells) if c is not None]
            synthetic = {label for label, c in present if "synthetic" in c.flags}
            if synthetic and len(synthetic) < len(present):
                out.append(f"synthetic vs real data ({workload}): {', '.join(sorted(synthetic))} "
                           "used synthetic data, the others the real data set")
            # Peak memory is the allocator's count where the framework keeps one, else the
            # process's resident peak (siliconbench.core.kit.rows.peak_memory): another quantity.
            kinds = {c.note for _, c in present if r.metric == "peak_memory" and not c.published}
            if len(kinds) > 1:
                what = ", ".join(f"{label} {c.note}" for label, c in present if not c.published)
                out.append(f"peak memory counted differently ({workload}): {what}")
            for label, c in present:
                for flag in SUSPECT_FLAGS:
                    if flag in c.flags:
                        out.append(f"{label}'s {workload} {r.metric} is flagged {flag}: "
                                   f"{FLAGS[flag]}")
    return list(dict.fromkeys(out))


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
