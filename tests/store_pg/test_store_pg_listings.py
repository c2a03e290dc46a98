"""The app's Results on the shared store reads listings, not whole records (issue 52), and a
listing an older SiliconBench wrote (without the run's params, warnings and flags) is read from
its record, in one more query for all of them, not one per run."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from siliconbench.core.run_store import open_store
from siliconbench.core.store_pg import SharedDatabase
from siliconbench.core.store_schema import Listed
from siliconbench.gui.results_browser import COLUMNS, ResultsBrowser
from tests.helpers.h200_records import h200_runs
from tests.helpers.recorded import every_run


def _shown(listing) -> dict:
    return {r.id: (r.params, r.warnings, r.warning_count, r.flags, r.machine, r.row_count,
                   r.owner) for r in listing}


def test_results_on_the_shared_store_reads_listings_and_older_ones_from_records(
        shared, qtbot, monkeypatch):
    runs = every_run() + h200_runs()
    lab = open_store(shared.url("mach_a"))
    lab.import_records(runs)
    wanted = _shown(lab.listing())
    assert len(wanted) == len(runs) and any(p for p, *_ in wanted.values())
    sent = []
    execute = SharedDatabase.execute

    def counted(db, sql, args=()):
        sent.append(sql)
        return execute(db, sql, args)
    monkeypatch.setattr(SharedDatabase, "execute", counted)
    browser = ResultsBrowser(lab)
    qtbot.addWidget(browser)
    browser.reload()
    assert len(sent) == 1 and "coalesce(listing, record)" in sent[0]
    assert all(isinstance(r, Listed) for r in browser.model.records)
    # Whole records only for the runs selected, in one query, once.
    sent.clear()
    pick = {r.id for r in browser.model.records[:3]}
    browser.select_ids(pick)
    assert {r.id for r in browser.selected_records()} == pick
    assert len(sent) == 1 and "ANY" in sent[0]
    rows = {r.id: len(r.rows) for r in runs}
    assert all(not isinstance(r, Listed) and len(r.rows) == rows[r.id]
               for r in browser.selected_records())
    cells = {r.id: [browser.model.cell(r, c) for c in range(len(COLUMNS))]
             for r in browser.model.records}

    with shared.admin() as db:   # listings as an older SiliconBench wrote them
        for run_id, text in db.execute("SELECT id, listing FROM siliconbench.runs").fetchall():
            d = json.loads(text)
            for key in ("v", "warnings", "warning_count", "flags"):
                d.pop(key)
            db.execute("UPDATE siliconbench.runs SET listing = %s WHERE id = %s",
                       (json.dumps(d | {"params": {}}), run_id))
    sent.clear()
    assert _shown(lab.listing()) == wanted
    assert len(sent) == 2    # the listing, then the records of the older ones at once
    browser.reload()
    assert {r.id: [browser.model.cell(r, c) for c in range(len(COLUMNS))]
            for r in browser.model.records} == cells
    assert browser.proxy.data(browser.proxy.index(0, 0), Qt.ItemDataRole.UserRole) is not None
    lab.close()
