"""Starting `siliconbench` as a real process (its own session, as a terminal would), and
finding any process a test left behind: every process started under a test's
SILICONBENCH_HOME carries it in its environment, whatever session it moved to."""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[2]


def _env(env: dict | None) -> dict:
    """The test's environment with the checkout on the path: a command started in another
    folder (cwd) still finds the tests' fake workloads (SILICONBENCH_EXTRA_WORKLOADS)."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def start_cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "siliconbench.core.cli", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=_env(env))


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "siliconbench.core.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=_env(None))


def cli_in_process(capsys, *args) -> tuple[int, str, str]:
    """`siliconbench ARGS` in the test's own process (a run is still a child process): the
    commands that only read or write the store, checked without a Python start-up each.
    The exit status, stdout and stderr, as a real process would give them."""
    from siliconbench.core import cli
    capsys.readouterr()
    try:
        rc = cli.main([str(a) for a in args])
    except SystemExit as e:    # argparse's usage errors
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def processes_under(home: Path) -> list[psutil.Process]:
    """Live processes whose environment names this SILICONBENCH_HOME (not this one)."""
    found = []
    for p in psutil.process_iter():
        if p.pid == os.getpid():
            continue
        try:
            if p.environ().get("SILICONBENCH_HOME") == str(home) and \
                    p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def shared(tmp_path_factory, name: str, make: Callable[[Path], Any]) -> tuple[Path, Any]:
    """make(home) once per test session, for every test that asserts on what it made (a real
    run, a device listing: seconds of framework imports): the first test to ask makes it in
    a store folder of its own, under a lock in the session's temporary folder, which every
    xdist worker shares; the others read the JSON it returned. (home, that JSON.)
    (xdist_group marks cannot do this: with pytest 9.2, --dist loadgroup silently stops
    grouping, pytest-dev/pytest-xdist#1386; seen again here, a marked test of test_cli ran on
    the other worker and made its own run.)"""
    return shared_at(shared_root(tmp_path_factory), name, make)


def shared_root(tmp_path_factory) -> Path:
    """The session's temporary folder, which every xdist worker shares."""
    root = tmp_path_factory.getbasetemp()
    return root.parent if "PYTEST_XDIST_WORKER" in os.environ else root


FAILED = "shared make failed"       # the key of what a make in the background left instead


def shared_at(root: Path, name: str, make: Callable[[Path], Any]) -> tuple[Path, Any]:
    """shared() in `root`: also what a process started by start_shared() runs."""
    home, path = root / f"shared-{name}", root / f"shared-{name}.json"
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            if Path(f"{path}.started").exists():
                raise AssertionError(f"{name}: the process that made it when the session "
                                     "started died before it was made")
            path.write_text(json.dumps(make(home)))
        made = json.loads(path.read_text())
    if isinstance(made, dict) and FAILED in made:    # never made again: that would be a retry
        raise AssertionError(f"{name}, made when the session started: {made[FAILED]}")
    return home, made


def start_shared(tmp_path_factory, module: str) -> subprocess.Popen:
    """`python -m MODULE ROOT` in the background: a shared() make that mostly waits, started
    when the session starts (tests/conftest.py), so that no worker sits idle through it. The
    module calls make_in_background(); whichever takes the lock first, it or a test that
    asks, makes it, and the other reads it."""
    return subprocess.Popen([sys.executable, "-m", module, str(shared_root(tmp_path_factory))],
                            cwd=ROOT, env=_env(None), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_in_background(name: str, make: Callable[[Path], Any]) -> None:
    """What a module started by start_shared() runs: shared_at(sys.argv[1], ...), and where
    make fails, its traceback kept in place of what it made, for the test to show."""
    import traceback

    def kept(home: Path) -> Any:
        home.with_name(f"{home.name}.json.started").touch()
        try:
            return make(home)
        except Exception:
            return {FAILED: traceback.format_exc()}
    try:
        shared_at(Path(sys.argv[1]), name, kept)
    except AssertionError:
        sys.exit(1)


def wait_until_gone(home: Path, timeout: float = 10) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    while (left := processes_under(home)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def stored_records(path: Path) -> list[dict]:
    """The records as they are on disk, live runs included (Store.runs hides those)."""
    con = sqlite3.connect(path)
    try:
        return [json.loads(r[0]) for r in con.execute("SELECT record FROM runs")]
    finally:
        con.close()


def wait_for_stored_rows(path: Path, n: int, timeout: float = 90) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            try:
                recs = stored_records(path)
            except sqlite3.OperationalError:
                recs = []
            if recs and len(recs[0]["rows"]) >= n:
                return recs[0]
        time.sleep(0.1)
    raise AssertionError(f"no run with {n} rows reached {path} within {timeout} s")


def sb(*args, home, env_extra=None, timeout=240):
    """`siliconbench ARGS` as its own process, as a user's terminal starts it."""
    env = dict(os.environ, SILICONBENCH_HOME=str(home), **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "siliconbench.core.cli", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=timeout)


def cli(capsys, monkeypatch, *args, home) -> tuple[int, str, str]:
    """`siliconbench ARGS` in this process, in the store at `home`."""
    monkeypatch.setenv("SILICONBENCH_HOME", str(home))
    return cli_in_process(capsys, *args)


def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid
