"""The layering DESIGN.md asks for: core/ never imports Qt; frameworks load only in children."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_core_never_imports_qt():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "core").rglob("*.py")
                 if imported_modules(p) & {"PySide6", "pyqtgraph"}]
    assert offenders == []


def test_framework_imports_live_in_adapters_and_workloads():
    allowed = {ROOT / "core" / "frameworks", ROOT / "core" / "workloads"}
    heavy = {"torch", "torchvision", "tensorflow", "mlx", "transformers", "keras"}
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "core").rglob("*.py")
                 if not any(p.is_relative_to(a) for a in allowed)  # framework packages too
                 and imported_modules(p) & heavy]
    assert offenders == []


def test_importing_the_cli_and_runner_loads_no_framework():
    code = ("import sys, core.cli, core.runner, core.store, core.export, core.workloads;"
            "print(sorted(m for m in ('torch', 'tensorflow', 'mlx', 'PySide6') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
