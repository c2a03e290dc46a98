"""Files made to hurt, put where SiliconBench reads or writes (a FIFO, a link to /dev/zero, a
folder, a link to a file of the user's), a real record to mutate, and code run in a process of
its own so a hang cannot stall the suite. `outside` is a fixture, registered in
tests/conftest.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers.cli_processes import ROOT


def hostile(path: Path, kind: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    else:
        raise ValueError(kind)
    return path


FIXTURE = Path(__file__).parent.parent / "data" / "records" / "gemm_cpu_tiny.json"


def fixture() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


GUARD_S = 120     # a hang-guard for the harness, not a measurement


CASES = ("fifo", "dev_zero_link", "folder", "link_outside")


OUTSIDE_TEXT = b"the user's own file, which SiliconBench must never change\n"


@pytest.fixture
def outside(tmp_path) -> Path:
    """A file of the user's outside every folder SiliconBench writes to."""
    path = tmp_path / "elsewhere" / "notes.txt"
    path.parent.mkdir()
    path.write_bytes(OUTSIDE_TEXT)
    return path


def plant(path: Path, case: str, outside: Path | None = None) -> None:
    """`case` in the place of `path`."""
    if case == "link_outside":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(outside)
    elif case == "dangling_link":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(path.parent / "nothing-here")
    else:
        hostile(path, {"dev_zero_link": "dev-zero"}.get(case, case))


def in_child(code: str, *extra_env: tuple[str, str], args: list[str] = ()
             ) -> subprocess.CompletedProcess:
    """`code` in a Python process of its own (this checkout, this test's SILICONBENCH_HOME),
    `args` its sys.argv[1:]."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **dict(extra_env)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=GUARD_S, env=env, cwd=ROOT)


def answer(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
