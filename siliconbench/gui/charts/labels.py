"""Labels on a plot that never overprint: each label is tried at its candidate places in turn
and takes the first that lies inside the plot, clear of the labels placed before it and of
the data points; a label with no such place is hidden (its chart says the value elsewhere,
in the legend)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF

POINT_R = 6.0     # half a marker's box, in pixels
GAP = 3.0         # between a label and what it marks


@dataclass
class Placed:
    """A label to place at one of `places`: (x, y) in the plot's coordinates with the
    TextItem anchor to put there, best first."""
    item: pg.TextItem
    places: list[tuple[float, float, tuple[float, float]]] = field(default_factory=list)


def _rect(vb: pg.ViewBox, item: pg.TextItem, x: float, y: float,
          anchor: tuple[float, float]) -> QRectF:
    """Where the label would lie in the scene, its anchor at (x, y)."""
    at = vb.mapViewToScene(QPointF(x, y))
    size = item.textItem.boundingRect().size()
    w, h = size.width(), size.height()
    return QRectF(at.x() - anchor[0] * w, at.y() - anchor[1] * h, w, h)


def place_labels(vb: pg.ViewBox, labels: list[Placed],
                 points: list[tuple[float, float]]) -> None:
    """Show each label at its first free place, else hide it. `points` (the plot's
    coordinates) are kept clear."""
    view = vb.sceneBoundingRect()
    taken = [QRectF(p.x() - POINT_R, p.y() - POINT_R, 2 * POINT_R, 2 * POINT_R)
             for p in (vb.mapViewToScene(QPointF(x, y)) for x, y in points)]
    for label in labels:
        for x, y, anchor in label.places:
            rect = _rect(vb, label.item, x, y, anchor)
            if view.contains(rect) and not any(rect.intersects(t) for t in taken):
                label.item.setAnchor(anchor)
                label.item.setPos(x, y)
                label.item.setVisible(True)
                taken.append(rect)
                break
        else:
            label.item.setVisible(False)


def beside_point(x: float, y: float) -> list[tuple[float, float, tuple[float, float]]]:
    """A point's label: above it to the left, above to the right, then below."""
    return [(x, y, (1, 1)), (x, y, (0, 1)), (x, y, (1, 0)), (x, y, (0, 0))]


def along_line(y: float, x_lo: float, x_hi: float, steps: int = 12
               ) -> list[tuple[float, float, tuple[float, float]]]:
    """A horizontal line's label: over it from its right end leftwards, then under it."""
    xs = [x_hi - (x_hi - x_lo) * i / steps for i in range(steps)]
    return [(x, y, (1, 1)) for x in xs] + [(x, y, (1, 0)) for x in xs]
