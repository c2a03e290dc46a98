"""Run details' "Telemetry summary > derived" is a table of the derived rows with their marks of
trust, not a JSON blob that repeated an untrusted power with empty flags; and a power whose
note says "mean of 5 samples" is not doubted as "measured neither by an energy counter nor by
5+ samples". The H200 records are real runs (tests/data/h200), from before the marks of trust."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtWidgets import QTreeWidgetItemIterator

from siliconbench.core.results import Row, RunRecord, power_doubt

H200 = Path(__file__).resolve().parents[1] / "data" / "h200"


def _record(name: str) -> RunRecord:
    d = json.loads((H200 / f"{name}.json").read_text())
    return RunRecord.from_dict(d["runs"][0] if "runs" in d else d)


def _derived(tree) -> list[tuple[str, str]]:
    it = QTreeWidgetItemIterator(tree)
    found, lines = None, []
    while it.value():
        item = it.value()
        if item.text(0) == "derived rows":
            found = item
        elif found is not None and item.parent() is found:
            lines.append((item.text(0), item.text(1)))
        it += 1
    assert found is not None, "no table of derived rows"
    return lines


def test_derived_rows_are_a_table_with_the_doubt_in_words(qtbot):
    from siliconbench.gui.run_detail import FieldTree
    rec = _record("h200-train")
    tree = FieldTree(rec)
    qtbot.addWidget(tree)
    lines = _derived(tree)
    assert len(lines) == len(rec.telemetry["summary"]["derived"])
    assert not any(value.startswith(("{", "[")) for _, value in lines)   # no JSON
    power = next(value for what, value in lines if what.startswith("Power · "))
    assert power.startswith("— · ⚠ power not trusted: an older record: its 5 samples")
    assert "neither" not in power
    assert any(what == "Highest temperature" and value == "44 °C" for what, value in lines)


def test_a_trusted_power_carries_its_mark(qtbot):
    from siliconbench.gui.run_detail import derived_line
    d = _record("h200-train").telemetry["summary"]["derived"][0]
    d = {**d, "flags": ["power_samples"]}
    what, value, note = derived_line(d)
    assert what.startswith("Power · ") and "⚠" not in value
    assert value.endswith("· ✓ power from 5 or more power samples inside the point's timed "
                          "blocks") and value.split(" · ")[0].endswith(" W")
    assert "mean of 5 samples" in note


def test_five_samples_are_never_called_fewer_than_five():
    five = Row.from_dict(_record("h200-train").telemetry["summary"]["derived"][0])
    assert "mean of 5 samples" in five.note and not five.flags
    assert "nor by 5+ samples" not in power_doubt(five)
    one = Row.from_dict(_record("h200-gemm").telemetry["summary"]["derived"][0])
    assert "mean of 1 sample" in one.note
    assert "neither by an energy counter nor by 5+ samples" in power_doubt(one)
