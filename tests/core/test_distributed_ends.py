"""Nothing outlives a distributed run (issue: nothing lost, nothing hangs): its ranks and
launcher die with the command that started them, even by SIGKILL; a second Ctrl-C cancels
like the first; the run's temporary folder and its port locks go on every way out."""

import os
import signal
import time

import psutil
import pytest

from siliconbench.core.measure import SETTINGS_ENV
from siliconbench.core.store import Store
from tests.conftest import SHORT_PROTOCOL
from tests.helpers.cli_processes import (
    processes_under,
    start_cli,
    wait_for_stored_rows,
    wait_until_gone,
)

ENGINES = ["mlx", "torch"]


@pytest.fixture(autouse=True)
def no_process_left_behind(siliconbench_home):
    yield
    assert wait_until_gone(siliconbench_home) == []


def long_run(framework: str, *extra: str):
    """Two ranks on this machine over a sweep long enough to be ended mid-way: 40 points, the
    largest 32 MiB. The short timing protocol: the tests wait for its first rows, which the
    full one took up to 15 s each to settle on loopback (about 20 s of two busy ranks before
    the test could begin)."""
    return start_cli("run", "allreduce", "--framework", framework, "--processes", "2",
                     "--sizes", ",".join(str(2**k) for k in range(4, 24)),
                     "--dtypes", "float32,bfloat16", "--yes", *extra,   # long: asked first
                     env={**os.environ, SETTINGS_ENV: SHORT_PROTOCOL})


def ended(p: psutil.Process) -> bool:
    try:
        return p.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def run_folders(home) -> set[str]:
    """The run folders (TMPDIR) of the run's processes under this test's home."""
    folders = set()
    for p in processes_under(home):
        try:
            tmp = p.environ().get("TMPDIR", "")
        except psutil.Error:
            continue
        if os.path.basename(tmp).startswith("siliconbench-run-"):
            folders.add(tmp)
    return folders


@pytest.mark.parametrize("framework", ENGINES)
def test_sigkill_of_the_command_ends_every_rank_and_removes_the_run_folder(
        framework, siliconbench_home):
    cli = long_run(framework)
    wait_for_stored_rows(siliconbench_home / "results.sqlite3", 3, timeout=240)
    folders = run_folders(siliconbench_home)
    ranks = [p for p in processes_under(siliconbench_home) if p.pid != cli.pid]
    assert folders and ranks
    cli.kill()
    cli.wait()
    # The ranks watch siliconbench itself (twice a second) and end their launcher with them.
    assert wait_until_gone(siliconbench_home, timeout=5) == []
    assert [f for f in folders if os.path.exists(f)] == []


def test_two_ctrl_c_cancel_the_run_like_one(siliconbench_home):
    cli = long_run("torch")
    wait_for_stored_rows(siliconbench_home / "results.sqlite3", 3, timeout=240)
    folders = run_folders(siliconbench_home)
    ranks = [p for p in processes_under(siliconbench_home) if p.pid != cli.pid]
    assert folders and ranks
    cli.send_signal(signal.SIGINT)
    # The second lands while the first is being handled: once the cancel has ended a rank
    # (SIGTERM to the run's processes), while the command still saves and says so.
    deadline = time.monotonic() + 60
    while not any(ended(p) for p in ranks):
        assert cli.poll() is None, "the command ended before its ranks"
        assert time.monotonic() < deadline, "no rank ended within 60 s of the first Ctrl-C"
        time.sleep(0.01)
    assert cli.poll() is None, "the command had ended before the second Ctrl-C"
    cli.send_signal(signal.SIGINT)
    out, err = cli.communicate(timeout=60)
    assert cli.returncode == 130, err
    # The last line says it (an estimate's warning may come before), and nothing else broke.
    assert "was cancelled and kept in the store" in err.strip().splitlines()[-1], err
    assert "Traceback" not in err and "internal error" not in err, err
    [rec] = Store().runs()
    assert rec.status == "cancelled" and rec.reason == "cancelled by the user (Ctrl-C)"
    assert len(rec.rows) >= 3
    assert [f for f in folders if os.path.exists(f)] == []


def test_a_run_that_picks_its_ports_leaves_no_lock_file_behind(short_protocol, tmp_path,
                                                              monkeypatch):
    """The run's temporary folder is this test's own, so no other run's locks are seen."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    out = start_cli("run", "allreduce", "--framework", "mlx", "--processes", "2", "--sizes",
                    "64", "--quick")
    _, err = out.communicate(timeout=240)
    assert out.returncode == 0, err
    folder = tmp_path / f"siliconbench-ports-{os.getuid()}"
    assert folder.is_dir() and os.listdir(folder) == []


def test_the_port_lock_folder_must_be_the_users_own(tmp_path, monkeypatch):
    """A link to another folder (another user's, in the shared temporary folder) is refused:
    whoever could write there could hold every lock."""
    import tempfile

    from siliconbench.core.launch import LaunchError, reserve_ports
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / f"siliconbench-ports-{os.getuid()}").symlink_to(elsewhere)
    with pytest.raises(LaunchError, match="is not a private folder of yours"):
        reserve_ports(2)
    (tmp_path / f"siliconbench-ports-{os.getuid()}").unlink()
    reservation = reserve_ports(2)
    folder = tmp_path / f"siliconbench-ports-{os.getuid()}"
    assert sorted(os.listdir(folder)) == [str(reservation.first), str(reservation.first + 1)]
    assert folder.stat().st_mode & 0o777 == 0o700
    reservation.release()
    assert os.listdir(folder) == []


def test_a_released_lock_is_never_held_twice(tmp_path, monkeypatch):
    """Run A releases a port (removes its lock file, then lets go) just as run B, having
    opened the file, takes its lock: B finds the name no longer leads to its file and backs
    off, so it never holds a lock that a third run could take again on a new file."""
    import fcntl
    import tempfile

    import siliconbench.core.launch
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    path = siliconbench.core.launch.lock_folder() / "20000"
    a = siliconbench.core.launch._lock(path)
    real_flock = fcntl.flock

    def a_releases_meanwhile(fd, op):
        monkeypatch.setattr(fcntl, "flock", real_flock)
        siliconbench.core.launch.PortReservation(20000, [(path, a)]).release()
        return real_flock(fd, op)
    monkeypatch.setattr(fcntl, "flock", a_releases_meanwhile)
    with pytest.raises(OSError):
        siliconbench.core.launch._lock(path)
    c = siliconbench.core.launch._lock(path)         # the next run takes the port as a new file
    os.close(c)
