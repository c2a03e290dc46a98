"""What Edit (and Results' buttons and context menu) does with the runs selected under Results:
Copy, Show Run Details…, Name Machine… and Delete Selected Runs…. Built with the window's
rest (MainWindow.build_rest); the dialog classes and RunDetail are imported when one opens
(siliconbench/gui/sheets.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QApplication

from siliconbench.gui.sheets import message_sheet, open_sheet, question_sheet

if TYPE_CHECKING:
    from PySide6.QtWidgets import QInputDialog, QMessageBox, QStatusBar, QWidget

    from siliconbench.core.results import RunRecord
    from siliconbench.gui.results_browser import ResultsBrowser
    from siliconbench.gui.run_detail import RunDetail


class ResultsActions:
    """`results`' selected runs, acted on: sheets and details over `parent`, what was done said
    in `status`, and `redraw(selected)` once deleted runs are gone from the selection."""

    def __init__(self, parent: QWidget, results: ResultsBrowser, status: QStatusBar,
                 redraw: Callable[[list[RunRecord]], None]) -> None:
        self.parent = parent
        self.results = results
        self.status = status
        self.redraw = redraw

    def _selected(self, title: str, text: str) -> list[RunRecord]:
        """The selected runs; with none, says `text` in a sheet titled `title`."""
        from PySide6.QtWidgets import QMessageBox
        records = self.results.selected_records()
        if not records:
            message_sheet(self.parent, title, text, QMessageBox.Icon.Information)
        return records

    def copy_selection(self) -> int:
        """Edit > Copy: the selected rows of the table with the focus (the results when no
        table has it) as tab-separated text; returns how many."""
        from PySide6.QtWidgets import QAbstractItemView

        from siliconbench.gui.run_detail import copy_selected_rows
        focus = QApplication.focusWidget()
        view = focus if isinstance(focus, QAbstractItemView) else self.results.view
        n = copy_selected_rows(view)
        self.status.showMessage(f"Copied {n} row{'s' * (n != 1)}." if n else
                                "Select rows to copy first.", 4000)
        return n

    def show_run_details(self) -> RunDetail | None:
        """The first selected run in full, beside the window (modeless)."""
        records = self._selected("Run details", "Select a run under Results first.")
        if not records:
            return None
        from siliconbench.gui.run_detail import RunDetail
        detail = RunDetail(records[0], self.parent)
        detail.show()
        return detail

    def choose_machine_name(self) -> QInputDialog | None:
        from PySide6.QtWidgets import QInputDialog, QLineEdit

        from siliconbench.core.files import NotReadable
        from siliconbench.core.machine_names import LABEL_MAX
        from siliconbench.core.machine_names import path as names_path
        records = self._selected("Name a machine",
                                 "Select a run of that machine under Results first.")
        if not records:
            return None
        dialog = QInputDialog(self.parent)
        dialog.setWindowTitle("Name Machine")
        dialog.setLabelText("Name for this machine, shown on its runs and charts (empty: its "
                            "model name):")
        # At most what a run record's label may hold: a longer one could not be imported.
        dialog.setInputMode(QInputDialog.InputMode.TextInput)   # makes its line edit
        dialog.findChild(QLineEdit).setMaxLength(LABEL_MAX)
        dialog.setTextValue(records[0].label or records[0].machine_label)

        def refused(text: str) -> None:
            message_sheet(self.parent, "Name Machine", text)

        def rename(label: str) -> None:
            from siliconbench.core.machine_names import runs_to_name
            _, named = runs_to_name(self.results.model.records, records, label)
            if not named:
                return apply(label, False)
            theirs = sorted({r.label for r in named})
            return question_sheet(
                self.parent, "Name Machine",
                f"{len(named)} run{'s' * (len(named) != 1)} of this machine carr"
                f"{'ies' if len(named) == 1 else 'y'} another name: "
                f"{', '.join(f'“{t}”' for t in theirs[:3])}"
                f"{' and more' if len(theirs) > 3 else ''}.",
                "Imported runs keep the name they came with unless you rename them too.",
                "Rename Them Too", lambda: apply(label, True),
                otherwise=lambda: apply(label, False))

        def apply(label: str, others: bool) -> None:
            from siliconbench.core.store import StoreError
            try:
                n = self.results.rename_machine(label, records, others=others)
            except ValueError as e:       # a name too long (label_problem)
                return refused(str(e))
            except NotReadable as e:      # machine-names.json: a FIFO, a folder, too large
                return refused(f"The machine was not named: {e}")
            except OSError as e:          # a full disk, a read-only folder
                return refused("The machine was not named: SiliconBench could not write "
                               f"{names_path()}: {e.strerror or e}.")
            except StoreError as e:       # the names file is written; the store is not
                return refused(f"Its runs were not renamed: {e}")
            self.status.showMessage(f"Named the machine on {n} runs.", 5000)
        dialog.textValueSelected.connect(rename)
        return open_sheet(self.parent, dialog)

    def confirm_delete(self) -> QMessageBox | None:
        """Ask in a sheet (window-modal, not blocking the event loop); delete on its Delete
        button. Returns the open box (None with nothing selected)."""
        from PySide6.QtWidgets import QMessageBox
        records = self._selected("Delete Runs", "Select the runs to delete under Results first.")
        if not records:
            return None
        n = len(records)

        def delete() -> None:
            deleted = self.results.delete(records)
            self.redraw(self.results.selected_records())  # not the deleted runs
            self.status.showMessage(f"Deleted {deleted} run{'s' * (deleted != 1)}.", 5000)
        return question_sheet(self.parent, "Delete Runs",
                              f"Delete {n} run{'s' * (n != 1)} from the results store?",
                              "This cannot be undone; export them first to keep a copy.",
                              "Delete", delete, QMessageBox.ButtonRole.DestructiveRole)
