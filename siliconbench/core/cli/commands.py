"""A function per subcommand: it reads what the user gave (siliconbench.core.cli.parser), does
the work through core, and hands what to show to siliconbench.core.cli.printing (or prints
JSON). Each returns the exit code, or raises Usage with one sentence."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

from siliconbench.core.cli.parser import EXIT_FAILED, EXIT_OK, EXIT_USAGE, TIME_LIMIT, Usage
from siliconbench.core.cli.printing import (
    ProgressBar,
    print_comparison,
    print_devices,
    print_models,
    print_provenance,
    print_record,
    print_references,
    print_runs,
    print_workloads,
)
from siliconbench.core.cli.signals import ENDING_SIGNALS
from siliconbench.core.files import write_atomic
from siliconbench.core.results import dumps
from siliconbench.core.text import clip

# Runs are listed newest first; SQLite's LIMIT takes a 64-bit integer at most.
MAX_LIMIT = 1_000_000


def cmd_devices(args) -> int:
    from siliconbench.core.runner import discover_devices
    found = discover_devices(fresh=args.refresh)
    if args.json:
        print(dumps([d.to_dict() for d in found], indent=1))
        return EXIT_OK
    print_devices(found)
    return EXIT_OK


def cmd_workloads(args) -> int:
    from siliconbench.core.catalogue import listed
    from siliconbench.core.frameworks import runs_on
    if args.json:
        print(dumps([{**w.to_dict(), "frameworks": list(runs_on(w))} for w in listed()],
                    indent=1))
        return EXIT_OK
    print_workloads(listed())
    return EXIT_OK


@contextlib.contextmanager
def _store_for_estimates():
    """The chosen store, for the runs measured here that an estimate reads (a triad); None
    where it cannot be opened, or this machine has none yet (an estimate makes none): the
    estimate then takes its rough figures."""
    from siliconbench.core.run_store import chosen_address, open_store
    from siliconbench.core.store import StoreError, default_path
    if chosen_address() is None and not default_path().exists():
        yield None
        return
    try:
        store = open_store(notice=lambda _: None)
    except StoreError:
        yield None
        return
    try:
        yield store
    finally:
        store.close()


def _run_one(spec):
    """(record, None), or (record, the sentence saying where it went) when the store could
    not keep it."""
    from siliconbench.core.runner import execute_kept
    # a server given by --url is what the run measures, not --framework
    where = f"at {url}" if (url := (spec.params or {}).get("url")) else \
        f"on {spec.framework}:{spec.device}"
    progress = ProgressBar(f"{spec.workload} {where}")
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
    from siliconbench.core.catalogue import workload
    from siliconbench.core.runner import RunSpec
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
    _ask_first(spec, args.yes)
    rec, not_stored = _run_one(spec)
    if args.json:
        from siliconbench.core.results import exported
        print(dumps(exported(rec), indent=1))   # untrusted powers flagged, as results --json
    else:
        print_record(rec)
    if not_stored:
        print(f"siliconbench: {not_stored}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK if rec.status == "ok" else EXIT_FAILED


def _ask_first(spec, yes: bool) -> None:
    """Before a run starts: what the framework-free checks refuse (child.prepare), then
    siliconbench.core.estimate's verdict for a run on the CPU (a GPU's memory and peak need
    the device list, which the run itself asks for). A run that cannot fit is refused (Usage,
    one sentence, nothing printed before it); one the estimate questions (long, ranks sharing
    cores, points too big) runs with --yes (its sentences printed as warnings), or when the
    person at the terminal says so; without a terminal to ask, it is refused with the
    sentences and the flag that runs it."""
    from siliconbench.core.runner import prepare
    spec = prepare(spec)
    if spec.device != "cpu":
        return
    from siliconbench.core.estimate import verdict
    from siliconbench.core.frameworks import DeviceInfo, cpu_name, host_memory
    with _store_for_estimates() as store:
        refusal, questions = verdict(spec, DeviceInfo(spec.framework, "cpu", cpu_name(), "cpu",
                                                      host_memory()), store)
    if refusal:
        raise Usage(refusal)
    if not questions:
        return
    if not yes and not sys.stdin.isatty():
        raise Usage(f"{' '.join(questions)} Add --yes to run it anyway.")
    for line in questions:
        print(f"siliconbench: warning: {line}", file=sys.stderr)
    if yes:
        return
    # The question on stderr, as the warnings: stdout may be a --json record's.
    print("Run anyway? [y/N] ", end="", file=sys.stderr, flush=True)
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):   # "" at the end of input
        raise Usage("Not run.")


def cmd_quick(args) -> int:
    from siliconbench.core.export import to_csv
    from siliconbench.core.runner import discover_devices
    from siliconbench.core.store import default_path, home
    from siliconbench.core.suites import expand, summary_lines
    with _store_for_estimates() as store:
        specs = expand("quick", discover_devices(fresh=False), args.label, store)
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
        write_atomic(out, to_csv(records), own=True)   # the data folder's
    except OSError as e:
        raise Usage(f"Cannot write {out}: {e.strerror}.") from None
    # A short summary, not every row: `siliconbench results --show ID` has those.
    print("\nQuick suite: the best point of each workload (headline metric)")
    print("\n".join(summary_lines(records)))
    from siliconbench.core.store_pg import StoreURL
    from siliconbench.core.store_sync import shared_url
    url = shared_url()   # the shared store's address (without password), else the file
    kept = f"kept in the store {StoreURL(url) if url else default_path()}" if all_stored else \
        "kept in the store or the files named above"
    print(f"\nAll rows are {kept}\nand written to {out}.\n"
          f"List the runs with: siliconbench results; one run's rows: siliconbench results "
          f"--show ID")
    return EXIT_OK if all_stored and all(r.status == "ok" for r in records) else EXIT_FAILED


def cmd_results(args) -> int:
    from siliconbench.core.run_store import open_store
    store = open_store()
    if args.show:
        print_record(_find_runs(store, [args.show])[0])
        return EXIT_OK
    if args.limit is not None and not 1 <= args.limit <= MAX_LIMIT:
        raise Usage(f"--limit must be between 1 and {MAX_LIMIT:,}.")
    if args.json:
        from siliconbench.core.results import exported
        runs = store.runs(limit=args.limit)
        _say_unreadable(store)
        print(dumps([exported(r) for r in runs], indent=1))   # untrusted powers flagged
        return EXIT_OK
    runs = store.listing(limit=args.limit)    # the same cost whatever a record holds
    _say_unreadable(store)
    hidden = getattr(store, "hidden", 0)   # runs under way: never "no runs" while there are
    if not runs and hidden:
        print(f"No finished runs yet in {store.path}: {hidden:,} run{'s' * (hidden != 1)} "
              f"under way, listed when {'it ends' if hidden == 1 else 'they end'} (a run "
              "another machine began, the store on a shared drive, counts as under way for "
              "up to a week).")
        return EXIT_OK
    if not runs:
        print(f"No runs yet in {store.path}. Try: siliconbench run gemm")
        return EXIT_OK
    print_runs(runs)
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
    from siliconbench.core.run_store import open_store
    store = open_store()
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
        write_atomic(out, to_csv(records) if fmt == "csv"
                     else to_json(records, paths=args.keep_paths))
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
    from siliconbench.core.run_store import open_store
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
    done = open_store().import_records(records)
    print(done.summary(len(refused)))
    return EXIT_USAGE if refused else EXIT_OK


def cmd_compare(args) -> int:
    from siliconbench.core.compare_stats import UnknownSide, resolve_sides
    from siliconbench.core.compare_words import compared, split_sides
    from siliconbench.core.run_store import open_store
    if len(args.sides) < 2:
        raise Usage("Name at least two things to compare: run ids, machine labels, result files "
                    "or published references.")
    try:
        sides = resolve_sides(args.sides, open_store())
    except UnknownSide as e:
        raise Usage(str(e)) from None
    if args.workload:
        for side in sides:
            side.records = [r for r in side.records if r.workload == args.workload]
            if not side.records:
                raise Usage(f"{side.label} has no {args.workload} run.")
    cmp = compared(split_sides(sides))
    if not cmp.rows and not cmp.best:
        # Why, where a note says (TF32 beside plain float32: unlike kinds, never paired).
        why = "".join(f" {n[:1].upper()}{n[1:]}." for n in cmp.notes)
        raise Usage("These have no result in common (the same workload, metric and point "
                    "parameters) nor a workload in common; there is nothing to compare."
                    + why)
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
        print_provenance(rec)
        return EXIT_OK
    if args.json:
        print(records_to_json(records))
        return EXIT_OK
    print_references(records)
    return EXIT_OK


def cmd_models(args) -> int:
    from siliconbench.core.kit import model_places
    found = model_places.find()
    if args.json:
        print(dumps([m.to_dict() for m in found], indent=1))
    else:
        print_models(found)
    for note in getattr(found, "notes", []):   # a listing cut short is said, never silent
        print(f"siliconbench: {note}", file=sys.stderr)
    return EXIT_OK


def cmd_gui(args) -> int:
    from siliconbench.core.display import has_display
    if not has_display():
        raise Usage("No display found (DISPLAY is not set): the desktop app cannot open; use "
                    "the siliconbench subcommands, e.g. siliconbench quick.")
    files = [Path(f) for f in getattr(args, "files", None) or []]
    for f in files:   # said here, in the terminal, before a window opens
        if not f.is_file():
            raise Usage(f"{f} is not a file; give result files to open in the app "
                        f"(.sbresults or JSON exports).")
    try:
        from siliconbench.gui.app import main as gui_main
    except ImportError as e:
        raise Usage(f"The desktop app cannot start: {e}.") from None
    for sig in ENDING_SIGNALS:  # the app keeps its runs itself; Python would only defer these
        signal.signal(sig, signal.SIG_DFL)
    return gui_main([str(f.resolve()) for f in files])


def cmd_store(args) -> int:
    """siliconbench store init|sync|push|check: the shared store (siliconbench.core.store_pg)."""
    from siliconbench.core.run_store import open_store
    if args.store_command == "init":
        from siliconbench.core.store_pg import init, is_url
        if not is_url(args.url):
            raise Usage("store init takes a PostgreSQL address (not repeated here: it may hold "
                        "a password), such as postgresql://admin@host/siliconbench or "
                        "service=NAME.")
        for line in init(args.url, args.machine, args.admin):
            print(line)
        return EXIT_OK
    if args.store_command is None:
        raise Usage("Say what to do with the store: siliconbench store init URL, sync, push "
                    "or check.")
    url = os.environ.get("SILICONBENCH_STORE")
    if not url:
        raise Usage("No shared store is set: give --store URL or set SILICONBENCH_STORE "
                    "(postgresql://user@host/db or service=NAME).")
    from siliconbench.core.store_address import UnreadableAddress, parse
    try:
        parse(url)       # bad input, not a store that failed: one sentence, never the address
    except UnreadableAddress as e:
        raise Usage(str(e)) from None
    if args.store_command == "check":
        from siliconbench.core.store_pg import check
        answers, sentence = check(url)
        print(sentence if answers else f"siliconbench: {sentence}",
              file=sys.stdout if answers else sys.stderr)
        return EXIT_OK if answers else EXIT_FAILED
    store = open_store()
    try:
        done = store.sync() if args.store_command == "sync" else store.push()
    finally:
        store.close()
    print(done.summary())
    return EXIT_FAILED if done.left else EXIT_OK


COMMANDS = {"devices": cmd_devices, "workloads": cmd_workloads, "run": cmd_run,
            "quick": cmd_quick, "results": cmd_results, "export": cmd_export,
            "import": cmd_import, "compare": cmd_compare, "reference": cmd_reference,
            "models": cmd_models, "gui": cmd_gui, "store": cmd_store}
