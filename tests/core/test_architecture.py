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

from tests.helpers.architecture import CONTRACTS, lint_imports

ROOT = Path(__file__).resolve().parents[2]


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


def private_reaches(package: Path) -> list[str]:
    """Each place a module under `package` reaches a private name (one leading underscore)
    of another module, as 'path:line: code': `from m import _x` (any m), `m._x` for a module
    m of the package imported under that name, and `obj._x` (or getattr(obj, "_x"), setattr,
    hasattr) where only other modules of the package define `_x` (a def, a class, an
    assignment; `self._x` and `cls._x` are a class's own). Imports inside functions count
    too."""
    import ast

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__")

    root = package.parent
    trees = {path: ast.parse(path.read_text("utf-8")) for path in sorted(package.rglob("*.py"))}
    defines: dict[str, set[Path]] = {}
    for path, tree in trees.items():
        for node in ast.walk(tree):
            name = (node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                   ast.ClassDef))
                    else node.attr if isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Store)
                    else node.id if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
                    else "")
            if private(name):
                defines.setdefault(name, set()).add(path)
    out = []
    for path, tree in trees.items():
        where = path.relative_to(root)
        module = ".".join(where.with_suffix("").parts).removesuffix(".__init__")
        imported: dict[str, str] = {}       # a name bound by an import: the module it names
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                out += [f"{where}:{node.lineno}: from {node.module} import {a.name}"
                        for a in node.names if private(a.name)]
                imported.update({a.asname or a.name: f"{node.module}.{a.name}"
                                 for a in node.names})
            elif isinstance(node, ast.Import):
                imported.update({a.asname or a.name.partition(".")[0]: a.asname and a.name
                                 or a.name.partition(".")[0] for a in node.names})
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "setattr", "hasattr") \
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) \
                    and isinstance(node.args[1].value, str) and private(node.args[1].value):
                base, name = node.args[0], node.args[1].value     # getattr(obj, "_x")
            elif isinstance(node, ast.Attribute) and private(node.attr):
                base, name = node.value, node.attr
            else:
                continue
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if isinstance(base, ast.Name) and base.id in imported:
                target = imported[base.id]
                if target.partition(".")[0] == package.name and target != module:
                    out.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
                continue                     # another package's private (os._exit): theirs
            if path not in defines.get(name, {path}):
                out.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return sorted(out, key=lambda f: (f.split(":")[0], int(f.split(":")[1])))


# Reaches allowed for now, by module: none left (store_sync.py reached into the local
# store's _transaction, _has_table and _under_way; the local store offers its outbox now).
# Each listed must still be there, so this list only shrinks.
KNOWN_REACHES: dict[str, set[str]] = {}


def test_no_module_reaches_a_private_name_of_another():
    """A helper two modules need is public where it belongs (the report once borrowed
    siliconbench.core.export's _safe; csv_text is public now; the chart and its legend
    called each other's _fit_width and _size_legend_below)."""
    found = {f: (f.split(":")[0], f.split()[-1].rsplit(".", 1)[-1])    # (path, name)
             for f in private_reaches(ROOT / "siliconbench")}
    assert [f for f, (path, name) in found.items()
            if name not in KNOWN_REACHES.get(path, ())] == []
    for path, names in KNOWN_REACHES.items():
        for name in names:
            assert (path, name) in found.values(), (
                f"{path} no longer reaches {name}: take it out of KNOWN_REACHES")


def test_the_private_check_finds_each_kind_of_reach(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "def _helper():\n    pass\n\n\nclass A:\n    def _step(self):\n        self._own = 1\n"
        "        return self._own\n")
    (package / "b.py").write_text(
        "import os\n\nimport pkg.a as a\nfrom pkg import a as same\n\n\n"
        "def use(thing):\n    from pkg.a import _helper\n    a._helper()\n"
        "    same._helper()\n    thing._step()\n    os._exit(0)\n"
        "    return getattr(thing, '_step', _helper)\n")
    assert private_reaches(package) == [
        "pkg/b.py:8: from pkg.a import _helper", "pkg/b.py:9: a._helper",
        "pkg/b.py:10: same._helper", "pkg/b.py:11: thing._step",
        "pkg/b.py:13: getattr(thing, '_step', _helper)"]


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
