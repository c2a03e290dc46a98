"""A comparison as something to post or send: one self-contained HTML file (tables and inline
SVG charts, no script and nothing fetched from the network) or a tidy CSV."""

from __future__ import annotations

import html
import math
from typing import Any

from siliconbench import __version__
from siliconbench.core.columns import csv_flags, point_headers, point_keys
from siliconbench.core.compare_stats import (
    ALPHA,
    CONFIDENCE,
    FAR_APART,
    INCONCLUSIVE,
    MIN_EFFECT,
    SAME,
    BestRow,
    Cell,
    ComparedRow,
    Comparison,
    cell_words,
    direction,
    ratio_words,
)
from siliconbench.core.export import csv_text
from siliconbench.core.numbers import (
    LOG_SPAN,
    compact,
    figure,
    metric_heading,
    metric_title,
    needs_log_axis,
    p_value,
    quantity,
    ratio,
    times,
    with_spread,
)
from siliconbench.core.palette import LIGHT
from siliconbench.core.results import FLAGS, TRUST_FLAGS, now_iso, run_power_doubt
from siliconbench.core.text import clip

# The app's light palette: a machine has the colour here that it has in the app.
PALETTE = LIGHT

# A comparison's CSV: one line per row and machine, the point's parameters between these.
CSV_HEAD = ["workload", "metric", "unit"]
CSV_TAIL = ["compared", "machine", "source", "run_id", "value", "ci_low", "ci_high",
            "confidence", "n", "baseline", "ratio", "verdict", "p_value", "flags", "note",
            # A side of several runs: how many, the lowest and highest run's figure (value is
            # the median of the runs' medians), and why a pair is not known to be alike.
            "runs", "runs_low", "runs_high", "unlike", "not_known_alike"]
POINT_BY_POINT = "point by point"   # the "compared" column of a row both sides measured


# ---------------------------------------------------------------- text (shared with cli, gui)

def cell_text(cell: Cell | None, unit: str) -> str:
    """A machine's value with its confidence interval: '263 GB/s [245–249]', '—' for a point
    it did not measure, nothing where it has no such row; a side of several runs, the
    median of their medians with the runs' range: '0.0036 TFLOPS [0.0034–0.052] · 3 runs'."""
    if cell is None:
        return ""
    if cell.spread:     # several runs: their median, the run-to-run spread in brackets
        lo, hi = cell.spread
        return f"{with_spread(cell.value, lo, hi, unit)} · {cell.runs} runs"
    return with_spread(cell.value, cell.ci_low, cell.ci_high, unit)


# The one order a point's parameters read in, everywhere: what is measured (model, kind of
# number) before its sizes ('dtype=float32 size=4096', never the other way round on one row
# and this way on the next). Parameters not named here follow in their own order.
POINT_ORDER = ("model", "preset", "op", "data", "dtype", "precision", "size", "size_mb",
               "batch", "batch_size", "prompt", "depth", "gen_tokens", "image_size", "seq_len",
               "ranks", "world_size")


def ordered(params: dict[str, Any]) -> dict[str, Any]:
    """The point's parameters in POINT_ORDER."""
    known = [k for k in POINT_ORDER if k in params]
    return {k: params[k] for k in known + [k for k in params if k not in known]}


def ordered_keys(keys: list[str]) -> list[str]:
    return list(ordered(dict.fromkeys(keys)))


def whisker(cell: Cell) -> tuple[float | None, float | None]:
    """A bar's whisker: a side of several runs, its lowest and highest run; else the
    interval of its median."""
    return cell.spread or (cell.ci_low, cell.ci_high)


def point_label(params: dict[str, Any]) -> str:
    """The whole point in POINT_ORDER: 'preset=tiny dtype=float32 batch=1 prompt=16'."""
    return " ".join(f"{k}={v}" for k, v in ordered(params).items()) or "whole run"


def compared_sentence(cmp: Comparison) -> str:
    """How many results were compared (both sides measured them) and how many only one side
    measured, which are not."""
    n = len(cmp.rows)
    text = f"{n} result{'s' * (n != 1)} compared"
    if cmp.left_out:
        k = cmp.left_out
        text += (f"; {k} measured by one side only {'are' if k != 1 else 'is'} not "
                 "compared")
    return text + "."


def point_text(point: dict | None, order: dict | None = None) -> str:
    """A point in POINT_ORDER, so two points read alike: 'dtype=bfloat16 size=4096' beside
    'dtype=float32 size=128' (`order`, another point, is read in that one order too)."""
    if point is None:
        return ""
    return point_label(point)


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def best_title(best: BestRow) -> str:
    """'gemm dtype=float32': the workload and the kind of point its bests share."""
    kind = {k: v for k, v in (best.points[best.baseline] or {}).items() if not _numeric(v)}
    return best.workload + (f" {point_label(kind)}" if kind else "") + \
        (f" · {best.kind}" if best.kind else "")


def best_point(best: BestRow, k: int) -> str:
    """Where side k's best was measured, its sizes only ('size=16384'; the kind of point
    the bests share is in best_title), in the baseline's order of keys."""
    def sizes(point: dict | None) -> dict:
        return {key: v for key, v in (point or {}).items() if _numeric(v)}
    return point_text(sizes(best.points[k]), best.points[best.baseline]) or "its run"


def best_label(best: BestRow, k: int) -> str:
    """'best vs best: size=16384 vs size=128': the points whose values side k's ratio to
    the baseline divides."""
    return f"best vs best: {best_point(best, k)} vs {best_point(best, best.baseline)}"


def best_words(best: BestRow, k: int, label: bool = True) -> str:
    """Side k's best against the baseline's, in words with the points it divides:
    '≈7,670× slower (best vs best: size=128 vs size=16384)'; the words alone without
    `label`; '' for the baseline or a side without a best."""
    cell = best.cells[k]
    if cell is None or k == best.baseline:
        return ""
    words = ratio_words(cell.ratio, direction(best.metric, best.unit)) or "no ratio"
    if cell.ratio is not None and abs(cell.ratio - 1) < MIN_EFFECT:
        # The report's rule for every verdict: under 5% apart is no difference.
        words = f"{SAME} ({times(cell.ratio)}, under {MIN_EFFECT:.0%} apart)"
    if cell.unlike:
        words += f" · unlike: {cell.unlike}"
    if cell.unknown:
        words += f" · not known to be alike: {cell.unknown}"
    return f"{words} ({best_label(best, k)})" if label else words


def by_workload(cmp: Comparison) -> dict[str, list[ComparedRow]]:
    groups: dict[str, list[ComparedRow]] = {}
    for r in cmp.rows:
        groups.setdefault(r.workload, []).append(r)
    return groups


def legend() -> str:
    return (f"Medians with their {CONFIDENCE:.0%} confidence intervals. Each machine is compared "
            "with the first machine that has the row (the ratio divides by it); faster, "
            f"slower, higher or lower only when a Mann-Whitney test on the per-block samples "
            f"says so at the {ALPHA:.0%} level and the medians differ by at least "
            f"{MIN_EFFECT:.0%}; inconclusive where the samples cannot tell (quick runs time too few "
            "blocks), far apart where the ranges do not overlap by 2× or more. A side of "
            "several runs stands by all of them: the median of the runs' medians, the lowest "
            "and highest run in brackets; where those ranges overlap, inconclusive. Published "
            "figures carry no samples: they compare by value only.")


# ---------------------------------------------------------------- CSV

def to_csv(cmp: Comparison) -> str:
    """One line per row and machine: the point's parameters as columns, then how it was
    compared (POINT_BY_POINT, or 'best vs best: size=128 vs size=16384' for each side's best
    point, cmp.best, with the point it was measured at), the machine's value, interval, ratio
    and verdict. The best vs best lines are the answer where the sides share no point."""
    points = [(r, r.cells, [r.params] * len(r.cells), POINT_BY_POINT) for r in cmp.rows]
    points += [(b, b.cells, b.points, b) for b in cmp.best]
    keys = list(dict.fromkeys(k for _, _, params, _ in points for p in params if p for k in p))
    header = CSV_HEAD + point_headers(keys, CSV_HEAD + CSV_TAIL) + CSV_TAIL
    lines = []
    for r, cells, params, how in points:
        base = cmp.sides[r.baseline].label
        for k, (side, c) in enumerate(zip(cmp.sides, cells)):
            if c is None:
                continue
            said = how if isinstance(how, str) else \
                best_label(how, k) if k != how.baseline else "best vs best"
            lines.append([r.workload, r.metric, r.unit] + [(params[k] or {}).get(key) for key in keys]
                         + [said, side.label, "published" if c.published else "measured",
                            c.run_id, c.value, c.ci_low, c.ci_high, c.confidence, c.n, base,
                            c.ratio, c.verdict, c.p_value, csv_flags(c.flags), c.note,
                            c.runs, *(c.spread or (None, None)), c.unlike, c.unknown])
    return csv_text(header, lines)


# ---------------------------------------------------------------- HTML

CSS = PALETTE.css_variables() + """
body{font:14px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;
 margin:2em auto;max-width:1200px;padding:0 1em;color:var(--fg);background:var(--bg)}
h1{font-size:1.6em;margin-bottom:.2em} h2{margin-top:1.8em;border-bottom:1px solid var(--border)}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-variant-numeric:tabular-nums}
th,td{border:1px solid var(--border);padding:.3em .6em;text-align:right;vertical-align:top}
th{background:var(--card)} td.l,th.l{text-align:left}
.faster{color:var(--ok);font-weight:600} .slower{color:var(--error);font-weight:600}
.same{color:var(--muted)} .pub{font-style:italic} .meta{color:var(--muted)}
.flag{color:var(--warning)} ul.warnings li{color:var(--warning)}
figure{margin:.5em 0 1.5em;overflow-x:auto}
figcaption{color:var(--muted);font-size:.9em} .chip{display:inline-block;width:.9em;height:.9em;
 margin-right:.3em;vertical-align:middle}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _link(url: str | None) -> str:
    """A clickable link for http(s) addresses only: a received file's javascript: or data:
    address is shown as text, never followed."""
    if not url:
        return ""
    if url.strip().lower().startswith(("https://", "http://")):
        return f'<br><a href="{_e(url.strip())}" rel="noreferrer">{_e(url)}</a>'
    return f"<br>{_e(url)}"


def verdict_class(verdict: str | None) -> str:
    if not verdict:
        return ""
    words = verdict.replace(",", " ").split()
    if words[0] in ("faster", "slower"):
        return words[0]
    if verdict.startswith(FAR_APART) and words[3] in ("faster", "slower"):
        return words[3]     # "far apart: 36× faster, ...": a difference plain to see
    if verdict.startswith(INCONCLUSIVE):
        return "inconclusive"
    return "pub" if verdict.startswith("no statistics") else "same"


def _machines_table(cmp: Comparison) -> str:
    from siliconbench.core.machine import MachineInfo
    newest = [max(side.records, key=lambda r: r.created_at) for side in cmp.sides]
    summaries = [(rec.telemetry or {}).get("summary") or {} for rec in newest]
    telemetry = any(s.get("power_w") is not None or s.get("max_temperature_c") is not None
                    for s in summaries)
    out = ['<table id="machines"><thead><tr><th class="l">machine</th><th class="l">kind</th>'
           '<th class="l">hardware and OS</th><th class="l">framework</th>'
           + ("<th>mean power</th><th>highest temperature</th>" if telemetry else "")
           + '<th class="l">source</th></tr></thead><tbody>']
    for i, (side, rec, summary) in enumerate(zip(cmp.sides, newest, summaries)):
        power = ""
        if summary.get("power_w") is not None:
            # '425 W · board (NVML)', and the doubt the app's table shows on the run's power
            # (siliconbench.core.results.power_doubt), never a bare figure.
            power = " · ".join(_e(x) for x in (quantity(summary["power_w"], "W"),
                                                summary.get("power_source")) if x)
            if doubt := run_power_doubt(rec):
                power += f'<br><span class="flag">{_e(doubt)}</span>'
        temp = (quantity(summary["max_temperature_c"], "°C")
                if summary.get("max_temperature_c") is not None else "")
        frameworks = sorted({f"{r.framework} {r.software.get(r.framework, '')}".strip()
                             for r in side.records})
        prov = rec.provenance or {}
        hardware = prov.get("hardware") or MachineInfo.from_dict(rec.machine).summary()
        source = _e(prov.get("source")) if side.published else \
            f"{len(side.records)} run(s): " + ", ".join(_e(r.id[:8]) for r in side.records[:6])
        source += _link(prov.get("url"))
        out.append(
            f'<tr><td class="l"><span class="chip" '
            f'style="background:{PALETTE.series_color(i)}"></span>'
            f'{letter(i)} = {_e(side.label)}</td><td class="l">{"published" if side.published else "measured"}'
            f'</td><td class="l">{_e(hardware)}'
            f'</td><td class="l">{_e(", ".join(frameworks))}</td>'
            + (f"<td>{power}</td><td>{temp}</td>" if telemetry else "")
            + f'<td class="l">{source}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _flags_html(flags: list[str]) -> str:
    """A cell's flags: the doubts in the warning colour, the marks of trust (how a power was
    measured: energy_counter) muted, as the app's table paints them."""
    doubts = [f for f in flags if f not in TRUST_FLAGS]
    trust = [f for f in flags if f in TRUST_FLAGS]
    # In words ('power capped'), what each means on hover: never a raw key ('power_capped').
    return "".join(
        f' <span class="{cls}" title="{_e("; ".join(FLAGS.get(f, f) for f in said))}">'
        f'{_e(", ".join(f.replace("_", " ") for f in said))}</span>'
        for cls, said in (("flag", doubts), ("meta", trust)) if said)


def letter(i: int) -> str:
    """A side's letter, as the app and the command name it (comparison.side_letter)."""
    return chr(ord("A") + i) if i < 26 else str(i + 1)


def _comparison_table(cmp: Comparison, workload: str, rows: list[ComparedRow]) -> str:
    """A row per point: its parameters, each side's value under its letter (the machines
    table names them), and each other side's ratio and verdict in words in one column ('B vs
    A'), as the app's table: ten sides fit the page."""
    keys = ordered_keys(point_keys(rows))
    head = "".join(f"<th>{_e(k)}</th>" for k in keys) + '<th class="l">metric</th>'
    head += "".join(f'<th title="{_e(s.label)}">{letter(i)}</th>'
                    for i, s in enumerate(cmp.sides))
    head += "".join(f'<th class="l" title="{_e(s.label)}">{letter(i)} vs {letter(0)}</th>'
                    for i, s in enumerate(cmp.sides) if i)
    out = [(f'<table class="comparison" id="table-{_e(workload)}" '
            f'data-workload="{_e(workload)}"><thead><tr>{head}</tr></thead><tbody>')]
    for r in rows:
        cells = "".join(f"<td>{_e(r.params.get(k, ''))}</td>" for k in keys)
        cells += f'<td class="l">{_e(metric_heading(r.metric, r.unit))}</td>'
        for c in r.cells:
            flags = _flags_html(c.flags) if c else ""
            title = f' title="{_e(c.note)}"' if c and c.note else ""
            cls = ' class="pub"' if c and c.published else ""
            cells += f"<td{cls}{title}>{_e(cell_text(c, r.unit))}{flags}</td>"
        for c in r.cells[1:]:
            # Times apart with the direction and the verdict ('≈5,080× slower'), as the app
            # says it; the plain ratio and the test's p on hover.
            tip = " · ".join(x for x in (
                f"ratio {ratio(c.ratio)}" if c and c.ratio is not None else "",
                f"Mann-Whitney p = {p_value(c.p_value)}" if c and c.p_value is not None
                else "") if x)
            said = cell_words(c, direction(r.metric, r.unit)) if c else ""
            if c and said and r.baseline != 0:
                said += f" (vs {letter(r.baseline)})"
            cells += (f'<td class="l {verdict_class(c.verdict if c else None)}" '
                      f'title="{_e(tip)}">{_e(said)}</td>')
        out.append(f"<tr>{cells}</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _best_table(cmp: Comparison, best: BestRow) -> str:
    """Each side's best point of the workload's headline metric and its ratio to the first
    side's: the answer where the sides share no point, a summary where they do."""
    head = "".join(f'<th class="l">{name}</th>' for name in (
        "side", "best", "at", f"vs {_e(cmp.sides[best.baseline].label)}"))
    out = [f'<table class="best" data-workload="{_e(best.workload)}"><caption class="meta">'
           f"{_e(best_title(best))}, best vs best: each side's best "
           f"{_e(metric_heading(best.metric, best.unit))}, at its own point</caption>"
           f"<thead><tr>{head}</tr></thead><tbody>"]
    for k, (side, cell) in enumerate(zip(cmp.sides, best.cells)):
        if cell is None:
            continue
        tip = ratio(cell.ratio) if k != best.baseline else ""
        out.append(f'<tr><td class="l">{_e(side.label)}</td>'
                   f"<td>{_e(cell_text(cell, best.unit))}</td>"
                   f'<td class="l">{_e(best_point(best, k))}</td>'
                   f'<td class="l" title="{_e(tip)}">{_e(best_words(best, k))}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _nice_ticks(top: float, count: int = 5) -> list[float]:
    if top <= 0:
        return [0.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(math.ceil(top / step - 1e-9) + 1)]


def log_scale(rows: list[ComparedRow]) -> bool:
    """Whether a chart of these rows has a log axis: where its bars span more than LOG_SPAN
    times, the app's rule (siliconbench.core.numbers.needs_log_axis); on a linear axis a CPU's bar beside
    an H200's is a sliver on the axis."""
    return needs_log_axis(c.value for r in rows for c in r.cells if c)


def _decades(values: list[float]) -> tuple[int, int]:
    """The powers of ten a log axis runs between: the lowest bar stands at least a tenth of
    a decade above the axis's foot."""
    positive = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    lo = math.floor(math.log10(min(positive)) - 0.1)
    return lo, max(lo + 1, math.ceil(math.log10(max(positive))))


# A bar group's label: slanted this many degrees, at most this many characters, each about
# this wide at the charts' 11 px (Helvetica's widest lower case and digits).
LABEL_SLANT, LABEL_CHARS, CHAR_W = 35, 40, 6.5


def charted(unit: str) -> bool:
    """Whether a metric gets a bar chart beside its table: a temperature is a reading, not an
    amount that bars add up to; its table row says it."""
    return unit != "°C"


def bar_chart(cmp: Comparison, rows: list[ComparedRow], chart_id: str) -> str:
    """Grouped bars, one group per point and one bar per machine, with 99% interval whiskers;
    published figures hatched; a log axis where the bars span more than LOG_SPAN times.
    Plain SVG: opens anywhere, prints, needs no script."""
    n = len(cmp.sides)
    bar, gap, top, plot_h, legend_w = 16, 18, 34, 220, 180
    group_w = n * bar + gap
    # Parameters that are the same for every bar say nothing under a bar.
    varying = [k for k in point_keys(rows) if len({str(r.params.get(k)) for r in rows}) > 1]
    labels = [clip(point_label({k: r.params.get(k) for k in varying}), LABEL_CHARS)
              if varying else "" for r in rows]
    # Room for the longest label, slanted down to the left of its group: none is cut off.
    reach = CHAR_W * max(map(len, labels), default=0)
    bottom = 24 + math.ceil(reach * math.sin(math.radians(LABEL_SLANT)))
    left = max(64, math.ceil(reach * math.cos(math.radians(LABEL_SLANT))
                             - gap / 2 - n * bar / 2 + 4))
    width = max(left + n * legend_w + 20, left + len(rows) * group_w + 20)
    height = top + plot_h + bottom
    values = [v for r in rows for c in r.cells if c for v in (c.value, *whisker(c))
              if v is not None]
    unit = rows[0].unit
    log = log_scale(rows)
    if log:
        lo, hi = _decades(values)
        every = math.ceil((hi - lo) / 10)       # at most about ten labelled decades
        ticks = [10.0 ** e for e in range(lo, hi + 1, every)]
        tick_text = [compact(t, unit) for t in ticks]

        def y(v: float) -> float:   # a value of zero or less at the axis's foot
            e = min(max(math.log10(v), lo), hi) if v > 0 else lo
            return top + plot_h - plot_h * (e - lo) / (hi - lo)
    else:
        ticks = _nice_ticks(max(values + [0.0]))
        tick_text = [figure(t, unit) for t in ticks]
        ymax = ticks[-1] if ticks[-1] > 0 else 1.0

        def y(v: float) -> float:
            return top + plot_h - plot_h * v / ymax
    foot = y(0)

    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
              f'viewBox="0 0 {width} {height}" role="img" '
              f'data-scale="{"log" if log else "linear"}" '
              f'aria-label="{_e(metric_title(rows[0].metric))}" '
              'font-family="Helvetica,Arial,sans-serif" font-size="11">'),
             (f'<defs><pattern id="hatch-{chart_id}" width="6" height="6" '
              'patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
              f'<rect width="6" height="6" fill="{PALETTE.background}"/><line x1="0" y1="0" '
              f'x2="0" y2="6" stroke="{PALETTE.muted}" stroke-width="3"/></pattern></defs>')]
    for t, text in zip(ticks, tick_text):
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y(t):.1f}" y2="{y(t):.1f}" '
                     f'stroke="{PALETTE.border}"/><text x="{left - 6}" y="{y(t) + 4:.1f}" '
                     f'text-anchor="end" class="tick">{_e(text)}</text>')
    parts.append(f'<text x="12" y="{top + plot_h / 2:.0f}" transform="rotate(-90 12 '
                 f'{top + plot_h / 2:.0f})" text-anchor="middle">{_e(unit)}</text>')
    for i, side in enumerate(cmp.sides):   # legend
        lx = left + i * legend_w
        parts.append(f'<rect x="{lx}" y="8" width="10" height="10" '
                     f'fill="{PALETTE.series_color(i)}"/>'
                     f'<text x="{lx + 14}" y="17">{_e(clip(side.label, 27))}</text>')
    for g, r in enumerate(rows):
        gx = left + g * group_w + gap / 2
        for i, c in enumerate(r.cells):
            if c is None or c.value is None:
                continue
            x = gx + i * bar
            fill = f"url(#hatch-{chart_id})" if c.published else PALETTE.series_color(i)
            stroke = f' stroke="{PALETTE.series_color(i)}" stroke-width="2"' if c.published else ""
            tip = f"{cmp.sides[i].label}: {cell_text(c, r.unit)}"
            parts.append(f'<rect x="{x:.1f}" y="{y(c.value):.1f}" width="{bar - 2}" '
                         f'height="{max(0.0, foot - y(c.value)):.1f}" fill="{fill}"{stroke}>'
                         f"<title>{_e(tip)}</title></rect>")
            w_lo, w_hi = whisker(c)
            if w_lo is not None and w_hi is not None:
                cx = x + (bar - 2) / 2
                parts.append(f'<path d="M{cx:.1f} {y(w_lo):.1f}V{y(w_hi):.1f}'
                             f'M{cx - 3:.1f} {y(w_lo):.1f}h6M{cx - 3:.1f} '
                             f'{y(w_hi):.1f}h6" stroke="{PALETTE.foreground}" fill="none"/>')
        lx, ly = gx + n * bar / 2, top + plot_h + 12
        parts.append(f'<text x="{lx:.1f}" y="{ly}" text-anchor="end" '
                     f'transform="rotate(-{LABEL_SLANT} {lx:.1f} {ly})">{_e(labels[g])}</text>')
    parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{foot:.1f}" y2="{foot:.1f}" '
                 f'stroke="{PALETTE.foreground}"/></svg>')
    return "".join(parts)


def _better_text(metric: str, unit: str) -> str:
    return {"higher": "higher is better", "lower": "lower is better",
            "neutral": "neither better nor worse"}[direction(metric, unit)]


def to_html(cmp: Comparison, title: str | None = None) -> str:
    """The whole comparison as one HTML file that opens offline in any browser."""
    title = title or "SiliconBench: " + " vs ".join(s.label for s in cmp.sides)
    body = [f"<h1>{_e(title)}</h1>",
            (f'<p class="meta">Made by SiliconBench {_e(__version__)} on {_e(now_iso())}. '
             f"{_e(legend())}</p>"),
            "<h2>Machines</h2>", _machines_table(cmp)]
    if cmp.warnings:
        body.append('<h2>Not quite comparable</h2><ul class="warnings">'
                    + "".join(f"<li>{_e(w)}</li>" for w in cmp.warnings) + "</ul>")
    body += [f'<p class="meta">{_e(n[:1].upper() + n[1:])}.</p>' for n in cmp.notes]
    body.append(f'<p class="meta" id="compared">{_e(compared_sentence(cmp))}</p>')
    best: dict[str, list[BestRow]] = {}
    for b in cmp.best:
        best.setdefault(b.workload, []).append(b)
    chart = 0
    for workload, rows in by_workload(cmp).items():
        body.append(f'<section id="workload-{_e(workload)}"><h2>{_e(workload)}</h2>')
        body += [_best_table(cmp, b) for b in best.pop(workload, [])]
        body.append(_comparison_table(cmp, workload, rows))
        metrics: dict[tuple[str, str], list[ComparedRow]] = {}
        for r in rows:
            metrics.setdefault((r.metric, r.unit), []).append(r)
        for (metric, unit), mrows in metrics.items():
            if not charted(unit):
                continue
            chart += 1
            body.append(f"<figure>{bar_chart(cmp, mrows, str(chart))}<figcaption>"
                        f"{_e(workload)}: {_e(metric_heading(metric, unit))}, "
                        f"{_better_text(metric, unit)}; whiskers: {CONFIDENCE:.0%} intervals; "
                        "hatched: published figures."
                        + (f" Log scale: the bars span more than {LOG_SPAN:g}×."
                           if log_scale(mrows) else "") + "</figcaption></figure>")
        body.append("</section>")
    for workload, bests in best.items():   # no point both sides measured: the bests answer
        body.append(f'<section id="workload-{_e(workload)}"><h2>{_e(workload)}</h2>'
                    + "".join(_best_table(cmp, b) for b in bests) + "</section>")
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
            + "\n".join(body) + "</body></html>\n")
