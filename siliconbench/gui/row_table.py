"""The table of result rows for the runs being looked at: every value with its p25–p75, the
confidence interval of the median, the sample count, % of peak ("peak unknown" when it is) and
the row's flags in words."""

from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from siliconbench.core.numbers import (NOT_MEASURED, ci_text, metric_title, peak_text, spread_text,
                          value_text)
from siliconbench.core.results import RunRecord
from siliconbench.gui.row_text import flags_explained, flags_text, is_serious
from siliconbench.gui.theme import LIGHT, Theme

FIXED = ["Run", "Device"]
UNTRUSTED = "power not trusted"
UNTRUSTED_WHY = ("Not shown: this power was not measured over the point by the device's energy "
                 "counter (or enough samples inside it); an older run's was one sample, often "
                 "taken while the device idled.")
STATS = ["Metric", "Value", "p25–p75", "95% CI", "n", "% of peak", "Flags", "Note"]


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
        point_keys: list[str] = []
        for rec in records:
            for row in rec.rows:
                point_keys += [k for k in row.params if k not in point_keys]
        header = FIXED + point_keys + STATS
        lines = [(rec, row) for rec in records for row in rec.rows]
        self.setRowCount(len(lines))
        self.setColumnCount(len(header))
        self.setHorizontalHeaderLabels(header)
        from siliconbench.core.telemetry import power_trusted
        for i, (rec, row) in enumerate(lines):
            trusted = power_trusted(row)
            cells = [rec.identity, f"{rec.device_name or rec.device} ({rec.framework} "
                                   f"{rec.device})"]
            cells += [str(row.params.get(k, "")) for k in point_keys]
            cells += [metric_title(row.metric), value_text(row) if trusted else NOT_MEASURED,
                      spread_text(row), ci_text(row),
                      str(row.stats.n) if row.stats and row.value is not None else "",
                      peak_text(row), flags_text(row) if trusted else UNTRUSTED,
                      row.note or ""]
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if not trusted and header[j] in ("Value", "Flags"):
                    item.setToolTip(UNTRUSTED_WHY + (f" It read {value_text(row)}."
                                                     if row.value is not None else ""))
                    item.setForeground(QColor(self.theme.warning))
                elif header[j] in ("Flags", "Note") and row.flags:
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
