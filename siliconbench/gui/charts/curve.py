"""A metric over its point parameter (CurveChart): a headline metric over a log2 size axis
with p25/p75 error bars and the device's peak dashed, an LLM's prefill or decode with decode's
memory bound dashed per series."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from siliconbench.core.numbers import interval, number
from siliconbench.core.results import RunRecord, missing_why
from siliconbench.core.text import clip
from siliconbench.gui.chart_series import CURVE_METRICS, Series, curve_series, x_title
from siliconbench.gui.charts.axes import SizeAxis, plot_widget, series_symbol
from siliconbench.gui.charts.chart import Chart
from siliconbench.gui.charts.labels import Placed, along_line, beside_point, place_labels
from siliconbench.gui.row_text import is_serious, point_tip
from siliconbench.gui.theme import series_color

# A bound more than this many times the highest point is left above the y axis's end.
BOUND_ZOOM = 3
# Bound labels drawn on the plot at most; every series' bound is in the legend besides.
MAX_BOUND_LABELS = 4
# A bound at one depth is drawn this share of the x axis either side of its point.
SINGLE_BOUND_W = 0.05


def bound_text(s: Series, unit: str, before: str = "") -> str:
    """A series' bound as the legend and labels read it: 'bound 1,354 tok/s', a sweep's
    'bound 380–1,354 tok/s' ('' without one), after `before`."""
    if not s.bounds:
        return ""
    values = sorted(r.value for r in s.bounds)
    span = interval(values[0], values[-1]) if values[0] != values[-1] else number(values[0])
    return f"{before}bound {span} {unit}"


class CurveChart(Chart):
    """A metric over its point parameter, one curve per series, live-updated by
    set_records."""

    def __init__(self, metric: str, parent: QWidget | None = None) -> None:
        curve = CURVE_METRICS[metric]
        axis = SizeAxis("bottom", unit_bytes=curve.x_bytes, tokens=curve.tokens)
        axis.log = curve.log_x           # decode's depths: linear until they span far
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
        self._unlabelled: list[str] = []   # peak labels with no room on the plot
        # Points ringed (set_marked): (run id, the point's parameters), e.g. Compare's best
        # vs best where the sides share no point.
        self.marked: list[tuple[str, dict]] = []
        self._rings = pg.ScatterPlotItem(symbol="o", size=20)
        self._rings.setZValue(1900)
        plot.addItem(self._rings)
        # Labels are placed in pixels: again when the plot's size or range changes.
        self.plot_item.vb.sigResized.connect(self._place_labels)

    def set_records(self, records: list[RunRecord], names: dict[str, str] | None = None
                    ) -> None:
        """The runs to draw, a series per run and point; `names` ({run id: name}), where
        given, stands for each run's identity in its series' names (Compare's sides)."""
        self.series = curve_series(records, self.metric_name)
        if names:
            by_id = {r.id: r for r in records}
            for series in self.series:
                rec = by_id.get(series.key[0])
                if rec is not None and rec.id in names:
                    series.name = series.name.replace(rec.identity, names[rec.id], 1)
        # A context sweep: "Context (tokens…)"; its depths on log2 where they span far.
        title = x_title(records, self.metric_name, self.log_x())
        if title != self.plot_item.getAxis("bottom").labelText:
            self.plot_item.setLabel("bottom", title)
        self._redraw()

    def log_x(self) -> bool:
        """Whether the x axis is log2 now (always for sizes; decode's depths where they
        span more than Curve.log_beyond)."""
        return self.series[0].log_x if self.series else self.curve.log_x

    def set_marked(self, points: list[tuple[str, dict]]) -> None:
        """The points to ring, each (run id, its parameters), drawn at the next redraw."""
        self.marked = list(points)

    def _ringed(self) -> list[tuple[float, float, int]]:
        """Each point of `marked` drawn: its x, its y on the plot and its series' index."""
        return [(x, self.y(r.value), i) for i, s in enumerate(self.series)
                for x, r in zip(s.xs(), s.rows) if (s.key[0], r.params) in self.marked]

    def ringed(self) -> list[tuple[float, float]]:
        """The ringed points' positions (x, y on the plot)."""
        return [(x, y) for x, y, _ in self._ringed()]

    def _draw_rings(self) -> None:
        where = self._ringed()
        self._rings.setData(x=[w[0] for w in where], y=[w[1] for w in where],
                            brush=pg.mkBrush(0, 0, 0, 0),
                            pen=[pg.mkPen(series_color(self.theme, w[2]), width=2.5)
                                 for w in where])

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
            entries.append((s.key, s.name + bound_text(s, self.unit, " · "), color, symbol,
                            False))
            xs_all += s.xs()
            top = max([top] + [r.stats.p75 if r.stats else r.value for r in s.rows])
            if s.peak:
                peaks.setdefault((s.device, s.peak), (s, color))
                top = max(top, s.peak)
        self.legend.set_entries(entries)
        self._draw_rings()
        # Peak lines only change with the set of series and the scale: redrawing them on
        # every live row would cost a visible hitch.
        if [*peaks, log] != self._peak_keys:
            for line in self._peak_lines:
                plot.removeItem(line)
            for line in self._peak_lines:
                plot.removeItem(line.label)
            self._peak_lines = [self._add_peak_line(s, color) for s, color in peaks.values()]
            self._peak_keys = [*peaks, log]
        bound_top = max(bound_values, default=0.0)
        # A bound far above every point (a tiny model is bound by overheads, not memory)
        # would flatten the curve at the bottom of a linear axis: it stays above the scale,
        # its label says so. A log axis holds both.
        self._bound_above = not log and bound_top > BOUND_ZOOM * top > 0
        if not self._bound_above:
            top = max(top, bound_top)
        self._show_plot(bool(xs_all))
        log_x = self.log_x()
        self._set_x_axis(log_x, xs_all)
        if xs_all:
            lo, hi = min(xs_all), max(xs_all)
            if log_x:                 # 0.4 of a doubling either side
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
                for i, s in enumerate(self.series):     # a one-depth bound's width
                    if len(s.bounds) == 1:
                        self._draw(self._items[s.key], s, series_color(self.theme, i),
                                   series_symbol(i))
            self._label_bounds()
            self._place_labels()
        caption = self._caption()
        if caption != self.caption.text():
            self.caption.setText(caption)

    def _set_x_axis(self, log_x: bool, xs: list[float]) -> None:
        """The x axis's scale; a linear curve turned log2 has its ticks at the depths
        measured, 0 where zero lies (the series' zero_at)."""
        axis = self.plot_item.getAxis("bottom")
        zero_at = self.series[0].zero_at if self.series and log_x \
            and not self.curve.log_x else None
        ticks = sorted(set(xs)) if log_x and not self.curve.log_x else []
        if (axis.log, axis.zero_at, axis.ticks_at) != (log_x, zero_at, ticks):
            axis.log, axis.zero_at, axis.ticks_at = log_x, zero_at, ticks
            axis.picture = None
            axis.update()

    def _items_of(self, key) -> list:
        items = self._items.get(key, {})
        return [item for name, item in items.items() if name != "bound_label"] + \
            ([items["bound_label"]] if "bound_label" in items and items["bound_label"].isVisible()
             else [])

    def _label_bounds(self) -> None:
        """Each bound's label: its value at its last point ('bound 1,354 tok/s'), or, above
        the scale, its values and an arrow."""
        for s in self.series:
            label = self._items[s.key].get("bound_label")
            if label is None:
                continue
            label.setVisible(bool(s.bounds))
            if not s.bounds:
                continue
            if self._bound_above:
                label.setText(f"{bound_text(s, self.unit)} ↑ above the scale")
            else:
                label.setText(f"bound {number(s.bounds[-1].value)} {self.unit}")

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
            if len(bxs) == 1 and self._ranges:
                # One depth: a dashed stretch across the point's x (_redraw's ranges), where
                # a line of one point showed nothing.
                half = SINGLE_BOUND_W * (self._ranges[1] - self._ranges[0])
                bxs, bys = [bxs[0] - half, bxs[0] + half], bys * 2
            items["bound"].setData(bxs, bys, pen=pg.mkPen(color, width=1.6,
                                                          style=Qt.PenStyle.DashLine))
            items["bound_label"].setColor(color)
            items["bound_label"].fill = pg.mkBrush(self.theme.background + "E0")

    def _add_peak_line(self, s: Series, color: str) -> pg.InfiniteLine:
        line = pg.InfiniteLine(pos=self.y(s.peak), angle=0, movable=False,
                               pen=pg.mkPen(color, width=1.2, style=Qt.PenStyle.DashLine))
        # Its label is placed with the others (_place_labels), clear of the points and of
        # the other peaks' labels: 990 and 989 TFLOPS lie close on a log axis.
        line.label = pg.TextItem(f"{s.device} peak {number(s.peak)} {self.unit}", color=color,
                                 anchor=(1, 1))
        line.label.setZValue(1500)
        self.plot_item.addItem(line, ignoreBounds=True)
        self.plot_item.addItem(line.label, ignoreBounds=True)
        return line

    def _place_labels(self, *_) -> None:
        """The peaks' labels along their lines, then the bounds' beside their last points,
        each where it overprints nothing (charts.labels); a bound's value is in the legend
        too, so a label with no room left is hidden."""
        if not self._ranges:
            return
        lo, hi, y_lo, _ = self._ranges
        labels = [Placed(line.label, along_line(line.value(), lo, hi))
                  for line in self._peak_lines]
        labelled = set()
        for s in self.series:
            label = self._items[s.key].get("bound_label")
            if label is None or not s.bounds:
                continue
            same = (s.bound_label, tuple((s.x_of(r), r.value) for r in s.bounds))
            if same in labelled or len(labelled) >= MAX_BOUND_LABELS:
                label.setVisible(False)
                continue
            labelled.add(same)
            last = s.bounds[-1]
            if self._bound_above:
                labels.append(Placed(label, along_line(y_lo, lo, hi)))
            else:
                labels.append(Placed(label, beside_point(s.position(last),
                                                         self.y(last.value))))
        points = [(x, self.y(r.value)) for s in self.series
                  for x, r in zip(s.xs(), s.rows, strict=True)]
        place_labels(self.plot_item.vb, labels, points)
        # A peak whose label found no room is named in the caption instead.
        self._unlabelled = [line.label.textItem.toPlainText() for line in self._peak_lines
                            if not line.label.isVisible()]
        caption = self._caption()
        if caption != self.caption.text():
            self.caption.setText(caption)

    def _caption(self) -> str:
        parts = [self.note] if self.note else []
        parts.append("Error bars: p25–p75 of the timed blocks. Hover a point for its spread, "
                     "confidence interval and flags.")
        if self.curve.peak:
            if any(s.peak for s in self.series):
                parts.append("Dashed: the device's physical peak"
                             + (f" ({'; '.join(self._unlabelled)})."
                                if self._unlabelled else "."))
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
        # Each with why, in its flag's word: skipped for time, unsupported (results.missing_why).
        missing = [f"{s.name} {s.x}={r.params.get(s.x)} ({clip(missing_why(r), 90)})"
                   for s in self.series for r in s.missing]
        if missing:
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            parts.append(f"Not measured: {'; '.join(missing[:3])}{more}.")
        return " ".join(parts)
