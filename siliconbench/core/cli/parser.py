"""What the command takes: the argument tree (every workload's parameters become its flags,
siliconbench.core.params), the one-sentence usage error and the exit codes."""

from __future__ import annotations

import argparse

from siliconbench.core.params import Param

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class Usage(Exception):
    """Bad input from the user: one sentence, exit 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: one sentence, exit 2
        from siliconbench.core.store_address import scrub
        message = scrub(message)     # "unrecognized arguments: postgresql://u:pw@..." too
        raise Usage(message[0].upper() + message[1:] + ("" if message.endswith(".") else "."))


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
        _common_run_flags(wp, wl)
        for prm in wl.params:
            help_text = prm.help + (f" Default: {prm.format(prm.default)}." if prm.default
                                    is not None else f" Default: {prm.auto}." if prm.auto else "")
            help_text = help_text.replace("%", "%%")   # argparse formats help with %
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
    e.add_argument("--keep-paths", action="store_true",
                   help="keep where your own model files (--model-path) are; by default an "
                   "export names them only")

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

    m = sub.add_parser("models", help="the model files on this machine (Hugging Face cache, "
                       "LM Studio, Ollama, llama.cpp's cache), read-only")
    m.add_argument("--json", action="store_true", help="machine-readable output")

    g = sub.add_parser("gui", help="open the desktop app; `siliconbench FILE...` does too, "
                       "with the result files")
    g.add_argument("files", nargs="*", metavar="FILE",
                   help="result files to open in it (.sbresults or JSON exports)")

    st = sub.add_parser("store", help="a lab's shared store on PostgreSQL: set it up, send "
                        "the runs kept here")
    ssub = st.add_subparsers(dest="store_command", parser_class=Parser, metavar="ACTION")
    si = ssub.add_parser("init", help="(the admin) create or upgrade the shared store's tables "
                         "and roles")
    si.add_argument("url", metavar="URL", help="a libpq address: postgresql://admin@host/db, "
                    "or service=NAME")
    si.add_argument("--machine", action="append", default=[], metavar="ROLE",
                    help="a login role that writes its own runs; repeat")
    si.add_argument("--admin", action="append", default=[], metavar="ROLE",
                    help="a login role that may change or delete any run; repeat")
    ssub.add_parser("sync", help="send the runs kept here while the shared store could not be "
                    "reached")
    ssub.add_parser("push", help="send every run of this machine's own store to the shared one")
    ssub.add_parser("check", help="connect to the shared store and say what it holds")
    _store_flag(p, None)
    return p


def _store_flag(p: argparse.ArgumentParser, default) -> None:
    """--store URL on the command and on every subcommand (before or after its name)."""
    p.add_argument("--store", metavar="URL", default=default,
                   help="a shared store (postgresql://..., service=NAME) instead of this "
                        "machine's; default: SILICONBENCH_STORE")
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _store_flag(child, argparse.SUPPRESS)


TIME_LIMIT = Param("time_limit", "float", None, "Stop the run after this long.", min=0.001)


def _label(text: str) -> str:
    """--label: at most what a run record's label holds (an export must import again)."""
    from siliconbench.core.machine_names import label_problem
    problem = label_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem[0].lower() + problem[1:])
    return text


def _common_run_flags(p: argparse.ArgumentParser, workload) -> None:
    from siliconbench.core.frameworks import runs_on
    names = runs_on(workload)     # the registry's: each framework declares what it runs
    p.add_argument("--framework", default="torch", help=", ".join(names) + (
        " (default: torch)" if "torch" in names else ""))
    p.add_argument("--device", default="cpu",
                   help="cpu (default), or another device `siliconbench devices` lists for the "
                        "framework (mps, cuda:1, gpu, ...)")
    p.add_argument("--label", type=_label,
                   help="your name for this machine, e.g. 'MacBook Pro 14'")
    p.add_argument("--json", action="store_true", help="print the run record as JSON")
    p.add_argument("--quick", action="store_true", help="shorter measurements (less precise)")
    p.add_argument("--time-limit", default=None, metavar="SECONDS", help=TIME_LIMIT.help)
    p.add_argument("-y", "--yes", action="store_true",
                   help="run even where the estimate asks first (a long run, ranks sharing "
                        "cores, points too big for memory); a run that cannot fit is still "
                        "refused")
