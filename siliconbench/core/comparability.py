"""Why two sides' numbers may differ for reasons other than the machines: another framework,
OS or version, parameters, settings, battery, Rosetta, a virtual Mac, a published figure,
synthetic data, flags; settings one record does not name (not known to be alike); and the
notes of what a side has nothing drawn for. Sentences for siliconbench.core.compare_stats."""

from __future__ import annotations

from typing import Any

from siliconbench.core.machine import other_cpu_of_same_chip, power_state_warnings, virtual_mac
from siliconbench.core.pairing import value_text, word
from siliconbench.core.results import FLAGS, RunRecord

# compare imports this module, so it names none of compare's: a side is a
# siliconbench.core.compare_stats.Side (label, records), a row a ComparedRow (workload, metric,
# cells, baseline).
Side = Any
ComparedRow = Any

# Flags that make a number untrustworthy, not just different.
SUSPECT_FLAGS = ("fallback", "above_peak", "wrong_result", "noisy")


def _differences(a: dict, b: dict, skip: set[str] = frozenset()) -> list[str]:
    """'key a vs b' for the keys both dicts have with different scalar values."""
    out = []
    for k, va in a.items():
        if k in skip or k not in b or isinstance(va, (list, dict)) or va == b[k]:
            continue
        out.append(f"{word(k)} {_fmt(va)} vs {_fmt(b[k])}")
    return out


def _fmt(v: Any) -> str:
    """A setting's value as a sentence says it: 'on', 'off', 'not set' (a parameter left at
    its default: 'context sweep not set vs 2048')."""
    return "not set" if v is None else value_text(v)


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


def comparability_warnings(sides: list[Side], rows: list[ComparedRow]) -> list[str]:
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
                        out.append(f"{workload} {r.metric} of {label} is flagged {flag}: "
                                   f"{FLAGS[flag]}")
    return list(dict.fromkeys(out))


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


def untrusted_power(sides: list[Side]) -> list[str]:
    """A sentence per side whose power or efficiency rows were left out: measured without
    the device's energy counter or enough samples inside the point (siliconbench.core.telemetry)."""
    from siliconbench.core.telemetry import power_trusted
    out = []
    for side in sides:
        n = sum(not power_trusted(row) for rec in side.records for row in rec.rows)
        if n:
            out.append(f"{n} power and efficiency figure{'s' * (n != 1)} of {side.label} "
                       "left out: not measured over the point by the device's energy counter (an "
                       "older run's power was one sample, often taken while the device idled)")
    return out


def unknown_warnings(sides: list[Side], rows: list[ComparedRow]) -> list[str]:
    """A sentence per pair of sides and workload whose runs are paired though a setting that
    changes the measurement is named by one of them only: 'not known to be alike (llm):
    decode loop unknown for NVIDIA H200 (older record)'."""
    from siliconbench.core.pairing import NOT_KNOWN
    out = []
    for row in rows:
        for i, c in enumerate(row.cells):
            if c is not None and c.unknown:
                text = c.unknown
                for k in (row.baseline, i):    # the cell says letters; a warning names sides
                    text = text.replace(f" for {chr(ord('A') + k)} (",
                                        f" for {sides[k].label} (")
                out.append(f"{NOT_KNOWN} ({row.workload}): {text}")
    return list(dict.fromkeys(out))
