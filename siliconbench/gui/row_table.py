"""The table of result rows for the runs being looked at: every value with its p25–p75, the
confidence interval of the median, the sample count, % of peak ("peak unknown" when it is) and
the row's flags in words. Its columns are siliconbench.core.columns's, as the CSV export's and
the terminal's are."""

from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from siliconbench.core.columns import SHOWN, app_heading, point_keys
from siliconbench.core.numbers import value_text
from siliconbench.core.results import UNTRUSTED_POWER, RunRecord, doubtful_flags, power_doubt
from siliconbench.gui.row_text import flags_explained, flags_text, is_serious
from siliconbench.gui.theme import LIGHT, Theme

FIXED = ["Run", "Device"]


def rows_height(view, rows: list[int], scroll_bar: bool) -> int:
    """The height that shows a table view's header and rows of these heights, with room for
    its horizontal scroll bar where `scroll_bar`."""
    bar = view.horizontalScrollBar().sizeHint().height() if scroll_bar else 0
    return view.horizontalHeader().sizeHint().height() + sum(rows) + 2 * view.frameWidth() + bar


def one_row_height(view) -> int:
    """The least height of a table view that still shows a row under its header, whether or
    not its scroll bar is shown: what it keeps when the window is at its smallest."""
    row = view.rowHeight(0) if view.model() is not None and view.model().rowCount() else \
        view.verticalHeader().defaultSectionSize()
    return rows_height(view, [row], True)


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
        for i, (rec, row) in enumerate(lines):
            # siliconbench.core.results.power_doubt: the value a dash (columns.shown_value),
            # the flag as the CSV and the terminal say it, why on hover.
            doubt = power_doubt(row)
            texts = {c.key: c.text(row) for c in SHOWN}
            texts["flags"] = UNTRUSTED_POWER if doubt else flags_text(row)  # explained on hover
            cells = [rec.identity, rec.device_text]
            cells += [str(row.params.get(k, "")) for k in keys] + list(texts.values())
            for j, (text, key) in enumerate(zip(cells, shown)):
                item = QTableWidgetItem(text)
                if doubt and key in ("value", "flags"):
                    item.setToolTip(doubt[:1].upper() + doubt[1:] + "." + (
                        f" It read {value_text(row)}." if row.value is not None else ""))
                    item.setForeground(QColor(self.theme.warning))
                elif key in ("flags", "note") and row.flags:
                    item.setToolTip(flags_explained(row) + (f"\n{row.note}" if row.note
                                                            else ""))
                    # Marks of trust (energy counter) are no warning: only doubts are painted.
                    if doubtful_flags(row):
                        item.setForeground(QColor(self.theme.error if is_serious(row)
                                                  else self.theme.warning))
                self.setItem(i, j, item)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.set_records(self._records)
