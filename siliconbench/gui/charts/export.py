"""A chart written to PNG or SVG, as it is laid out on screen."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint
from PySide6.QtGui import QColor, QPainter

if TYPE_CHECKING:
    from siliconbench.gui.charts.chart import Chart


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
