"""Bar charts: throughput grouped by model (BarChart, the Throughput tab), and the Compare
tab's bars grouped by point, one per side (CompareBarChart)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QWidget

from siliconbench.core.compare_stats import CONFIDENCE, ComparedRow, Comparison
from siliconbench.core.compare_words import side_letter, side_name
from siliconbench.core.numbers import metric_heading
from siliconbench.core.report import point_label
from siliconbench.core.results import RunRecord
from siliconbench.gui.chart_series import Series, bar_series
from siliconbench.gui.charts.axes import CategoryAxis, plot_widget, series_symbol
from siliconbench.gui.charts.chart import Chart, add_measured_points
from siliconbench.gui.theme import series_color


class BarChart(Chart):
    """Throughput bars grouped by model, one colour per series, p25/p75 error bars; on a log
    axis the bars rise from the axis's foot."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self.axis = CategoryAxis("bottom")
        plot = plot_widget(axisItems={"bottom": self.axis})
        super().__init__("No throughput results yet.\nTraining and inference workloads "
                         "draw one group of bars per model here.", plot, parent)
        plot.setLabel("bottom", "Model")
        self.series: list[Series] = []
        self.models: list[str] = []

    def set_records(self, records: list[RunRecord]) -> None:
        self.models, self.series = bar_series(records)
        self._redraw()

    def _redraw(self) -> None:
        plot = self.plot_item
        plot.clear()  # a handful of bars: redrawing beats bookkeeping
        self._series_items = {}
        self.axis.names = self.models
        n = max(1, len(self.series))
        width = min(0.8 / n, 0.45)  # one series should not make slabs
        values = [v for s in self.series for r in s.rows
                  for v in (r.value, r.stats.p25 if r.stats else None,
                            r.stats.p75 if r.stats else None)]
        self._choose_scale(values)
        positive = [v for v in values if v and v > 0]
        top = max(positive, default=0.0)
        y_lo, y_hi = self.y_range(min(positive), top) if positive else (0.0, 1.0)
        unit, entries = "", []
        hidden = self._hidden()
        for i, s in enumerate(self.series):
            color, symbol = series_color(self.theme, i), series_symbol(i)
            entries.append((s.key, s.name, color, symbol, False))
            xs = [self.models.index(str(r.params["model"])) - 0.4 + (i + 0.5) * width
                  for r in s.rows]
            ys = [self.y(r.value) for r in s.rows]
            unit = unit or (s.rows[0].unit if s.rows else "")
            bars = pg.BarGraphItem(x=xs, y0=[y_lo] * len(xs), y1=ys, width=width * 0.9,
                                   brush=color, pen=pg.mkPen(self.theme.background))
            plot.addItem(bars)
            before = len(plot.items)
            if xs:
                add_measured_points(plot, self.theme, s.name, xs, s.rows, color, size=7,
                                    beam=width * 0.3, y=self.y, symbol=symbol)
            self._series_items[s.key] = [bars, *plot.items[before:]]
            for item in self._series_items[s.key]:
                item.setVisible(s.key not in hidden)
        self.legend.set_entries(entries)
        units = list(dict.fromkeys(r.unit for s in self.series for r in s.rows))
        if units:   # training's seq/s beside inference's img/s: both named
            plot.getAxis("left").setLabel(f"Throughput ({', '.join(units)})")
        self._show_plot(bool(self.series) and top > 0)
        if self.models:
            plot.setXRange(-0.6, len(self.models) - 0.4, padding=0)
            plot.setYRange(y_lo, y_hi, padding=0)
        self.caption.setText("Error bars: p25–p75. Hover a bar's top for its spread and flags."
                             " ✕: above peak or wrong result."
                             + (" Log scale: the bars span more than 30×." if self.log_y
                                else ""))

    def _hidden(self) -> set:
        """The series whose legend line is unticked: they stay hidden when redrawn."""
        leg = self.legend
        return {leg.item(i).data(Qt.ItemDataRole.UserRole) for i in range(leg.count())
                if leg.item(i).checkState() == Qt.CheckState.Unchecked}


# What the Compare tab's chart says before there is a comparison to draw.
EMPTY_CHART = ("Select two or more runs under Results, or add a published reference, to "
               "compare them.")


def _whisker(cell) -> tuple[float, float]:
    """A bar's whisker: the run-to-run spread of a side of several runs, else the interval
    of its median (the value itself where it has none)."""
    if cell.spread:
        return cell.spread
    return (cell.ci_low if cell.ci_low is not None else cell.value,
            cell.ci_high if cell.ci_high is not None else cell.value)


class CompareBarChart(Chart):
    """Grouped bars: one group per point, one bar per machine, whiskers at the 99% intervals;
    published figures hatched (they have no interval)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self.axis = CategoryAxis("bottom")
        plot = plot_widget(axisItems={"bottom": self.axis})
        super().__init__(EMPTY_CHART, plot, parent)
        self.cmp: Comparison | None = None
        self.rows: list[ComparedRow] = []
        self.names: list[str] = []

    def set_rows(self, cmp: Comparison | None, rows: list[ComparedRow],
                 names: list[str] | None = None) -> None:
        """The rows' bars, each group named by its point or by `names` (a best vs best's)."""
        self.cmp, self.rows = cmp, rows
        self.names = names or [point_label(r.params) for r in rows]
        self._redraw()

    def _redraw(self) -> None:
        plot = self.plot_item
        plot.clear()
        self._series_items = {}
        self.axis.names = self.names
        sides = self.cmp.sides if self.cmp else []
        width = min(0.8 / max(1, len(sides)), 0.45)
        values = [v for r in self.rows for c in r.cells if c is not None
                  for v in (c.value, *_whisker(c))]
        self._choose_scale(values)
        positive = [v for v in values if v is not None and v > 0]
        top = max(positive, default=0.0)
        y_lo, y_hi = self.y_range(min(positive), top) if positive else (0.0, 1.0)
        y, entries = self.y, []
        for i, side in enumerate(sides):
            color = QColor(series_color(self.theme, i))
            cells = [(j, r.cells[i]) for j, r in enumerate(self.rows)
                     if r.cells[i] is not None and r.cells[i].value is not None]
            # A side of zeros only (one rank's bus bandwidth) draws nothing: out of the
            # legend, its note in the caption.
            if not any(c.value for _, c in cells):
                continue
            entries.append((i, f"{side_letter(i)}: {side_name(side)}", color.name(),
                            series_symbol(i), False))
            xs = np.array([j - 0.4 + (i + 0.5) * width for j, _ in cells])
            ys = np.array([y(c.value) for _, c in cells])
            brush = QBrush(color, Qt.BrushStyle.BDiagPattern) if side.published else \
                QBrush(color)
            bars = pg.BarGraphItem(x=xs, y0=np.full(len(xs), y_lo), y1=ys, width=width * 0.9,
                                   brush=brush, pen=pg.mkPen(color))
            low = np.array([y(c.value) - y(_whisker(c)[0]) for _, c in cells])
            high = np.array([y(_whisker(c)[1]) - y(c.value) for _, c in cells])
            whiskers = pg.ErrorBarItem(x=xs, y=ys, top=high, bottom=low, beam=width * 0.3,
                                       pen=pg.mkPen(self.theme.foreground))
            self._series_items[i] = [bars, whiskers]
            for item in self._series_items[i]:
                plot.addItem(item)
        self.legend.set_entries(entries)
        if self.rows:
            r = self.rows[0]
            plot.getAxis("left").setLabel(metric_heading(r.metric, r.unit))
            plot.getAxis("bottom").setLabel(r.workload)
            plot.setXRange(-0.6, len(self.rows) - 0.4, padding=0)
            plot.setYRange(y_lo, y_hi, padding=0)
        else:       # nothing compared: the last chart's axis titles go with its bars
            plot.getAxis("left").setLabel("")
            plot.getAxis("bottom").setLabel("")
        self._show_plot(bool(self.rows) and top > 0)
        several = any(c is not None and c.spread for r in self.rows for c in r.cells)
        self.caption.setText(self._with_note(
            f"Whiskers: {CONFIDENCE:.0%} confidence intervals of the median"
            + ("; for a side of several runs, the lowest and highest run (bar: the median "
               "of the runs' medians)" if several else "") + ". Hatched: "
            "published figures (no interval)."
            + (" Log scale: the sides span more than 30×." if self.log_y else "")))
