"""The import contracts (pyproject.toml's [tool.importlinter]) as import-linter reads them:
what tests/core/test_architecture.py and the recipes' test check a copy of the code with."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONTRACTS = ("core never imports the app, Qt or pyqtgraph", "layers inside core point down",
             "frameworks independent of each other")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """lint-imports (the dev extra's) on the packages under `root`, its report as output."""
    command = Path(sys.executable).parent / "lint-imports"
    assert command.exists(), f"{command} is missing: install the dev extra (make test does)"
    env = {**os.environ, "PYTHONPATH": str(root), "NO_COLOR": "1"}
    return subprocess.run([str(command), "--no-cache"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
