"""A label of at most a few lines at any width (ElidedLabel): Compare's sides and a chart's
caption, what does not fit ending in '…', the whole text on hover."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QTextLayout
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """A label of at most `lines` lines at any width: what does not fit ends in '…', and
    the whole text is its tooltip (text() keeps it all). Ten sides' names wrapped over four
    lines and pushed the chart down."""

    def __init__(self, lines: int = 2, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.lines = lines
        self.hint = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text + (f"\n\n{self.hint}" if self.hint else ""))
        self.setFixedHeight(self.fontMetrics().lineSpacing() * self._needed_lines() + 2)
        self.update()

    def _laid_out(self, width: int) -> list[str]:
        """The text's lines at this width, the last of `lines` elided."""
        fm = self.fontMetrics()
        out: list[str] = []
        for paragraph in self.text().split("\n"):
            layout = QTextLayout(paragraph, self.font())
            layout.beginLayout()
            while True:
                line = layout.createLine()
                if not line.isValid():
                    break
                line.setLineWidth(max(40, width))
                out.append(paragraph[line.textStart():line.textStart() + line.textLength()])
            layout.endLayout()
        if len(out) > self.lines:
            rest = " ".join(x.strip() for x in out[self.lines - 1:])
            out = out[:self.lines - 1] + [fm.elidedText(rest, Qt.TextElideMode.ElideRight,
                                                        max(40, width))]
        return out

    def _needed_lines(self) -> int:
        return max(1, min(self.lines, len(self._laid_out(self.width()))))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        height = self.fontMetrics().lineSpacing() * self._needed_lines() + 2
        if height != self.height():
            self.setFixedHeight(height)

    def displayed(self) -> list[str]:
        """The lines as painted now."""
        return self._laid_out(self.width())

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        fm = self.fontMetrics()
        for i, line in enumerate(self.displayed()):
            painter.drawText(0, fm.ascent() + i * fm.lineSpacing(), line.rstrip())
        painter.end()
