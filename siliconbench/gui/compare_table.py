"""The Compare tab's verdict table filled from a comparison (siliconbench.core.compare_words's
words): each side's value and each other side's verdict, best vs best rows under them, the
columns capped and elided with the whole text on hover, verdicts coloured."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem

from siliconbench.core.compare_stats import Comparison
from siliconbench.core.compare_words import (
    FIXED,
    best_row_texts,
    best_value_tip,
    column_baseline,
    row_texts,
    side_letter,
    table_bests,
    unshared,
    value_tip,
    verdict_header_tip,
    verdict_tip,
)
from siliconbench.core.numbers import ratio
from siliconbench.core.report import best_words, verdict_class
from siliconbench.gui.compare_parts import (
    BEST_POINT_W,
    BEST_TIP,
    FIXED_W,
    MAX_VALUE_W,
    MAX_VERDICT_W,
)
from siliconbench.gui.theme import Theme


def fill_table(table: QTableWidget, cmp: Comparison | None, header: list[str],
               theme: Theme) -> None:
    """The verdict table: a row per compared point, then the best vs best rows where two
    sides share no point; each text whole on hover, each column capped and elided."""
    table.clear()
    table.setColumnCount(len(header))
    table.setHorizontalHeaderLabels(header)
    for i, side in enumerate(cmp.sides if cmp else []):
        table.horizontalHeaderItem(len(FIXED) + i).setToolTip(side.label)
        if i:
            table.horizontalHeaderItem(len(FIXED) + len(cmp.sides) + i - 1).setToolTip(
                verdict_header_tip(cmp.sides, i, cmp.rows))
    rows = cmp.rows if cmp else []
    bests = table_bests(cmp) if cmp else []
    # Each verdict column's baseline, as its header names it.
    bases = [column_baseline(rows, k) for k in range(len(cmp.sides))] if cmp else []
    table.setRowCount(len(rows) + len(bests))
    for i, r in enumerate(rows):
        values = len(FIXED) + len(r.cells)   # the first verdict's column
        for j, text in enumerate(row_texts(r, bases)):
            item = QTableWidgetItem(text)
            item.setToolTip(text)   # the whole text where the column elides it
            if j >= values:
                k = j - values + 1
                cell = r.cells[k]
                style_verdict(item, theme, cell.verdict if cell else None)
                if cell is not None:
                    item.setToolTip(verdict_tip(r, k, bases[k]))
            elif j >= len(FIXED) and r.cells[j - len(FIXED)] is not None:
                item.setToolTip(value_tip(cmp.sides[j - len(FIXED)], r, j - len(FIXED)))
            table.setItem(i, j, item)
    # Under them, each side's best where two sides share no point: a ratio of values
    # at their own points, no test (so no verdict's colour).
    for i, b in enumerate(bests, start=len(rows)):
        values = len(FIXED) + len(b.cells)
        said = unshared(cmp, b)
        for j, text in enumerate(best_row_texts(b, bases, said)):
            item = QTableWidgetItem(text)
            item.setToolTip(text)
            k = j - values + 1 if j >= values else j - len(FIXED)
            if j >= values:
                style_verdict(item, theme, None)
                if k in said:
                    item.setToolTip(f"{text}\n{side_letter(k)} vs "
                                    f"{side_letter(b.baseline)}: {best_words(b, k)}\n"
                                    f"Ratio of values: {ratio(b.cells[k].ratio)}")
            elif j >= len(FIXED) and b.cells[k] is not None:
                item.setToolTip(best_value_tip(cmp.sides[k], b, k))
            elif j == FIXED.index("Point"):
                item.setToolTip(f"{text}\n{BEST_TIP}")
            table.setItem(i, j, item)
    # A side that shares no row (a reference of another workload) takes no room.
    n = len(cmp.sides) if cmp else 0
    for j in range(len(header)):
        table.setColumnHidden(j, False)
    for k in range(n):
        if not any(r.cells[k] is not None for r in [*rows, *bests]):
            table.setColumnHidden(len(FIXED) + k, True)
            if k:
                table.setColumnHidden(len(FIXED) + n + k - 1, True)
    # One workload, one metric: the chart's list names them; their columns give the
    # sides room (five sides scrolled sideways beside 'Throughput (TFLOPS)' on each row).
    shown = [*rows, *bests]
    table.setColumnHidden(0, len({r.workload for r in shown}) == 1)
    table.setColumnHidden(1, len({(r.metric, r.unit) for r in shown}) == 1)
    head = table.horizontalHeader()
    # Each column as wide as its text up to a cap, then elided ('…'), whole on hover:
    # with ten sides, wrapping made 'no statis… publis… figure' of every verdict.
    head.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    table.resizeColumnsToContents()
    n_sides = len(cmp.sides) if cmp else 0
    caps = list(FIXED_W)
    if table.isColumnHidden(1):
        # The whole point where the metric leaves it room ('dtype=float32 size=128'), and
        # 'best vs best · dtype=float32'.
        caps[2] = BEST_POINT_W
    for j in range(len(header)):
        cap = MAX_VERDICT_W if j >= len(FIXED) + n_sides else \
            MAX_VALUE_W if j >= len(FIXED) else caps[j]
        if table.columnWidth(j) > cap:
            table.setColumnWidth(j, cap)
    head.setStretchLastSection(True)
    table.resizeRowsToContents()



def style_verdict(item: QTableWidgetItem, theme: Theme, verdict: str | None) -> None:
    kind = verdict_class(verdict)
    color = {"faster": theme.ok, "slower": theme.error}.get(kind, theme.muted)
    item.setForeground(QColor(color))
    font = QFont(item.font())
    font.setBold(kind in ("faster", "slower"))
    font.setItalic(kind == "pub")
    item.setFont(font)
