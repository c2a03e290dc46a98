"""The `siliconbench` command. With no subcommand it opens the desktop app, or, with no display,
runs the quick suite headless. Exit codes: 0 ok, 1 a run failed, 2 bad usage, 130 Ctrl-C,
143/129 ended by SIGTERM/SIGHUP (a run under way is kept as cancelled).

This module is the start: its first lines set the Ctrl-C handler before anything is imported,
then main() runs the command. The rest, a module per concern, imports rich and the heavy parts
of core only inside the functions that need them:

- parser.py: the argument tree (build_parser), Usage (one sentence, exit 2), the exit codes.
- commands.py: a function per subcommand (COMMANDS).
- printing.py: what the terminal shows: tables, one run's rows, comparisons, progress.
- signals.py: Ctrl-C, SIGTERM and SIGHUP while a command runs (guarded, Ended).

A test that replaces a name replaces it in the module that looks it up: main() looks up
`_main`, and `_main` looks up `build_parser` and `COMMANDS`, here.
"""

from __future__ import annotations

import _signal  # built in: no file to look for, so the handler is in place at once
import os
import sys


def _end_quietly(signum, frame) -> None:
    os.write(2, b"siliconbench: interrupted.\n")
    os._exit(130)


# Ctrl-C while the command is still importing: one line, no traceback (main() takes over).
# `python -m siliconbench.core.cli` imports this package while sys.argv[0] is still "-m".
if sys.argv[0] == "-m" or os.path.basename(sys.argv[0]).startswith("siliconbench"):
    _signal.signal(_signal.SIGINT, _end_quietly)

# After the handler, on purpose.
from siliconbench.core.cli.commands import COMMANDS, cmd_gui  # noqa: E402
from siliconbench.core.cli.parser import (  # noqa: E402
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    TIME_LIMIT,
    Usage,
    build_parser,
)
from siliconbench.core.cli.signals import guarded, interrupted, wrapped_interrupt  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """The command with `argv` (default: the process's), its exit code. Ctrl-C, `kill` and a
    closed terminal end it with one line and keep any run under way as cancelled
    (siliconbench.core.cli.signals.guarded)."""
    return guarded(_main, sys.argv[1:] if argv is None else argv)


def _main(argv: list[str]) -> int:
    from siliconbench.core.catalogue import UnknownWorkload
    from siliconbench.core.frameworks import UnknownFramework
    from siliconbench.core.logs import log, setup_logging
    from siliconbench.core.params import ParamError
    from siliconbench.core.runner import UsageError
    from siliconbench.core.store import StoreError
    log_path = setup_logging(argv)
    try:
        args = build_parser().parse_args(opened_files(argv))
        if args.store:   # the store open_store() chooses, in this command and its children
            from siliconbench.core.store_address import UnreadableAddress, is_url, parse
            if not is_url(args.store):
                raise Usage("--store takes a PostgreSQL address (postgresql://user@host/db or "
                            "service=NAME); without it runs stay in this machine's store.")
            try:
                parse(args.store)
            except UnreadableAddress as e:
                raise Usage(str(e)) from None
            os.environ["SILICONBENCH_STORE"] = args.store
        if args.command is None:
            from siliconbench.core.display import has_display
            if has_display():
                return cmd_gui(args)
            print("No display found: running the quick suite headless.", file=sys.stderr)
            args = build_parser().parse_args(["quick"])
        return COMMANDS[args.command](args)
    except (Usage, UsageError, ParamError, StoreError, UnknownWorkload, UnknownFramework) as e:
        from siliconbench.core.store_address import scrub
        print(scrub(f"siliconbench: {e}"), file=sys.stderr)   # an address where an id goes
        return EXIT_USAGE
    except KeyboardInterrupt as e:
        return interrupted(e)
    except Exception as e:  # never a traceback for the user; it goes to the log
        if (ctrl_c := wrapped_interrupt(e)) is not None:
            return interrupted(ctrl_c)
        if os.environ.get("SILICONBENCH_DEBUG"):
            raise
        from siliconbench.core.store_address import scrub, shown_argv
        log.exception("internal error in siliconbench %s", " ".join(shown_argv(argv)))
        where = f"the traceback is in {log_path}" if log_path else \
            "set SILICONBENCH_DEBUG=1 for the traceback"
        print(scrub(f"siliconbench: internal error: {type(e).__name__}: {e} ({where})"),
              file=sys.stderr)
        return EXIT_FAILED


def opened_files(argv: list[str]) -> list[str]:
    """`siliconbench FILE...` as `siliconbench gui FILE...`: a first word that is no command
    but names a file (or a result file's name) opens the app with it, as a double click on the
    file would."""
    if not argv or argv[0].startswith("-") or argv[0] in COMMANDS:
        return argv
    from pathlib import Path
    first = Path(argv[0])
    if first.suffix.lower() in (".sbresults", ".json") or first.exists():
        return ["gui", *argv]
    return argv


__all__ = ["COMMANDS", "EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "TIME_LIMIT", "Usage",
           "build_parser", "main"]
