"""The layering DESIGN.md asks for: frameworks load only in children. (That core never imports
Qt or the app is one of the import contracts, tests/core/test_architecture.py.)"""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_framework_imports_live_in_adapters_and_workloads():
    allowed = {ROOT / "siliconbench" / "core" / "frameworks",
               ROOT / "siliconbench" / "core" / "workloads"}
    heavy = {"torch", "torchvision", "tensorflow", "mlx", "transformers", "keras"}
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "siliconbench" / "core").rglob("*.py")
                 if not any(p.is_relative_to(a) for a in allowed)
                 and imported_modules(p) & heavy]
    assert offenders == []


def test_importing_the_cli_and_runner_loads_no_framework():
    code = ("import sys, siliconbench.core.cli, siliconbench.core.runner, siliconbench.core.store, siliconbench.core.export, siliconbench.core.workloads;"
            "print(sorted(m for m in ('torch', 'tensorflow', 'mlx', 'PySide6') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
