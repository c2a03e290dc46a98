"""Answering the app's dialogs as a person would: they are sheets opened with open(), so a
test finds the one showing, fills it in and accepts it."""

from __future__ import annotations


def the_sheet(window):
    """The dialog showing over the window: window-modal (a sheet on the Mac), not blocking the
    event loop (the call that opened it has returned), and owned by this window."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication
    dialog = QApplication.activeModalWidget()
    assert dialog is not None and dialog.isVisible()
    assert dialog.windowModality() == Qt.WindowModality.WindowModal
    assert dialog.parentWidget().window() is window
    return dialog


def answer_file_dialog(owner, path: str) -> None:
    """Type `path` into the file dialog `owner` has open and press its default button."""
    from PySide6.QtWidgets import QFileDialog
    dialog = the_sheet(owner.window())
    assert isinstance(dialog, QFileDialog) and dialog.parentWidget() is owner
    dialog.selectFile(path)
    dialog.accept()


def click_ok(dialog) -> None:
    """The dialog's OK button, pressed."""
    from PySide6.QtWidgets import QDialogButtonBox
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
