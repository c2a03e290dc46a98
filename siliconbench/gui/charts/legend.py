"""A chart's legend: one line per series, its colour and marker drawn before its name."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QAbstractItemView, QListWidget, QListWidgetItem, QSizePolicy, QWidget


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


FULL_NAME = Qt.ItemDataRole.UserRole + 1


def distinct_names(names: list[str], fits) -> list[str]:
    """Each name shortened to fit (fits(text) -> bool) by leaving out first the parts
    (' · '-separated) every other name shares, so what sets the names apart stays: 'NVIDIA
    H200 · TF32 on · 3 runs' beside '… · TF32 off · …', never 'NVIDIA H2…3 runs' twice.
    A name that fits stays whole; what still does not fit is elided by the list."""
    split = [n.split(" · ") for n in names]
    out = []
    for name, parts in zip(names, split):
        others = [q for q in split if q is not parts]
        if fits(name) or len(parts) < 2 or not others:
            out.append(name)
            continue
        # A part every other name has too tells nothing apart: those go, the last first;
        # the first part (the machine or device) only where every name shares it.
        shared = [i for i in range(len(parts) - 1, -1, -1)
                  if all(parts[i] in q for q in others)]
        shared = [i for i in shared if i] + [i for i in shared if not i]
        kept, text = list(parts), name
        for i in shared:
            kept[i] = "…"
            # Runs of '…' read as one; one at the end is left out (the name just stops).
            while kept and kept[-1] == "…" and len(kept) > 1:
                kept.pop()
            text = " · ".join(p for j, p in enumerate(kept)
                              if p != "…" or j == 0 or kept[j - 1] != "…")
            if fits(text):
                break
        out.append(text)
    return out


class SeriesLegend(QListWidget):
    """A chart's legend beside its plot, never over the data: one line per series, its
    colour and marker before its name (elided in the middle, whole in the tooltip); it
    scrolls when long. Unticking a line hides its series."""

    toggled = Signal(object, bool)     # the entry's key, shown

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # One line per name, elided in the middle (the device and the point stay, '…'
        # between), the whole name in the tooltip: wrapped, an LLM run's name took two to
        # five lines and the legend showed three runs of nine.
        self.setWordWrap(False)
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
        self._shortening, self._shortened_at = False, -1
        self.below = False     # under a narrow chart rather than beside it (Chart._place_legend)
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
            item.setData(FULL_NAME, name)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked if key in hidden
                               else Qt.CheckState.Checked)
            self.addItem(item)
        self.blockSignals(False)
        self._keys = keys
        self._shortened_at = -1
        self.setVisible(bool(entries))
        self.fit()
        self._shorten()

    def names(self) -> list[str]:
        """The whole names, as given."""
        return [self.item(i).data(FULL_NAME) for i in range(self.count())]

    def shown_names(self) -> list[str]:
        """The names as the legend shows them (distinct_names at its width)."""
        return [self.item(i).text() for i in range(self.count())]

    def _shorten(self) -> None:
        """Each line's name at the legend's width, keeping the parts that differ; once per
        width (a name set here relays the list out, which must not come back here)."""
        room = self.width() - self.iconSize().width() - 40
        if self._shortening or room == self._shortened_at:
            return
        self._shortening, self._shortened_at = True, room
        try:
            fm = self.fontMetrics()
            shown = distinct_names(self.names(), lambda t: fm.horizontalAdvance(t) <= room)
            self.blockSignals(True)
            for i, text in enumerate(shown):
                if self.item(i).text() != text:
                    self.item(i).setText(text)
            self.blockSignals(False)
        finally:
            self._shortening = False

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._shorten()

    def fit(self) -> None:
        """Beside the chart: as wide as the longest name, up to a third of the chart (min 120,
        max 360 px). Under a narrow chart: as tall as its lines, three at most (it scrolls)."""
        if self.below:
            row_h = max(14, self.sizeHintForRow(0))
            self.setFixedHeight(min(max(1, self.count()), 3) * row_h + 2 * self.frameWidth() + 2)
            return
        fm = self.fontMetrics()
        longest = max((fm.horizontalAdvance(self.item(i).data(FULL_NAME))
                       for i in range(self.count())), default=0)
        chart_w = self.parentWidget().width() if self.parentWidget() else 900
        self.setFixedWidth(int(max(120, min(longest + 80, 360, chart_w * 0.36))))

    def _changed(self, item: QListWidgetItem) -> None:
        self.toggled.emit(item.data(Qt.ItemDataRole.UserRole),
                          item.checkState() == Qt.CheckState.Checked)
