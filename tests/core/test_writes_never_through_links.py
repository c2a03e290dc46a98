"""One rule for every path SiliconBench writes, its settings included: never through a link,
never over a device node or a FIFO. A FIFO someone reads, a terminal, the null device and the
process's own descriptors (`-o /dev/stdout`) are written as they are, never replaced; another
device, a socket or a FIFO nothing reads is one sentence; the app's settings file, a link,
is moved aside (the link itself) as a FIFO or a folder there is. A writer killed outright
leaves no hidden part behind once the name is written again."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from siliconbench.core import files
from siliconbench.core.results import records_to_json
from tests.helpers.cli_processes import ROOT
from tests.helpers.hostile_files import OUTSIDE_TEXT
from tests.helpers.recorded import recorded


def _sb(home: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "siliconbench.core.cli", *args], cwd=ROOT,
                          capture_output=True, timeout=120, **kw,
                          env={**os.environ, "SILICONBENCH_HOME": str(home),
                               "PYTHONPATH": str(ROOT)})


@pytest.fixture
def with_runs(siliconbench_home, tmp_path) -> Path:
    """A data folder whose store holds a real run."""
    source = tmp_path / "in.json"
    source.write_text(records_to_json([recorded("gemm-torch")]))
    assert _sb(siliconbench_home, "import", str(source)).returncode == 0
    return siliconbench_home


def _one_sentence(done: subprocess.CompletedProcess) -> str:
    err = done.stderr.decode().strip()
    assert done.returncode == 2 and err.count("\n") == 0, err
    assert "Traceback" not in err and "internal error" not in err, err
    return err


# ---------------------------------------------------------------- the app's settings

def _start_app(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "siliconbench.gui"], capture_output=True,
                          text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen",
                               "SILICONBENCH_GUI_EXIT_AFTER_SHOWN": "1",
                               "PYTHONPATH": str(ROOT), **env})


@pytest.mark.parametrize("where", ["SILICONBENCH_HOME", "XDG"])
@pytest.mark.parametrize("link", ["to a file", "to nothing"])
def test_opening_the_app_never_writes_its_settings_through_a_link(where, link, tmp_path,
                                                                  outside, monkeypatch):
    """Was: QSettings saved through QSaveFile, which follows the link: the link's target was
    overwritten, or, dangling, created outside the data folder."""
    home = tmp_path / "sb-home"
    home.mkdir()
    if where == "SILICONBENCH_HOME":
        env = {"SILICONBENCH_HOME": str(home)}
        path = home / "gui-settings.ini"
    else:      # no SILICONBENCH_HOME: ~/.config/SiliconBench/SiliconBench.conf
        env = {"SILICONBENCH_HOME": "", "HOME": str(tmp_path),
               "XDG_CONFIG_HOME": str(tmp_path / "config"),
               "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_STATE_HOME": str(tmp_path / "st"),
               "XDG_CACHE_HOME": str(tmp_path / "cache")}
        path = tmp_path / "config" / "SiliconBench" / "SiliconBench.conf"
        path.parent.mkdir(parents=True)
    target = outside if link == "to a file" else tmp_path / "elsewhere" / "made.conf"
    path.symlink_to(target)
    done = _start_app(env)
    assert done.returncode == 0 and "SILICONBENCH_SHOWN" in done.stdout, done.stderr[-3000:]
    if link == "to a file":
        assert outside.read_bytes() == OUTSIDE_TEXT
    else:
        assert not os.path.lexists(target)
    aside = [p for p in path.parent.iterdir() if p.name.startswith(path.name + ".unreadable-")]
    assert len(aside) == 1 and aside[0].is_symlink() and os.readlink(aside[0]) == str(target)
    assert stat.S_ISREG(os.lstat(path).st_mode)           # the app's own, written anew


def test_a_settings_link_is_said_and_the_settings_work(siliconbench_home, outside,
                                                       monkeypatch):
    from siliconbench.gui import settings as prefs
    monkeypatch.setattr(prefs, "notice", None, raising=False)
    siliconbench_home.mkdir()
    path = siliconbench_home / "gui-settings.ini"
    path.symlink_to(outside)
    s = prefs.app_settings()
    assert "is a link, which SiliconBench does not write its settings through" in prefs.notice
    s.setValue("run/workload", "bandwidth")
    s.sync()
    assert outside.read_bytes() == OUTSIDE_TEXT and not path.is_symlink()
    assert prefs.app_settings().value("run/workload") == "bandwidth"


# ---------------------------------------------------------------- export -o and every writer

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")


@needs_root
def test_export_to_a_null_device_node_writes_to_it_and_never_replaces_it(with_runs, tmp_path):
    """Was: `-o /dev/null` as root replaced /dev/null with a regular file (here a null device
    node of the test's own, not the machine's)."""
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.stat(os.devnull).st_rdev)
    done = _sb(with_runs, "export", "-o", str(null), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(os.lstat(null).st_mode)


def test_export_through_a_link_to_a_device_leaves_link_and_device(with_runs, tmp_path):
    """Was: the link to /dev/null was replaced by a regular file; a link to another device
    (/dev/zero) is refused in one sentence, never written over."""
    for device in (os.devnull, "/dev/zero"):
        link = tmp_path / f"to-{Path(device).name}.json"
        link.symlink_to(device)
        done = _sb(with_runs, "export", "-o", str(link))
        if device == os.devnull:
            assert done.returncode == 0, done.stderr
        else:
            assert "is a device, so SiliconBench does not write there" in _one_sentence(done)
        assert link.is_symlink() and os.readlink(link) == device
        assert stat.S_ISCHR(os.stat(device).st_mode)


@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_export_to_the_process_s_own_stdout_reaches_it(name, with_runs):
    """Was: nothing reached /proc/self/fd/1 (a temporary file was sought beside it)."""
    if not os.path.exists(name):
        pytest.skip(f"{name} is not on this system")
    done = _sb(with_runs, "export", "-o", name, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert b'"workload": "gemm"' in done.stdout


def test_export_to_a_fifo_that_is_read_writes_to_it(with_runs, tmp_path):
    """Was: the FIFO was replaced by a regular file and its reader got nothing."""
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = _sb(with_runs, "export", "-o", str(fifo))
    reader.join(60)
    assert done.returncode == 0, done.stderr
    assert got and got[0].startswith(b"run_id,") and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_export_to_a_fifo_nothing_reads_is_one_sentence(with_runs, tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    err = _one_sentence(_sb(with_runs, "export", "-o", str(fifo)))
    assert "is a FIFO that nothing reads" in err and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_every_write_keeps_a_link_s_target_and_a_socket(tmp_path, outside):
    """write_atomic, the one helper: a link to a file is replaced (its target untouched), a
    socket is refused."""
    link = tmp_path / "out.csv"
    link.symlink_to(outside)
    files.write_atomic(link, "new")
    assert outside.read_bytes() == OUTSIDE_TEXT and link.read_text() == "new"
    import socket
    sock_path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        with pytest.raises(files.NotWritable, match="is a socket"):
            files.write_atomic(sock_path, "x")
    assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)


# ---------------------------------------------------------------- a writer killed outright

WRITER = """
import sys
from siliconbench.core.files import atomic_file
with atomic_file(sys.argv[1]) as f:
    f.write(b"half an export")
    f.flush()
    print("writing", flush=True)
    sys.stdin.read()          # until the test says
"""


def _writer(path: Path) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert child.stdout.readline() == b"writing\n"
    return child


def _parts(path: Path) -> list[Path]:
    return [p for p in path.parent.iterdir()
            if p.name.startswith(f".{path.name}.") and p.name.endswith(".part")]


def test_a_part_left_by_a_writer_killed_outright_goes_with_the_next_export(with_runs,
                                                                          tmp_path):
    """Was: kill -9 during export left the hidden .part file for good."""
    out = tmp_path / "runs.json"
    killed = _writer(out)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert len(_parts(out)) == 1
    live = _writer(out)                # a writer still at work keeps its part
    try:
        done = _sb(with_runs, "export", "-o", str(out))
        assert done.returncode == 0, done.stderr
        assert out.read_bytes().startswith(b"{") and len(_parts(out)) == 1
    finally:
        live.communicate(b"", timeout=60)
    assert live.returncode == 0 and _parts(out) == [] and out.read_bytes() == b"half an export"
