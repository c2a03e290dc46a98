"""Every test gets its own results store and an offscreen Qt platform; nothing touches the
user's real data or needs a display."""

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def siliconbench_home(tmp_path, monkeypatch):
    home = tmp_path / "sb-home"
    monkeypatch.setenv("SILICONBENCH_HOME", str(home))
    return home


@pytest.fixture
def fake_workloads(monkeypatch):
    """Make the crash/hang/raise test workloads visible to the parent and the child."""
    from core.workloads import catalogue
    monkeypatch.setenv("SILICONBENCH_EXTRA_WORKLOADS", "tests.fake_workloads")
    catalogue.cache_clear()
    yield
    catalogue.cache_clear()


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
    if "PySide6.QtWidgets" in sys.modules and _exit_status:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_exit_status[-1])
