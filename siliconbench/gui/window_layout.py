"""The main window's panes, laid out: the machine card and devices on the left, the workloads,
their form and Run in the middle, the charts over the Run Queue and Results on the right
(siliconbench.gui.main_window wires them together), over a banner the window shows when the
shared store refuses (siliconbench.gui.store_banner)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from siliconbench.gui import qt_values
from siliconbench.gui.device_list import DeviceList
from siliconbench.gui.machine_card import MachineCard
from siliconbench.gui.qt_values import set_value
from siliconbench.gui.workload_catalogue import WorkloadCatalogue

DEVICE_PANE_WIDTH = 290
SETUP_PANE_WIDTH = 330
MIN_PANE_WIDTH = 220       # the sidebars' narrowest, when the window is small
MIN_WINDOW = (720, 520)    # with the sidebar hidden; the panes ask for more when shown
MIN_CHARTS_W = 480         # the charts, Compare and Results: narrower, their controls clip
# The window's narrowest with the sidebar shown: its two panes beside the charts (at 720 the
# charts had 270 px and Compare's buttons and Results' filters were cut).
MIN_WITH_SIDEBAR_W = 2 * MIN_PANE_WIDTH + MIN_CHARTS_W + 20
# The charts' pane's height the Run Queue and Results give up their room for as the window
# shrinks: Compare whole at its most compact, its chart readable (at the window's smallest the
# Results kept 166 px and Compare's chart showed 60).
CHARTS_FIRST_H = 330


class ChartsFirstSplit(QSplitter):
    """The charts over the Run Queue and Results. The charts take what the window grows by
    (stretch 3:1), and as it shrinks the lower pane gives up its room first, down to its
    own minimum, until the charts have CHARTS_FIRST_H; a height the user drags stays."""

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.charts_first()

    def charts_first(self) -> None:
        charts, below = self.sizes()
        spare = below - self.widget(1).minimumSizeHint().height()
        give = min(CHARTS_FIRST_H - charts, spare)
        if give > 0:
            self.setSizes([charts + give, below - give])


class WindowLayout:
    """The main window's widgets and panes (a part of MainWindow)."""

    def _build(self) -> None:
        self.machine_card = MachineCard()
        self.devices = DeviceList()
        self.catalogue = WorkloadCatalogue()
        self.form_stack = QStackedWidget()
        self.quick_box = QCheckBox("Quick measurement (less precise)")
        self.quick_box.setToolTip("Fewer and shorter timed blocks: a first look in a fraction "
                                  "of the time; spreads are wider and more points get flagged "
                                  "noisy.")
        self.run_button = QPushButton("Run")
        self.run_button.setDefault(True)
        self.run_button.setObjectName("RunButton")
        self.run_button.setMinimumHeight(32)
        self.run_hint = QLabel()
        self.run_hint.setWordWrap(True)
        self.run_hint.setProperty("role", "hint")

        # Three panes, read left to right: where it runs, what runs, what came out.
        where = QWidget()
        col = QVBoxLayout(where)
        col.setContentsMargins(14, 12, 10, 12)
        col.setSpacing(8)
        col.addWidget(self.machine_card)
        self.role_labels = [self.run_hint]   # toned by apply_theme (siliconbench.gui.theme.ROLES)
        col.addWidget(self._section("Devices", self.devices.refresh_button))
        col.addWidget(self.devices)
        col.addStretch(1)
        self.device_pane = self._scrolling(where)
        self.device_pane.setMinimumWidth(MIN_PANE_WIDTH)

        what = QWidget()
        col = QVBoxLayout(what)
        col.setContentsMargins(10, 12, 12, 8)
        col.setSpacing(8)
        col.addWidget(self._section("Workload"))
        col.addWidget(self.catalogue)
        self.workload_summary = QLabel()   # what the chosen workload measures
        self.workload_summary.setWordWrap(True)
        self.workload_summary.setProperty("role", "hint")
        self.role_labels.append(self.workload_summary)
        col.addWidget(self.workload_summary)
        col.addWidget(self._section("Parameters"))
        col.addWidget(self.form_stack)
        col.addStretch(1)
        # Run stays in view however long a workload's form is.
        run_area = QWidget()
        run_col = QVBoxLayout(run_area)
        run_col.setContentsMargins(10, 6, 12, 10)
        run_col.addWidget(self.quick_box)
        run_col.addWidget(self.run_button)
        run_col.addWidget(self.run_hint)
        self.setup_pane = QWidget()
        setup_col = QVBoxLayout(self.setup_pane)
        setup_col.setContentsMargins(0, 0, 0, 0)
        setup_col.setSpacing(0)
        setup_col.addWidget(self._scrolling(what), 1)
        self.separator = self._separator()
        setup_col.addWidget(self.separator)
        setup_col.addWidget(run_area)
        self.setup_pane.setMinimumWidth(MIN_PANE_WIDTH)

        self.chart_slot = QStackedWidget()  # "Loading charts…" until build_charts
        loading = QLabel("Loading charts…")
        set_value(loading, "alignment", qt_values.ALIGN_CENTER)
        loading.setProperty("role", "hint")
        self.role_labels.append(loading)
        self.chart_slot.addWidget(loading)
        self.bottom = QTabWidget()  # Run Queue and Results: build_rest
        self.bottom.setDocumentMode(True)

        self.right_split = ChartsFirstSplit()
        set_value(self.right_split, "orientation", qt_values.VERTICAL)
        self.right_split.addWidget(self.chart_slot)
        self.right_split.addWidget(self.bottom)
        # The charts first: Compare's chart under its table was 90 px tall.
        self.right_split.setStretchFactor(0, 3)
        self.right_split.setStretchFactor(1, 1)
        self.right_split.setSizes([600, 260])
        self.right_split.setMinimumWidth(MIN_CHARTS_W)

        self.main_split = QSplitter()           # horizontal
        for pane in (self.device_pane, self.setup_pane, self.right_split):
            self.main_split.addWidget(pane)
        self.main_split.setStretchFactor(2, 1)
        self.main_split.setCollapsible(2, False)
        self.main_split.setSizes([DEVICE_PANE_WIDTH, SETUP_PANE_WIDTH, 800])
        # A banner goes over the panes when the shared store refuses (store_banner).
        central = QWidget()
        self.central_layout = QVBoxLayout(central)
        self.central_layout.setContentsMargins(0, 0, 0, 0)
        self.central_layout.setSpacing(0)
        self.central_layout.addWidget(self.main_split, 1)
        self.setCentralWidget(central)
        self.statusBar().showMessage("Looking for devices…")

    def _section(self, text: str, button: QPushButton | None = None) -> QWidget:
        """A sidebar section's heading (a label of role "section", toned by apply_theme), with
        an optional small button at its right."""
        label = QLabel(text)
        label.setProperty("role", "section")
        label.setContentsMargins(0, 4, 0, 0)
        self.role_labels.append(label)
        if button is None:
            return label
        row = QWidget()
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(label)
        lay.addStretch(1)
        lay.addWidget(button)
        return row

    @staticmethod
    def _scrolling(inner: QWidget) -> QScrollArea:
        scroll = QScrollArea()
        scroll.setWidget(inner)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        set_value(scroll, "focusPolicy", qt_values.NO_FOCUS)  # Tab goes to the controls inside
        set_value(scroll, "horizontalScrollBarPolicy", qt_values.SCROLL_BAR_ALWAYS_OFF)
        return scroll

    def _separator(self) -> QFrame:
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Plain)
        return line
