"""What a killed distributed run leaves behind goes at the next start: SIGKILL runs no
clean-up, so a run's port lock files (held by the command, or by the scaling workload's
process for its worlds) and the scaling workload's hostfile folder stayed in the temporary
folder for good. The next run removes those whose owner is dead, and nothing of a run that
is still alive."""

import os
import signal
import time

import pytest

from siliconbench.core import launch
from siliconbench.core.measure import SETTINGS_ENV
from tests.helpers.cli_processes import start_cli, wait_until_gone

RUNS = {"allreduce": ["--sizes", ",".join(str(2**k) for k in range(4, 24))],
        "scaling": ["--widths", "16", "--batch-size", "4"]}


def leftovers(tmp) -> list[str]:
    """The run folders, hostfile folders and port locks in the temporary folder `tmp`."""
    found = [e.name for e in os.scandir(tmp) if e.name.startswith(("siliconbench-run-",
                                                                   "siliconbench-hosts-"))]
    locks = tmp / f"siliconbench-ports-{os.getuid()}"
    if locks.is_dir():
        found += [f"lock {e.name}" for e in os.scandir(locks)]
    return sorted(found)


def _wait_for(what, timeout: float = 240):
    deadline = time.monotonic() + timeout
    while not (found := what()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


@pytest.mark.parametrize("workload", RUNS)
def test_what_a_killed_run_left_is_removed_by_the_next(workload, siliconbench_home, tmp_path,
                                                      short_protocol):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    # The run killed keeps the full protocol, so it is still under way when the locks are
    # seen; the next run is tested for what it removes, not its numbers: short_protocol.
    cli = start_cli("run", workload, "--framework", "mlx", "--processes", "2",
                    *RUNS[workload], "--yes",
                    env={k: v for k, v in env.items() if k != SETTINGS_ENV})
    try:
        # The ranks' ports are locked and (scaling) the worlds' hostfile folder made.
        assert _wait_for(lambda: any(n.startswith("lock") for n in leftovers(tmp)) and (
            workload != "scaling" or any("hosts" in n for n in leftovers(tmp)))), \
            cli.stderr.read() if cli.poll() is not None else "the run never locked a port"
    finally:
        os.killpg(cli.pid, signal.SIGKILL)
        cli.wait()
    assert wait_until_gone(siliconbench_home, timeout=10) == []
    left = leftovers(tmp)
    assert any(n.startswith("lock") for n in left), left     # what the kill left behind
    again = start_cli("run", "allreduce", "--framework", "mlx", "--processes", "1",
                      "--sizes", "64", "--quick", "--yes", env=env)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert leftovers(tmp) == []


def test_a_live_runs_folders_and_locks_are_kept(tmp_path, monkeypatch):
    """Only a dead owner's: a folder named for a live process, and a lock held, stay."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    mine = tmp_path / f"siliconbench-run-{os.getpid()}-abc"
    dead = tmp_path / "siliconbench-hosts-999999999-abc"
    other = tmp_path / "siliconbench-run-notapid"
    for folder in (mine, dead, other):
        folder.mkdir()
    held = launch.reserve_ports(2)
    try:
        free = launch.lock_folder() / "1"
        free.write_text("")
        launch.clean_stale()
        assert sorted(os.listdir(launch.lock_folder())) == \
            [str(held.first), str(held.first + 1)]
        assert mine.exists() and other.exists() and not dead.exists()
    finally:
        held.release()
