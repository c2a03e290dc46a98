"""File > Import Results… and the exports (selected runs as CSV or JSON, the chart shown as
PNG or SVG), with their file dialogs: ImportExport, given what it reads and writes. Every file
dialog is a sheet on the Mac: window-modal and opened with open(), so the event loop (live
runs, charts) goes on while it is up, and owned by its parent (alive while open)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from siliconbench.core.results import RunRecord, read_result_files
from siliconbench.gui import settings as prefs
from siliconbench.gui.sheets import file_dialog, message_sheet

if TYPE_CHECKING:  # imported when a dialog opens, after the first paint (siliconbench/gui/sheets.py)
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QFileDialog, QMessageBox, QStatusBar, QWidget

    from siliconbench.core.run_store import RunStore
    from siliconbench.gui.charts.panel import ChartPanel
    from siliconbench.gui.results_browser import ResultsBrowser

RESULT_FILTER = "SiliconBench results (*.sbresults *.json);;All files (*)"


class ImportExport:
    """Imports go into `store` and are shown in `results` (`show_results` brings its
    tab forward); exports write the runs selected there or the chart `charts()` shows (built
    on first use). Dialogs and messages are sheets over `parent`, what was done is said in
    `status`, and `settings` keeps the folder last used."""

    def __init__(self, parent: QWidget, settings: QSettings, status: QStatusBar, store: RunStore,
                 results: ResultsBrowser, show_results: Callable[[], None],
                 charts: Callable[[], ChartPanel]) -> None:
        self.parent, self.settings, self.status = parent, settings, status
        self.store, self.results, self.show_results = store, results, show_results
        self.charts = charts

    def _say(self, title: str, text: str, icon: QMessageBox.Icon | None = None) -> None:
        """A sheet (siliconbench.gui.sheets): a warning unless another icon is given."""
        message_sheet(self.parent, title, text, icon)

    def ask_save_path(self, title: str, file_name: str, file_filter: str,
                      save: Callable[[str], object]) -> QFileDialog:
        """A save dialog in the last folder used; the chosen folder is remembered."""
        def chosen(paths: list[str], _filter: str) -> None:
            if paths:
                prefs.remember_dir(self.settings, paths[0])
                save(paths[0])
        start = str(Path(prefs.last_dir(self.settings)) / file_name)
        return file_dialog(self.parent, title, start, file_filter, chosen, save=True)

    def choose_import(self) -> QFileDialog:
        def chosen(paths: list[str], _filter: str) -> None:
            if paths:
                prefs.remember_dir(self.settings, paths[0])
                self.import_files(paths)
        return file_dialog(self.parent, "Import Results", prefs.last_dir(self.settings),
                           RESULT_FILTER, chosen, many=True)

    def import_files(self, paths: list[str]) -> bool:
        """Every file that is a result file is imported; each one that is not is named in a
        sentence of its own. True when every file was imported."""
        records, refused = read_result_files(paths, name=lambda p: Path(p).name)
        if refused and len(refused) == len(paths):
            return self._refuse_import("\n".join(refused))
        if not records and not refused:
            return self._refuse_import("The files hold no runs.")
        done = self.store.import_records(records)
        # The selection is the user's, unless Preferences says to select new runs.
        self.results.reload()
        if prefs.selects_new_runs(self.settings):
            self.results.select_ids({r.id for r in records})
        self.show_results()
        note = done.summary(len(refused))
        self.status.showMessage(note, 8000)
        if refused:
            self._say("Some files were not imported", "\n".join([*refused, note]))
            return False
        return True

    def _refuse_import(self, text: str) -> bool:
        self._say("Nothing was imported", text)
        return False

    def choose_export_runs(self, fmt: str) -> QFileDialog | None:
        from PySide6.QtWidgets import QMessageBox
        records = self.results.selected_records()
        if not records:
            self._say("Nothing to export", "Select runs under Results to export them.",
                      QMessageBox.Icon.Information)
            return None
        kind = "SiliconBench results" if fmt == "sbresults" else fmt.upper()
        return self.ask_save_path(f"Export Runs as {kind}", f"siliconbench-runs.{fmt}",
                                  f"{kind} files (*.{fmt})",
                                  lambda path: self.export_runs(
                                      path, records, "json" if fmt == "sbresults" else fmt))

    def export_runs(self, path: str, records: list[RunRecord] | None = None,
                    fmt: str | None = None) -> bool:
        """Writes the format the file name says; without a known extension, `fmt` (the one the
        menu entry chose), so "runs" from the JSON entry is JSON, not CSV."""
        from siliconbench.core.export import FORMAT_BY_SUFFIX, to_csv, to_json
        from siliconbench.core.files import write_atomic
        records = records if records is not None else self.results.selected_records()
        fmt = FORMAT_BY_SUFFIX.get(Path(path).suffix.lower()) or fmt or "csv"
        text = to_json(records) if fmt == "json" else to_csv(records)
        try:
            write_atomic(path, text)  # a full disk leaves the old file as it was
        except OSError as e:
            self._say("Export failed", f"Cannot write {path}: {e.strerror or e}.")
            return False
        self.status.showMessage(f"Exported {len(records)} runs to {path}.", 8000)
        return True

    def choose_export_chart(self, fmt: str) -> QFileDialog | None:
        from PySide6.QtWidgets import QMessageBox
        charts = self.charts()
        if not charts.can_export():
            self._say("Nothing to export", "Show a chart with data first (select runs under "
                      "Results, or run one).", QMessageBox.Icon.Information)
            return None
        name = charts.tabText(charts.currentIndex()).lower()
        return self.ask_save_path(f"Export Chart as {fmt.upper()}",
                                  f"siliconbench-{name}.{fmt}", f"{fmt.upper()} images (*.{fmt})",
                                  self.export_chart)

    def export_chart(self, path: str) -> bool:
        try:
            self.charts().export_chart(path)
        except (OSError, ValueError) as e:
            self._say("Export failed", f"Cannot export the chart to {path}: {e}")
            return False
        self.status.showMessage(f"Chart saved to {path}.", 8000)
        return True
