"""What every chart's plot stands on: the y axis in human units (linear or log10, and the
View menu's modes for it), the x axes of sizes (log2) and of categories (bar groups), the
markers that tell series apart, and plot_widget, which builds a plot with them."""

from __future__ import annotations

import math

import pyqtgraph as pg

from siliconbench.core.numbers import LOG_SPAN, compact
from siliconbench.gui.chart_series import size_label, token_label
from siliconbench.gui.singleton_refs import top_up

# The series of a chart spanning more than LOG_SPAN times (highest over lowest value) are
# drawn on a log y axis (siliconbench.core.numbers.needs_log_axis, which the HTML report uses too).
Y_MODES = {"auto": f"Automatic (log beyond {LOG_SPAN:g}×)", "linear": "Linear",
           "log": "Logarithmic"}
# Markers that, with the palette's colours, tell series apart past the palette's length:
# series i has colour i mod 8 and marker i mod 7, so the first 56 differ in the pair and
# neighbours differ in both. "x" is kept for wrong and above-peak points.
SYMBOLS = ("o", "s", "t", "d", "p", "h", "star")
# The pixels a y tick label takes, with the gap to the next.
TICK_ROOM = 22


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
        # A label needs about TICK_ROOM pixels: a short plot labelled every third decade
        # ("10" and "1K" alone) where every decade had room.
        per_decade = size / max(maxVal - minVal, 1e-9)
        step = max(1, math.ceil(TICK_ROOM / per_decade))
        levels = [(float(step), decades[::step])]
        if step == 1 and per_decade >= 3 * TICK_ROOM:   # room for 2 and 5 between them
            levels.append((0.5, [v for d in range(lo, hi + 1) for v in
                                 (d + math.log10(2), d + math.log10(5)) if minVal <= v <= maxVal]))
        return levels

    def tickStrings(self, values, scale, spacing):
        return [compact(10 ** v if self.log else v, self.unit) for v in values]


def plot_widget(**kwargs) -> pg.PlotWidget:
    """A pyqtgraph PlotWidget with a ValueAxis on the left, after making sure None's
    reference count can take what building one releases (siliconbench/gui/singleton_refs.py; the window
    tops the counts up on a timer too). Without pyqtgraph's context menu (Chart.y_menu is
    ours): its view box builds that menu only when asked to. Built for Chart to turn off, it
    was a third of a plot's making under cProfile (about 13 plots a window); a few % of
    CPU-s in the GUI tests."""
    top_up()
    axes = kwargs.pop("axisItems", {})
    axes.setdefault("left", ValueAxis())
    return pg.PlotWidget(axisItems=axes, enableMenu=False, **kwargs)


class SizeAxis(pg.AxisItem):
    """x is log2(size): ticks at whole powers of two, labelled with the size itself (as a
    size in bytes, '256 KB', where `unit_bytes` gives the bytes of one unit; as tokens,
    '1K', where `tokens`). With `log` off it is a plain linear axis (decode's depths until
    they span far); `zero_at` is where x = 0 lies on the log axis, labelled 0, and
    `ticks_at`, where set, puts the ticks at those positions (the depths measured) rather
    than at every power of two."""

    def __init__(self, *args, unit_bytes: int = 0, tokens: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.unit_bytes, self.tokens = unit_bytes, tokens
        self.log = True
        self.zero_at: float | None = None
        self.ticks_at: list[float] = []

    def tickValues(self, minVal: float, maxVal: float, size: float):
        if not self.log:
            return super().tickValues(minVal, maxVal, size)
        room = max(2, size / 60)           # a label about every 60 px
        if self.ticks_at:
            at = [v for v in self.ticks_at if minVal <= v <= maxVal]
            return [(1.0, at[::max(1, math.ceil(len(at) / room))])]
        lo, hi = math.ceil(minVal), math.floor(maxVal)
        if hi < lo:
            return []
        step = max(1, math.ceil((hi - lo + 1) / room))
        return [(float(step), [float(v) for v in range(lo, hi + 1, step)])]

    def tickStrings(self, values, scale, spacing):
        if not self.log:
            return super().tickStrings(values, scale, spacing)
        return [self._label(v) for v in values]

    def _label(self, v: float) -> str:
        if self.zero_at is not None and v <= self.zero_at:
            return "0" if v == self.zero_at else ""
        if self.unit_bytes:
            return compact(2 ** v * self.unit_bytes, "bytes")
        return token_label(2 ** v) if self.tokens else size_label(2 ** v)


class CategoryAxis(pg.AxisItem):
    """Bar groups: ticks at whole numbers, labelled with the model names."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.names: list[str] = []
        self.enableAutoSIPrefix(False)  # positions, not quantities: never "Model (x0.001)"

    def tickValues(self, minVal: float, maxVal: float, size: float):
        return [(1.0, [float(i) for i in range(len(self.names))])]

    def tickStrings(self, values, scale, spacing):
        """Each group's name, elided ('…') to the group's width: whole names that overlapped
        their neighbours were left out, so some groups had none."""
        from PySide6.QtCore import Qt
        from PySide6.QtGui import QFontMetrics
        view = self.linkedView()
        lo, hi = view.viewRange()[0] if view is not None else (0.0, 1.0)
        room = self.width() / max(hi - lo, 1e-9) - 8   # pixels per group, less a gap
        fm = QFontMetrics(self.style.get("tickFont") or self.font())
        return [fm.elidedText(self.names[int(v)], Qt.TextElideMode.ElideMiddle, int(room))
                if 0 <= int(v) < len(self.names) else "" for v in values]
