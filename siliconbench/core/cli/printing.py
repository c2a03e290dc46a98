"""What the command prints in the terminal: rich tables of devices, workloads, runs, one run's
rows, comparisons and published references, and the progress bar of a run. Data (labels,
reasons, parameters, notes: the user's text or a received file's) is always rich `Text`, never
markup. rich is imported by each function that draws, never at start-up."""

from __future__ import annotations

import sys
import time

from siliconbench.core.params import bound
from siliconbench.core.text import one_line


def console(stderr: bool = False):
    from rich.console import Console
    c = Console(stderr=stderr, highlight=False, soft_wrap=False)
    if not c.is_terminal:  # piped or logged: do not squeeze tables into 80 columns
        c.width = max(c.width, 160)
    return c


def as_text(value, style: str | None = None):
    """Data (a label, a reason, a workload or device name, a parameter) for a rich table or
    line: a Text, which rich never reads as markup, on one line, with no control character,
    so a received file's '[/]', '[link=...]' or escape sequence shows as the characters it is."""
    from rich.text import Text
    return Text(one_line("" if value is None else str(value)), style=style or "")


class ProgressBar:
    """A progress bar on stderr, shown only once a run has taken more than a second."""

    def __init__(self, title: str) -> None:
        self.title, self.start, self.bar, self.task = title, time.monotonic(), None, None

    def __call__(self, event: dict) -> None:
        if event.get("event") != "progress" or not sys.stderr.isatty():
            return
        if self.bar is None:
            if time.monotonic() - self.start < 1.0:
                return
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )
            # The step names a workload's point (a model, a label): text, never markup.
            self.bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(),
                                TextColumn("{task.fields[step]}", markup=False),
                                console=console(True),
                                transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.title, total=event["total"], step="")
        self.bar.update(self.task, completed=event["done"], total=event["total"],
                        step=one_line(str(event.get("message", ""))))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def print_devices(found) -> None:
    from rich.table import Table
    from rich.text import Text

    from siliconbench.core.numbers import size
    t = Table("framework", "device", "name", "kind", "memory", "status")
    for d in found:
        mem = size(d.memory_bytes) if d.memory_bytes else ""
        # Reasons name pip extras ('siliconbench[mlx]'): text, never markup.
        t.add_row(as_text(d.framework), as_text(d.id), as_text(d.name), as_text(d.kind), mem,
                  (as_text("ready" + (f" ({d.note})" if d.note else "")) if d.usable else
                   Text.assemble(("unusable", "red"), ": ", as_text(d.reason))))
    console().print(t)


def print_workloads(workloads) -> None:
    from siliconbench.core.frameworks import runs_on
    c = console()
    for w in workloads:
        c.print(f"[bold]{w.name}[/]  {w.title} ({', '.join(runs_on(w))})\n  {w.summary}")
        for p in w.params:
            default = p.format(p.default) if p.default is not None else (p.auto or "")
            bounds = ""
            if p.min is not None or p.max is not None:
                low, high = ("" if v is None else bound(v) for v in (p.min, p.max))
                bounds = f" [{low}..{high}]"
            if p.choices:
                bounds = f" {{{', '.join(p.choices)}}}"
            c.print(f"    {p.flag:<14} {p.help} Default: {default}.{bounds}", soft_wrap=True)


def print_record(rec) -> None:
    """One run's rows (siliconbench.core.columns), its workload's own tables, its warnings and
    why it did not finish."""
    from rich.table import Table
    from rich.text import Text

    from siliconbench.core.columns import TERMINAL, point_keys, without_empty
    from siliconbench.core.numbers import peak_text
    c = console()
    keys = point_keys(rec.rows)
    t = Table(title=as_text(f"{rec.workload} on {rec.device_name or rec.device} "
                            f"({rec.framework}:{rec.device}) · run {rec.id[:8]}"))
    header = keys + [col.heading for col in TERMINAL]
    lines = [[str(row.params.get(k, "")) for k in keys] + [col.text(row) for col in TERMINAL]
             for row in rec.rows]
    right = set(keys) | {col.heading for col in TERMINAL if col.figure}
    header, lines = without_empty(header, lines, ("metric", "value"))
    for name in header:
        t.add_column(as_text(name), justify="right" if name in right else "left")
    for cells in lines:
        t.add_row(*(as_text(cell) for cell in cells))  # notes quote framework errors: "[matmul]"
    c.print(t)
    from siliconbench.core.catalogue import catalogue
    if (declared := catalogue().get(rec.workload)) is not None:
        try:
            tables = declared.more_tables(rec)
        except (KeyError, TypeError, ValueError, AttributeError):
            # A record imported before import checked its points (an LLM row without its
            # prompt): its rows are shown above; the workload's own table is left out.
            tables = []
        for title, header, cells in tables:
            more = Table(*header, title=as_text(title))
            for line in cells:
                more.add_row(*(as_text(cell) for cell in line))
            c.print(more)
    for w in rec.warnings:
        c.print(Text.assemble(("warning:", "yellow"), " ", as_text(w)))
    if rec.status != "ok":
        reason = (rec.reason or "").rstrip()      # most reasons are sentences: one full stop
        c.print(Text.assemble((f"The run {rec.status}:", "red"), " ", as_text(reason),
                              f"{'' if reason.endswith('.') else '.'} {len(rec.rows)} result "
                              "rows were kept."))
    unknown = {peak_text(r) for r in rec.rows if r.stats is not None} & {
        "peak unknown", "memory bound unknown", "compute bound unknown"}
    if unknown:
        c.print("% peak unknown: SiliconBench has no physical peak for this device"
                + ("." if unknown == {"peak unknown"} else
                   "; run bandwidth (and gemm) on it first to hold an LLM's decode (and "
                   "prefill) against what it measured."))


def print_runs(runs) -> None:
    """The store's listing: a line per run with its headline figure."""
    from rich.table import Table
    from rich.text import Text

    from siliconbench.core.catalogue import headline
    from siliconbench.core.numbers import row_with_spread
    from siliconbench.core.store_schema import Listed, run_kind, shown_params
    # A run is listed under the device that ran it: an H200 run on a Xeon host is the H200's
    # ('NVIDIA H200 (torch cuda)'), its host in the machine column.
    t = Table("id", "when (UTC)", "workload", "device", "machine", "status", "rows")
    t.add_column(as_text("headline [p25–p75]"))   # text: rich would read [p25–p75] as markup
    # A shared store's runs: the database role that wrote each (who vouches for the machine).
    owners = any(getattr(r, "owner", None) for r in runs)
    if owners:
        t.add_column("sent by")
    for r in runs:
        best = headline(r)
        # What it measured, as the app's Results names it ('gemm · float32 · TF32').
        kind = run_kind(r.workload, r.params if isinstance(r, Listed) else shown_params(r))
        status = as_text(r.status) if r.status == "ok" else \
            Text.assemble((r.status, "red"), ": ", as_text(r.reason))
        t.add_row(as_text(r.id[:8]), as_text(r.created_at[:19].replace("T", " ")),
                  as_text(r.workload + (f" · {kind}" if kind else "")), as_text(r.device_text),
                  as_text(r.machine_label), status, str(r.row_count),
                  as_text(row_with_spread(best) if best else ""),
                  *([as_text(getattr(r, "owner", None) or "")] if owners else []))
    console().print(t)


def print_comparison(cmp) -> None:
    from rich.table import Table
    from rich.text import Text

    from siliconbench.core.columns import point_keys
    from siliconbench.core.compare_stats import direction, ratio_words
    from siliconbench.core.compare_words import column_baseline, compared_sentence, side_name
    from siliconbench.core.numbers import metric_heading
    from siliconbench.core.report import by_workload, cell_text, legend, ordered_keys
    c = console()
    verdict_style = {"faster": "green", "slower": "red"}
    for workload, rows in by_workload(cmp).items():
        keys = ordered_keys(point_keys(rows))      # dtype before size, as everywhere
        # Labels, parameters and notes are the user's text, or a received file's: never markup.
        t = Table(title=as_text(f"{workload}: " + " vs ".join(s.label for s in cmp.sides)))
        for k in keys:
            t.add_column(as_text(k), justify="right")
        t.add_column("metric")
        for s in cmp.sides:
            t.add_column(as_text(side_name(s)), justify="right")
        # Each side's ratios are against the side its column names (column_baseline); a
        # row measured against another says so.
        bases = [column_baseline(rows, k) for k in range(len(cmp.sides))]
        for k in range(1, len(cmp.sides)):
            t.add_column(as_text(f"{side_name(cmp.sides[k])} vs "
                                 f"{side_name(cmp.sides[bases[k]])}"), justify="right")
            t.add_column("verdict")
        for r in rows:
            cells = [str(r.params.get(k, "")) for k in keys] + [metric_heading(r.metric, r.unit)]
            cells += [cell_text(cell, r.unit) for cell in r.cells]
            cells = [as_text(cell) for cell in cells]
            for k, cell in enumerate(r.cells[1:], 1):
                word = (cell.verdict or "") if cell else ""
                if cell and cell.unlike:     # as the app's cell says it: no like run to pair
                    word += f" · unlike: {cell.unlike}"
                if cell and cell.unknown:    # a setting one record does not name
                    word += f" · not known to be alike: {cell.unknown}"
                if word and r.baseline != bases[k]:
                    word += f" (vs {side_name(cmp.sides[r.baseline])})"
                # Times apart with the direction, as the app and the HTML report say it
                # ('≈5,080× slower'): a raw ratio read '0.001×' for a CPU beside an H200.
                cells += [ratio_words(cell.ratio, direction(r.metric, r.unit)) if cell else "",
                          as_text(word, verdict_style.get(word.split(" ")[0]))]
            t.add_row(*cells)
        c.print(t)
    for best in cmp.best:
        print_best(best, cmp.sides)
    for w in cmp.warnings:
        c.print(Text.assemble(("not comparable:", "yellow"), " ", as_text(w)), soft_wrap=True)
    for note in cmp.notes:
        c.print(as_text(f"{note[:1].upper()}{note[1:]}."), soft_wrap=True)
    c.print(compared_sentence(cmp), soft_wrap=True)
    c.print(legend(), soft_wrap=True)


def print_best(best, sides) -> None:
    """A workload's best vs best: each side's best point of its headline metric, and its
    ratio to the first side's, with the points it divides."""
    from rich.table import Table

    from siliconbench.core.compare_words import side_name
    from siliconbench.core.numbers import metric_heading
    from siliconbench.core.report import best_point, best_title, best_words, cell_text
    t = Table(title=as_text(f"{best_title(best)}: best vs best, "
                            f"{metric_heading(best.metric, best.unit)}"))
    for name in ("side", "best", "at", f"vs {side_name(sides[best.baseline])}"):
        t.add_column(as_text(name))
    for k, (side, cell) in enumerate(zip(sides, best.cells)):
        if cell is not None:
            t.add_row(as_text(side_name(side)), as_text(cell_text(cell, best.unit)),
                      as_text(best_point(best, k)), as_text(best_words(best, k)))
    console().print(t)


def print_provenance(rec) -> None:
    """Where a published reference comes from, a line per fact."""
    from rich.text import Text
    for key, value in (rec.provenance or {}).items():
        console().print(Text.assemble((f"{key}:", "bold"), " ", as_text(value)), soft_wrap=True)


def print_references(records) -> None:
    from rich.table import Table
    t = Table("id", "workload", "machine", "framework:device", "rows", "source",
              title="Published results (compare with: siliconbench compare ID RUN)")
    for r in records:
        t.add_row(as_text(r.id), as_text(r.workload), as_text(r.machine_label),
                  as_text(f"{r.framework}:{r.device}"), str(len(r.rows)),
                  as_text((r.provenance or {}).get("source", "")))
    console().print(t)


def print_models(found) -> None:
    from rich.table import Table

    from siliconbench.core.numbers import number, size
    if not found:
        console().print("No model files found in the Hugging Face cache, LM Studio, Ollama "
                        "or llama.cpp's cache.")
        return
    usable = [m for m in found if not m.problem]
    t = Table("model", "engines", "architecture", "parameters", "quantisation", "size",
              "found in", title=f"Model files on this machine ({len(usable)} usable; run "
              "one with: siliconbench run llm --model-path PATH)")
    for m in usable:
        moe = f", MoE {m.experts[1]} of {m.experts[0]} experts" if m.experts else ""
        t.add_row(as_text(m.name), as_text(", ".join(m.engines)),
                  as_text(m.architecture + moe),
                  number(m.parameters / 1e9) + "B" if m.parameters else "?",
                  as_text(m.quantisation), size(m.size) if m.size else "?", as_text(m.source))
    console().print(t)
    for m in found:
        if m.problem:
            console().print(as_text(f"Not usable: {m.name} ({m.source}): {m.problem}"))
