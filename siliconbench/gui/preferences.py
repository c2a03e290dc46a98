"""Edit > Preferences… (on a Mac, SiliconBench > Settings…): the app's few choices, kept in
QSettings (siliconbench.gui.settings)."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from siliconbench.gui import settings as prefs


class Preferences(QDialog):
    """One box per choice, saved the moment it is ticked."""

    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.settings = settings
        self.select_new_runs = QCheckBox("Select new runs when they finish")
        self.select_new_runs.setChecked(prefs.selects_new_runs(settings))
        self.select_new_runs.toggled.connect(
            lambda on: settings.setValue(prefs.SELECT_NEW_RUNS, "true" if on else "false"))
        hint = QLabel("Off: a run that finishes, is cancelled or is imported joins Results "
                      "and leaves the runs you selected (and the charts) as they are. On: "
                      "it is selected and drawn with the runs queued with it.")
        hint.setWordWrap(True)
        hint.setProperty("role", "hint")
        # Where runs are kept: this machine's store or a lab's shared one, chosen in a
        # sheet of its own (settings.store_preferences: its address is tried, then kept
        # without its password, from the next start).
        self.store_text = QLabel()
        self.store_text.setWordWrap(True)
        self.change_store = QPushButton("Change…")
        self.change_store.clicked.connect(self._choose_store)
        store_row = QHBoxLayout()
        store_row.addWidget(self.store_text, 1)
        store_row.addWidget(self.change_store)
        self._say_store()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.select_new_runs)
        layout.addWidget(hint)
        layout.addLayout(store_row)
        layout.addWidget(buttons)
        self.setMinimumWidth(420)

    def _say_store(self) -> None:
        shared = prefs.shared_store(self.settings)
        self.store_text.setText(f"Runs are kept in the shared store {shared}." if shared
                                else "Runs are kept on this machine only.")

    def _choose_store(self) -> None:
        prefs.store_preferences(self, self.settings).exec()
        self._say_store()
