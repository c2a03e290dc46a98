"""The chart tabs of the window (ChartPanel): a tab per curve or per stack of curves
(ChartStack: an LLM's prefill above its decode), the throughput, scaling and telemetry charts,
the Sustained chart (a tab shown only while a run made with --duration is looked at) and the
table of result rows, redrawn as runs are selected or measured."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QSplitter, QTabWidget, QWidget

from siliconbench.core.results import RunRecord
from siliconbench.gui.chart_series import (
    BARS,
    CURVE_METRICS,
    SCALING,
    TELEMETRY,
    chart_of,
    is_sustained,
)
from siliconbench.gui.charts.bars import BarChart
from siliconbench.gui.charts.chart import Chart
from siliconbench.gui.charts.curve import CurveChart
from siliconbench.gui.charts.export import export_chart
from siliconbench.gui.charts.scaling import ScalingChart
from siliconbench.gui.charts.sustained import SustainedChart
from siliconbench.gui.charts.telemetry import TelemetryChart
from siliconbench.gui.row_table import RowTable
from siliconbench.gui.theme import Theme


class ChartStack(QSplitter):
    """The charts of one tab, one above the other (an LLM's prefill and decode: side by side,
    legends naming whole runs were wider than each plot). File > Export Chart writes the one
    last clicked, the last of the stack until then."""

    def __init__(self, charts: list[Chart], parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.charts = charts
        self._current = charts[-1]
        for chart in charts:
            self.addWidget(chart)
            chart.plot.scene().sigMouseClicked.connect(
                lambda _event, chart=chart: setattr(self, "_current", chart))
        self.setChildrenCollapsible(False)

    def current_chart(self) -> Chart:
        return self._current


def curve_tabs(curves: dict[str, Chart]) -> dict[str, QWidget]:
    """Tab title -> its widget: a curve alone, or a ChartStack of the curves sharing a tab."""
    by_tab: dict[str, list[Chart]] = {}
    for metric, chart in curves.items():
        by_tab.setdefault(CURVE_METRICS[metric].tab, []).append(chart)
    return {tab: charts[0] if len(charts) == 1 else ChartStack(charts)
            for tab, charts in by_tab.items()}


class ChartPanel(QTabWidget):
    """The charts and the table of result rows for the runs being looked at: those selected
    under Results, plus runs being measured now."""

    records_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocumentMode(True)
        self.curves = {m: CurveChart(m) for m in CURVE_METRICS}
        self.bars = BarChart()
        self.scaling = ScalingChart()
        self.telemetry = TelemetryChart()
        self.sustained = SustainedChart()
        self.table = RowTable()
        self.tabs = curve_tabs(self.curves)
        for title, widget in self.tabs.items():
            self.addTab(widget, title)
        self.addTab(self.bars, "Throughput")
        self.addTab(self.scaling, "Scaling")
        self.addTab(self.telemetry, "Telemetry")
        self.addTab(self.sustained, "Sustained")
        self.setTabVisible(self.indexOf(self.sustained), False)
        self.addTab(self.table, "Table")
        self._records: dict[str, RunRecord] = {}
        self._table_stale = False
        self._telemetry_stale = False
        self._sustained_stale = False
        self.currentChanged.connect(self._on_tab_changed)

    @property
    def charts(self) -> dict[str, Chart]:
        return {**self.curves, BARS: self.bars, SCALING: self.scaling,
                TELEMETRY: self.telemetry}

    def records(self) -> list[RunRecord]:
        return list(self._records.values())

    def show_records(self, records: list[RunRecord]) -> None:
        """Replace what is drawn."""
        self._records = {r.id: r for r in records}
        self._refresh()

    def update_record(self, rec: RunRecord) -> None:
        """Add or redraw one run (a live run after each row). The tab in front stays the one
        the user chose: a run starting brought its own chart up over the one being read."""
        self._records[rec.id] = rec
        self._refresh({chart_of(rec.workload, r) for r in rec.rows} - {None})

    def tab_of(self, kind: str) -> QWidget:
        """The tab that shows this kind's chart (the chart itself, or the stack holding it)."""
        chart = self.charts[kind]
        return next((w for w in self.tabs.values() if w is chart or
                     chart in getattr(w, "charts", ())), chart)

    def _refresh(self, kinds: set[str] | None = None) -> None:
        """Redraw the charts of these kinds (default: all)."""
        records = list(self._records.values())
        for kind, chart in (*self.curves.items(), (BARS, self.bars),
                            (SCALING, self.scaling)):
            if kinds is None or kind in kinds:
                chart.set_records(records)
        if kinds is None:
            self._refresh_telemetry()
        self._refresh_sustained(records)
        # The table is the slow part (it sizes its columns); fill it only while it is seen.
        self._table_stale = self.currentWidget() is not self.table
        if not self._table_stale:
            self.table.set_records(records)
        self.records_changed.emit()

    def update_telemetry(self, rec: RunRecord) -> None:
        """A running run's telemetry grew: redraw it if the telemetry chart is in view."""
        self._records[rec.id] = rec
        self._refresh_telemetry()

    def _refresh_telemetry(self) -> None:
        self._telemetry_stale = self.currentWidget() is not self.telemetry
        if not self._telemetry_stale:
            self.telemetry.set_records(self.records())

    def sustained_shown(self) -> bool:
        """Whether the Sustained tab is offered: a run looked at was made with --duration."""
        return self.isTabVisible(self.indexOf(self.sustained))

    def _refresh_sustained(self, records: list[RunRecord]) -> None:
        """The Sustained tab, offered while a run looked at has interval rows; it comes to
        the front when it appears over a chart (not over the table or Compare, which the
        user is reading), and is drawn only while it is seen."""
        index = self.indexOf(self.sustained)
        wanted = any(is_sustained(r) for r in records)
        was = self.isTabVisible(index)
        if wanted != was:
            shown = self.currentWidget()
            on_chart = shown in (*self.tabs.values(), *self.charts.values())
            if not wanted and shown is self.sustained:
                self.setCurrentWidget(self._first_drawn(records))
            self.setTabVisible(index, wanted)
            if wanted and on_chart:
                self.setCurrentIndex(index)
        self._sustained_stale = self.currentWidget() is not self.sustained
        if not self._sustained_stale:
            self.sustained.set_records(records if wanted else [])

    def _first_drawn(self, records: list[RunRecord]) -> QWidget:
        """The tab of the first chart these runs are drawn on (the first tab for none)."""
        kind = next((k for r in records for row in r.rows
                     if (k := chart_of(r.workload, row)) is not None), None)
        return self.tab_of(kind) if kind is not None else self.widget(0)

    def _on_tab_changed(self) -> None:
        if self._table_stale and self.currentWidget() is self.table:
            self._table_stale = False
            self.table.set_records(self.records())
        if self._telemetry_stale and self.currentWidget() is self.telemetry:
            self._refresh_telemetry()
        if self._sustained_stale and self.currentWidget() is self.sustained:
            self._sustained_stale = False
            self.sustained.set_records(self.records())

    def current_chart(self) -> Chart | None:
        w = self.currentWidget()
        if hasattr(w, "current_chart"):  # a composite tab (Compare) names its own chart
            return w.current_chart()
        return w if isinstance(w, Chart) else None

    def apply_theme(self, theme: Theme) -> None:
        for chart in self.charts.values():
            chart.apply_theme(theme)
        self.sustained.apply_theme(theme)
        self.table.apply_theme(theme)

    def set_y_mode(self, mode: str) -> None:
        """Every chart's y axis (View > Y Axis): "auto", "linear" or "log"; Compare's too."""
        for chart in self.charts.values():
            chart.set_y_mode(mode)
        for i in range(self.count()):
            widget = self.widget(i)
            if widget not in (*self.tabs.values(), *self.charts.values()) \
                    and hasattr(widget, "set_y_mode"):
                widget.set_y_mode(mode)

    def can_export(self) -> bool:
        """Whether File > Export Chart has something to write: a chart with data in front."""
        if self.currentWidget() is self.sustained:
            return self.sustained.has_data()
        chart = self.current_chart()
        return chart is not None and chart.has_data()

    def export_chart(self, path: str, chart: Chart | None = None) -> None:
        """The chart (default: the one shown) to PNG or SVG, by the file's extension."""
        shown = self.currentWidget()
        if chart is None and shown is self.sustained:
            self.sustained.export(path)
            return
        title = shown.chart_title() if chart is None and hasattr(shown, "chart_title") \
            else None     # Compare titles its chart with what it compares
        chart = chart or self.current_chart()
        if chart is None:
            raise ValueError("Show a chart (not the table) to export it.")
        export_chart(path, chart, title)
