"""Total throughput over the number of workers against linear scaling (ScalingChart)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from siliconbench.core.numbers import percent
from siliconbench.core.results import RunRecord
from siliconbench.gui.chart_series import ScalingSeries, scaling_series
from siliconbench.gui.charts.axes import plot_widget, series_symbol
from siliconbench.gui.charts.chart import Chart, add_measured_points
from siliconbench.gui.theme import series_color


class ScalingChart(Chart):
    """Total throughput over the number of workers, one colour per run: the measured points
    (p25/p75 error bars), the ideal linear line dashed (N x one worker) and the scaling
    efficiency written at each point."""

    def __init__(self, parent: QWidget | None = None) -> None:
        plot = plot_widget()
        super().__init__("No scaling results yet.\nThe scaling workload draws total "
                         "throughput over the number of workers here, against linear "
                         "scaling.", plot, parent)
        plot.setLabel("bottom", "Workers (world size)")
        self.series: list[ScalingSeries] = []

    def set_records(self, records: list[RunRecord]) -> None:
        self.series = scaling_series(records)
        self._redraw()

    def _redraw(self) -> None:
        plot = self.plot_item
        plot.clear()
        self._series_items = {}
        values = [v for s in self.series for v in s.ideal()] + \
            [v for s in self.series for r in s.rows
             for v in (r.value, r.stats.p75 if r.stats else None)]
        self._choose_scale(values)
        positive = [v for v in values if v and v > 0]
        top = max(positive, default=0.0)
        y = self.y
        unit, ticks, entries = "", set(), []
        for i, s in enumerate(self.series):
            color, symbol = series_color(self.theme, i), series_symbol(i)
            before = len(plot.items)
            xs, ys = s.workers(), [y(r.value) for r in s.rows]
            unit = unit or (s.rows[0].unit if s.rows else "")
            ticks.update(xs)
            plot.addItem(pg.PlotDataItem(xs, ys, pen=pg.mkPen(color, width=2)))
            entries.append((s.name, s.name, color, symbol, False))
            ideal = s.ideal()
            if ideal:
                plot.addItem(pg.PlotDataItem(xs, [y(v) for v in ideal], pen=pg.mkPen(
                    color, width=1, style=Qt.PenStyle.DashLine)))
            add_measured_points(plot, self.theme, s.name, xs, s.rows, color, size=8, beam=0.08,
                                y=y, symbol=symbol)
            for x, v, eff in zip(xs, ys, s.efficiency(), strict=False):
                label = pg.TextItem(percent(eff), color=color, anchor=(0.5, 1.2))
                label.setPos(x, v)
                plot.addItem(label)
            self._series_items[s.name] = plot.items[before:]
        self.legend.set_entries(entries)
        if unit:
            plot.getAxis("left").setLabel(f"Total throughput ({unit})")
        plot.getAxis("bottom").setTicks([[(n, str(n)) for n in sorted(ticks)]])
        self._show_plot(bool(self.series) and top > 0)
        if ticks:
            plot.setXRange(min(ticks) - 0.3, max(ticks) + 0.3, padding=0)
            y_lo, y_hi = self.y_range(min(positive), top, 1.15) if positive else (0.0, 1.0)
            plot.setYRange(y_lo, y_hi, padding=0)
        self.caption.setText("Dashed: linear scaling, N × one worker. Percentages: scaling "
                             "efficiency, throughput(N) / (N × throughput(1)). Error bars: "
                             "p25–p75.")
