"""The table of result rows for the runs being looked at: every value with its p25–p75, the
confidence interval of the median, the sample count, % of peak ("peak unknown" when it is) and
the row's flags in words. Its columns are siliconbench.core.columns's, as the CSV export's and
the terminal's are."""

from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from siliconbench.core.columns import SHOWN, app_heading, point_keys
from siliconbench.core.numbers import interval, value_text
from siliconbench.core.results import (
    UNTRUSTED_POWER,
    Row,
    RunRecord,
    doubtful_flags,
    power_doubt,
)
from siliconbench.gui.row_text import flags_explained, flags_text, is_serious
from siliconbench.gui.theme import LIGHT, Theme

FIXED = ["Run", "Device"]
INTERVAL = "interval"     # a sustained run's figure per interval (siliconbench.core.telemetry)


def folded(rec: RunRecord) -> list[tuple[Row, str | None]]:
    """The run's rows with each sustained measurement's interval rows (a hundred and more in
    ten minutes) folded into one line at the place of its first: (row, None) for a row as
    it is; (a row standing for the folded ones, the value cell's text: their range)."""
    groups: dict[tuple, list[Row]] = {}
    for row in rec.rows:
        if row.metric == INTERVAL:
            groups.setdefault(_point_of(row), []).append(row)
    out: list[tuple[Row, str | None]] = []
    for row in rec.rows:
        if row.metric != INTERVAL:
            out.append((row, None))
            continue
        rows = groups.get(_point_of(row))
        if not rows or rows[0] is not row:
            continue
        values = [r.value for r in rows if isinstance(r.value, (int, float))]
        times = [float(t) for r in rows if isinstance(t := r.params.get("t_s"), (int, float))]
        at = f" (at {times[0]:g} s to {times[-1]:g} s)" if times else ""
        note = (f"{len(rows)} interval figures{at}, folded here: the Sustained chart draws "
                "them, and Run Details lists each.")
        value = f"{interval(min(values), max(values), row.unit)} {row.unit}" if values else ""
        out.append((Row(INTERVAL, None, row.unit, dict(_point_of(row)), note=note), value))
    return out


def _point_of(row: Row) -> tuple:
    return tuple((k, v) for k, v in row.params.items() if k != "t_s")


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
        # A sustained run's interval rows as one line per measurement (folded); False: each.
        self.fold_intervals = True

    def set_records(self, records: list[RunRecord]) -> None:
        self._records = records
        lines = [(rec, row, value) for rec in records for row, value in (
            folded(rec) if self.fold_intervals else [(r, None) for r in rec.rows])]
        keys = point_keys(row for _, row, _ in lines)
        header = FIXED + keys + [app_heading(c.heading) for c in SHOWN]
        shown = [None] * (len(FIXED) + len(keys)) + [c.key for c in SHOWN]  # each column's key
        self.setRowCount(len(lines))
        self.setColumnCount(len(header))
        self.setHorizontalHeaderLabels(header)
        for i, (rec, row, value) in enumerate(lines):
            # siliconbench.core.results.power_doubt: the value a dash (columns.shown_value),
            # the flag as the CSV and the terminal say it, why on hover.
            doubt = power_doubt(row)
            texts = {c.key: c.text(row) for c in SHOWN}
            texts["flags"] = UNTRUSTED_POWER if doubt else flags_text(row)  # explained on hover
            if value is not None:        # the folded interval rows: their range
                texts["value"] = value
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
