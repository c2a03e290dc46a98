"""The main window as a person uses it: deleting and exporting runs that real runs wrote
(tests/data/runs: a tiny GEMM and bandwidth run on a CPU, exported once by the CLI), the
keyboard path through the controls, the sidebars and the window's smallest size."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings, Qt  # noqa: E402
from PySide6.QtWidgets import QMessageBox, QPushButton  # noqa: E402

from core.store import Store  # noqa: E402

REAL_RUNS = Path(__file__).parent / "data" / "runs" / "tiny-cpu-runs.json"


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "sb-home" / "results.sqlite3")
    yield s
    s.close()


@pytest.fixture
def window(qtbot, store, tmp_path):
    from gui.main_window import MainWindow
    w = MainWindow(store, QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat))
    w.ask_before_closing = False
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w


@pytest.fixture
def imported(window, store):
    assert window.import_files([str(REAL_RUNS)])
    ids = [r.id for r in store.runs()]
    assert len(ids) == 2
    return ids


def click_button(qtbot, box: QMessageBox, text: str) -> None:
    button = next(b for b in box.buttons() if b.text().replace("&", "") == text)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


@pytest.mark.parametrize("path", ["menu", "button"])
def test_deleting_selected_runs_asks_then_deletes_them(qtbot, window, store, imported, path):
    window.results.select_ids({imported[0]})
    if path == "menu":
        window.delete_action.trigger()
    else:
        qtbot.mouseClick(window.results.delete_button, Qt.MouseButton.LeftButton)
    box = window._message_box
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert "Delete 1 run from" in box.text()
    click_button(qtbot, box, "Cancel")                      # Cancel keeps everything
    assert sorted(r.id for r in store.runs()) == sorted(imported)

    window.results.select_ids({imported[0]})
    window.delete_action.trigger()
    click_button(qtbot, window._message_box, "Delete")
    assert [r.id for r in store.runs()] == [imported[1]]
    assert window.results.proxy.rowCount() == 1
    assert "Deleted 1 run." in window.statusBar().currentMessage()


@pytest.mark.parametrize("fmt, name", [("json", "runs"), ("sbresults", "to-send"),
                                       ("csv", "table")])
def test_export_without_an_extension_writes_the_format_chosen(window, imported, tmp_path,
                                                               monkeypatch, fmt, name):
    from PySide6.QtWidgets import QFileDialog
    target = tmp_path / name
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda parent, title, start, filt: (str(target), filt))
    window.select_all_runs()
    window.choose_export_runs(fmt)
    text = target.read_text()
    if fmt == "csv":
        assert text.startswith("run_id,") and len(text.splitlines()) > 2
    else:
        assert {r["id"] for r in json.loads(text)["runs"]} == set(imported)
