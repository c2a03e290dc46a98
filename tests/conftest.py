"""Every test gets its own results store and an offscreen Qt platform; nothing touches the
user's real data or needs a display."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# pytest rewrites each test module's asserts as it imports it, and keeps the rewritten code in
# __pycache__ only where bytecode may be written: with PYTHONDONTWRITEBYTECODE set (as on the
# machine this project is built on) every xdist worker rewrote all 137 modules on every run,
# half of collection's CPU (12.5 CPU-s a worker, 6 with the rewritten modules kept). This
# process writes bytecode as Python does by default; the processes it starts keep the
# variable (make test compiles siliconbench/ and tests/ for them).
sys.dont_write_bytecode = False

def _threads_per_worker() -> str:
    """The cores each xdist worker's framework processes may use. Two workers whose runs each
    spread over every core oversubscribe the machine: an op's OpenMP threads then spin waiting
    for a descheduled sibling, so the work costs several times its CPU (a torch mobilenet_v2
    step at 32x32 took 17 s with 2 threads and 0.27 s with 1 on this 2-core VM under load)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    workers = int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
    return str(max(1, (cores or 1) // workers))


# In an xdist worker (xdist names it before loading this file), before this process or any
# child imports a framework: they read these at start-up. A value the user set is kept; a
# run without workers keeps the frameworks' own default, every core.
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                  "TF_NUM_INTRAOP_THREADS"):
        os.environ.setdefault(_name, _threads_per_worker())


# Shared makes that spend most of their time waiting, by the fixture that asks for each: the
# first worker starts those that selected tests ask for, each in a process of its own, when
# the session starts (tests.helpers.cli_processes.start_shared). The intruded runs wait out
# MLX's 32 s of retries, which a worker spent idle (33.5 s of setup, the slowest in the suite).
EARLY = {"intruded_runs": "tests.helpers.intruded"}


@pytest.fixture(scope="session", autouse=True)
def early_shared(request, tmp_path_factory):
    from tests.helpers.cli_processes import start_shared
    started = []
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") == "gw0":
        asked = {name for item in request.session.items for name in EARLY
                 if name in getattr(item, "fixturenames", ())}
        started = [start_shared(tmp_path_factory, EARLY[name]) for name in sorted(asked)]
    yield
    for proc in started:        # done long before the session's end; never left behind
        try:
            proc.wait(timeout=300)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(autouse=True)
def siliconbench_home(tmp_path, monkeypatch):
    home = tmp_path / "sb-home"
    monkeypatch.setenv("SILICONBENCH_HOME", str(home))
    return home


@pytest.fixture
def store(siliconbench_home):
    """The results store in this test's SILICONBENCH_HOME."""
    from siliconbench.core.store import Store
    s = Store(siliconbench_home / "results.sqlite3")
    yield s
    s.close()


@pytest.fixture
def settings(tmp_path):
    """The app's settings in a file of this test's own, never the user's."""
    from PySide6.QtCore import QSettings
    return QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, store, settings):
    """The real main window, shown, over this test's store and settings; runs it queued are
    cancelled at the end, and their threads done before the store closes."""
    from siliconbench.gui.main_window import MainWindow
    w = MainWindow(store, settings)
    w.ask_before_closing = False
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.queue.cancel_all()
    qtbot.waitUntil(lambda: not w.queue.busy, timeout=60_000)
    # A sheet the test left open is a top-level window of its own: closing the main window
    # does not close it, and it stayed visible into the next test on the same worker
    # (which then read its text as its own question's).
    from PySide6.QtWidgets import QDialog
    for dialog in w.findChildren(QDialog):
        dialog.close()


# The timing protocol's overrides (siliconbench.core.measure.SETTINGS_ENV) for a test of how a run is
# launched, ended and stored, or of its rows and checks, not of its numbers: each point times
# a short warm-up and three or more blocks, not QUICK's up to 1 s + 2 s (a loopback collective
# on a loaded machine rarely settles, so it ran to the cap on every point).
SHORT_PROTOCOL = '{"max_warmup_s": 0.2, "max_time_s": 0.3}'


@pytest.fixture
def short_protocol(monkeypatch):
    """SHORT_PROTOCOL for this test's runs."""
    from siliconbench.core.measure import SETTINGS_ENV
    monkeypatch.setenv(SETTINGS_ENV, SHORT_PROTOCOL)


@pytest.fixture
def extra_workloads(monkeypatch):
    """extra_workloads("tests.module"): that module's test workloads, visible to the parent
    and the child."""
    from siliconbench.core.catalogue import catalogue

    def use(module: str) -> None:
        monkeypatch.setenv("SILICONBENCH_EXTRA_WORKLOADS", module)
        catalogue.cache_clear()
    yield use
    catalogue.cache_clear()


@pytest.fixture
def fake_workloads(extra_workloads):
    """The crash/hang/raise test workloads."""
    extra_workloads("tests.helpers.fake_workloads")


# An xdist worker lost mid-run (twice this stop: make test on 95ebbd0, CI on 3351fe5; "node
# down: Not properly terminated", no fault dump, so no segfault or abort) says how it ended
# next time: the controller prints its exit status (-9 is SIGKILL) and, from a file of the
# worker's own (a test's captured stderr goes with the worker), its stack on SIGTERM or
# SIGHUP or where it called os._exit.
def _last_words(pid: int) -> Path:
    import tempfile
    return Path(tempfile.gettempdir()) / f"siliconbench-xdist-worker-{pid}.txt"


def _open_last_words():
    """The file, in the shared temporary folder, never through a link planted at its name
    (then, or for another user's file there, None: the worker runs without last words)."""
    try:
        return os.fdopen(os.open(_last_words(os.getpid()), os.O_WRONLY | os.O_CREAT
                                 | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600), "w")
    except OSError:
        return None


_words = _open_last_words() if "PYTEST_XDIST_WORKER" in os.environ else None
if _words is not None:
    import faulthandler
    import signal

    for _sig in (signal.SIGTERM, signal.SIGHUP):
        faulthandler.register(_sig, file=_words, chain=True)
    _real_exit, _worker_pid = os._exit, os.getpid()

    def _exit_with_its_stack(code):
        # Not this file's own exit, after the report, nor a forked child's (multiprocessing).
        if not _exit_status and os.getpid() == _worker_pid:
            _words.write(f"os._exit({code}) in an xdist worker, from:\n")
            _words.flush()
            faulthandler.dump_traceback(file=_words, all_threads=True)
        _real_exit(code)
    os._exit = _exit_with_its_stack


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """A worker that went down before it finished: its exit status and its last words."""
    popen = getattr(getattr(node.gateway, "_io", None), "popen", None)
    if popen is None:
        return
    import stat
    words = _last_words(popen.pid)
    try:
        info = os.lstat(words)
        ours = stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()
    except OSError:
        ours = False                    # none, or what another user left at that name
    if error:
        try:
            code = popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = "still running"
        said = words.read_text(errors="replace") if ours else ""
        sys.stderr.write(f"[{node.gateway.id}] went down ({error}); exit status {code}\n{said}")
    if ours:
        words.unlink(missing_ok=True)


_exit_status: list[int] = []


def pytest_sessionfinish(session, exitstatus):
    _exit_status.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """PySide6 6.12 can abort in its finaliser while the interpreter tears down after a
    session that opened many windows ("bool_dealloc ... refcount error in a C extension",
    exit code 134 after every test passed). Once pytest has reported, leave without that
    teardown, keeping the session's real exit status."""
    import sys
    if _words is not None:                      # ended as it should: no last words
        _words.close()
        _last_words(os.getpid()).unlink(missing_ok=True)
    if "PySide6.QtWidgets" in sys.modules and _exit_status:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_exit_status[-1])


# Fixtures several test modules share, kept in tests/helpers/ (a test module imports nothing
# from another): registered here, for every test under tests/.
from tests.helpers.estimates import machine  # noqa: E402,F401
from tests.helpers.gui import panel, view  # noqa: E402,F401
from tests.helpers.hostile_files import outside  # noqa: E402,F401
from tests.helpers.torch_cpu import spread_model  # noqa: E402,F401
