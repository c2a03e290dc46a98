"""File > Import Results… and the exports (selected runs as CSV or JSON, the chart shown as
PNG or SVG), with their file dialogs. Every file dialog is a sheet on the Mac: window-modal and
opened with open(), so the event loop (live runs, charts) goes on while it is up, and owned by
its parent (alive while open)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from siliconbench.core.results import RunRecord, read_result_files
from siliconbench.gui import settings as prefs

if TYPE_CHECKING:  # imported when a dialog opens, after the first paint (siliconbench/gui/sheets.py)
    from PySide6.QtWidgets import QFileDialog, QWidget

RESULT_FILTER = "SiliconBench results (*.sbresults *.json);;All files (*)"


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
    from PySide6.QtCore import Qt   # not before the first paint (siliconbench/gui/qt_values.py)
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.accepted.connect(lambda: chosen(dialog.selectedFiles(), dialog.selectedNameFilter()))
    dialog.open()
    return dialog


def ask_save_path(window, title: str, file_name: str, file_filter: str,
                  save: Callable[[str], object]) -> QFileDialog:
    """A save dialog in the last folder used; the chosen folder is remembered."""
    def chosen(paths: list[str], _filter: str) -> None:
        if paths:
            prefs.remember_dir(window.settings, paths[0])
            save(paths[0])
    start = str(Path(prefs.last_dir(window.settings)) / file_name)
    return file_dialog(window, title, start, file_filter, chosen, save=True)


def choose_import(window) -> QFileDialog:
    def chosen(paths: list[str], _filter: str) -> None:
        if paths:
            prefs.remember_dir(window.settings, paths[0])
            import_files(window, paths)
    return file_dialog(window, "Import Results", prefs.last_dir(window.settings),
                       RESULT_FILTER, chosen, many=True)


def import_files(window, paths: list[str]) -> bool:
    """Every file that is a result file is imported; each one that is not is named in a
    sentence of its own. True when every file was imported."""
    records, refused = read_result_files(paths, name=lambda p: Path(p).name)
    if refused and len(refused) == len(paths):
        return _refuse_import(window, "\n".join(refused))
    if not records and not refused:
        return _refuse_import(window, "The files hold no runs.")
    done = window.store.import_records(records)
    window.results.reload(keep_selection=False)
    window.results.select_ids({r.id for r in records})
    window.bottom.setCurrentWidget(window.results)
    note = done.summary(len(refused))
    window.statusBar().showMessage(note, 8000)
    if refused:
        window.show_message("Some files were not imported", "\n".join([*refused, note]))
        return False
    window.last_message = note
    return True


def _refuse_import(window, text: str) -> bool:
    window.show_message("Nothing was imported", text)
    return False


def choose_export_runs(window, fmt: str) -> QFileDialog | None:
    from PySide6.QtWidgets import QMessageBox
    records = window.results.selected_records()
    if not records:
        window.show_message("Nothing to export", "Select runs under Results to export them.",
                            QMessageBox.Icon.Information)
        return None
    kind = "SiliconBench results" if fmt == "sbresults" else fmt.upper()
    return ask_save_path(window, f"Export Runs as {kind}", f"siliconbench-runs.{fmt}",
                         f"{kind} files (*.{fmt})",
                         lambda path: export_runs(window, path, records,
                                                  "json" if fmt == "sbresults" else fmt))


def export_runs(window, path: str, records: list[RunRecord] | None = None,
                fmt: str | None = None) -> bool:
    """Writes the format the file name says; without a known extension, `fmt` (the one the
    menu entry chose), so "runs" from the JSON entry is JSON, not CSV."""
    from siliconbench.core.export import FORMAT_BY_SUFFIX, to_csv, to_json
    from siliconbench.core.files import write_atomic
    records = records if records is not None else window.results.selected_records()
    fmt = FORMAT_BY_SUFFIX.get(Path(path).suffix.lower()) or fmt or "csv"
    text = to_json(records) if fmt == "json" else to_csv(records)
    try:
        write_atomic(path, text)  # a full disk leaves the old file as it was
    except OSError as e:
        window.show_message("Export failed", f"Cannot write {path}: {e.strerror or e}.")
        return False
    window.statusBar().showMessage(f"Exported {len(records)} runs to {path}.", 8000)
    return True


def choose_export_chart(window, fmt: str) -> QFileDialog | None:
    from PySide6.QtWidgets import QMessageBox
    chart = window.charts.current_chart()
    if chart is None or not chart.has_data():
        window.show_message("Nothing to export", "Show a chart with data first (select runs "
                            "under Results, or run one).", QMessageBox.Icon.Information)
        return None
    name = window.charts.tabText(window.charts.currentIndex()).lower()
    return ask_save_path(window, f"Export Chart as {fmt.upper()}", f"siliconbench-{name}.{fmt}",
                         f"{fmt.upper()} images (*.{fmt})",
                         lambda path: export_chart(window, path))


def export_chart(window, path: str) -> bool:
    try:
        window.charts.export_chart(path)
    except (OSError, ValueError) as e:
        window.show_message("Export failed", f"Cannot export the chart to {path}: {e}")
        return False
    window.statusBar().showMessage(f"Chart saved to {path}.", 8000)
    return True
