"""The Sustained chart: a sustained run's throughput over time, with the clock, power and
thermal pressure (or temperature) the machine reported in linked panes below, on the same
time axis (seconds since the timed blocks began). The burst and sustained windows are shaded
with their figures, and the first lasting drop is a vertical line through every pane."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from siliconbench.core.numbers import metric_title
from siliconbench.core.results import RunRecord
from siliconbench.core.telemetry.burst import chart_data
from siliconbench.core.telemetry.thermal import THERMAL_LEVELS
from siliconbench.gui.chart_series import param_text
from siliconbench.gui.charts.axes import series_symbol
from siliconbench.gui.singleton_refs import top_up
from siliconbench.gui.theme import Theme, series_color, theme_for

PANE_ORDER = ("clock", "power", "heat", "temperature")
LEFT_AXIS_PX = 80     # every pane's y axis, its ticks and title: wide enough for '0.0159'


class SustainedChart(QWidget):
    """Throughput per interval on top; below it, each kind of reading the runs have, x-linked
    to it. One colour per sustained measurement (a run, or a point of one)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        top_up()
        self.theme: Theme = theme_for()
        self.graphics = pg.GraphicsLayoutWidget()
        self.empty = QLabel("No sustained run here.\nRun a workload with --duration (minutes) "
                            "to see its throughput over time beside the clocks, power and "
                            "heat the machine reported.")
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.empty)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.caption)
        self.plots: dict[str, pg.PlotItem] = {}
        self._records: list[RunRecord] = []
        self._drawn: list[tuple] | None = None
        self.set_records([])

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._drawn = None
        self.set_records(self._records)

    def has_data(self) -> bool:
        return bool(self.plots)

    def set_records(self, records: list[RunRecord]) -> None:
        # Rebuilding the panes costs pyqtgraph thousands of references (singleton_refs):
        # the same runs with the same rows, redrawn as another run measures, are left be.
        drawn = [(r.id, len(r.rows), _entries(r)) for r in records]
        if drawn == self._drawn:
            return
        self._records, self._drawn = records, drawn
        top_up()
        self.graphics.clear()
        self.plots = {}
        measured, unreadable = readable(records)
        self.empty.setVisible(not measured)
        self.graphics.setVisible(bool(measured))
        self.graphics.setBackground(self.theme.background)
        skipped = (f"\nLeft out, its sustained data unreadable: {', '.join(unreadable)}."
                   if unreadable else "")
        if not measured:
            self.caption.setText(skipped.strip())
            return
        top = self.graphics.addPlot(row=0, col=0)
        self.plots["throughput"] = top
        units = sorted({d["unit"] for _, d in measured})
        # TFLOPS beside tok/s on one axis flattens the smaller: each is then drawn as a
        # share of its own burst, which is what sustained mode compares anyway.
        relative = len(units) > 1
        top.setLabel("left", "Throughput (× its burst)" if relative else
                     f"Throughput ({units[0]})")
        top.getAxis("left").enableAutoSIPrefix(False)   # '(x0.001)' beside TFLOPS misread
        top.addLegend(offset=(-10, -10))   # bottom right: clear of a burst at the top
        panes = [k for k in PANE_ORDER if any(k in d["panes"] for _, d in measured)]
        if "heat" in panes and "temperature" in panes:
            panes.remove("temperature")       # thermal pressure is what throttles a Mac
        for row, key in enumerate(panes, start=1):
            plot = self.graphics.addPlot(row=row, col=0)
            plot.setXLink(top)
            title = next(d["panes"][key]["title"] for _, d in measured if key in d["panes"])
            plot.setLabel("left", title)
            if key == "heat":
                plot.getAxis("left").setTicks([list(enumerate(THERMAL_LEVELS))])
                plot.setYRange(0, len(THERMAL_LEVELS) - 1)
            self.plots[key] = plot
        for plot in self.plots.values():   # one width: the panes' time axes line up
            plot.getAxis("left").setWidth(LEFT_AXIS_PX)
        bottom = self.plots[panes[-1]] if panes else top
        bottom.setLabel("bottom", "Time since the timed blocks began (s)")
        lines = []
        highest: dict[str, float] = {}
        for i, (rec, d) in enumerate(measured):
            color = series_color(self.theme, i)
            name = _name(rec, d, len(measured) > 1)
            scale = 1.0 / d["burst"][2] if relative and d["burst"][2] else 1.0
            top.plot(d["x"], [y * scale for y in d["y"]], pen=pg.mkPen(color, width=2), symbol=series_symbol(i),
                     symbolSize=6, symbolBrush=color, symbolPen=None, name=name)
            for (x0, x1, value), alpha in ((d["burst"], 40), (d["sustained"], 25)):
                region = pg.LinearRegionItem((x0, x1), movable=False,
                                             brush=pg.mkBrush(pg.mkColor(color).red(),
                                                              pg.mkColor(color).green(),
                                                              pg.mkColor(color).blue(), alpha))
                region.setZValue(-10)
                top.addItem(region)
                top.plot([x0, x1], [value * scale, value * scale], pen=pg.mkPen(color, width=1,
                                                                 style=pg.QtCore.Qt.DashLine))
            for key in panes:
                pane = d["panes"].get(key)
                if pane:
                    self.plots[key].plot(pane["x"], pane["y"], pen=pg.mkPen(color, width=2))
                    highest[key] = max(highest.get(key, 0.0), max(pane["y"]))
            if d["drop_at_s"] is not None:
                for plot in self.plots.values():
                    plot.addItem(pg.InfiniteLine(d["drop_at_s"], angle=90, pen=pg.mkPen(
                        self.theme.error, width=1, style=pg.QtCore.Qt.DashLine)))
            lines.append(f"{name}: sustained {d['ratio']:.2f}× of its burst; {d['said']}")
        for key in ("clock", "power"):
            if highest.get(key):   # from zero: a clock that fell by a tenth looks it
                self.plots[key].setYRange(0, highest[key] * 1.1)
        self.caption.setText("\n".join(lines) + "\nShaded: the burst (first 30 s) and the "
                             "sustained window (last third, at least a minute)." + skipped)

    def export(self, path: str) -> None:
        """File > Export Chart: the panes and caption as on screen, to PNG (twice the
        screen's size) or SVG by the file's extension, written whole or not at all."""
        from PySide6.QtCore import QBuffer, QIODevice, QPoint, QRect
        from PySide6.QtGui import QColor, QImage, QPainter

        from siliconbench.core.files import write_atomic
        if not self.plots:
            raise ValueError("no sustained run is drawn")
        if self.width() < 640 or self.height() < 360:   # never shown, or squeezed
            self.resize(max(self.width(), 960), max(self.height(), 720))
        size, buffer = self.size(), QBuffer()
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        if path.lower().endswith(".svg"):
            from PySide6.QtSvg import QSvgGenerator
            target = QSvgGenerator()
            target.setOutputDevice(buffer)
            target.setSize(size)
            target.setViewBox(QRect(QPoint(), size))
            target.setTitle("SiliconBench sustained chart")
        else:
            target = QImage(size * 2, QImage.Format.Format_ARGB32)
            target.setDevicePixelRatio(2)
            target.fill(QColor(self.theme.background))
        painter = QPainter(target)
        self.render(painter, QPoint())
        painter.end()
        if isinstance(target, QImage) and not target.save(buffer, "PNG"):
            raise OSError(f"the image for {path} could not be made")
        write_atomic(path, bytes(buffer.data()))

    def pane_titles(self) -> list[str]:
        return [p.getAxis("left").labelText for p in self.plots.values()]


def _entries(rec: RunRecord) -> int:
    sustained = rec.telemetry.get("sustained") if isinstance(rec.telemetry, dict) else None
    return len(sustained) if isinstance(sustained, list) else -1


def readable(records: list[RunRecord]) -> tuple[list[tuple[RunRecord, dict]], list[str]]:
    """(run, chart_data entry) for each sustained measurement whose figures are numbers, and
    the identity of each run whose telemetry["sustained"] is not what a run writes (an
    imported file may hold anything there: the schema leaves it open)."""
    measured, unreadable = [], []
    for rec in records:
        try:
            entries = chart_data(rec)
            for d in entries:
                numbers = [*d["x"], *d["y"], *d["burst"], *d["sustained"], d["ratio"],
                           *(v for p in d["panes"].values() for v in (*p["x"], *p["y"]))]
                if d["drop_at_s"] is not None:
                    numbers.append(d["drop_at_s"])
                if len(d["x"]) != len(d["y"]) or not all(
                        isinstance(v, (int, float)) and not isinstance(v, bool)
                        and math.isfinite(v) for v in numbers) or not d["burst"][2]:
                    raise ValueError("not a number")
                str(d["unit"]), dict(d["point"]), str(d["said"])
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            unreadable.append(rec.identity)
            continue
        measured += [(rec, d) for d in entries]
    return measured, unreadable


def _name(rec: RunRecord, d: dict, several: bool) -> str:
    point = ", ".join(param_text(k, v) for k, v in d["point"].items())
    who = rec.label or rec.device_name or rec.device
    what = metric_title(d["metric"])
    return f"{who}: {what} ({point})" if several or point else f"{who}: {what}"
