"""The table of result rows for the runs being looked at: every value with its p25–p75, the
confidence interval of the median, the sample count, % of peak ("peak unknown" when it is) and
the row's flags in words. Its columns are siliconbench.core.columns's, as the CSV export's and
the terminal's are."""

from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from siliconbench.core.columns import SHOWN, app_heading, point_keys
from siliconbench.core.numbers import NOT_MEASURED, value_text
from siliconbench.core.results import RunRecord
from siliconbench.gui.row_text import flags_explained, flags_text, is_serious
from siliconbench.gui.theme import LIGHT, Theme

FIXED = ["Run", "Device"]
UNTRUSTED = "power not trusted"
UNTRUSTED_WHY = ("Not shown: this power was not measured over the point by the device's energy "
                 "counter (or enough samples inside it); an older run's was one sample, often "
                 "taken while the device idled.")


class RowTable(QTableWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.theme = LIGHT
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.verticalHeader().hide()
        self.setSortingEnabled(False)
        self._records: list[RunRecord] = []

    def set_records(self, records: list[RunRecord]) -> None:
        self._records = records
        keys = point_keys(row for rec in records for row in rec.rows)
        header = FIXED + keys + [app_heading(c.heading) for c in SHOWN]
        shown = [None] * (len(FIXED) + len(keys)) + [c.key for c in SHOWN]  # each column's key
        lines = [(rec, row) for rec in records for row in rec.rows]
        self.setRowCount(len(lines))
        self.setColumnCount(len(header))
        self.setHorizontalHeaderLabels(header)
        from siliconbench.core.telemetry import power_trusted
        for i, (rec, row) in enumerate(lines):
            trusted = power_trusted(row)
            texts = {c.key: c.text(row) for c in SHOWN}
            texts["flags"] = flags_text(row)                 # in words, explained on hover
            if not trusted:
                texts.update(value=NOT_MEASURED, flags=UNTRUSTED)
            cells = [rec.identity, f"{rec.device_name or rec.device} ({rec.framework} "
                                   f"{rec.device})"]
            cells += [str(row.params.get(k, "")) for k in keys] + list(texts.values())
            for j, (text, key) in enumerate(zip(cells, shown)):
                item = QTableWidgetItem(text)
                if not trusted and key in ("value", "flags"):
                    item.setToolTip(UNTRUSTED_WHY + (f" It read {value_text(row)}."
                                                     if row.value is not None else ""))
                    item.setForeground(QColor(self.theme.warning))
                elif key in ("flags", "note") and row.flags:
                    item.setToolTip(flags_explained(row) + (f"\n{row.note}" if row.note
                                                            else ""))
                    item.setForeground(QColor(self.theme.error if is_serious(row)
                                              else self.theme.warning))
                self.setItem(i, j, item)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.set_records(self._records)
