"""Messages and questions as the Mac shows them: sheets, window-modal and opened with open()
rather than exec(), so the window's event loop (live runs, charts) goes on while one is up.
The one showing is kept as its parent's `message_box` (alive while open; tests answer it)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QDialog, QMessageBox, QWidget


def open_sheet(parent: QWidget, dialog: QDialog) -> QDialog:
    from PySide6.QtCore import Qt   # not before the first paint (gui/qt_values.py)
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    parent.message_box = dialog
    dialog.open()
    return dialog


def message_sheet(parent: QWidget, title: str, text: str,
                  icon: QMessageBox.Icon = QMessageBox.Icon.Warning) -> QMessageBox:
    box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, parent)
    open_sheet(parent, box)
    return box


def question_sheet(parent: QWidget, title: str, text: str, informative: str, act: str,
                   then: Callable[[], object],
                   role: QMessageBox.ButtonRole = QMessageBox.ButtonRole.AcceptRole,
                   otherwise: Callable[[], object] = lambda: None) -> QMessageBox:
    """Cancel (the default) or `act`: `then()` runs after `act`, `otherwise()` after any
    other way out (Cancel, Escape)."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Cancel,
                      parent)
    box.setInformativeText(informative)
    button = box.addButton(act, role)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.finished.connect(lambda _: then() if box.clickedButton() is button else otherwise())
    open_sheet(parent, box)
    return box
