"""Edit > Preferences… (on a Mac, SiliconBench > Settings…): the app's few choices, kept in
QSettings (siliconbench.gui.settings)."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

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
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.select_new_runs)
        layout.addWidget(hint)
        layout.addWidget(buttons)
        self.setMinimumWidth(420)
