"""Draws the app icon's source image (siliconbench/resources/icon.png, 1024 px) with Qt and writes the
macOS icon (siliconbench/resources/SiliconBench.icns) from it with Pillow: `python scripts/make_icon.py`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

RESOURCES = Path(__file__).resolve().parent.parent / "siliconbench" / "resources"
SIZE = 1024


def draw(path: Path) -> None:
    """A chip (rounded square with pins) on a dark tile, and a rising bar chart on the die."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QColor, QGuiApplication, QImage, QLinearGradient, QPainter, QPen

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 (fonts)
    image = QImage(SIZE, SIZE, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    # Apple's grid: the tile is 824 px of the 1024 canvas, corner radius about 185.
    tile = QRectF(100, 100, 824, 824)
    back = QLinearGradient(tile.topLeft(), tile.bottomRight())
    back.setColorAt(0, QColor("#2b3440"))
    back.setColorAt(1, QColor("#10151c"))
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(back)
    p.drawRoundedRect(tile, 185, 185)
    die = QRectF(292, 292, 440, 440)
    p.setPen(QPen(QColor("#9aa7b4"), 22, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
    for i in range(5):  # pins on all four sides
        offset = die.left() + 60 + i * 80
        p.drawLine(int(offset), int(die.top() - 70), int(offset), int(die.top() - 20))
        p.drawLine(int(offset), int(die.bottom() + 20), int(offset), int(die.bottom() + 70))
        p.drawLine(int(die.left() - 70), int(offset), int(die.left() - 20), int(offset))
        p.drawLine(int(die.right() + 20), int(offset), int(die.right() + 70), int(offset))
    face = QLinearGradient(die.topLeft(), die.bottomRight())
    face.setColorAt(0, QColor("#d9dee4"))
    face.setColorAt(1, QColor("#8d98a5"))
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(face)
    p.drawRoundedRect(die, 48, 48)
    p.setBrush(QColor("#0a84ff"))  # the system accent blue: the measured bars
    for i, height in enumerate((110, 190, 280)):
        x = die.left() + 80 + i * 105
        p.drawRoundedRect(QRectF(x, die.bottom() - 70 - height, 70, height), 14, 14)
    p.end()
    image.save(str(path))


def to_icns(png: Path, icns: Path) -> None:
    from PIL import Image
    # Pillow writes every size macOS asks for (16 to 1024 px) from the one source image.
    Image.open(png).save(icns, format="ICNS")


if __name__ == "__main__":
    source, target = RESOURCES / "icon.png", RESOURCES / "SiliconBench.icns"
    draw(source)
    to_icns(source, target)
    print(f"Wrote {source} and {target}.")
