"""Where `make test`'s time goes, and the least it could take on this machine with the tests
it has:

- runs `make test` itself (ruff, then pytest in up to 4 workers, llama.cpp's modules left to
  `make test-llamacpp`) with a recorder in every Python process it starts: a sitecustomize on
  PYTHONPATH, which make passes on and each run's worker inherits
  (siliconbench.core.child.child_env keeps PYTHONPATH). Each process writes, as it ends, its
  CPU time and the frameworks it imported;
- prints the suite's wall time and CPU (every process it started and waited for), the
  recorded processes' CPU by the frameworks each imported, and what those imports cost alone,
  measured here afresh for each set (the median of 3 new processes);
- the floor: those imports alone, for every process the suite starts, in wall time at the
  cores and the share of them the suite kept busy; and the CPU that a 5-minute suite could use
  at that share.

A process that ends by SIGKILL, or that a test starts without PYTHONPATH, writes nothing: its
CPU is in the total and not in the table ("not recorded").

    .venv/bin/python benchmarks/suite_cost.py [PYTEST ARGS...]   # ~10 minutes on 2 cores

With arguments, `python -m pytest ARGS` runs in make's place (`tests/core/test_plan.py` to
look at one module; `-n 2` for workers).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 300
# The frameworks (and the app's toolkit, the shared store's driver) whose import a process
# pays; a process is filed under the ones it had loaded when it ended.
FRAMEWORKS = ("torch", "torchvision", "transformers", "tensorflow", "keras_hub", "mlx.core",
              "mlx_lm", "coremltools", "llama_cpp", "PySide6.QtWidgets", "psycopg")
LOG_ENV = "SILICONBENCH_SUITE_COST_LOG"

# Stdlib only; until the process ends it adds only atexit (built in) to its modules, so a test
# that reads a process's modules sees the same frameworks. The log is this script's file in its
# own private folder.
RECORDER = f"""
import os, sys

def _record():
    import json, resource
    path = os.environ.get({LOG_ENV!r})
    if not path:
        return
    use = resource.getrusage(resource.RUSAGE_SELF)
    line = json.dumps({{"cpu": use.ru_utime + use.ru_stime,
                       "mods": [m for m in {FRAMEWORKS!r} if m in sys.modules],
                       "pytest": "_pytest" in sys.modules}})
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        os.write(fd, (line + "\\n").encode())
    finally:
        os.close(fd)

_exit = os._exit

def _exit_recorded(code):
    _record()
    _exit(code)

os._exit = _exit_recorded
import atexit
atexit.register(_record)
"""


def suite_command(extra: list[str]) -> list[str]:
    """`make test` (the Makefile's flags and lists, not a copy), or pytest with `extra`."""
    if extra:
        return [sys.executable, "-m", "pytest", *extra]
    make = shutil.which("make")
    if make is None:
        raise SystemExit("make was not found; give pytest's arguments instead "
                         "(benchmarks/suite_cost.py tests/core/test_plan.py).")
    return [make, "--no-print-directory", "test"]


def import_cost(mods: tuple[str, ...], rounds: int = 3) -> float | None:
    """CPU seconds a new Python process takes to import `mods` (the median of `rounds`), or
    None where they cannot be imported together in a plain process (coremltools with both
    torch and TensorFlow installed ends in a segmentation fault here; the product imports it
    in a process that hides TensorFlow)."""
    code = ("import importlib, resource\n"
            f"for m in {list(mods)!r}: importlib.import_module(m)\n"
            "u = resource.getrusage(resource.RUSAGE_SELF)\n"
            "print(u.ru_utime + u.ru_stime)")
    costs = []
    for _ in range(rounds):
        try:
            done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                                  text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return None
        if done.returncode != 0:
            return None
        costs.append(float(done.stdout.split()[-1]))
    return statistics.median(costs)


def summarise(records: list[dict], costs: dict[tuple[str, ...], float | None]) -> list[dict]:
    """The processes by the frameworks they imported (the pytest processes apart), costliest
    first: how many, their CPU, and the CPU their imports alone take (costs[set] each, and
    never more than the processes took: a run's process hides the frameworks it must not load,
    so transformers in an MLX run imports no torch, as a plain process does; None where the
    cost is unknown)."""
    groups: dict[tuple[bool, tuple[str, ...]], list[float]] = defaultdict(list)
    for rec in records:
        groups[(rec["pytest"], tuple(rec["mods"]))].append(rec["cpu"])
    rows = [{"pytest": is_pytest, "mods": mods, "processes": len(cpus), "cpu": sum(cpus),
             "imports": None if costs[mods] is None else min(costs[mods] * len(cpus),
                                                             sum(cpus))}
            for (is_pytest, mods), cpus in groups.items()]
    return sorted(rows, key=lambda row: -row["cpu"])


def main(extra: list[str]) -> int:
    folder = Path(tempfile.mkdtemp(prefix="sb-suite-cost-"))   # 0700: the log is ours alone
    try:
        return measure(folder, extra)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure(folder: Path, extra: list[str]) -> int:
    (folder / "sitecustomize.py").write_text(RECORDER)
    log = folder / "processes.jsonl"
    log.touch()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", **{LOG_ENV: str(log)})
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(folder), env.get("PYTHONPATH")) if p)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    done = subprocess.run(suite_command(extra), cwd=ROOT, env=env, capture_output=True,
                          text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    tail = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
    cores = os.cpu_count() or 1
    busy = total / (wall * cores)
    print(f"suite: {tail[0]} (exit {done.returncode})")
    for line in done.stdout.splitlines():     # -ra's summary: what failed, and why, a line each
        if line.startswith(("FAILED ", "ERROR ")):
            print(line)
    print(f"wall {wall:.0f} s; CPU {total:.0f} s over {cores} cores ({busy:.0%} of them busy)",
          flush=True)
    records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    sets = sorted({tuple(rec["mods"]) for rec in records})
    print(f"Timing the imports of {len(sets)} sets of frameworks in new processes...")
    costs = {mods: import_cost(mods) for mods in sets}
    rows = summarise(records, costs)
    recorded = sum(row["cpu"] for row in rows)
    floor = sum(row["imports"] or 0 for row in rows)
    print(f"\nRecorded {recorded:.0f} CPU-s in {len(records)} processes; not recorded "
          f"{total - recorded:.0f} CPU-s.\n")
    print(f"{'processes':>9} {'CPU s':>7} {'each':>6} {'imports':>8} {'each':>6}  frameworks")
    for row in rows:
        name = ", ".join(row["mods"]) or "(none)"
        n = row["processes"]
        imports = "       ?      ?" if row["imports"] is None else \
            f"{row['imports']:8.1f} {row['imports'] / n:6.2f}"
        print(f"{n:9d} {row['cpu']:7.1f} {row['cpu'] / n:6.2f} {imports}  {name}"
              f"{' (pytest)' if row['pytest'] else ''}")
    if any(row["imports"] is None for row in rows):
        print("?: these frameworks cannot be imported together in a plain process; their "
              "imports are left out of the sum below.")
    print(f"\nThe imports alone: {floor:.0f} CPU-s, {floor / (cores * busy):.0f} s of wall time "
          f"at {busy:.0%} of {cores} cores; everything else: {total - floor:.0f} CPU-s.")
    allowed = GOAL_S * cores * busy
    print(f"A {GOAL_S} s suite could use {allowed:.0f} CPU-s at that share; this one used "
          f"{total / allowed:.2f}x that.")
    if allowed > floor:
        print(f"Beside the imports, {allowed - floor:.0f} CPU-s would be left for all the rest, "
              f"which took {total - floor:.0f} ({(total - floor) / (allowed - floor):.2f}x).")
    else:
        print("The imports alone are more than that.")
    return 0 if done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
