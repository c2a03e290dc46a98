"""One run in full (Results: double-click, or Show Details… in its context menu): the machine,
the software, the settings and parameters it ran with, every row with its spread, and its
warnings; Copy puts the same as text on the clipboard. Also the Copy of selected table rows."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (QAbstractItemView, QDialog, QDialogButtonBox, QLabel,
                               QPlainTextEdit, QVBoxLayout, QWidget)

from core.results import RunRecord
from gui.row_table import RowTable


def _pairs(title: str, d: dict) -> list[str]:
    if not d:
        return []
    lines = [title]
    for key, value in d.items():
        if value is None:
            continue  # not known on this machine: a line of "null" says nothing
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        lines.append(f"  {key}: {text}")
    return lines


def record_text(rec: RunRecord) -> str:
    """The run as plain text: what Copy puts on the clipboard."""
    from gui.results_browser import device_text, local_time, workload_title
    lines = [f"{workload_title(rec.workload)} on {device_text(rec)}",
             f"Run {rec.id} · {local_time(rec.created_at)} · {rec.machine_label} · "
             f"status {rec.status}" + (f": {rec.reason}" if rec.reason else "")]
    if rec.warnings:
        lines += ["Warnings"] + [f"  {w}" for w in rec.warnings]
    lines += _pairs("Parameters", rec.params)
    lines += _pairs("Machine", rec.machine)
    lines += _pairs("Software", rec.software)
    lines += _pairs("Settings", rec.settings)
    table = RowTable()
    table.set_records([rec])
    lines += ["Results", table_text(table, range(table.rowCount()))]
    return "\n".join(lines)


def table_text(view: QAbstractItemView, rows) -> str:
    """Rows of any table as tab-separated text under its header (what a spreadsheet pastes)."""
    model = view.model()
    columns = [c for c in range(model.columnCount())
               if not getattr(view, "isColumnHidden", lambda _: False)(c)]
    header = [str(model.headerData(c, Qt.Orientation.Horizontal) or "") for c in columns]
    lines = ["\t".join(header)]
    for r in rows:
        lines.append("\t".join(str(model.data(model.index(r, c)) or "") for c in columns))
    return "\n".join(lines)


def copy_selected_rows(view: QAbstractItemView) -> int:
    """Copies the selected rows of a table as text; returns how many."""
    rows = sorted({i.row() for i in view.selectionModel().selectedIndexes()})
    if rows:
        QGuiApplication.clipboard().setText(table_text(view, rows))
    return len(rows)


class RunDetail(QDialog):
    def __init__(self, rec: RunRecord, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from gui.results_browser import workload_title
        self.record = rec
        self.setWindowTitle(f"{workload_title(rec.workload)} · {rec.device_label}")
        self.text = QPlainTextEdit(record_text(rec))
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.rows = RowTable()
        self.rows.set_records([rec])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = buttons.addButton("Copy", QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.clicked.connect(self.copy)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Results"))
        layout.addWidget(self.rows, 1)
        layout.addWidget(QLabel("Everything the run recorded"))
        layout.addWidget(self.text, 2)
        layout.addWidget(buttons)
        self.resize(900, 640)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text.toPlainText())
