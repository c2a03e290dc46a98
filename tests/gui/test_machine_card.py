"""The machine card's text, for machines probed from real macOS captures (tests/data/macos)."""

from __future__ import annotations

import pytest

from siliconbench.core import machine
from siliconbench.core.machine import commands as machine_commands
from siliconbench.gui.machine_card import describe
from tests.helpers.mac_probe import INTEL, M5_MAX, VM, mac_commands


@pytest.mark.parametrize(("commands", "title", "cpu_line"), [
    (M5_MAX, "MacBook Pro", "Apple M5 Max · 18-core CPU: 6 super + 12 performance"),
    (VM, "Apple Virtual Machine 1", "Apple M1 (Virtual) · 3-core CPU"),
    (INTEL, "Mac mini", "Intel(R) Core(TM) i7-8700B CPU @ 3.20GHz · 4-core CPU"),
])
def test_card_shows_the_cpu_tiers_as_the_mac_names_them(monkeypatch, commands, title, cpu_line):
    monkeypatch.setattr(machine_commands, "run_command", mac_commands(**commands))
    shown_title, lines, warnings = describe(machine.probe_macos())
    assert (shown_title, lines[0], warnings) == (title, cpu_line, [])
