"""One run in full (Results: double-click, or Show Details… in its context menu): the machine,
the software, the settings and parameters it ran with, every row with its spread, and its
warnings; Copy puts the same as text on the clipboard. Also the Copy of selected table rows."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from siliconbench.core.numbers import number, quantity
from siliconbench.core.results import RunRecord
from siliconbench.gui.row_table import INTERVAL, RowTable

# Units a recorded field's name implies, by its ending: memory_bytes is a size, min_time_s
# seconds. Fields are printed with them rather than as raw numbers.
_FIELD_UNITS = (("_bytes", "bytes"), ("_gb_per_s", "GB/s"), ("gb_per_s", "GB/s"),
                ("_mhz", "MHz"), ("_w", "W"), ("_j", "J"), ("_c", "°C"), ("_percent", "%"),
                ("_s", "s"))


def field_value(key: str, value) -> str:
    """A recorded field's value as a person reads it: '126 GB' for memory_bytes, '0.02 s'
    for min_block_s, 'yes' for true, a list joined by commas; never 25276514304."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        unit = next((u for end, u in _FIELD_UNITS if key.endswith(end)), "")
        if unit == "%":
            return f"{number(value)}%"
        if unit:
            return quantity(value, unit)
        # A count or a size as given: '4096, 8192', never '4,096, 8,192' in a list.
        return str(value) if isinstance(value, int) else number(value)
    if isinstance(value, list):
        return ", ".join(field_value(key, v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _pairs(title: str, d: dict) -> list[str]:
    if not d:
        return []
    lines = [title]
    for key, value in d.items():
        if value is None or value == {}:
            continue  # not known on this machine: a line of "null" says nothing
        lines.append(f"  {key}: {field_value(key, value)}")
    return lines


def _sections(rec: RunRecord) -> list[tuple[str, dict]]:
    from siliconbench.gui.results_browser import device_text, local_time
    run = {"id": rec.id, "when": local_time(rec.created_at), "device": device_text(rec),
           "machine": rec.machine_label, "status": rec.status + (f": {rec.reason}"
                                                                  if rec.reason else ""),
           "source": rec.source}
    return [("Run", run), ("Warnings", {str(i + 1): w for i, w in enumerate(rec.warnings)}),
            ("Parameters", rec.params), ("Machine", rec.machine), ("Software", rec.software),
            ("Settings", rec.settings), ("Telemetry summary", (rec.telemetry or {}).get(
                "summary") or {}), ("Provenance", rec.provenance or {})]


# A telemetry series' summary ({"unit": "bytes", "mean": ..., "min", "max", "n"}): the
# fields that read in its unit ('619 MB', never 649,461,760); n stays a count.
_IN_ITS_UNIT = ("mean", "min", "max")


def derived_line(d: dict) -> tuple[str, str, str]:
    """A row the telemetry derived (a point's power, its efficiency, the run's hottest
    temperature) as (what and where, its value with its marks of trust, its note): the
    table's columns, with the doubt of an untrusted power in words where the JSON showed the
    power as measured and its flags empty."""
    from siliconbench.core.numbers import metric_title, value_text
    from siliconbench.core.results import FLAGS, TRUST_FLAGS, Row, power_doubt, shown_flags
    row = Row.from_dict(d)
    where = ", ".join(f"{k}={v}" for k, v in row.params.items())
    what = metric_title(row.metric) + (f" · {where}" if where else "")
    doubt = power_doubt(row)
    marks = [f"✓ {FLAGS[f]}" if f in TRUST_FLAGS else f.replace("_", " ")
             for f in shown_flags(row) if f != doubt]
    shown = "—" if doubt or row.value is None else value_text(row)
    return what, " · ".join([shown, *([f"⚠ {doubt}"] if doubt else []), *marks]), \
        row.note or ""


def _add_derived(parent: QTreeWidgetItem, rows: list) -> None:
    for d in rows:
        try:
            what, value, note = derived_line(d)
        except (KeyError, TypeError, ValueError, AttributeError):
            what, value, note = "row", field_value("derived", d), ""
        item = QTreeWidgetItem(parent, [what, value])
        item.setToolTip(1, "\n".join(x for x in (value, note) if x))
        if note:
            QTreeWidgetItem(item, ["note", note]).setToolTip(1, note)


def _add_fields(parent: QTreeWidgetItem, d: dict) -> None:
    unit = d.get("unit") if isinstance(d.get("unit"), str) else None
    for key, value in d.items():
        if value is None or value == {} or value == []:
            continue
        if key == "derived" and isinstance(value, list) \
                and all(isinstance(v, dict) for v in value):
            # The rows the telemetry derived: a table of its own (derived_line), not JSON.
            _add_derived(QTreeWidgetItem(parent, ["derived rows", f"{len(value)}"]), value)
            continue
        if isinstance(value, dict):
            text = ""
        elif unit and key in _IN_ITS_UNIT and isinstance(value, (int, float)) \
                and not isinstance(value, bool):
            text = quantity(value, unit)
        else:
            text = field_value(str(key), value)
        item = QTreeWidgetItem(parent, [str(key).replace("_", " "), text])
        item.setToolTip(1, item.text(1))
        if isinstance(value, dict):
            _add_fields(item, value)


class FieldTree(QTreeWidget):
    """Everything a run recorded as a real table: a section per kind (parameters, machine,
    software, settings...), a field and its value in units on each line, nested settings as
    branches, long values wrapped; it replaced text aligned with spaces in a proportional
    font, where values sat under the wrong headers."""

    def __init__(self, rec: RunRecord, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setColumnCount(2)
        self.setHeaderLabels(["Field", "Value"])
        self.setWordWrap(True)
        self.setUniformRowHeights(False)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.header().setStretchLastSection(True)
        for title, fields in _sections(rec):
            if not fields:
                continue
            section = QTreeWidgetItem(self, [title])
            font = section.font(0)
            font.setBold(True)
            section.setFont(0, font)
            section.setFirstColumnSpanned(True)
            _add_fields(section, fields)
        self.expandAll()
        self.resizeColumnToContents(0)
        self.setColumnWidth(0, min(self.columnWidth(0) + 16, 280))

    def field(self, section: str, key: str) -> str | None:
        """The value shown for a field (key as recorded), or None."""
        for i in range(self.topLevelItemCount()):
            top = self.topLevelItem(i)
            if top.text(0) != section:
                continue
            for j in range(top.childCount()):
                if top.child(j).text(0) == key.replace("_", " "):
                    return top.child(j).text(1)
        return None


def record_text(rec: RunRecord) -> str:
    """The run as plain text: what Copy puts on the clipboard."""
    from siliconbench.gui.results_browser import device_text, local_time, workload_title
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
    table.fold_intervals = False       # the text keeps every interval's figure
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
        from siliconbench.gui.results_browser import workload_title
        self.record = rec
        self.setWindowTitle(f"{workload_title(rec.workload)} · {rec.device_label}")
        self.fields = FieldTree(rec)
        self.rows = RowTable()
        self.rows.set_records([rec])
        # One run: its name is the dialog's title; the columns show what each row measured.
        for j in range(self.rows.columnCount()):
            if self.rows.horizontalHeaderItem(j).text() in ("Run", "Device"):
                self.rows.setColumnHidden(j, True)
        # A note is read whole: wrapped in its column (the last, which takes the room left)
        # and the row as tall as it, never elided.
        self.rows.setWordWrap(True)
        self.rows.horizontalHeader().sectionResized.connect(
            lambda *_: self.rows.resizeRowsToContents())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = buttons.addButton("Copy", QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.clicked.connect(self.copy)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Results"))
        # A sustained run's interval rows are one line (RowTable.fold_intervals) until asked.
        intervals = sum(row.metric == INTERVAL for row in rec.rows)
        self.each_interval = QCheckBox(f"Show each interval's row ({intervals})")
        self.each_interval.toggled.connect(self._show_each_interval)
        self.each_interval.setVisible(bool(intervals))
        layout.addWidget(self.each_interval)
        layout.addWidget(self.rows, 1)
        layout.addWidget(QLabel("Everything the run recorded"))
        layout.addWidget(self.fields, 2)
        layout.addWidget(buttons)
        self.resize(1000, 680)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.rows.resizeRowsToContents()   # the Note column has its width now

    def _show_each_interval(self, each: bool) -> None:
        self.rows.fold_intervals = not each
        self.rows.set_records([self.record])
        self.rows.resizeRowsToContents()

    def plain_text(self) -> str:
        """The run as text: what Copy puts on the clipboard."""
        return record_text(self.record)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.plain_text())
