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
