"""A chart written to PNG or SVG, as it is laid out on screen, under its title, its legend
without the check boxes that hide a series on screen, its whole caption without what only
the screen can do (hover), and in an SVG fonts a browser renders as sans serif."""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import TYPE_CHECKING

from PySide6.QtCore import QBuffer, QIODevice, QPoint, QRect, Qt
from PySide6.QtGui import QColor, QFont, QPainter

from siliconbench.core.files import write_atomic

if TYPE_CHECKING:
    from siliconbench.gui.charts.chart import Chart

TITLE_H = 34      # the title's strip over the chart, in pixels


@contextmanager
def vector_markers(chart: Chart):
    """Markers drawn as shapes: pyqtgraph draws them from an atlas of pixmaps, which Qt's SVG
    writer puts in whole for each marker (every symbol squeezed into one marker's box, as
    Chromium shows it). In export mode each is painted as its path."""
    import pyqtgraph as pg
    scatters = [i for i in chart.plot.scene().items() if isinstance(i, pg.ScatterPlotItem)]
    for item in scatters:
        item.setExportMode(True, {"antialias": True})
    try:
        yield
    finally:
        for item in scatters:
            item.setExportMode(False)


@contextmanager
def printable_legend(chart: Chart):
    """The legend as a page shows it: no check boxes, and no line for a series hidden on
    screen (the plot does not draw it). Put back as it was after."""
    legend = chart.legend
    kept = []
    for i in range(legend.count()):
        item = legend.item(i)
        state = item.checkState()
        kept.append((item, item.flags(), state))
        legend.setRowHidden(i, state == Qt.CheckState.Unchecked)
    legend.blockSignals(True)
    for item, flags, _ in kept:
        item.setFlags(flags & ~Qt.ItemFlag.ItemIsUserCheckable)
        item.setData(Qt.ItemDataRole.CheckStateRole, None)
    try:
        yield
    finally:
        for i, (item, flags, state) in enumerate(kept):
            item.setFlags(flags)
            item.setCheckState(state)
            legend.setRowHidden(i, False)
        legend.blockSignals(False)


# Browsers render an SVG's text in the family it names; Qt names its own ('Sans Serif',
# 'DejaVu Sans'), which a browser without it draws in a serif face.
SVG_FONTS = "Helvetica, Arial, sans-serif"
MAX_EXPORT_CAPTION_LINES = 12


def printed_caption(text: str) -> str:
    """A caption as a page says it: without the sentences that tell how to hover on screen
    ('Hover a point for its spread, ...'), which a picture cannot do."""
    sentences = re.split(r"(?<=[.:])\s+(?=[A-Z✕])", text)
    return " ".join(x for x in sentences if "Hover" not in x and "hover" not in x).strip()


@contextmanager
def printable_caption(chart: Chart):
    """The whole caption, as many lines as it takes (on screen it is elided to a few), and
    without what only the screen can do; put back as it was after."""
    caption = chart.caption
    text, lines = caption.text(), caption.lines
    caption.lines = MAX_EXPORT_CAPTION_LINES
    caption.setText(printed_caption(text))
    caption.setVisible(bool(caption.text()))
    if chart.layout() is not None:
        chart.layout().activate()
    try:
        yield
    finally:
        caption.lines = lines
        caption.setText(text)
        caption.setVisible(bool(text))
        if chart.layout() is not None:
            chart.layout().activate()


def with_svg_fonts(data: bytes) -> bytes:
    """Each font-family the SVG names followed by SVG_FONTS, so browsers fall back to a sans
    serif face."""
    return re.sub(rb'font-family="([^"]*)"',
                  lambda m: b'font-family="' + m.group(1) + b", " + SVG_FONTS.encode() + b'"',
                  data)


def _paint(painter: QPainter, chart: Chart, title: str) -> None:
    """The title over the chart, then the chart."""
    font = QFont(chart.font())
    font.setPointSizeF(font.pointSizeF() * 1.25)
    font.setBold(True)
    painter.setFont(font)
    painter.setPen(QColor(chart.theme.foreground))
    painter.drawText(QRect(12, 0, chart.width() - 24, TITLE_H),
                     Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, title)
    chart.render(painter, QPoint(0, TITLE_H))


def export_chart(path: str, chart: Chart, title: str | None = None) -> None:
    """One chart to PNG or SVG, by the file's extension: its title (default: the chart's
    export_title), the plot, its legend beside it and its caption, laid out as on screen
    (both formats draw the one widget, so they agree)."""
    from PySide6.QtGui import QImage
    if chart.width() < 640 or chart.height() < 360:   # never shown, or squeezed
        chart.resize(max(chart.width(), 960), max(chart.height(), 540))
    chart.ensurePolished()
    if chart.layout() is not None:
        chart.layout().activate()
    title = title if title is not None else chart.export_title()
    size = chart.size()
    size.setHeight(size.height() + TITLE_H)
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    svg = path.lower().endswith(".svg")
    with printable_legend(chart), vector_markers(chart), printable_caption(chart):
        if svg:
            from PySide6.QtSvg import QSvgGenerator
            generator = QSvgGenerator()
            generator.setOutputDevice(buffer)
            generator.setSize(size)
            generator.setViewBox(QRect(QPoint(), size))
            generator.setTitle(title or "SiliconBench chart")
            painter = QPainter(generator)
            painter.fillRect(QRect(QPoint(), size), QColor(chart.theme.background))
            _paint(painter, chart, title)
            painter.end()
        else:
            # Twice the on-screen size: crisp on Retina screens and in slides.
            image = QImage(size * 2, QImage.Format.Format_ARGB32)
            image.setDevicePixelRatio(2)
            image.fill(QColor(chart.theme.background))
            painter = QPainter(image)
            _paint(painter, chart, title)
            painter.end()
            if not image.save(buffer, "PNG"):
                raise OSError(f"the image for {path} could not be made")
    data = bytes(buffer.data())
    if svg:
        data = with_svg_fonts(data)
    if not data:
        raise OSError(f"nothing was drawn for {path}")
    # Written as every export is: whole or not at all, a link in its place replaced.
    write_atomic(path, data)
