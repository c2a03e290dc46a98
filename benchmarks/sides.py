"""The two sides of a fidelity script: the reference in a child process of its own session
(on a shared machine a process in another session was found to run several times slower:
benchmarks/llm_fidelity.py), and rounds that alternate, so drift in the machine's speed hits
both sides alike."""

import json
import subprocess
import sys
from collections.abc import Callable


def child_json(script: str, flags: list[str]):
    """The JSON the script prints last, run with --reference and `flags` in a session of its
    own; the script's failure ends the caller with its stderr."""
    cmd = [sys.executable, script, "--reference", *flags]
    done = subprocess.run(cmd, capture_output=True, text=True, start_new_session=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def alternate(rounds: int, ours: Callable[[], object], theirs: Callable[[], object]
              ) -> tuple[list, list]:
    """`rounds` results of each side, one of ours then one of theirs."""
    a, b = [], []
    for _ in range(rounds):
        a.append(ours())
        b.append(theirs())
    return a, b


def sides(parser, child: Callable, ours: Callable, theirs: Callable, header: Callable):
    """A fidelity script's run: --rounds and --reference added to the script's `parser`; in
    the reference child (--reference) child(args) and (args, None, None); else the header
    line with the machine's load, then (args, our results, theirs), alternating."""
    import argparse
    import os
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reference", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reference:
        child(args)
        return args, None, None
    print(f"{header(args)}, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return args, *alternate(args.rounds, lambda: ours(args), lambda: theirs(args))


def verdict(ok: bool) -> int:
    """The script's exit status, after saying whether other work shared the machine."""
    from benchmarks.machine_load import warn_if_busy
    warn_if_busy()
    return 0 if ok else 1


def rounds(values) -> str:
    """A side's figure of every round, as the scripts print them beside the median."""
    return ", ".join(f"{v:.4g}" for v in values)
