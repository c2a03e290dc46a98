"""Telemetry over each run's time, one unit at a time (TelemetryChart)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QWidget

from siliconbench.core.results import RunRecord
from siliconbench.gui.chart_series import TELEMETRY_UNITS, telemetry_series
from siliconbench.gui.charts.axes import plot_widget, series_symbol
from siliconbench.gui.charts.chart import Chart
from siliconbench.gui.theme import Theme, series_color


class TelemetryChart(Chart):
    """Power, temperature, load and clocks over each run's time (RunRecord.telemetry, sampled
    by the runner in the parent process); a running run's series grow about once a second.
    One unit at a time: watts and megahertz on one axis would flatten each other."""

    def __init__(self, parent: QWidget | None = None) -> None:
        plot = plot_widget()
        super().__init__("No telemetry yet.\nPower, temperature and load sampled during a run "
                         "are drawn here over time.", plot, parent)
        plot.setLabel("bottom", "Time since the run started (s)")
        self.unit_box = QComboBox()
        self.unit_box.setToolTip("Which kind of reading to draw")
        self.unit_box.currentIndexChanged.connect(self._redraw)
        self.layout().addWidget(self.unit_box, 2, 0, Qt.AlignmentFlag.AlignLeft)
        self.unit_box.hide()
        self._items: dict[tuple, pg.PlotDataItem] = {}
        self._by_unit: dict[str, dict[tuple, tuple[str, list[float], list[float]]]] = {}
        self._records: list[RunRecord] = []

    def set_records(self, records: list[RunRecord]) -> None:
        self._records = records
        self._by_unit = by_unit = telemetry_series(records)
        units = list(by_unit)
        current = self.unit_box.currentData()
        self.unit_box.blockSignals(True)
        self.unit_box.clear()
        for unit in units:
            self.unit_box.addItem(TELEMETRY_UNITS.get(unit, unit or "no unit"), unit)
        if current in units:
            self.unit_box.setCurrentIndex(units.index(current))
        self.unit_box.blockSignals(False)
        self.unit_box.setVisible(bool(units))
        self._redraw()

    def _redraw(self) -> None:
        unit = self.unit_box.currentData()
        wanted = self._by_unit.get(unit, {})
        plot = self.plot_item
        for key in [k for k in self._items if k not in wanted]:
            plot.removeItem(self._items.pop(key))
        entries = []
        for i, (key, (label, xs, ys)) in enumerate(wanted.items()):
            item = self._items.get(key)
            if item is None:
                item = self._items[key] = pg.PlotDataItem()
                plot.addItem(item)
            color, symbol = series_color(self.theme, i), series_symbol(i)
            # A marker every few samples tells lines of one colour apart past the palette.
            item.setData(xs, ys, pen=pg.mkPen(color, width=2), symbol=symbol, symbolSize=6,
                         symbolBrush=color, symbolPen=None)
            entries.append((key, label, color, symbol, False))
        self.legend.set_entries(entries)
        plot.getAxis("left").setLabel(TELEMETRY_UNITS.get(unit, unit or ""))
        self._show_plot(self.point_count() > 0)
        self.caption.setText("Sampled by SiliconBench while the run went on; what a machine "
                             "cannot report (no sensor, no permission) is left out.")

    def _items_of(self, key) -> list:
        return [self._items[key]] if key in self._items else []

    def apply_theme(self, theme: Theme) -> None:
        for key in list(self._items):  # recolour: drawn anew below
            self.plot_item.removeItem(self._items.pop(key))
        super().apply_theme(theme)

    def point_count(self) -> int:
        """Points of every series, whichever unit is shown."""
        return sum(len(xs) for series in self._by_unit.values() for _, xs, _ in series.values())
