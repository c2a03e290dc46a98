"""A small filesystem of its own (tmpfs; needs root, as CI has), filled or remounted
read-only: the store on a full disk."""

from __future__ import annotations

import errno
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_disk(where: Path, size: str = "1m"):
    """A small filesystem of its own, to fill (tmpfs; needs root, as CI has)."""
    where.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {r.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def remount(where: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(where)], check=True)


def fill(disk: Path) -> None:
    f = open(disk / "filler", "wb", buffering=0)
    try:
        while True:
            f.write(b"\0" * 4096)
    except OSError as e:
        assert e.errno == errno.ENOSPC
    finally:
        f.close()
