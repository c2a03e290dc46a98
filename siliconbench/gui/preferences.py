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
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from siliconbench.gui import settings as prefs
from siliconbench.gui.sheets import open_sheet


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
        # without its password, from the next start; the password can go to ~/.pgpass).
        self.store_text = QLabel()
        self.store_text.setWordWrap(True)
        self.change_store = QPushButton("Change…")
        self.change_store.clicked.connect(self._choose_store)
        store_row = QHBoxLayout()
        store_row.addWidget(self.store_text, 1)
        store_row.addWidget(self.change_store)
        self.password_text = QLabel()   # what became of a password typed in the address
        self.password_text.setWordWrap(True)
        self.password_text.setProperty("role", "hint")
        self._say_store()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.select_new_runs)
        layout.addWidget(hint)
        layout.addLayout(store_row)
        layout.addWidget(self.password_text)
        layout.addWidget(buttons)
        self.setMinimumWidth(420)

    def _say_store(self) -> None:
        """Where runs are kept now and, when Change… chose another store, from when: the app
        opens its store at the start (siliconbench.gui.app)."""
        from siliconbench.core.store_pg import without_password
        from siliconbench.core.store_sync import shared_url
        chosen = prefs.shared_store(self.settings)
        running = shared_url()
        running = without_password(running) if running else None

        def where(url: str | None) -> str:
            return f"in the shared store {url}" if url else "on this machine only"
        if chosen == running:
            text = f"Runs are kept {where(chosen)}."
        else:
            text = (f"Runs are kept {where(running)} until SiliconBench starts again; from "
                    f"the next start, {where(chosen)}.")
        self.store_text.setText(text)

    def _choose_store(self) -> QDialog:
        """The store's sheet (settings.store_preferences); at its OK, a password typed in the
        address is not kept, and the user is offered to put it in the password file."""
        dialog = prefs.store_preferences(self, self.settings)
        self.store_dialog = dialog
        dialog.accepted.connect(lambda: self._store_chosen(dialog))
        dialog.finished.connect(lambda _: self._say_store())
        open_sheet(self, dialog)
        return dialog

    def _store_chosen(self, dialog) -> None:
        from siliconbench.core.pgpass import password_in
        typed = dialog.address.text().strip()
        if dialog.shared.isChecked() and password_in(typed):
            self.offer_pgpass(typed)

    def offer_pgpass(self, address: str) -> QMessageBox:
        """The password typed in the address is not kept: say so, and offer the password
        file, as pgAdmin's "Save password" does."""
        from siliconbench.core.pgpass import pgpass_path
        box = QMessageBox(QMessageBox.Icon.Question, "Keep the password?",
                          "SiliconBench does not keep the password typed in the address: "
                          "without it the shared store may refuse the next start.",
                          QMessageBox.StandardButton.NoButton, self)
        box.setInformativeText(
            f"Put it in {pgpass_path()}, readable only by you, where SiliconBench and "
            "PostgreSQL's own tools find it? Otherwise give it in a service file or "
            "PGPASSWORD.")
        save = box.addButton("Save Password", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Don't Save", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(save)
        box.finished.connect(lambda _: self._save_password(address)
                             if box.clickedButton() is save else None)
        self.pgpass_offer = box
        open_sheet(self, box)
        return box

    def _save_password(self, address: str) -> None:
        from siliconbench.core.pgpass import PgpassError, keep_password
        try:
            path = keep_password(address)
        except PgpassError as e:
            self.password_text.setText(f"The password was not kept: {e}")
            return
        self.password_text.setText(f"The password is in {path} (mode 0600).")
