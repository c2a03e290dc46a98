"""How a result row reads on screen: a value always with its spread, flags in words
(siliconbench.core.results.FLAGS), and "peak unknown" when the device has no tabulated peak."""

from __future__ import annotations

from siliconbench.core.numbers import ci_text, peak_text, row_with_spread, spread_text, value_text
from siliconbench.core.results import FLAGS, SERIOUS_FLAGS, Row, RunRecord


def headline_text(rec: RunRecord, spread: bool = True) -> str:
    """The run's headline (its workload's metric, best point) with its unit: '0.178 TFLOPS
    [0.170–0.181]'; what it lacks otherwise."""
    from siliconbench.core.catalogue import headline
    row = headline(rec)
    if row is None:
        if not rec.rows:
            return "no results"
        return "nothing measured" if all(r.value is None for r in rec.rows) else \
            "no headline figure"
    return row_with_spread(row) if spread else value_text(row)


def value_with_spread(row: Row) -> str:
    """'1.23 TFLOPS (p25–p75 1.20–1.25, n=12)': no number on screen without its spread."""
    if row.value is None:
        return "—"
    if row.stats is None:
        return f"{value_text(row)} (one measurement, no spread)"
    return f"{value_text(row)} (p25–p75 {spread_text(row)}, n={row.stats.n})"


def flag_label(flag: str) -> str:
    return flag.replace("_", " ")


def flags_text(row: Row) -> str:
    return ", ".join(flag_label(f) for f in row.flags)


def flags_explained(row: Row) -> str:
    """One line per flag with its meaning, for tooltips."""
    return "\n".join(f"{flag_label(f)}: {FLAGS.get(f, 'see the note')}" for f in row.flags)


def is_serious(row: Row) -> bool:
    return any(f in SERIOUS_FLAGS for f in row.flags)


def flag_counts(rows: list[Row]) -> str:
    """'2 noisy, 1 above peak' over some rows; empty when none is flagged."""
    counts: dict[str, int] = {}
    for row in rows:
        for f in row.flags:
            counts[f] = counts.get(f, 0) + 1
    return ", ".join(f"{n} {flag_label(f)}" for f, n in counts.items())


def point_tip(series_name: str, row: Row) -> str:
    """Everything known about one measured point, for a hover tooltip."""
    lines = [series_name, ", ".join(f"{k} = {v}" for k, v in row.params.items()),
             value_text(row)]
    if row.stats is not None and row.value is not None:
        s = row.stats
        lines += [f"p25–p75: {spread_text(row)}",
                  f"{s.confidence:.0%} CI of the median: {ci_text(row)}", f"blocks timed: {s.n}"]
    lines.append(peak_text(row))
    if row.flags:
        lines.append(flags_explained(row))
    if row.note:
        lines.append(row.note)
    return "\n".join(line for line in lines if line)


def warning_count(warnings: list[str] | int) -> str:
    """'⚠ 2 warnings' for a run's warnings (or how many it has)."""
    n = warnings if isinstance(warnings, int) else len(warnings)
    return f"⚠ {n} warning{'s' * (n != 1)}"


def warnings_tooltip(warnings: list[str]) -> str:
    """A run's warnings, one per line: what the run itself said about its numbers."""
    return "\n".join(f"⚠ {w}" for w in warnings)
