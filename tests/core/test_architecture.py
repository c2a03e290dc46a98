"""The import contracts in pyproject.toml ([tool.importlinter]): core never imports the app or
Qt, the layers inside core point down, frameworks are independent of each other. Checked with
import-linter, which follows imports inside functions too; and shown to catch a breach of each."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = ("core never imports the app, Qt or pyqtgraph", "layers inside core point down",
             "frameworks independent of each other")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """lint-imports (the dev extra's) on the packages under `root`, its report as output."""
    command = Path(sys.executable).parent / "lint-imports"
    assert command.exists(), f"{command} is missing: install the dev extra (make test does)"
    env = {**os.environ, "PYTHONPATH": str(root), "NO_COLOR": "1"}
    return subprocess.run([str(command), "--no-cache"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def test_the_import_contracts_hold():
    out = lint_imports(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    for name in CONTRACTS:
        assert f"{name} KEPT" in out.stdout


def test_each_contract_catches_a_breach(tmp_path):
    """A copy of the code with one forbidden import per contract breaks all three."""
    shutil.copytree(ROOT / "siliconbench", tmp_path / "siliconbench",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    one, other = frameworks()[:2]
    core = tmp_path / "siliconbench" / "core"
    breaches = {core / "stats.py": "import siliconbench.gui.theme",              # core -> gui, Qt
                core / "numbers.py": "import siliconbench.core.workloads.gemm",  # up the layers
                core / "frameworks" / one / "__init__.py":
                    f"import siliconbench.core.frameworks.{other}"}    # one framework on another
    for path, line in breaches.items():
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"\n\ndef _breach():   # lazy: import-linter sees imports in functions too\n"
                    f"    {line}\n")
    out = lint_imports(tmp_path)
    assert out.returncode != 0
    for name in CONTRACTS:
        assert f"{name} BROKEN" in out.stdout, out.stdout
    for chain in ("siliconbench.core.stats -> siliconbench.gui.theme",
                  "siliconbench.core.numbers -> siliconbench.core.workloads.gemm",
                  f"siliconbench.core.frameworks.{one} -> siliconbench.core.frameworks.{other}"):
        assert chain in out.stdout, out.stdout


def frameworks() -> list[str]:
    """The packages right under siliconbench/core/frameworks: one per framework (ops.py beside
    them is the interface they all fill in)."""
    folder = ROOT / "siliconbench" / "core" / "frameworks"
    return sorted(p.name for p in folder.iterdir() if (p / "__init__.py").exists())


def test_no_module_imports_a_private_name_of_another():
    """A helper two modules need is public where it belongs (the report once borrowed
    siliconbench.core.export's _safe; csv_text is public now)."""
    import ast
    offenders = []
    for path in [*(ROOT / "siliconbench").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                offenders += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}"
                              for a in node.names
                              if a.name.startswith("_") and not a.name.startswith("__")]
    assert offenders == []


def import_cycles(package: str) -> list[list[str]]:
    """The cycles of modules that import each other (strongly connected groups of more than
    one module), imports inside functions and under TYPE_CHECKING included, as grimp (what
    import-linter reads) finds them."""
    import grimp
    graph = grimp.build_graph(package, include_external_packages=False)
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:                # Tarjan's strongly connected components
        order[module] = low[module] = len(order)
        stack.append(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in order:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], order[imported])
        if low[module] == order[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                cycles.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(graph.modules):
        if module not in order:
            visit(module)
    return cycles


def test_no_two_modules_import_each_other(tmp_path):
    """No cycle in the import graph; and a cycle made in a copy is found, with its modules."""
    assert import_cycles("siliconbench") == []
    shutil.copytree(ROOT / "siliconbench", tmp_path / "siliconbench",
                    ignore=shutil.ignore_patterns("__pycache__"))
    # results imports text; text importing results (lazily) closes a cycle
    with open(tmp_path / "siliconbench" / "core" / "text.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef _cycle():\n    import siliconbench.core.results\n")
    code = ("import json, sys; from tests.core.test_architecture import import_cycles; "
            "print(json.dumps(import_cycles('siliconbench')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"},
                         cwd=tmp_path, timeout=120, check=True)
    assert ["siliconbench.core.results", "siliconbench.core.text"] in \
        json.loads(out.stdout.splitlines()[-1])
