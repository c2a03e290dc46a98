"""The Compare tab: the runs selected under Results (and published references added here) side
by side with core.compare's statistics, warnings in sentences, a chart, and report export."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core import reference
from core.compare import (
    CONFIDENCE,
    ComparedRow,
    Comparison,
    Side,
    compare,
    unique_labels,
)
from core.report import (
    fmt_cell,
    fmt_ratio,
    legend,
    point_label,
    to_csv,
    to_html,
    verdict_class,
)
from core.results import RunRecord
from gui.plots import CURVE_METRICS, CategoryAxis, Chart, CurveChart, export_chart
from gui.theme import LIGHT, Theme, series_color

FIXED = ["Workload", "Metric", "Point", "Unit"]


def sides_for(records: list[RunRecord]) -> list[Side]:
    """One side per machine; runs of a single machine are compared run by run."""
    machines: dict[str, list[RunRecord]] = {}
    for rec in records:
        machines.setdefault(rec.machine_label, []).append(rec)
    if len(machines) >= 2:
        sides = [Side(label, recs) for label, recs in machines.items()]
    else:
        sides = [Side(rec.machine_label, [rec]) for rec in records]
    return sides


def reference_side(rec: RunRecord) -> Side:
    return Side(f"{rec.machine_label} (published)", [rec])


def reference_title(rec: RunRecord) -> str:
    source = (rec.provenance or {}).get("source", "")
    return f"{rec.machine_label} · {rec.workload} ({rec.framework})" + \
        (f" · {source}" if source else "")


def chart_groups(cmp: Comparison) -> list[tuple[str, str, str]]:
    """(workload, metric, unit) of each chart the comparison can draw, in row order."""
    groups: list[tuple[str, str, str]] = []
    for r in cmp.rows:
        key = (r.workload, r.metric, r.unit)
        if key not in groups:
            groups.append(key)
    return groups


def is_curve(rows: list[ComparedRow]) -> bool:
    """GEMM and bandwidth sweeps read better as curves over size than as bars."""
    return bool(rows) and rows[0].metric in CURVE_METRICS and \
        all("size" in r.params for r in rows)


class CompareBarChart(Chart):
    """Grouped bars: one group per point, one bar per machine, whiskers at the 99% intervals;
    published figures hatched (they have no interval)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self.axis = CategoryAxis("bottom")
        plot = pg.PlotWidget(axisItems={"bottom": self.axis})
        super().__init__("Select two or more runs under Results, or add a published "
                         "reference, to compare them.", plot, parent)
        plot.addLegend(offset=(12, 8), labelTextSize="9pt")
        self.cmp: Comparison | None = None
        self.rows: list[ComparedRow] = []

    def set_rows(self, cmp: Comparison | None, rows: list[ComparedRow]) -> None:
        self.cmp, self.rows = cmp, rows
        self._redraw()

    def apply_theme(self, theme: Theme) -> None:
        super().apply_theme(theme)
        self._redraw()

    def _redraw(self) -> None:
        plot = self.plot_item
        plot.clear()
        self.axis.names = [point_label(r.params) for r in self.rows]
        sides = self.cmp.sides if self.cmp else []
        width = min(0.8 / max(1, len(sides)), 0.45)
        top = 0.0
        for i, side in enumerate(sides):
            color = QColor(series_color(self.theme, i))
            cells = [(j, r.cells[i]) for j, r in enumerate(self.rows)
                     if r.cells[i] is not None and r.cells[i].value is not None]
            if not cells:
                continue
            xs = np.array([j - 0.4 + (i + 0.5) * width for j, _ in cells])
            ys = np.array([c.value for _, c in cells])
            brush = QBrush(color, Qt.BrushStyle.BDiagPattern) if side.published else \
                QBrush(color)
            plot.addItem(pg.BarGraphItem(x=xs, height=ys, width=width * 0.9, brush=brush,
                                         pen=pg.mkPen(color), name=side.label))
            low = np.array([c.value - (c.ci_low if c.ci_low is not None else c.value)
                            for _, c in cells])
            high = np.array([(c.ci_high if c.ci_high is not None else c.value) - c.value
                             for _, c in cells])
            plot.addItem(pg.ErrorBarItem(x=xs, y=ys, top=high, bottom=low, beam=width * 0.3,
                                         pen=pg.mkPen(self.theme.foreground)))
            top = max(top, float((ys + high).max()))
        if self.rows:
            r = self.rows[0]
            plot.getAxis("left").setLabel(f"{r.metric} ({r.unit})")
            plot.getAxis("bottom").setLabel(r.workload)
            plot.setXRange(-0.6, len(self.rows) - 0.4, padding=0)
            plot.setYRange(0, top * 1.12 if top > 0 else 1, padding=0)
        plot.legend.setVisible(bool(sides))
        self._show_plot(bool(self.rows) and top > 0)
        self.caption.setText(f"Whiskers: {CONFIDENCE:.0%} confidence intervals of the median. "
                             "Hatched: published figures (no interval).")


class CompareView(QWidget):
    """Warnings, the comparison table and its chart for the selected runs and references.
    Recomputed only while in view: a comparison runs a test per row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = LIGHT
        self.records: list[RunRecord] = []
        self.references: list[RunRecord] = []
        self.comparison: Comparison | None = None
        self._stale = False

        self.reference_combo = QComboBox()
        # Long titles are elided: the window must shrink below the longest title's width.
        self.reference_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.reference_combo.setMinimumContentsLength(10)
        self.reference_combo.setToolTip("Published figures (resources/reference) to compare "
                                        "with; they carry no samples, so no verdict.")
        self._published = reference.references()
        for rec in self._published:
            self.reference_combo.addItem(reference_title(rec), rec.id)
        self.add_reference_button = QPushButton("Add Reference")
        self.add_reference_button.clicked.connect(
            lambda: self.add_reference(self.reference_combo.currentData()))
        self.clear_references_button = QPushButton("Clear References")
        self.clear_references_button.clicked.connect(self.clear_references)
        self.export_report_button = QPushButton("Export Report…")
        self.export_report_button.clicked.connect(self.choose_export_report)
        self.export_chart_button = QPushButton("Export Chart…")
        self.export_chart_button.clicked.connect(self.choose_export_chart)
        self.chart_combo = QComboBox()
        self.chart_combo.currentIndexChanged.connect(self._draw_chart)

        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setProperty("role", "hint")
        self.warnings = QLabel()
        self.warnings.setWordWrap(True)
        self.warnings.setTextFormat(Qt.TextFormat.PlainText)
        self.warnings.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.bars = CompareBarChart()
        self.curves = {m: CurveChart(m) for m in CURVE_METRICS}
        self.chart_stack = QStackedWidget()
        for chart in (self.bars, *self.curves.values()):
            self.chart_stack.addWidget(chart)

        tools = QHBoxLayout()
        tools.addWidget(self.reference_combo, 1)
        tools.addWidget(self.add_reference_button)
        tools.addWidget(self.clear_references_button)
        tools.addSpacing(12)
        tools.addWidget(self.export_report_button)
        tools.addWidget(self.export_chart_button)
        chart_bar = QHBoxLayout()
        chart_bar.addWidget(QLabel("Chart:"))
        chart_bar.addWidget(self.chart_combo, 1)
        body = QHBoxLayout()
        table_col = QVBoxLayout()
        table_col.addWidget(self.warnings)
        table_col.addWidget(self.table, 1)
        chart_col = QVBoxLayout()
        chart_col.addLayout(chart_bar)
        chart_col.addWidget(self.chart_stack, 1)
        body.addLayout(table_col, 3)
        body.addLayout(chart_col, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addLayout(tools)
        layout.addWidget(self.summary)
        layout.addLayout(body, 1)
        self._refresh()

    # ------------------------------------------------------------------ input

    def set_records(self, records: list[RunRecord]) -> None:
        """The runs to compare (the Results selection); drawn now if in view, else when shown."""
        self.records = list(records)
        self._stale = not self.isVisible()
        if not self._stale:
            self._refresh()

    def add_reference(self, ref_id: str | None) -> None:
        rec = next((r for r in self._published if r.id == ref_id), None)
        if rec is not None and rec not in self.references:
            self.references.append(rec)
            self._refresh()

    def clear_references(self) -> None:
        self.references = []
        self._refresh()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self._refresh()

    def sides(self) -> list[Side]:
        return unique_labels(sides_for(self.records) + [reference_side(r)
                                                        for r in self.references])

    # ------------------------------------------------------------------ drawing

    def _refresh(self) -> None:
        sides = self.sides()
        self.comparison = compare(sides) if len(sides) >= 2 else None
        cmp = self.comparison
        if cmp is None:
            self.summary.setText("Select two or more runs under Results (from one machine or "
                                 "several), or one run and a published reference.")
        else:
            left = (f" {cmp.left_out} row(s) only one side has are left out." if cmp.left_out
                    else "")
            self.summary.setText(f"{len(cmp.rows)} row(s) compared across "
                                 f"{len(cmp.sides)} sides.{left} {legend()}")
        warnings = cmp.warnings if cmp else []
        self.warnings.setText("\n".join(f"⚠ {w[:1].upper()}{w[1:]}." for w in warnings))
        self.warnings.setVisible(bool(warnings))
        self._fill_table()
        self.chart_combo.blockSignals(True)
        self.chart_combo.clear()
        for workload, metric, unit in (chart_groups(cmp) if cmp else []):
            self.chart_combo.addItem(f"{workload}: {metric} ({unit})", (workload, metric, unit))
        self.chart_combo.blockSignals(False)
        self._draw_chart()
        for button in (self.export_report_button, self.export_chart_button):
            button.setEnabled(cmp is not None and bool(cmp.rows))

    def headers(self) -> list[str]:
        sides = self.comparison.sides if self.comparison else []
        return FIXED + [s.label for s in sides] + [
            f"{s.label}: {what}" for s in sides[1:] for what in ("ratio", "verdict")]

    def _fill_table(self) -> None:
        cmp = self.comparison
        header = self.headers()
        self.table.clear()
        self.table.setColumnCount(len(header))
        self.table.setHorizontalHeaderLabels(header)
        rows = cmp.rows if cmp else []
        self.table.setRowCount(len(rows))
        for i, r in enumerate(rows):
            cells = [r.workload, r.metric, point_label(r.params), r.unit]
            cells += [fmt_cell(c, r.unit) for c in r.cells]
            verdicts: list[int] = []
            for c in r.cells[1:]:
                cells += [fmt_ratio(c.ratio) if c else "", (c.verdict or "") if c else ""]
                verdicts.append(len(cells) - 1)
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if j in verdicts:
                    self._style_verdict(item, text)
                elif j >= len(FIXED) and j < len(FIXED) + len(r.cells):
                    c = r.cells[j - len(FIXED)]
                    if c is not None and (c.flags or c.note):
                        item.setToolTip("; ".join(c.flags + ([c.note] if c.note else [])))
                self.table.setItem(i, j, item)
        self.table.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)

    def _style_verdict(self, item: QTableWidgetItem, verdict: str) -> None:
        kind = verdict_class(verdict)
        color = {"faster": self.theme.ok, "slower": self.theme.error}.get(kind, self.theme.muted)
        item.setForeground(QColor(color))
        font = QFont(item.font())
        font.setBold(kind in ("faster", "slower"))
        font.setItalic(kind == "pub")
        item.setFont(font)

    def _draw_chart(self) -> None:
        cmp = self.comparison
        key = self.chart_combo.currentData()
        rows = [r for r in cmp.rows if (r.workload, r.metric, r.unit) == key] if cmp and key \
            else []
        if is_curve(rows):
            chart = self.curves[rows[0].metric]
            # The curve chart draws every run's sweep: give it the runs this comparison used.
            used = {c.run_id for r in rows for c in r.cells if c is not None}
            chart.set_records([rec for s in cmp.sides for rec in s.records if rec.id in used])
        else:
            chart = self.bars
            chart.set_rows(cmp, rows)
        self.chart_stack.setCurrentWidget(chart)

    def current_chart(self) -> Chart:
        return self.chart_stack.currentWidget()

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        for chart in (self.bars, *self.curves.values()):
            chart.apply_theme(theme)
        self._fill_table()

    # ------------------------------------------------------------------ export

    def export_report(self, path: str) -> None:
        """The comparison as HTML or CSV, by the file's extension (OSError if unwritable)."""
        if self.comparison is None:
            raise ValueError("Nothing to compare yet.")
        text = to_csv(self.comparison) if path.lower().endswith(".csv") else \
            to_html(self.comparison)
        Path(path).write_text(text, encoding="utf-8")

    def choose_export_report(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export Comparison Report", str(Path.home() / "siliconbench-compare.html"),
            "HTML report (*.html);;CSV table (*.csv)")
        if path:
            if not Path(path).suffix:
                path += ".csv" if "csv" in chosen.lower() else ".html"
            self._write(lambda: self.export_report(path), path)

    def choose_export_chart(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export Chart", str(Path.home() / "siliconbench-compare.png"),
            "PNG image (*.png);;SVG image (*.svg)")
        if path:
            if not Path(path).suffix:
                path += ".svg" if "svg" in chosen.lower() else ".png"
            self._write(lambda: export_chart(path, self.current_chart()), path)

    def _write(self, write, path: str) -> None:
        from PySide6.QtWidgets import QMessageBox
        try:
            write()
        except (OSError, ValueError) as e:
            QMessageBox.warning(self, "Export failed", f"Cannot write {path}: {e}")
