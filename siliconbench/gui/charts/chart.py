"""The chart every tab draws on (Chart): a plot with its empty-state message, its legend
beside or under it, its caption, and a y axis that turns logarithmic; and the measured points
with their p25-p75 error bars that the bar and scaling charts draw."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QActionGroup
from PySide6.QtWidgets import QGridLayout, QLabel, QMenu, QSizePolicy, QWidget

from siliconbench.core.numbers import needs_log_axis
from siliconbench.gui.charts.axes import Y_MODES, ValueAxis
from siliconbench.gui.charts.elided import ElidedLabel
from siliconbench.gui.charts.legend import SeriesLegend
from siliconbench.gui.row_text import is_serious, point_tip
from siliconbench.gui.theme import LIGHT, Theme

# A chart narrower than this has its legend under the plot, not beside it.
NARROW_CHART_W = 560
CAPTION_LINES = 3   # a caption's most lines; the whole caption is its tooltip
# A chart shorter than this has a one-line caption: at the window's smallest the LLM tab's
# two charts are about 145 px each, and a two-line caption overprinted the x axis's title.
SHORT_CHART_H = 240


def add_measured_points(plot, theme: Theme, name: str, xs: list, rows: list, color,
                        size: int, beam: float, y=lambda v: v, symbol: str = "o") -> None:
    """Each row's value at its x with p25-p75 error bars, hoverable for its spread; a wrong
    or above-peak result drawn as a cross in the error colour. `y` maps a value to the
    plot's y (log10 on a log axis)."""
    ys = [y(r.value) for r in rows]
    low = [y(r.value) - y(r.stats.p25 if r.stats else r.value) for r in rows]
    high = [y(r.stats.p75 if r.stats else r.value) - y(r.value) for r in rows]
    plot.addItem(pg.ErrorBarItem(x=np.array(xs, float), y=np.array(ys), beam=beam,
                                 top=np.array(high), bottom=np.array(low),
                                 pen=pg.mkPen(theme.foreground)))
    plot.addItem(pg.ScatterPlotItem(
        x=xs, y=ys, size=size, hoverable=True, tip=lambda x, y, data: data,
        brush=[pg.mkBrush(theme.error if is_serious(r) else color) for r in rows],
        symbol=["x" if is_serious(r) else symbol for r in rows],
        pen=pg.mkPen(theme.background), data=[point_tip(name, r) for r in rows]))




def _style_plot(plot: pg.PlotWidget, theme: Theme) -> None:
    plot.setBackground(theme.background)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setPen(pg.mkPen(theme.muted))
        axis.setTextPen(pg.mkPen(theme.foreground))
        axis.label.setDefaultTextColor(pg.mkColor(theme.foreground))


class Chart(QWidget):
    """A plot with an empty-state message over it until there is data, its legend beside
    it (SeriesLegend) and a caption under it. The plot is laid out from the start, so the
    first live point costs no relayout. Its y axis turns logarithmic where the values span
    more than LOG_SPAN (y_mode "auto"), or as the View menu or the plot's context menu say."""

    def __init__(self, empty_text: str, plot: pg.PlotWidget,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = LIGHT
        self._has_data = False
        self.series: list = []
        # Each series' plot items by its legend key, where a subclass keeps them here.
        self._series_items: dict = {}
        self.plot = plot
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.plot.setMenuEnabled(False)  # pyqtgraph's menu confuses; ours is y_menu()
        self.plot.setMinimumSize(160, 120)
        self.y_mode = "auto"
        self.log_y = False
        self.legend = SeriesLegend()
        self.legend.hide()
        self.legend.toggled.connect(self._legend_toggled)
        self.empty = QLabel(empty_text)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setProperty("role", "hint")
        self.empty.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        # At most three lines, the rest on hover: ten sides' best ratios, peaks and points
        # not measured took the plot's height.
        self.caption = ElidedLabel(lines=CAPTION_LINES)
        self.caption.setProperty("role", "hint")
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setHorizontalSpacing(4)
        layout.addWidget(self.plot, 0, 0)
        layout.addWidget(self.empty, 0, 0)  # the same cell: the message lies over the plot
        layout.addWidget(self.legend, 0, 1)
        layout.addWidget(self.caption, 1, 0, 1, 2)
        layout.setRowStretch(0, 1)
        layout.setColumnStretch(0, 1)
        self.caption.hide()
        self._show_tick_values(False)
        # What the caption says first, from the chart's user (Compare's best vs best, why a
        # side has nothing drawn); set_note.
        self.note = ""
        self.menu: QMenu | None = None
        plot.scene().sigMouseClicked.connect(self._clicked)

    @property
    def plot_item(self) -> pg.PlotItem:
        return self.plot.getPlotItem()

    def has_data(self) -> bool:
        return self._has_data

    def _show_plot(self, shown: bool) -> None:
        if shown != self._has_data:
            self._has_data = shown
            self.empty.setVisible(not shown)
            self.caption.setVisible(shown)
            self._show_tick_values(shown)

    def _show_tick_values(self, shown: bool) -> None:
        # Numbers on empty axes suggest data that is not there.
        for name in ("left", "bottom"):
            self.plot.getAxis(name).setStyle(showValues=shown)

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        _style_plot(self.plot, theme)
        self._redraw()

    def _redraw(self) -> None:
        """Draw self.series (or what the chart keeps) in the current theme."""

    def set_note(self, note: str) -> None:
        """A sentence or two the caption starts with (drawn at the next redraw)."""
        self.note = note

    def _with_note(self, caption: str) -> str:
        return f"{self.note} {caption}" if self.note else caption

    def export_title(self) -> str:
        """What an exported image is titled: the y axis's title over the x axis's."""
        y, x = (self.plot.getAxis(n).labelText for n in ("left", "bottom"))
        return f"{y} over {x[:1].lower()}{x[1:]}" if y and x else y or x

    def point_count(self) -> int:
        return sum(len(s.rows) for s in self.series)

    # ------------------------------------------------------------ the y axis

    def set_y_mode(self, mode: str) -> None:
        """"auto" (log where the values span more than LOG_SPAN), "linear" or "log"."""
        if mode not in Y_MODES:
            raise ValueError(f"y mode {mode!r}")
        if mode != self.y_mode:
            self.y_mode = mode
            self._redraw()

    def _choose_scale(self, values) -> bool:
        """Decide (and set on the axis) whether the y axis is logarithmic for these values;
        a log axis needs values above zero."""
        positive = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
        if self.y_mode == "linear" or not positive:
            log = False
        elif self.y_mode == "log":
            log = True
        else:
            log = needs_log_axis(positive)
        self.log_y = log
        self._floor = math.log10(min(positive)) if positive else 0.0
        axis = self.plot.getAxis("left")
        if isinstance(axis, ValueAxis) and axis.log != log:
            axis.log = log
            axis.picture = None
            axis.update()
        return log

    def y(self, value: float) -> float:
        """Where a value lies on the plot's y: log10 of it on a log axis (a value of zero or
        less at the axis's foot)."""
        if not self.log_y:
            return value
        return math.log10(value) if value > 0 else self._floor - 1

    def y_range(self, low: float, high: float, headroom: float = 1.1) -> tuple[float, float]:
        """The y axis's range for values from `low` to `high` (above zero on a log axis):
        from zero on a linear axis, from a fifth of a decade below the lowest on a log one."""
        if not self.log_y:
            return 0.0, high * headroom if high > 0 else 1.0
        lo, hi = math.log10(low), math.log10(high)
        # Above the highest: room for a peak's label, which sits over its line.
        return lo - 0.2 - 0.05 * (hi - lo), hi + math.log10(headroom) + 0.08 * (hi - lo) + 0.1

    def axis_mode(self) -> str:
        """What the y axis is now, as a person reads it: 'log' or 'linear'."""
        return "log" if self.log_y else "linear"

    def tick_labels(self) -> list[str]:
        """The y axis's tick labels as drawn for its current range."""
        axis = self.plot.getAxis("left")
        lo, hi = self.plot_item.vb.viewRange()[1]
        length = max(200.0, axis.height())
        return [t for _, values in axis.tickValues(lo, hi, length)
                for t in axis.tickStrings(values, 1.0, 1.0)]

    def y_menu(self) -> QMenu:
        """The plot's context menu: the y axis automatic, linear or logarithmic."""
        menu = QMenu(self)
        group = QActionGroup(menu)
        for mode, text in Y_MODES.items():
            action = menu.addAction(f"Y Axis: {text}")
            action.setCheckable(True)
            action.setChecked(mode == self.y_mode)
            action.setData(mode)
            group.addAction(action)
            action.triggered.connect(lambda _=False, m=mode: self.set_y_mode(m))
        self.menu = menu     # kept alive while open (tests read it)
        return menu

    def _clicked(self, event) -> None:
        if event.button() == Qt.MouseButton.RightButton:
            self.y_menu().popup(event.screenPos().toPoint())
            event.accept()

    # ------------------------------------------------------------ the legend

    def legend_names(self) -> list[str]:
        return self.legend.names()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        lines = CAPTION_LINES if self.height() >= SHORT_CHART_H else 1
        if lines != self.caption.lines:
            self.caption.lines = lines
            self.caption.setText(self.caption.text())   # its height for its lines
        self._place_legend()

    def _place_legend(self) -> None:
        """Beside the plot where the chart is wide; under it, a few lines tall and scrolling,
        where a legend beside it would leave the plot too narrow to read, unless the chart
        is short too (the window at its smallest): there the lines under it left the plot
        90 px of its 180."""
        below = self.width() < NARROW_CHART_W and self.height() >= SHORT_CHART_H
        if below == self.legend.below:
            if below or self.legend.count():
                self.legend.fit()
            return
        self.legend.below = below
        layout = self.layout()
        layout.removeWidget(self.legend)
        layout.removeWidget(self.caption)
        if below:
            layout.addWidget(self.legend, 1, 0, 1, 2)
            layout.addWidget(self.caption, 2, 0, 1, 2)
            self.legend.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            self.legend.setMinimumWidth(0)
            self.legend.setMaximumWidth(16777215)
            self.legend.fit()
        else:
            layout.addWidget(self.legend, 0, 1)
            layout.addWidget(self.caption, 1, 0, 1, 2)
            self.legend.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)
            self.legend.setMinimumHeight(0)
            self.legend.setMaximumHeight(16777215)
            self.legend.fit()

    def _legend_toggled(self, key, shown: bool) -> None:
        """A legend line unticked: its series' items hide (each chart keeps its own)."""
        for item in self._items_of(key):
            item.setVisible(shown)

    def _items_of(self, key) -> list:
        return self._series_items.get(key, [])
