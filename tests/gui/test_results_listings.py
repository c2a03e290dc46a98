"""The app's Results reads the store's listings (a few hundred bytes of each run), not every whole
record, and shows the same; a run's record is read when it is selected (issue 52: store.runs()
parsed every record, about 10 times the CPU of the listing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from siliconbench.core.results import RunRecord
from siliconbench.core.store_schema import Listed
from siliconbench.gui.results_browser import (
    COLUMNS,
    ResultsBrowser,
    RunTableModel,
    filter_value,
)
from tests.helpers.h200_records import h200_runs
from tests.helpers.recorded import every_run

ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole,
         Qt.ItemDataRole.ForegroundRole)


def shown(model: RunTableModel) -> dict[str, list]:
    """{run id: what each column shows of it, its tooltip and colour}."""
    out = {}
    for row, rec in enumerate(model.records):
        cells = []
        for column in range(len(COLUMNS)):
            index = model.index(row, column)
            cells += [model.data(index, role) for role in ROLES]
        out[rec.id] = cells
    return out


@pytest.fixture
def full_store(store):
    # The two real sustained runs (tests/data/sustained): their listing keeps the precision
    # their intervals measured, as the whole record names it.
    sustained = [RunRecord.from_dict(json.loads(p.read_text("utf-8"))) for p in
                 sorted((Path(__file__).parents[1] / "data" / "sustained").glob("*.json"))]
    runs = every_run() + h200_runs() + sustained
    # Warnings as long as a real run's (204 characters), and more than a listing keeps.
    runs[0].warnings = [f"warning {i}: " + "w" * 250 for i in range(8)]
    store.import_records(runs)
    return store


def test_results_shows_from_listings_what_whole_records_show(qtbot, full_store, monkeypatch):
    whole = RunTableModel()
    whole.set_records(full_store.runs())
    browser = ResultsBrowser(full_store)
    qtbot.addWidget(browser)

    runs = full_store.runs

    def no_whole_records(*args, column="record", **kwargs):
        assert column == "listing", "Results read every whole record"
        return runs(*args, column=column, **kwargs)
    monkeypatch.setattr(full_store, "runs", no_whole_records)
    browser.reload()
    assert browser.model.records and all(isinstance(r, Listed) for r in browser.model.records)
    listed, full = shown(browser.model), shown(whole)
    many = every_run()[0].id
    tips = listed.pop(many)[len(ROLES) * 1 + 1], full.pop(many)[len(ROLES) * 1 + 1]
    assert listed == full
    # The Status column of the run with 8 warnings: the count, the first five, and where the
    # rest are.
    assert browser.model.cell(next(r for r in browser.model.records if r.id == many), 1) == \
        "ok · ⚠ 8 warnings"
    assert tips[0] == "\n".join(tips[1].split("\n")[:6]) + \
        "\n… and 3 more (select the run to read them)"
    assert browser.model.machines == whole.machines
    # The filters offer the same entries and keep the same runs.
    for column, _, _ in browser.FILTERS:
        listed = {r.id: filter_value(r, column, browser.model.machines)
                  for r in browser.model.records}
        assert listed == {r.id: filter_value(r, column, whole.machines) for r in whole.records}
        combo = browser.combos[column]
        assert [combo.itemText(i) for i in range(1, combo.count())] == \
            sorted(set(listed.values()))


def test_selected_runs_are_whole_records(qtbot, full_store):
    browser = ResultsBrowser(full_store)
    qtbot.addWidget(browser)
    browser.reload()
    wanted = {r.id: r for r in full_store.runs()}
    pick = [r.id for r in browser.model.records if len(wanted[r.id].rows) > 1][:3]
    drawn = []
    browser.selection_changed.connect(drawn.append)
    browser.select_ids(set(pick))
    got = drawn[-1]
    assert {r.id for r in got} == set(pick)
    assert all(not isinstance(r, Listed) for r in got)
    assert [json.dumps(r.to_dict(), sort_keys=True) for r in got] == \
        [json.dumps(wanted[r.id].to_dict(), sort_keys=True) for r in got]
    # A run deleted by another process meanwhile is left out, not drawn as its listing.
    gone = pick[0]
    browser.view.clearSelection()
    full_store.delete([gone])
    browser.select_ids(set(pick))
    assert {r.id for r in drawn[-1]} == set(pick) - {gone}


def test_the_first_load_reads_listings_on_its_own_connection(qtbot, full_store):
    browser = ResultsBrowser(full_store)
    qtbot.addWidget(browser)
    browser.load_in_background()
    qtbot.waitUntil(lambda: bool(browser.model.records), timeout=60_000)
    assert len(browser.model.records) == len(full_store.listing())
    assert all(isinstance(r, Listed) for r in browser.model.records)


def test_the_table_sorts_by_a_column_and_keeps_the_selection(qtbot, full_store):
    """The runs' model sorts itself (the proxy called Python for each comparison: seconds at
    10,000 runs): by the column's text, stably from the store's order, newest first by
    default; the selection stays on its runs; a new run takes its place in the order."""
    browser = ResultsBrowser(full_store)
    qtbot.addWidget(browser)
    browser.reload()
    model = browser.model

    def shown_ids() -> list[str]:
        return [browser.proxy.data(browser.proxy.index(row, 0), Qt.ItemDataRole.UserRole).id
                for row in range(browser.proxy.rowCount())]
    stored = [r.id for r in full_store.listing()]
    when = {r.id: r.created_at for r in model.records}
    assert shown_ids() == sorted(stored, key=lambda i: when[i], reverse=True)
    pick = set(shown_ids()[2:5])
    browser.select_ids(pick)
    browser.view.sortByColumn(1, Qt.SortOrder.AscendingOrder)    # Status
    status = {r.id: model.cell(r, 1) for r in model.records}
    assert shown_ids() == sorted(stored, key=lambda i: status[i])
    assert browser.selected_ids() == pick
    browser.view.sortByColumn(0, Qt.SortOrder.DescendingOrder)
    assert browser.selected_ids() == pick
    newest = every_run()[1]
    newest.id, newest.created_at = "n" * 32, "2999-01-01T00:00:00+00:00"
    browser.add_record(newest)
    assert shown_ids()[0] == newest.id and browser.selected_ids() == pick
