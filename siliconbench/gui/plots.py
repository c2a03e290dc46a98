"""Live charts (pyqtgraph): the drawing of what siliconbench.gui.chart_series selects and names: a
headline metric over a log2 size axis (p25/p75 error bars, the device's peak dashed), an
LLM's prefill and decode one above the other (decode's memory bound dashed per series), throughput
bars grouped by model, telemetry over time; and their export to PNG or SVG."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QSize, Qt, Signal
from PySide6.QtGui import QActionGroup, QColor, QIcon, QPainter, QPen, QPixmap
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QGridLayout, QLabel, QListWidget,
                               QListWidgetItem, QMenu, QSizePolicy, QSplitter, QTabWidget,
                               QWidget)

from siliconbench.core.numbers import LOG_SPAN, compact, interval, needs_log_axis, number, percent
from siliconbench.core.results import RunRecord
from siliconbench.gui.chart_series import (BARS, CURVE_METRICS, SCALING, TELEMETRY, TELEMETRY_UNITS,
                              ScalingSeries, Series, bar_series, chart_of, curve_series,
                              scaling_series, size_label, telemetry_series)
from siliconbench.gui.singleton_refs import top_up
from siliconbench.gui.row_table import RowTable
from siliconbench.gui.row_text import is_serious, point_tip
from siliconbench.gui.theme import LIGHT, Theme, series_color



# A chart narrower than this has its legend under the plot, not beside it.
NARROW_CHART_W = 560
# The series of a chart spanning more than LOG_SPAN times (highest over lowest value) are
# drawn on a log y axis (siliconbench.core.numbers.needs_log_axis, which the HTML report uses too).
Y_MODES = {"auto": f"Automatic (log beyond {LOG_SPAN:g}×)", "linear": "Linear",
           "log": "Logarithmic"}
# Markers that, with the palette's colours, tell series apart past the palette's length:
# series i has colour i mod 8 and marker i mod 7, so the first 56 differ in the pair and
# neighbours differ in both. "x" is kept for wrong and above-peak points.
SYMBOLS = ("o", "s", "t", "d", "p", "h", "star")


def series_symbol(index: int) -> str:
    return SYMBOLS[index % len(SYMBOLS)]


class ValueAxis(pg.AxisItem):
    """The y axis, in human units ('15K', '2.5M'; '1.5 GB' for bytes). On a log scale the
    plot holds log10 of each value and the ticks fall on 1, 2 and 5 times powers of ten."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("left", *args, **kwargs)
        self.log = False
        self.unit = ""
        self.enableAutoSIPrefix(False)  # "(x0.001)" confuses; 0.25 is clear

    def tickValues(self, minVal: float, maxVal: float, size: float):
        if not self.log:
            return super().tickValues(minVal, maxVal, size)
        lo, hi = math.floor(minVal), math.ceil(maxVal)
        decades = [float(d) for d in range(lo, hi + 1) if minVal <= d <= maxVal]
        step = max(1, math.ceil(len(decades) / max(2.0, size / 40)))
        levels = [(float(step), decades[::step])]
        if hi - lo <= 4 and size >= 120:   # few decades: 2 and 5 between them
            levels.append((0.5, [v for d in range(lo, hi + 1) for v in
                                 (d + math.log10(2), d + math.log10(5)) if minVal <= v <= maxVal]))
        return levels

    def tickStrings(self, values, scale, spacing):
        return [compact(10 ** v if self.log else v, self.unit) for v in values]


def plot_widget(**kwargs) -> pg.PlotWidget:
    """A pyqtgraph PlotWidget with a ValueAxis on the left, after making sure None's
    reference count can take what building one releases (siliconbench/gui/singleton_refs.py; the window
    tops the counts up on a timer too)."""
    top_up()
    axes = kwargs.pop("axisItems", {})
    axes.setdefault("left", ValueAxis())
    return pg.PlotWidget(axisItems=axes, **kwargs)


def symbol_icon(color: str, symbol: str, dashed: bool = False) -> QIcon:
    """A legend line's key: a short line in the series' colour with its marker on it."""
    pixmap = QPixmap(28, 14)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    pen = QPen(QColor(color), 2)
    if dashed:
        pen.setStyle(Qt.PenStyle.DashLine)
    painter.setPen(pen)
    painter.drawLine(1, 7, 27, 7)
    if symbol:
        from pyqtgraph.graphicsItems.ScatterPlotItem import Symbols
        painter.translate(14, 7)
        painter.scale(9, 9)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(color))
        painter.drawPath(Symbols[symbol])
    painter.end()
    return QIcon(pixmap)


class SeriesLegend(QListWidget):
    """A chart's legend beside its plot, never over the data: one line per series, its
    colour and marker before its name (elided in the middle, whole in the tooltip); it
    scrolls when long. Unticking a line hides its series."""

    toggled = Signal(object, bool)     # the entry's key, shown

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Names wrap onto a second line rather than lose their middle (the time, the
        # workload): the whole name is in view, and in the tooltip.
        self.setWordWrap(True)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setIconSize(QSize(28, 14))
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)
        self.setMinimumWidth(120)
        self.setAccessibleName("Legend")
        self._keys: list = []
        self.itemChanged.connect(self._changed)

    def set_entries(self, entries: list[tuple]) -> None:
        """(key, name, colour, marker, dashed) per line; redrawn only when they change."""
        keys = [(k, n, c, m, d) for k, n, c, m, d in entries]
        if keys == self._keys:
            return
        hidden = {self.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.count())
                  if self.item(i).checkState() == Qt.CheckState.Unchecked}
        self.blockSignals(True)
        self.clear()
        for key, name, color, symbol, dashed in entries:
            item = QListWidgetItem(symbol_icon(color, symbol, dashed), name)
            item.setToolTip(name)
            item.setData(Qt.ItemDataRole.UserRole, key)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked if key in hidden
                               else Qt.CheckState.Checked)
            self.addItem(item)
        self.blockSignals(False)
        self._keys = keys
        self.setVisible(bool(entries))
        self._fit_width()

    def names(self) -> list[str]:
        return [self.item(i).text() for i in range(self.count())]

    def _fit_width(self) -> None:
        """As wide as the longest name up to a third of the chart (min 120, max 340 px);
        under a narrow chart (Chart._place_legend), as wide as the chart."""
        chart = self.parentWidget()
        if chart is not None and getattr(chart, "_legend_below", False):
            chart._size_legend_below()
            return
        fm = self.fontMetrics()
        longest = max((fm.horizontalAdvance(self.item(i).text()) for i in range(self.count())),
                      default=0)
        chart_w = self.parentWidget().width() if self.parentWidget() else 900
        self.setFixedWidth(int(max(120, min(longest + 80, 360, chart_w * 0.36))))

    def _changed(self, item: QListWidgetItem) -> None:
        self.toggled.emit(item.data(Qt.ItemDataRole.UserRole),
                          item.checkState() == Qt.CheckState.Checked)


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


class SizeAxis(pg.AxisItem):
    """x is log2(size): ticks at whole powers of two, labelled with the size itself (as a
    size in bytes, '256 KB', where `unit_bytes` gives the bytes of one unit)."""

    def __init__(self, *args, unit_bytes: int = 0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.unit_bytes = unit_bytes

    def tickValues(self, minVal: float, maxVal: float, size: float):
        lo, hi = math.ceil(minVal), math.floor(maxVal)
        if hi < lo:
            return []
        step = max(1, math.ceil((hi - lo + 1) / max(2, size / 60)))
        return [(float(step), [float(v) for v in range(lo, hi + 1, step)])]

    def tickStrings(self, values, scale, spacing):
        if self.unit_bytes:
            return [compact(2 ** v * self.unit_bytes, "bytes") for v in values]
        return [size_label(2 ** v) for v in values]


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
        self.caption = QLabel()
        self.caption.setWordWrap(True)
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
        self._legend_below = False
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

    def legend_below(self) -> bool:
        """Whether the legend lies under the plot (a narrow chart) rather than beside it."""
        return self._legend_below

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_legend()

    def _place_legend(self) -> None:
        """Beside the plot where the chart is wide; under it, a few lines tall and scrolling,
        where a legend beside it would leave the plot too narrow to read."""
        below = self.width() < NARROW_CHART_W
        if below == getattr(self, "_legend_below", None):
            if below:
                self._size_legend_below()
            elif self.legend.count():
                self.legend._fit_width()
            return
        self._legend_below = below
        layout = self.layout()
        layout.removeWidget(self.legend)
        layout.removeWidget(self.caption)
        # Under the plot, one line per name (elided in the middle, whole on hover): wrapped
        # names let only one entry into the strip.
        self.legend.setWordWrap(not below)
        if below:
            layout.addWidget(self.legend, 1, 0, 1, 2)
            layout.addWidget(self.caption, 2, 0, 1, 2)
            self.legend.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            self.legend.setMinimumWidth(0)
            self.legend.setMaximumWidth(16777215)
            self._size_legend_below()
        else:
            layout.addWidget(self.legend, 0, 1)
            layout.addWidget(self.caption, 1, 0, 1, 2)
            self.legend.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)
            self.legend.setMinimumHeight(0)
            self.legend.setMaximumHeight(16777215)
            self.legend._fit_width()

    def _size_legend_below(self) -> None:
        rows = max(1, self.legend.count())
        row_h = max(14, self.legend.sizeHintForRow(0))
        self.legend.setFixedHeight(min(rows, 3) * row_h + 2 * self.legend.frameWidth() + 2)

    def _legend_toggled(self, key, shown: bool) -> None:
        """A legend line unticked: its series' items hide (each chart keeps its own)."""
        for item in self._items_of(key):
            item.setVisible(shown)

    def _items_of(self, key) -> list:
        return []


# A bound more than this many times the highest point is left above the y axis's end.
BOUND_ZOOM = 3


class CurveChart(Chart):
    """A metric over its point parameter, one curve per series, live-updated by
    set_records."""

    def __init__(self, metric: str, parent: QWidget | None = None) -> None:
        curve = CURVE_METRICS[metric]
        axis = SizeAxis("bottom", unit_bytes=curve.x_bytes) if curve.log_x else \
            pg.AxisItem("bottom")
        axis.enableAutoSIPrefix(False)   # a depth of 2048 reads 2048, not "2.048 (x1000)"
        plot = plot_widget(axisItems={"bottom": axis})
        super().__init__(f"No {curve.y_name if curve.tab == 'LLM' else curve.tab} results "
                         "yet.\nChoose a workload and devices on the left, then press Run — "
                         "points appear here as they are measured.\nOr select earlier runs "
                         "under Results.", plot, parent)
        self.metric_name, self.unit, self.curve = metric, curve.unit, curve
        plot.getAxis("left").setLabel(f"{curve.y_name} ({curve.unit})")
        plot.setLabel("bottom", curve.x_label)
        self.series: list[Series] = []
        self._items: dict[tuple, dict] = {}
        self._peak_lines: list[pg.InfiniteLine] = []
        self._peak_keys: list[tuple] = []
        self._ranges: tuple | None = None
        self._bound_above = False

    def set_records(self, records: list[RunRecord]) -> None:
        self.series = curve_series(records, self.metric_name)
        self._redraw()

    def _redraw(self) -> None:
        plot = self.plot_item
        wanted = {s.key for s in self.series}
        for key in [k for k in self._items if k not in wanted]:
            for item in self._items.pop(key).values():
                plot.removeItem(item)
        values = [v for s in self.series for r in s.rows
                  for v in (r.value, r.stats.p25 if r.stats else None,
                            r.stats.p75 if r.stats else None)]
        values += [s.peak for s in self.series if s.peak]
        bound_values = [r.value for s in self.series for r in s.bounds]
        log = self._choose_scale(values + bound_values)
        xs_all, top = [], 0.0
        peaks: dict[tuple, tuple[Series, str]] = {}
        entries = []
        for i, s in enumerate(self.series):
            color, symbol = series_color(self.theme, i), series_symbol(i)
            items = self._items.get(s.key) or self._new_items(s)
            self._draw(items, s, color, symbol)
            entries.append((s.key, s.name, color, symbol, False))
            xs_all += s.xs()
            top = max([top] + [r.stats.p75 if r.stats else r.value for r in s.rows])
            if s.peak:
                peaks.setdefault((s.device, s.peak), (s, color))
                top = max(top, s.peak)
        self.legend.set_entries(entries)
        # Peak lines only change with the set of series and the scale: redrawing them on
        # every live row would cost a visible hitch.
        if [*peaks, log] != self._peak_keys:
            for line in self._peak_lines:
                plot.removeItem(line)
            self._peak_lines = [self._add_peak_line(s, color, k)
                                for k, (s, color) in enumerate(peaks.values())]
            self._peak_keys = [*peaks, log]
        bound_top = max(bound_values, default=0.0)
        # A bound far above every point (a tiny model is bound by overheads, not memory)
        # would flatten the curve at the bottom of a linear axis: it stays above the scale,
        # its label says so. A log axis holds both.
        self._bound_above = not log and bound_top > BOUND_ZOOM * top > 0
        if not self._bound_above:
            top = max(top, bound_top)
        self._show_plot(bool(xs_all))
        if xs_all:
            lo, hi = min(xs_all), max(xs_all)
            if self.curve.log_x:      # 0.4 of a doubling either side
                lo, hi = lo - 0.4, hi + 0.4
            elif hi > lo:             # a linear axis: 5% of the span either side
                lo, hi = lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)
            else:                     # one depth (0, say): the axis runs on from it, never
                span = max(64.0, hi)  # mostly into depths below zero
                lo, hi = lo - 0.05 * span, hi + span
            positive = [v for v in values + bound_values if v and v > 0]
            y_lo, y_hi = self.y_range(min(positive, default=1.0), top) if top > 0 \
                else (0.0, 1.0)
            ranges = (lo, hi, y_lo, y_hi)
            if ranges != self._ranges:
                self._ranges = ranges
                plot.setXRange(ranges[0], ranges[1], padding=0)
                plot.setYRange(y_lo, y_hi, padding=0)
            self._place_bound_labels()
        caption = self._caption()
        if caption != self.caption.text():
            self.caption.setText(caption)

    def _items_of(self, key) -> list:
        items = self._items.get(key, {})
        return [item for name, item in items.items() if name != "bound_label"] + \
            ([items["bound_label"]] if "bound_label" in items and items["bound_label"].isVisible()
             else [])

    def _place_bound_labels(self) -> None:
        """Each bound's label at its last point, or, above the scale, at the foot of the plot
        with its values (the top strip is the legend's). Runs of one device share their
        bound: it is labelled once."""
        labelled = set()
        stacked = 0             # labels above the scale, stacked up from the right foot
        for s in self.series:
            label = self._items[s.key].get("bound_label")
            if label is None:
                continue
            same = (s.bound_label, tuple((s.x_of(r), r.value) for r in s.bounds))
            label.setVisible(bool(s.bounds) and same not in labelled)
            labelled.add(same)
            if not s.bounds:
                continue
            last = s.bounds[-1]
            if self._bound_above:
                values = sorted(r.value for r in s.bounds)
                span = interval(values[0], values[-1]) if len(values) > 1 else \
                    number(values[0])
                label.setText(f"{s.bound_label} ↑\n{span} {self.unit}, above the scale")
                # At the plot's right edge: at the last point it ran off the left of a
                # sweep of one depth.
                label.setAnchor((1, 1 + stacked))
                label.setPos(self._ranges[1] if self._ranges else s.position(last), 0)
                stacked += label.isVisible()
            else:
                label.setText(s.bound_label)
                # Ending at its last point, or starting there where that point lies in the
                # left half (a tiny model's sweep to depth 256 beside one to 2048): it ran off
                # the plot's left edge.
                x = s.position(last)
                left_half = self._ranges and x < (self._ranges[0] + self._ranges[1]) / 2
                label.setAnchor((0, 1) if left_half else (1, 1))
                label.setPos(x, self.y(last.value))

    def _new_items(self, s: Series) -> dict:
        plot = self.plot_item
        line = pg.PlotDataItem(name=s.name)
        bars = pg.ErrorBarItem(beam=0.08)
        dots = pg.ScatterPlotItem(hoverable=True, tip=lambda x, y, data: data, size=9)
        # Points above everything (peak labels): each can always be hovered.
        dots.setZValue(2000)
        items = {"line": line, "bars": bars, "dots": dots}
        if self.curve.bound:
            items["bound"] = pg.PlotDataItem()
            # On the window's colour over lines and grid, under the points (always hoverable).
            items["bound_label"] = pg.TextItem(anchor=(1, 1))
            items["bound_label"].setZValue(1500)
        for item in items.values():
            plot.addItem(item)
        self._items[s.key] = items
        return items

    def _draw(self, items: dict, s: Series, color: str, symbol: str = "o") -> None:
        y = self.y
        xs = s.xs()
        ys = [y(r.value) for r in s.rows]
        items["line"].setData(xs, ys, pen=pg.mkPen(color, width=2))
        low = [y(r.value) - y(r.stats.p25 if r.stats else r.value) for r in s.rows]
        high = [y(r.stats.p75 if r.stats else r.value) - y(r.value) for r in s.rows]
        if xs:
            items["bars"].setData(x=np.array(xs), y=np.array(ys),
                                  top=np.array(high), bottom=np.array(low),
                                  pen=pg.mkPen(color, width=1.5))
        else:
            items["bars"].setData(x=np.array([]), y=np.array([]))
        symbols, brushes, pens = [], [], []
        for r in s.rows:
            if is_serious(r):
                symbols.append("x"), brushes.append(pg.mkBrush(self.theme.error))
                pens.append(pg.mkPen(self.theme.error, width=1.5))
            elif "noisy" in r.flags:
                symbols.append(symbol), brushes.append(pg.mkBrush(self.theme.background))
                pens.append(pg.mkPen(color, width=2))
            else:
                symbols.append(symbol), brushes.append(pg.mkBrush(color))
                pens.append(pg.mkPen(self.theme.background, width=1))
        items["dots"].setData(x=xs, y=ys, symbol=symbols, brush=brushes, pen=pens,
                              data=[point_tip(s.name, r) for r in s.rows])
        if "bound" in items:
            bxs, bys = [s.position(r) for r in s.bounds], [y(r.value) for r in s.bounds]
            items["bound"].setData(bxs, bys, pen=pg.mkPen(color, width=1.2,
                                                          style=Qt.PenStyle.DashLine))
            items["bound_label"].setColor(color)
            items["bound_label"].fill = pg.mkBrush(self.theme.background + "E0")

    def _add_peak_line(self, s: Series, color: str, k: int = 0) -> pg.InfiniteLine:
        # Successive peaks' labels step left: on a log axis 494 and 990 TFLOPS lie close, and
        # their labels overlapped at the right edge.
        line = pg.InfiniteLine(
            pos=self.y(s.peak), angle=0, movable=False,
            pen=pg.mkPen(color, width=1.2, style=Qt.PenStyle.DashLine),
            label=f"{s.device} peak {number(s.peak)} {self.unit}",
            labelOpts={"position": 0.98 - 0.25 * (k % 3), "color": color,
                       "anchors": [(1, 1), (1, 1)]})
        self.plot_item.addItem(line, ignoreBounds=True)
        return line

    def _caption(self) -> str:
        parts = ["Error bars: p25–p75 of the timed blocks. Hover a point for its spread, "
                 "confidence interval and flags."]
        if self.curve.peak:
            if any(s.peak for s in self.series):
                parts.append("Dashed: the device's physical peak.")
            unknown = sorted({s.device for s in self.series if not s.peak and s.rows})
            if unknown:
                parts.append(f"Peak unknown for {', '.join(unknown)}.")
        if self.curve.bound:
            if any(s.bounds for s in self.series):
                parts.append(f"Dashed, in each run's colour: its {self.curve.bound_name} "
                             "(bandwidth over the bytes read per token)"
                             + (", here far above the points: its label gives its values."
                                if self._bound_above else "."))
            unknown = sorted({s.device for s in self.series if not s.bounds and s.rows})
            if unknown:
                parts.append(f"No {self.curve.bound_name} for {', '.join(unknown)}: measure "
                             "its bandwidth first.")
        flagged = [r for s in self.series for r in s.rows if r.flags]
        if flagged:
            parts.append("Hollow: noisy; ✕: above peak or wrong result.")
        missing = [f"{s.name} {s.x}={r.params.get(s.x)}" for s in self.series
                   for r in s.missing]
        if missing:
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            parts.append(f"Not measured (unsupported): {'; '.join(missing[:3])}{more}.")
        return " ".join(parts)


class CategoryAxis(pg.AxisItem):
    """Bar groups: ticks at whole numbers, labelled with the model names."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.names: list[str] = []
        self.enableAutoSIPrefix(False)  # positions, not quantities: never "Model (x0.001)"

    def tickValues(self, minVal: float, maxVal: float, size: float):
        return [(1.0, [float(i) for i in range(len(self.names))])]

    def tickStrings(self, values, scale, spacing):
        return [self.names[int(v)] if 0 <= int(v) < len(self.names) else "" for v in values]


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
        self._series_items: dict[tuple, list] = {}

    def set_records(self, records: list[RunRecord]) -> None:
        self.models, self.series = bar_series(records)
        self._redraw()

    def _items_of(self, key) -> list:
        return self._series_items.get(key, [])

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
        self._series_items: dict[str, list] = {}

    def set_records(self, records: list[RunRecord]) -> None:
        self.series = scaling_series(records)
        self._redraw()

    def _items_of(self, key) -> list:
        return self._series_items.get(key, [])

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


class ChartStack(QSplitter):
    """The charts of one tab, one above the other (an LLM's prefill and decode: side by side,
    legends naming whole runs were wider than each plot). File > Export Chart writes the one
    last clicked, the last of the stack until then."""

    def __init__(self, charts: list[Chart], parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.charts = charts
        self._current = charts[-1]
        for chart in charts:
            self.addWidget(chart)
            chart.plot.scene().sigMouseClicked.connect(
                lambda _event, chart=chart: setattr(self, "_current", chart))
        self.setChildrenCollapsible(False)

    def current_chart(self) -> Chart:
        return self._current


def curve_tabs(curves: dict[str, Chart]) -> dict[str, QWidget]:
    """Tab title -> its widget: a curve alone, or a ChartStack of the curves sharing a tab."""
    by_tab: dict[str, list[Chart]] = {}
    for metric, chart in curves.items():
        by_tab.setdefault(CURVE_METRICS[metric].tab, []).append(chart)
    return {tab: charts[0] if len(charts) == 1 else ChartStack(charts)
            for tab, charts in by_tab.items()}


class ChartPanel(QTabWidget):
    """The charts and the table of result rows for the runs being looked at: those selected
    under Results, plus runs being measured now."""

    records_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocumentMode(True)
        self.curves = {m: CurveChart(m) for m in CURVE_METRICS}
        self.bars = BarChart()
        self.scaling = ScalingChart()
        self.telemetry = TelemetryChart()
        self.table = RowTable()
        self.tabs = curve_tabs(self.curves)
        for title, widget in self.tabs.items():
            self.addTab(widget, title)
        self.addTab(self.bars, "Throughput")
        self.addTab(self.scaling, "Scaling")
        self.addTab(self.telemetry, "Telemetry")
        self.addTab(self.table, "Table")
        self._records: dict[str, RunRecord] = {}
        self._table_stale = False
        self._telemetry_stale = False
        self.currentChanged.connect(self._on_tab_changed)

    @property
    def charts(self) -> dict[str, Chart]:
        return {**self.curves, BARS: self.bars, SCALING: self.scaling,
                TELEMETRY: self.telemetry}

    def records(self) -> list[RunRecord]:
        return list(self._records.values())

    def show_records(self, records: list[RunRecord]) -> None:
        """Replace what is drawn."""
        self._records = {r.id: r for r in records}
        self._refresh()

    def update_record(self, rec: RunRecord, follow: bool = True) -> None:
        """Add or redraw one run (a live run after each row); `follow` brings its chart up."""
        self._records[rec.id] = rec
        kinds = {chart_of(rec.workload, r) for r in rec.rows} - {None}
        self._refresh(kinds)
        if follow and kinds:
            current = self.currentWidget()
            if not any(self.tab_of(k) is current and self.charts[k].has_data() for k in kinds):
                self.setCurrentWidget(self.tab_of(sorted(kinds)[0]))

    def tab_of(self, kind: str) -> QWidget:
        """The tab that shows this kind's chart (the chart itself, or the stack holding it)."""
        chart = self.charts[kind]
        return next((w for w in self.tabs.values() if w is chart or
                     chart in getattr(w, "charts", ())), chart)

    def _refresh(self, kinds: set[str] | None = None) -> None:
        """Redraw the charts of these kinds (default: all)."""
        records = list(self._records.values())
        for kind, chart in (*self.curves.items(), (BARS, self.bars),
                            (SCALING, self.scaling)):
            if kinds is None or kind in kinds:
                chart.set_records(records)
        if kinds is None:
            self._refresh_telemetry()
        # The table is the slow part (it sizes its columns); fill it only while it is seen.
        self._table_stale = self.currentWidget() is not self.table
        if not self._table_stale:
            self.table.set_records(records)
        self.records_changed.emit()

    def update_telemetry(self, rec: RunRecord) -> None:
        """A running run's telemetry grew: redraw it if the telemetry chart is in view."""
        self._records[rec.id] = rec
        self._refresh_telemetry()

    def _refresh_telemetry(self) -> None:
        self._telemetry_stale = self.currentWidget() is not self.telemetry
        if not self._telemetry_stale:
            self.telemetry.set_records(self.records())

    def _on_tab_changed(self) -> None:
        if self._table_stale and self.currentWidget() is self.table:
            self._table_stale = False
            self.table.set_records(self.records())
        if self._telemetry_stale and self.currentWidget() is self.telemetry:
            self._refresh_telemetry()

    def current_chart(self) -> Chart | None:
        w = self.currentWidget()
        if hasattr(w, "current_chart"):  # a composite tab (Compare) names its own chart
            return w.current_chart()
        return w if isinstance(w, Chart) else None

    def apply_theme(self, theme: Theme) -> None:
        for chart in self.charts.values():
            chart.apply_theme(theme)
        self.table.apply_theme(theme)

    def set_y_mode(self, mode: str) -> None:
        """Every chart's y axis (View > Y Axis): "auto", "linear" or "log"; Compare's too."""
        for chart in self.charts.values():
            chart.set_y_mode(mode)
        for i in range(self.count()):
            widget = self.widget(i)
            if widget not in (*self.tabs.values(), *self.charts.values()) \
                    and hasattr(widget, "set_y_mode"):
                widget.set_y_mode(mode)

    def export_chart(self, path: str, chart: Chart | None = None) -> None:
        """The chart (default: the one shown) to PNG or SVG, by the file's extension."""
        chart = chart or self.current_chart()
        if chart is None:
            raise ValueError("Show a chart (not the table) to export it.")
        export_chart(path, chart)


def export_chart(path: str, chart: Chart) -> None:
    """One chart to PNG or SVG, by the file's extension: the plot, its legend beside it and
    its caption, laid out as on screen (both formats draw the one widget, so they agree)."""
    from PySide6.QtGui import QImage
    if chart.width() < 640 or chart.height() < 360:   # never shown, or squeezed
        chart.resize(max(chart.width(), 960), max(chart.height(), 540))
    chart.ensurePolished()
    if chart.layout() is not None:
        chart.layout().activate()
    if path.lower().endswith(".svg"):
        from PySide6.QtSvg import QSvgGenerator
        generator = QSvgGenerator()
        generator.setFileName(path)
        generator.setSize(chart.size())
        generator.setViewBox(chart.rect())
        generator.setTitle("SiliconBench chart")
        painter = QPainter(generator)
        chart.render(painter, QPoint())
        painter.end()
    else:
        # Twice the on-screen size: crisp on Retina screens and in slides.
        image = QImage(chart.size() * 2, QImage.Format.Format_ARGB32)
        image.setDevicePixelRatio(2)
        image.fill(QColor(chart.theme.background))
        painter = QPainter(image)
        chart.render(painter, QPoint())
        painter.end()
        if not image.save(path):
            raise OSError(f"the image could not be written to {path}")
    if not Path(path).is_file():
        raise OSError(f"nothing was written to {path}")
