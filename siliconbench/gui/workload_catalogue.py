"""The workload catalogue: one line per workload, its title; what the chosen one measures is
said under the list (MainWindow.workload_summary), and each entry's tooltip says it too.

Plain list items, not a widget per entry: nine two-label entries with wrapped summaries cost
30 M instructions to the first paint (844 M to 814 M, callgrind; 596 M for a bare window) and
pushed the parameters below the fold."""

from __future__ import annotations

from PySide6.QtCore import QSize, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from siliconbench.core.catalogue import Workload, listed
from siliconbench.gui import qt_values
from siliconbench.gui.qt_values import set_value

ROW_PADDING = 8   # px above and below an entry's title, together


class WorkloadCatalogue(QListWidget):
    chosen = Signal(object)  # Workload

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from siliconbench.core.frameworks import runs_on
        self.load_error = ""
        try:
            self.workloads: list[Workload] = listed()
        except Exception as e:  # a broken workload module must not keep the window shut
            self.workloads = []
            self.load_error = f"The workload catalogue could not be loaded: {e}"
        row = QSize(0, self.fontMetrics().height() + ROW_PADDING)
        for w in self.workloads:
            item = QListWidgetItem(w.title)
            item.setData(qt_values.USER_ROLE, w.name)
            item.setToolTip(f"{w.summary}\nRuns on: {', '.join(runs_on(w))}")
            item.setSizeHint(row)
            self.addItem(item)
        # Every entry in view: a list scrolling inside the scrolling sidebar is fiddly.
        self.setFixedHeight(row.height() * len(self.workloads) + 2 * self.frameWidth() + 2)
        set_value(self, "verticalScrollBarPolicy", qt_values.SCROLL_BAR_ALWAYS_OFF)
        self.currentRowChanged.connect(self._on_row)

    def _on_row(self, row: int) -> None:
        if 0 <= row < len(self.workloads):
            self.chosen.emit(self.workloads[row])

    def current(self) -> Workload | None:
        row = self.currentRow()
        return self.workloads[row] if 0 <= row < len(self.workloads) else None

    def select(self, name: str | None) -> None:
        names = [w.name for w in self.workloads]
        self.setCurrentRow(names.index(name) if name in names else 0 if names else -1)
