"""Running the probes' commands and reading their files, and the rule that a failing probe
step leaves its facts unknown. Tests replace `run_command` and `read_text` here: every probe
calls them through this module (`commands.run_command`), so one replacement reaches them all."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

COMMAND_TIMEOUT_S = 5.0


def run_command(args: list[str]) -> str:
    """Run a probe command and return its stdout. Raises OSError or TimeoutExpired."""
    result = subprocess.run(
        args,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        # Parsers read English labels ("Model name", "ProductVersion").
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )
    # sysctl exits non-zero when one key is unknown (perflevel on Intel Macs) yet prints the rest.
    return result.stdout


PROBE_LIMIT = 16 << 20   # /proc/cpuinfo of a 512-thread machine is about 1 MB


def read_text(path: str | Path) -> str:
    """Read a probe file (/proc, /sys, /etc: files.read_small, so a FIFO or a device in its
    place is an OSError, never a hang). Raises OSError."""
    from siliconbench.core.files import read_small
    return read_small(path, PROBE_LIMIT, "system file")


_T = TypeVar("_T")


def attempt(step: Callable[[], _T]) -> _T | None:
    """step(), or None where it failed."""
    # One failing probe (missing binary, timeout, garbage output) must leave its fields None,
    # never stop the others.
    try:
        return step()
    except Exception:  # any failure of a probe step means "unknown"
        return None
