"""The workload catalogue: each workload's title and a line on what it measures."""

from __future__ import annotations

from PySide6.QtCore import QSize, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from core.workloads import Workload, listed
from gui import qt_values
from gui.qt_values import set_value
from gui.theme import Theme, tone

ENTRY_MARGINS = (8, 5, 8, 5)   # around an entry's title and summary: left, top, right, bottom
ITEM_MARGINS = ENTRY_MARGINS[0] + ENTRY_MARGINS[2]   # an entry's text is this much narrower


class WorkloadCatalogue(QListWidget):
    chosen = Signal(object)  # Workload

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme: Theme | None = None   # the entries are styled by apply_theme
        self.load_error = ""
        try:
            self.workloads: list[Workload] = listed()
        except Exception as e:  # a broken workload module must not keep the window shut
            self.workloads = []
            self.load_error = f"The workload catalogue could not be loaded: {e}"
        self._summaries: list[QLabel] = []
        self._titles: list[QLabel] = []
        self._styled_current = -1    # the entry styled as selected
        for w in self.workloads:
            item = QListWidgetItem()
            item.setData(qt_values.USER_ROLE, w.name)
            item.setToolTip(f"{w.summary}\nRuns on: {', '.join(w.frameworks)}")
            cell = QWidget()
            lay = QVBoxLayout(cell)
            lay.setContentsMargins(*ENTRY_MARGINS)
            lay.setSpacing(1)
            title = QLabel(w.title)
            tone(title, bold=True)
            summary = QLabel(w.summary)
            summary.setWordWrap(True)
            tone(summary, scale=0.9)
            self._titles.append(title)
            self._summaries.append(summary)
            lay.addWidget(title)
            lay.addWidget(summary)
            lay.addStretch(1)
            self.addItem(item)
            self.setItemWidget(item, cell)
        self._fitted_width = 0
        self.currentRowChanged.connect(self._on_row)
        self.setVerticalScrollMode(QListWidget.ScrollMode.ScrollPerPixel)
        set_value(self, "verticalScrollBarPolicy", qt_values.SCROLL_BAR_ALWAYS_OFF)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        # The viewport's width (no scroll bar: off). Not viewport().width(): a wrapper for the
        # viewport, which Qt made, makes PySide6 build 56 enums before the first paint.
        self._fit_rows(self.width() - 2 * self.frameWidth())

    def _fit_rows(self, width: int) -> None:
        """Each entry as tall as its summary wrapped at this width (a wrapped label's
        sizeHint ignores the width it will get), and every entry in view: a list scrolling
        inside the scrolling sidebar is fiddly. Again whenever the list's width changes (the
        window or the splitter resized), before that width's first paint."""
        if width == self._fitted_width or width <= ITEM_MARGINS:
            return
        self._fitted_width = width
        rows = 0
        for i, (title, summary) in enumerate(zip(self._titles, self._summaries)):
            height = title.sizeHint().height() + summary.heightForWidth(width - ITEM_MARGINS) + 12
            self.item(i).setSizeHint(QSize(0, height))
            rows += height
        self.setFixedHeight(rows + 2 * self.frameWidth() + 2)

    def _on_row(self, row: int) -> None:
        # The selected entry's text takes the highlight colour; the one left gives it back.
        self._style_rows({self._styled_current, row})
        if 0 <= row < len(self.workloads):
            self.chosen.emit(self.workloads[row])

    def current(self) -> Workload | None:
        row = self.currentRow()
        return self.workloads[row] if 0 <= row < len(self.workloads) else None

    def select(self, name: str | None) -> None:
        names = [w.name for w in self.workloads]
        self.setCurrentRow(names.index(name) if name in names else 0 if names else -1)

    def apply_theme(self, theme: Theme) -> None:
        if theme == self.theme:
            return   # the same colours again would change nothing
        self.theme = theme
        self._style_rows(range(len(self._titles)))

    def _style_rows(self, rows) -> None:
        """Colour these entries' labels (only those that change, not every entry at every
        click)."""
        if self.theme is None:
            return   # not styled yet: apply_theme styles every entry
        selected = self.palette().color(QPalette.ColorRole.HighlightedText).name()
        current = self.currentRow()
        for row in rows:
            if not 0 <= row < len(self._titles):
                continue
            on = row == current
            tone(self._titles[row], selected if on else self.theme.foreground)
            tone(self._summaries[row], selected if on else self.theme.muted)
        self._styled_current = current
