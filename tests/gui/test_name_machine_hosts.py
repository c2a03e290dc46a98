"""Name Machine names a host (issue 50): a colleague's identical MacBook Pro keeps its runs'
names, and a run of this host that came with another name ("Lab Mac", imported) is renamed
only when the person says so. Mac records made from a real run as
tests/core/test_compare_machines.py says."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from tests.helpers.mac_records import MBP, mac_run


def open_box(qtbot, window) -> QMessageBox:
    """The question `window` shows: only its own. Not any box of QApplication.allWidgets():
    that list holds an earlier test's widgets until Qt deletes them, and read while it did
    it once gave that test's refusal and once crashed the worker."""
    found: list[QMessageBox] = []

    def shown() -> bool:
        found[:] = [w for w in window.findChildren(QMessageBox) if w.isVisible()]
        return bool(found)
    qtbot.waitUntil(shown)
    return found[0]


def machines(store) -> dict[str, str | None]:
    return {r.id: r.label for r in store.runs()}


def name_it(window, qtbot, rec, name: str):
    window.results.select_ids({rec.id})
    dialog = window.results_actions.choose_machine_name()
    dialog.setTextValue(name)
    dialog.accept()


def test_name_machine_asks_before_an_imported_name_and_leaves_other_hosts(window, store,
                                                                          qtbot):
    mine = mac_run(MBP, "my-laptop", 1.0, n=0)
    again = mac_run(MBP, "my-laptop", 1.01, n=1)
    imported = mac_run(MBP, "my-laptop", 0.99, n=2, label="Lab Mac")
    theirs = mac_run(MBP, "colleagues-laptop", 0.7, n=3)   # identical model, other host
    store.import_records([mine, again, imported, theirs])
    window.results.reload()

    # Cancel at the question: this host's runs named, the imported one keeps its name.
    name_it(window, qtbot, mine, "My MBP")
    box = open_box(qtbot, window)
    assert "Lab Mac" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: machines(store)[mine.id] == "My MBP")
    labels = machines(store)
    assert labels[again.id] == "My MBP" and labels[imported.id] == "Lab Mac"
    assert labels[theirs.id] is None

    # Asked again and told to: the imported run too; the colleague's machine never.
    name_it(window, qtbot, again, "My MacBook")
    box = open_box(qtbot, window)
    next(b for b in box.buttons() if b.text() == "Rename Them Too").click()
    qtbot.waitUntil(lambda: machines(store)[imported.id] == "My MacBook")
    labels = machines(store)
    assert labels[mine.id] == labels[again.id] == "My MacBook"
    assert labels[theirs.id] is None
