"""A machine whose runs never start (its memory and cores set by the test), and the one-line
refusal a run that cannot fit gets: for the tests of what is estimated before a run starts.
`machine` is a fixture, registered in tests/conftest.py."""

from __future__ import annotations

import os
import types

import pytest

from siliconbench.core import estimate as estimate_mod

GB = 2**30


class Started(Exception):
    """A run's process was about to start."""


@pytest.fixture
def machine(monkeypatch, siliconbench_home):
    """A machine of 2 cores and `machine.memory(bytes)` free, whose runs never start: each
    start is kept in `machine.started` and refused."""
    import psutil

    from siliconbench.core import child
    state = types.SimpleNamespace(started=[], free=int(23.5 * GB))
    monkeypatch.setattr(psutil, "virtual_memory",
                        lambda: types.SimpleNamespace(total=state.free, available=state.free))
    monkeypatch.setattr(estimate_mod, "physical_cores", lambda: 2)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)

    def start(self):
        state.started.append(self)
        raise Started
    monkeypatch.setattr(child.ChildRun, "start", start)

    def memory(free: int):
        state.free = free
    state.memory = memory
    state.home = siliconbench_home
    return state


def run(capsys, *argv: str) -> tuple[int, str]:
    from siliconbench.core import cli
    code = cli.main(["run", *argv])
    return code, capsys.readouterr().err.strip()


def refused(machine, code: int, err: str) -> str:
    """The one-line refusal, with nothing started and nothing stored."""
    assert code == 2, err
    assert "\n" not in err and err.startswith("siliconbench: ") and "warning" not in err
    assert machine.started == []
    assert not (machine.home / "results.sqlite3").exists()
    return err.removeprefix("siliconbench: ")
