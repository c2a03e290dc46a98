"""Messages and questions as the Mac shows them: sheets, window-modal and opened with open()
rather than exec(), so the window's event loop (live runs, charts) goes on while one is up;
its parent owns it (alive while open) and `showing` finds it. The dialog classes are imported
when a dialog opens: importing one builds all of its enums, which the window's first paint
need not wait for (QMessageBox, QInputDialog and QFileDialog: 12 enums, about 5 ms)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox, QWidget

SHEET = "sheet"   # the property open_sheet marks its dialogs with


def open_sheet(parent: QWidget, dialog: QDialog) -> QDialog:
    from PySide6.QtCore import Qt  # not before the first paint (siliconbench/gui/qt_values.py)
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setProperty(SHEET, True)
    dialog.open()
    return dialog


def showing(parent: QWidget) -> QDialog | None:
    """The sheet open_sheet has showing over `parent`, the newest; None when none is up."""
    from PySide6.QtWidgets import QDialog
    return next((d for d in reversed(parent.findChildren(QDialog))
                 if d.parentWidget() is parent and d.property(SHEET) and d.isVisible()), None)


def message_sheet(parent: QWidget, title: str, text: str,
                  icon: QMessageBox.Icon | None = None) -> QMessageBox:
    """A message with its OK button; a warning unless another icon is given."""
    from PySide6.QtWidgets import QMessageBox
    box = QMessageBox(QMessageBox.Icon.Warning if icon is None else icon, title, text,
                      QMessageBox.StandardButton.Ok, parent)
    open_sheet(parent, box)
    return box


def question_sheet(parent: QWidget, title: str, text: str, informative: str, act: str,
                   then: Callable[[], object],
                   role: QMessageBox.ButtonRole | None = None,
                   otherwise: Callable[[], object] = lambda: None) -> QMessageBox:
    """Cancel (the default) or `act` (an AcceptRole button unless `role` says otherwise):
    `then()` runs after `act`, `otherwise()` after any other way out (Cancel, Escape)."""
    from PySide6.QtWidgets import QMessageBox
    box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Cancel,
                      parent)
    box.setInformativeText(informative)
    button = box.addButton(act, QMessageBox.ButtonRole.AcceptRole if role is None else role)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.finished.connect(lambda _: then() if box.clickedButton() is button else otherwise())
    open_sheet(parent, box)
    return box


def file_dialog(parent: QWidget, title: str, start: str, file_filter: str,
                chosen: Callable[[list[str], str], None], save: bool = False,
                many: bool = False) -> QFileDialog:
    """Open a file dialog as a sheet; `chosen(paths, name filter)` once the user accepts."""
    from PySide6.QtWidgets import QFileDialog
    dialog = QFileDialog(parent, title, start, file_filter)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave if save
                         else QFileDialog.AcceptMode.AcceptOpen)
    if not save:
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles if many
                           else QFileDialog.FileMode.ExistingFile)
    from PySide6.QtCore import Qt  # not before the first paint (siliconbench/gui/qt_values.py)
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.accepted.connect(lambda: chosen(dialog.selectedFiles(), dialog.selectedNameFilter()))
    dialog.open()
    return dialog
