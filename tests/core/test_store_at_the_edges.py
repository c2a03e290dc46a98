"""No module below the command and the app opens the results store (issue 52): the command
(siliconbench/core/cli/), the app (siliconbench/gui/) and the run's keeper
(siliconbench/core/runner.py: execute_kept's own connection to the store they chose) open it,
the store modules make their own connections, and everything else, a benchmark's own process
above all (worker, child, context, workloads, kit, frameworks), is given what it needs: the
ceilings a run is held against come in its spec (siliconbench.core.kit.ceilings.stored_bounds,
read by runner.execute from the store it was passed). A grep of the code, as a person would
run it: `grep -rnE '\\b(Store|SharedStore|SharedDatabase|open_store)\\(' siliconbench/core`."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "siliconbench" / "core"

# The command and the app's layer, and the store itself: the only places a store is opened.
EDGES = ("cli/", "runner.py", "run_store.py", "store.py", "store_sync.py", "store_pg.py")
OPENS = re.compile(r"\b(Store|SharedStore|SharedDatabase|open_store)\(")


def code_of(path: Path) -> str:
    """The module's code without its comments and strings (a docstring may name Store())."""
    kept = []
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if tok.type not in (tokenize.COMMENT, tokenize.STRING):
            kept.append(tok.string)
    return " ".join(kept).replace(" (", "(")


def opened_below(core: Path) -> list[str]:
    """'module: call' for each store opened in a module of `core` below the command and app."""
    found = []
    for path in sorted(core.rglob("*.py")):
        where = path.relative_to(core).as_posix()
        if where.startswith(EDGES[0]) or where in EDGES[1:]:
            continue
        found += [f"{where}: {m.group(1)}(" for m in OPENS.finditer(code_of(path))]
    return found


def test_no_module_below_the_command_and_the_app_opens_the_store():
    assert opened_below(CORE) == [], (
        "the results store is opened below the command and the app; read what the run needs "
        "there (from the store they opened) and pass it down")


def test_the_grep_finds_a_store_opened_in_a_workload(tmp_path):
    """The check can fail: the ceilings module as it was (it built Store() inside the
    benchmark's own process) and a workload that opens the chosen store are both found, a
    docstring or a comment naming one is not."""
    kit, workloads = tmp_path / "kit", tmp_path / "workloads"
    kit.mkdir()
    workloads.mkdir()
    (kit / "ceilings.py").write_text(
        '"""Reads Store() once."""\n\ndef stored_ceiling():\n'
        "    from siliconbench.core.store import Store\n    store = Store()\n"
        "    return store.runs()\n", encoding="utf-8")
    (workloads / "llm.py").write_text(
        "from siliconbench.core import run_store\n\n\ndef run(ctx, params):\n"
        "    # open_store() here would be wrong\n"
        "    return run_store.open_store ().runs()\n", encoding="utf-8")
    (tmp_path / "runner.py").write_text("store = open_store(None)\n", encoding="utf-8")
    assert opened_below(tmp_path) == ["kit/ceilings.py: Store(", "workloads/llm.py: open_store("]
