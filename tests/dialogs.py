"""Answering the app's dialogs as a person would: they are sheets opened with open(), so a
test fills in the one showing and accepts it."""

from __future__ import annotations


def answer_file_dialog(owner, path: str) -> None:
    """Type `path` into the file dialog `owner` has open and press its default button."""
    dialog = owner.file_dialog
    assert dialog.isVisible() and dialog.isModal()
    dialog.selectFile(path)
    dialog.accept()
