"""The `siliconbench` command. With no subcommand it opens the desktop app, or, with no display,
runs the quick suite headless. Exit codes: 0 ok, 1 a run failed, 2 bad usage, 130 Ctrl-C,
143/129 ended by SIGTERM/SIGHUP (a run under way is kept as cancelled)."""

from __future__ import annotations

import _signal  # built in: no file to look for, so the handler is in place at once
import os
import sys


def _end_quietly(signum, frame) -> None:
    os.write(2, b"siliconbench: interrupted.\n")
    os._exit(130)


# Ctrl-C while the command is still importing: one line, no traceback (main() takes over).
if __name__ == "__main__" or os.path.basename(sys.argv[0]).startswith("siliconbench"):
    _signal.signal(_signal.SIGINT, _end_quietly)

import argparse  # noqa: E402  (after the handler, on purpose)
import signal  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from siliconbench.core.files import write_atomic  # noqa: E402
from siliconbench.core.params import Param, bound  # noqa: E402
from siliconbench.core.results import dumps  # noqa: E402
from siliconbench.core.text import clip, one_line  # noqa: E402

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class Usage(Exception):
    """Bad input from the user: one sentence, exit 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: one sentence, exit 2
        raise Usage(message[0].upper() + message[1:] + ("" if message.endswith(".") else "."))


def _console(stderr: bool = False):
    from rich.console import Console
    c = Console(stderr=stderr, highlight=False, soft_wrap=False)
    if not c.is_terminal:  # piped or logged: do not squeeze tables into 80 columns
        c.width = max(c.width, 160)
    return c


def _text(value, style: str | None = None):
    """Data (a label, a reason, a workload or device name, a parameter) for a rich table or
    line: a Text, which rich never reads as markup, on one line, with no control character,
    so a received file's '[/]', '[link=...]' or escape sequence shows as the characters it is."""
    from rich.text import Text
    from siliconbench.core.text import one_line
    return Text(one_line("" if value is None else str(value)), style=style or "")


# Runs are listed newest first; SQLite's LIMIT takes a 64-bit integer at most.
MAX_LIMIT = 1_000_000

# ---------------------------------------------------------------- arguments

def build_parser() -> argparse.ArgumentParser:
    from siliconbench.core.catalogue import catalogue

    p = Parser(prog="siliconbench", description="Benchmarks for machine learning on Apple "
               "Silicon, NVIDIA GPUs and CPUs. With no command, opens the desktop app.")
    from siliconbench import __version__
    p.add_argument("--version", action="version", version=f"SiliconBench {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=Parser)

    d = sub.add_parser("devices", help="the devices each framework sees, and why one is unusable")
    d.add_argument("--json", action="store_true", help="machine-readable output")
    d.add_argument("--refresh", action="store_true",
                   help="ask every framework again (the answer is kept until an installed "
                        "framework, the interpreter, the visible GPUs or the hardware change)")

    w = sub.add_parser("workloads", help="what each workload measures, and its parameters")
    w.add_argument("--json", action="store_true")

    r = sub.add_parser("run", help="run one workload on one device")
    wsub = r.add_subparsers(dest="workload", parser_class=Parser, metavar="WORKLOAD")
    for wl in catalogue().values():
        extra = {} if wl.hidden else {"help": wl.summary}
        wp = wsub.add_parser(wl.name, description=wl.summary, **extra)
        _common_run_flags(wp)
        for prm in wl.params:
            help_text = prm.help + (f" Default: {prm.format(prm.default)}." if prm.default
                                    is not None else f" Default: {prm.auto}." if prm.auto else "")
            if prm.kind == "bool":
                wp.add_argument(prm.flag, dest=prm.name, nargs="?", const="true", default=None,
                                metavar="true|false", help=help_text)
            else:
                wp.add_argument(prm.flag, dest=prm.name, default=None, metavar=prm.kind.upper(),
                                help=help_text)

    q = sub.add_parser("quick", help="the quick suite on every usable device (a few minutes)")
    q.add_argument("--label", type=_label,
                   help="your name for this machine, e.g. 'MacBook Pro 14'")

    res = sub.add_parser("results", help="the runs kept in the results store")
    res.add_argument("--json", action="store_true")
    res.add_argument("--limit", type=int, default=20, help="how many, newest first (default 20)")
    res.add_argument("--show", metavar="ID", help="one run's result rows")

    e = sub.add_parser("export", help="write runs to a CSV or JSON file")
    e.add_argument("--format", choices=("csv", "json"), default=None,
                   help="default: from the file name's extension (.sbresults: json, "
                   "which the Mac app opens on a double click)")
    e.add_argument("-o", "--output", required=True, help="file to write")
    e.add_argument("--run", action="append", default=[], metavar="ID",
                   help="a run id (or its first characters); repeat; default all runs")

    i = sub.add_parser("import", help="add result files (JSON or .sbresults exports) to the "
                       "store")
    i.add_argument("files", nargs="+", metavar="FILE")

    c = sub.add_parser("compare", help="machines side by side: medians, 99%% intervals, "
                       "ratios and verdicts, with what makes them not comparable")
    c.add_argument("sides", nargs="+", metavar="RUN|LABEL|FILE|REF",
                   help="a run id (or its first characters), a machine label (its runs), a "
                        "result file, or a published reference id; two or more")
    c.add_argument("--workload", help="only this workload")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report")
    c.add_argument("--csv", metavar="FILE", help="also write the comparison as CSV")

    ref = sub.add_parser("reference", help="the published results SiliconBench reproduces")
    ref.add_argument("--json", action="store_true", help="the records, as an export file")
    ref.add_argument("--show", metavar="ID", help="one reference's rows and provenance")

    sub.add_parser("gui", help="open the desktop app")
    return p


TIME_LIMIT = Param("time_limit", "float", None, "Stop the run after this long.", min=0.001)


def _label(text: str) -> str:
    """--label: at most what a run record's label holds (an export must import again)."""
    from siliconbench.core.machine_names import label_problem
    problem = label_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem[0].lower() + problem[1:])
    return text


def _common_run_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--framework", default="torch", help="torch (default), tensorflow, mlx")
    p.add_argument("--device", default="cpu",
                   help="cpu (default), mps, cuda, cuda:1 (torch); gpu (tensorflow, mlx)")
    p.add_argument("--label", type=_label,
                   help="your name for this machine, e.g. 'MacBook Pro 14'")
    p.add_argument("--json", action="store_true", help="print the run record as JSON")
    p.add_argument("--quick", action="store_true", help="shorter measurements (less precise)")
    p.add_argument("--time-limit", default=None, metavar="SECONDS", help=TIME_LIMIT.help)


# ---------------------------------------------------------------- commands

def cmd_devices(args) -> int:
    from siliconbench.core.runner import discover_devices
    found = discover_devices(fresh=args.refresh)
    if args.json:
        print(dumps([d.to_dict() for d in found], indent=1))
        return EXIT_OK
    from rich.table import Table
    from rich.text import Text

    from siliconbench.core.numbers import size
    t = Table("framework", "device", "name", "kind", "memory", "status")
    for d in found:
        mem = size(d.memory_bytes) if d.memory_bytes else ""
        # Reasons name pip extras ('siliconbench[mlx]'): text, never markup.
        t.add_row(_text(d.framework), _text(d.id), _text(d.name), _text(d.kind), mem,
                  (_text("ready" + (f" ({d.note})" if d.note else "")) if d.usable else
                   Text.assemble(("unusable", "red"), ": ", _text(d.reason))))
    _console().print(t)
    return EXIT_OK


def cmd_workloads(args) -> int:
    from siliconbench.core.catalogue import listed
    from siliconbench.core.frameworks import runs_on
    if args.json:
        print(dumps([{**w.to_dict(), "frameworks": list(runs_on(w))} for w in listed()],
                    indent=1))
        return EXIT_OK
    c = _console()
    for w in listed():
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
    return EXIT_OK


class _Progress:
    """A progress bar on stderr, shown only once a run has taken more than a second."""

    def __init__(self, title: str) -> None:
        self.title, self.start, self.bar, self.task = title, time.monotonic(), None, None

    def __call__(self, event: dict) -> None:
        if event.get("event") != "progress" or not sys.stderr.isatty():
            return
        if self.bar is None:
            if time.monotonic() - self.start < 1.0:
                return
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn)
            # The step names a workload's point (a model, a label): text, never markup.
            self.bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(),
                                TextColumn("{task.fields[step]}", markup=False),
                                console=_console(True),
                                transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.title, total=event["total"], step="")
        self.bar.update(self.task, completed=event["done"], total=event["total"],
                        step=one_line(str(event.get("message", ""))))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _run_one(spec):
    """(record, None), or (record, the sentence saying where it went) when the store could
    not keep it."""
    from siliconbench.core.runner import execute_kept
    progress = _Progress(f"{spec.workload} on {spec.framework}:{spec.device}")
    try:
        rec, not_stored = execute_kept(spec, on_event=progress)
    finally:
        progress.close()
    if not_stored is None:
        return rec, None
    if not_stored.path is None:  # no file could be written: the record goes to the screen
        print(dumps(rec.to_dict(), indent=1))
    return rec, str(not_stored)


def cmd_run(args) -> int:
    from siliconbench.core.runner import RunSpec
    from siliconbench.core.catalogue import workload
    if not args.workload:
        raise Usage("Name a workload to run, e.g. siliconbench run gemm.")
    w = workload(args.workload)
    given = {}
    for p in w.params:
        text = getattr(args, p.name)
        if text is not None:
            given[p.name] = p.parse(text)
    time_limit = TIME_LIMIT.parse(args.time_limit) if args.time_limit is not None else None
    spec = RunSpec(w.name, args.framework, args.device, given, args.label, args.quick,
                   time_limit)
    for line in _estimate_warnings(spec):
        print(f"siliconbench: warning: {line}", file=sys.stderr)
    rec, not_stored = _run_one(spec)
    if args.json:
        print(dumps(rec.to_dict(), indent=1))
    else:
        print_record(rec)
    if not_stored:
        print(f"siliconbench: {not_stored}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK if rec.status == "ok" else EXIT_FAILED


def _estimate_warnings(spec) -> list[str]:
    """siliconbench.core.estimate's warnings for a run on the CPU (a GPU's memory and peak need the device
    list, which the run itself asks for); a run of which nothing fits is refused (Usage, one
    sentence) before it starts."""
    if spec.device != "cpu":
        return []
    import psutil

    from siliconbench.core.estimate import estimate
    from siliconbench.core.frameworks import DeviceInfo, cpu_name
    cpu = DeviceInfo(spec.framework, "cpu", cpu_name(), "cpu", psutil.virtual_memory().total)
    est = estimate(spec.workload, spec.params, cpu, spec.quick)
    refusal = est.refusal(cpu.name, cpu.memory_bytes)
    if refusal:
        raise Usage(refusal)
    return est.warnings(cpu.name, cpu.memory_bytes)


def print_record(rec) -> None:
    from rich.table import Table
    from rich.text import Text

    from siliconbench.core.columns import TERMINAL, point_keys
    from siliconbench.core.numbers import peak_text
    c = _console()
    keys = point_keys(rec.rows)
    t = Table(title=_text(f"{rec.workload} on {rec.device_name or rec.device} "
                          f"({rec.framework}:{rec.device}) · run {rec.id[:8]}"))
    for k in keys:
        t.add_column(_text(k), justify="right")
    for col in TERMINAL:
        t.add_column(col.heading, justify="right" if col.figure else "left")
    for row in rec.rows:
        cells = [str(row.params.get(k, "")) for k in keys] + [col.text(row) for col in TERMINAL]
        t.add_row(*(_text(cell) for cell in cells))  # notes quote framework errors: "[matmul]"
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
            more = Table(*header, title=_text(title))
            for line in cells:
                more.add_row(*(_text(cell) for cell in line))
            c.print(more)
    for w in rec.warnings:
        c.print(Text.assemble(("warning:", "yellow"), " ", _text(w)))
    if rec.status != "ok":
        reason = (rec.reason or "").rstrip()      # most reasons are sentences: one full stop
        c.print(Text.assemble((f"The run {rec.status}:", "red"), " ", _text(reason),
                              f"{'' if reason.endswith('.') else '.'} {len(rec.rows)} result "
                              "rows were kept."))
    unknown = {peak_text(r) for r in rec.rows if r.stats is not None} & {
        "peak unknown", "memory bound unknown", "compute bound unknown"}
    if unknown:
        c.print("% peak unknown: SiliconBench has no physical peak for this device"
                + ("." if unknown == {"peak unknown"} else
                   "; run bandwidth (and gemm) on it first to hold an LLM's decode (and "
                   "prefill) against what it measured."))


def cmd_quick(args) -> int:
    from siliconbench.core.export import to_csv
    from siliconbench.core.runner import discover_devices
    from siliconbench.core.store import default_path, home
    from siliconbench.core.suites import expand, summary_lines
    specs = expand("quick", discover_devices(fresh=False), args.label)
    if not specs:
        raise Usage("No usable device was found for the quick suite.")
    records, all_stored = [], True
    for spec in specs:
        print(f"Quick suite: {spec.workload} on {spec.framework}:{spec.device} ...",
              file=sys.stderr)
        rec, not_stored = _run_one(spec)
        print_record(rec)
        if not_stored:
            print(f"siliconbench: {not_stored}", file=sys.stderr)
            all_stored = False
        records.append(rec)
    out = home() / f"quick-suite-{time.strftime('%Y%m%d-%H%M%S')}.csv"
    try:
        write_atomic(out, to_csv(records))
    except OSError as e:
        raise Usage(f"Cannot write {out}: {e.strerror}.") from None
    # A short summary, not every row: `siliconbench results --show ID` has those.
    print("\nQuick suite: the best point of each workload (headline metric)")
    print("\n".join(summary_lines(records)))
    kept = f"kept in the store {default_path()}" if all_stored else \
        "kept in the store or the files named above"
    print(f"\nAll rows are {kept}\nand written to {out}.\n"
          f"List the runs with: siliconbench results; one run's rows: siliconbench results "
          f"--show ID")
    return EXIT_OK if all_stored and all(r.status == "ok" for r in records) else EXIT_FAILED


def cmd_results(args) -> int:
    from siliconbench.core.store import Store
    store = Store()
    if args.show:
        print_record(_find_runs(store, [args.show])[0])
        return EXIT_OK
    if args.limit is not None and not 1 <= args.limit <= MAX_LIMIT:
        raise Usage(f"--limit must be between 1 and {MAX_LIMIT:,}.")
    if args.json:
        runs = store.runs(limit=args.limit)
        _say_unreadable(store)
        print(dumps([r.to_dict() for r in runs], indent=1))
        return EXIT_OK
    runs = store.listing(limit=args.limit)    # the same cost whatever a record holds
    _say_unreadable(store)
    if not runs:
        print(f"No runs yet in {store.path}. Try: siliconbench run gemm")
        return EXIT_OK
    from rich.table import Table
    from rich.text import Text
    from siliconbench.core.numbers import row_with_spread
    from siliconbench.core.catalogue import headline
    t = Table("id", "when (UTC)", "workload", "device", "machine", "status", "rows")
    t.add_column(_text("headline [p25–p75]"))   # text: rich would read [p25–p75] as markup
    for r in runs:
        best = headline(r)
        status = _text(r.status) if r.status == "ok" else \
            Text.assemble((r.status, "red"), ": ", _text(r.reason))
        t.add_row(_text(r.id[:8]), _text(r.created_at[:19].replace("T", " ")),
                  _text(r.workload), _text(f"{r.framework}:{r.device}"), _text(r.machine_label),
                  status, str(r.row_count), _text(row_with_spread(best) if best else ""))
    _console().print(t)
    return EXIT_OK


def _find_runs(store, ids: list[str]):
    found = []
    for run_id in ids:
        matches = store.find(run_id)
        if not matches:
            raise Usage(f"No run with id {clip(run_id)!r} in the store.")
        if len(matches) > 1:
            raise Usage(f"{clip(run_id)!r} matches {len(matches)} runs; give more of the id.")
        found.append(matches[0])
    return found


def cmd_export(args) -> int:
    from siliconbench.core.export import FORMAT_BY_SUFFIX, RESULT_SUFFIX, to_csv, to_json
    from siliconbench.core.store import Store
    store = Store()
    out = Path(args.output)
    if out.is_dir():
        raise Usage(f"{out} is a folder; name a file in it, e.g. {out / 'results.csv'}.")
    fmt = args.format or FORMAT_BY_SUFFIX.get(out.suffix.lower())
    if fmt not in ("csv", "json"):
        raise Usage(f"Say --format csv or --format json (or name the file .csv, .json or "
                    f"{RESULT_SUFFIX}).")
    records = _find_runs(store, args.run) if args.run else list(reversed(store.runs()))
    left_out = _say_unreadable(store)
    if not records:
        raise Usage("There are no runs to export yet.")
    try:
        write_atomic(out, to_csv(records) if fmt == "csv" else to_json(records))
    except OSError as e:
        raise Usage(f"Cannot write {out}: {e.strerror}; the file was left as it was.") from None
    print(f"Wrote {len(records)} run(s) to {out}.")
    return EXIT_FAILED if left_out else EXIT_OK


def _say_unreadable(store) -> int:
    """Name the runs a damaged store could not give back (the rest were read)."""
    if store.unreadable:
        ids = ", ".join(run_id[:8] for run_id, _ in store.unreadable[:10])
        more = f" and {len(store.unreadable) - 10} more" if len(store.unreadable) > 10 else ""
        print(f"siliconbench: {len(store.unreadable)} run(s) in {store.path} are damaged and "
              f"were left out ({ids}{more}; first problem: {store.unreadable[0][1]}); the "
              "others are all here.", file=sys.stderr)
    return len(store.unreadable)


def cmd_import(args) -> int:
    """Every file that is a result file is imported; each one that is not is named in a
    sentence of its own, and the command then ends with exit 2."""
    from siliconbench.core.results import read_result_files
    from siliconbench.core.store import Store
    records, refused = read_result_files(args.files)
    if refused and len(refused) == len(args.files):
        if len(refused) == 1:
            raise Usage(refused[0].removesuffix(".") + "; nothing was imported.")
        for sentence in refused:
            print(f"siliconbench: {sentence}", file=sys.stderr)
        raise Usage(f"None of the {len(refused)} files is a result file; nothing was "
                    "imported.")
    for sentence in refused:
        print(f"siliconbench: {sentence.removesuffix('.')}; it was left out.", file=sys.stderr)
    published = [r for r in records if r.source == "published"]
    if published:
        # They ship with SiliconBench (siliconbench reference); kept apart from measured runs.
        print(f"Left out {len(published)} published reference record(s); compare with them "
              "by id (siliconbench reference lists them).")
        records = [r for r in records if r.source != "published"]
    done = Store().import_records(records)
    print(done.summary(len(refused)))
    return EXIT_USAGE if refused else EXIT_OK


def cmd_compare(args) -> int:
    from siliconbench.core.compare import UnknownSide, compare, resolve_sides
    from siliconbench.core.store import Store
    if len(args.sides) < 2:
        raise Usage("Name at least two things to compare: run ids, machine labels, result files "
                    "or published references.")
    try:
        sides = resolve_sides(args.sides, Store())
    except UnknownSide as e:
        raise Usage(str(e)) from None
    if args.workload:
        for side in sides:
            side.records = [r for r in side.records if r.workload == args.workload]
            if not side.records:
                raise Usage(f"{side.label} has no {args.workload} run.")
    cmp = compare(sides)
    if not cmp.rows:
        raise Usage("These have no result in common (the same workload, metric and point "
                    "parameters); there is nothing to compare.")
    from siliconbench.core.report import to_csv, to_html
    for name, render in ((args.html, to_html), (args.csv, to_csv)):
        if name:
            try:
                write_atomic(name, render(cmp))
            except OSError as e:
                raise Usage(f"Cannot write {name}: {e.strerror}.") from None
            print(f"Wrote {name}.", file=sys.stderr)
    if args.json:
        print(dumps(cmp.to_dict(), indent=1))
    else:
        print_comparison(cmp)
    return EXIT_OK


def print_comparison(cmp) -> None:
    from rich.table import Table
    from rich.text import Text
    from siliconbench.core.compare import direction, ratio_words
    from siliconbench.core.numbers import metric_heading
    from siliconbench.core.report import by_workload, cell_text, legend, point_keys
    c = _console()
    verdict_style = {"faster": "green", "slower": "red"}
    for workload, rows in by_workload(cmp).items():
        keys = point_keys(rows)
        # Labels, parameters and notes are the user's text, or a received file's: never markup.
        t = Table(title=_text(f"{workload}: " + " vs ".join(s.label for s in cmp.sides)))
        for k in keys:
            t.add_column(_text(k), justify="right")
        t.add_column("metric")
        for s in cmp.sides:
            t.add_column(_text(s.label + (" (published)" if s.published and "published" not in
                                          s.label else "")), justify="right")
        for s in cmp.sides[1:]:
            t.add_column("ratio", justify="right")
            t.add_column("verdict")
        for r in rows:
            cells = [str(r.params.get(k, "")) for k in keys] + [metric_heading(r.metric, r.unit)]
            cells += [cell_text(cell, r.unit) for cell in r.cells]
            cells = [_text(cell) for cell in cells]
            for cell in r.cells[1:]:
                word = (cell.verdict or "") if cell else ""
                if cell and cell.unlike:     # as the app's cell says it: no like run to pair
                    word += f" · unlike: {cell.unlike}"
                # Times apart with the direction, as the app and the HTML report say it
                # ('≈5,080× slower'): a raw ratio read '0.001×' for a CPU beside an H200.
                cells += [ratio_words(cell.ratio, direction(r.metric, r.unit)) if cell else "",
                          _text(word, verdict_style.get(word.split(" ")[0]))]
            t.add_row(*cells)
        c.print(t)
    for w in cmp.warnings:
        c.print(Text.assemble(("not comparable:", "yellow"), " ", _text(w)), soft_wrap=True)
    if cmp.left_out:
        c.print(f"{cmp.left_out} result row(s) that only one of them has are left out.")
    c.print(legend(), soft_wrap=True)


def cmd_reference(args) -> int:
    from siliconbench.core import reference
    from siliconbench.core.results import records_to_json
    records = reference.references()
    if args.show:
        found = reference.find(args.show)
        if len(found) != 1:
            raise Usage(f"{args.show!r} matches {len(found)} published references; "
                        "siliconbench reference lists them.")
        rec = found[0]
        print_record(rec)
        from rich.text import Text
        for key, value in (rec.provenance or {}).items():
            _console().print(Text.assemble((f"{key}:", "bold"), " ", _text(value)),
                             soft_wrap=True)
        return EXIT_OK
    if args.json:
        print(records_to_json(records))
        return EXIT_OK
    from rich.table import Table
    t = Table("id", "workload", "machine", "framework:device", "rows", "source",
              title="Published results (compare with: siliconbench compare ID RUN)")
    for r in records:
        t.add_row(_text(r.id), _text(r.workload), _text(r.machine_label),
                  _text(f"{r.framework}:{r.device}"), str(len(r.rows)),
                  _text((r.provenance or {}).get("source", "")))
    _console().print(t)
    return EXIT_OK


def cmd_gui(args) -> int:
    from siliconbench.core.display import has_display
    if not has_display():
        raise Usage("No display found (DISPLAY is not set): the desktop app cannot open; use "
                    "the siliconbench subcommands, e.g. siliconbench quick.")
    try:
        from siliconbench.gui.app import main as gui_main
    except ImportError as e:
        raise Usage(f"The desktop app cannot start: {e}.") from None
    for sig in ENDING_SIGNALS:  # the app keeps its runs itself; Python would only defer these
        signal.signal(sig, signal.SIG_DFL)
    return gui_main([])


COMMANDS = {"devices": cmd_devices, "workloads": cmd_workloads, "run": cmd_run,
            "quick": cmd_quick, "results": cmd_results, "export": cmd_export,
            "import": cmd_import, "compare": cmd_compare, "reference": cmd_reference,
            "gui": cmd_gui}


class Ended(KeyboardInterrupt):
    """SIGTERM or SIGHUP: handled like Ctrl-C (a run under way is cancelled and kept)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.reason = f"cancelled: siliconbench was ended ({signal.Signals(signum).name})"
        super().__init__(self.reason)


def _raise_ended(signum, frame) -> None:
    raise Ended(signum)


ENDING_SIGNALS = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s]


_ctrl_c: list[int] = []   # Ctrl-C seen by main(), even where Python swallowed the exception


def _on_ctrl_c(signum, frame) -> None:
    _ctrl_c.append(signum)
    raise KeyboardInterrupt


def _quiet_unraisable(hook):
    """A KeyboardInterrupt raised in a callback (a weakref's, during an import) cannot
    propagate: Python prints "Exception ignored" and goes on. main() ends it as Ctrl-C."""
    def quiet(unraisable) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            hook(unraisable)
    return quiet


def main(argv: list[str] | None = None) -> int:
    """Ctrl-C, `kill` and a closed terminal end the command with one line and keep any run
    under way as cancelled (siliconbench.core.runner.execute). The handlers are set inside the try and the
    Ctrl-C one restored first in the finally, with `_signal` (C, no Python frame that could
    take the signal in between): a Ctrl-C outside the try ends quietly (`_end_quietly`)."""
    before = {s: _signal.getsignal(s) for s in [signal.SIGINT, *ENDING_SIGNALS]}
    before = {s: signal.SIG_DFL if h is None else h for s, h in before.items()}
    hook, _ctrl_c[:] = sys.unraisablehook, []
    try:
        _signal.signal(_signal.SIGINT, _on_ctrl_c)
        sys.unraisablehook = _quiet_unraisable(hook)
        for sig in ENDING_SIGNALS:
            _signal.signal(sig, _raise_ended)
        code = _main(sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt as e:  # also one raised while another was being handled
        code = _interrupted(e)
    finally:  # main() called in-process (tests) leaves the caller's handlers as they were
        _signal.signal(_signal.SIGINT, before[signal.SIGINT])
        sys.unraisablehook = hook
        for sig in ENDING_SIGNALS:
            _signal.signal(sig, before[sig])
    if _ctrl_c and code != 130:  # the KeyboardInterrupt was swallowed (see above)
        code = _interrupted(KeyboardInterrupt())
    return code


def _interrupted(e: KeyboardInterrupt) -> int:
    rec = getattr(e, "record", None)
    kept = (f" The run {rec.id[:8]} was cancelled and kept in the store with its "
            f"{len(rec.rows)} result row(s).") if rec is not None else ""
    try:
        print("siliconbench: " + (f"ended by {signal.Signals(e.signum).name}."
                                  if isinstance(e, Ended) else "interrupted.") + kept,
              file=sys.stderr)
    except OSError:
        pass  # the terminal that would show it is gone (SIGHUP)
    return 128 + e.signum if isinstance(e, Ended) else 130


def _wrapped_interrupt(e: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C (or SIGTERM) that caused `e`, if one did. Python 3.11 wraps an exception
    raised in a `__set_name__` in a RuntimeError, so a Ctrl-C landing while a dataclass is
    being created (a module importing) arrives as "Error calling __set_name__"."""
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return e
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return None


def _main(argv: list[str]) -> int:
    from siliconbench.core.frameworks import UnknownFramework
    from siliconbench.core.logs import log, setup_logging
    from siliconbench.core.params import ParamError
    from siliconbench.core.runner import UsageError
    from siliconbench.core.store import StoreError
    from siliconbench.core.catalogue import UnknownWorkload
    log_path = setup_logging()
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            from siliconbench.core.display import has_display
            if has_display():
                return cmd_gui(args)
            print("No display found: running the quick suite headless.", file=sys.stderr)
            args = build_parser().parse_args(["quick"])
        return COMMANDS[args.command](args)
    except (Usage, UsageError, ParamError, StoreError, UnknownWorkload, UnknownFramework) as e:
        print(f"siliconbench: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as e:
        return _interrupted(e)
    except Exception as e:  # never a traceback for the user; it goes to the log
        if (ctrl_c := _wrapped_interrupt(e)) is not None:
            return _interrupted(ctrl_c)
        if os.environ.get("SILICONBENCH_DEBUG"):
            raise
        log.exception("internal error in siliconbench %s", " ".join(argv))
        where = f"the traceback is in {log_path}" if log_path else \
            "set SILICONBENCH_DEBUG=1 for the traceback"
        print(f"siliconbench: internal error: {type(e).__name__}: {e} ({where})",
              file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
