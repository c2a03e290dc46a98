"""Running inside SiliconBench.app (a py2app bundle): how to tell, and the bundle's own
executable, which also starts the worker (`SiliconBench --worker run`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

WORKER_FLAG = "--worker"   # argv[1] that makes the bundle's main script run siliconbench.core.worker
APP_NAME = "SiliconBench"


def in_app_bundle() -> bool:
    """py2app's bootstrap sets sys.frozen to 'macosx_app' before the main script runs."""
    return getattr(sys, "frozen", None) == "macosx_app"


def bundle_executable() -> str:
    """Contents/MacOS/SiliconBench. py2app's launcher puts its own path in EXECUTABLEPATH;
    the fallback is its neighbour of sys.executable (Contents/MacOS/python)."""
    return os.environ.get("EXECUTABLEPATH") or str(Path(sys.executable).with_name(APP_NAME))
