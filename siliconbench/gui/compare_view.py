"""The Compare tab: the runs selected under Results (and published references added here) side
by side with siliconbench.core.compare_stats's statistics, warnings in sentences, a chart, and report export.
Its sides, the references' descriptions and the table's words come from siliconbench.core.compare_words;
its sizes and small parts are in compare_parts.py, its verdict table's filling in compare_table.py."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from siliconbench.core import reference
from siliconbench.core.comparability import one_rank_notes
from siliconbench.core.compare_stats import ComparedRow, Comparison, Side, unique_labels
from siliconbench.core.compare_words import (  # noqa: F401  (reference_details: the tests' name)
    FIXED,
    best_lines,
    best_row_texts,
    chart_groups,
    compared,
    headers,
    reference_details,
    reference_line,
    reference_side,
    side_letter,
    sides_for,
    spec_params,
    summary_text,
    table_bests,
)
from siliconbench.core.numbers import metric_heading
from siliconbench.core.report import legend, point_label, to_csv, to_html
from siliconbench.core.results import RunRecord
from siliconbench.core.runner import RunSpec
from siliconbench.gui.chart_series import CURVE_METRICS
from siliconbench.gui.charts.bars import EMPTY_CHART, CompareBarChart
from siliconbench.gui.charts.chart import Chart
from siliconbench.gui.charts.curve import CurveChart
from siliconbench.gui.charts.elided import ElidedLabel
from siliconbench.gui.charts.export import export_chart
from siliconbench.gui.compare_parts import (  # noqa: F401  (the sizes: the tests' names)
    MAX_BEST_LINES,
    MAX_VERDICT_W,
    MAX_WARNINGS_H,
    MIN_CHART_H,
    MIN_CONTENT,
    MIN_TABLE_H,
    SHORT_H,
    ElidingCombo,
    first_chart,
    is_curve,
    reference_title,
    ringed_note,
)
from siliconbench.gui.compare_table import fill_table
from siliconbench.gui.row_table import one_row_height, rows_height
from siliconbench.gui.sheets import file_dialog, message_sheet
from siliconbench.gui.theme import LIGHT, Theme


class CompareView(QWidget):
    """The verdict table first, then its chart; the warnings folded under one line; published
    references explained and repeatable here. Recomputed only while in view: a comparison
    runs a test per row."""

    # RunSpecs to queue: repeat a reference's workload and parameters on a chosen device.
    run_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = LIGHT
        self.records: list[RunRecord] = []
        self.references: list[RunRecord] = []
        self.comparison: Comparison | None = None
        self._stale = False

        self._build_reference_tools()
        self._build_verdicts()
        self._lay_out()
        self._show_reference()
        self._refresh()

    def _build_reference_tools(self) -> None:
        """The published references' controls: choose one, add it, run it here."""
        # Long titles are elided ('…'): the window must shrink below the longest title's width.
        self.reference_combo = ElidingCombo()
        self.device_combo = ElidingCombo()
        self.device_combo.setToolTip("The device to measure the reference's workload on")
        self.reference_combo.setToolTip("Published figures (siliconbench/resources/reference) to compare "
                                        "with; they carry no samples, so no verdict.")
        self._published = reference.references()
        for rec in self._published:
            self.reference_combo.addItem(reference_title(rec), rec.id)
        self.reference_combo.currentIndexChanged.connect(self._show_reference)
        self.reference_combo.setToolTip(self.reference_combo.currentText())
        self.add_reference_button = QPushButton("Add Reference")
        self.add_reference_button.clicked.connect(
            lambda: self.add_reference(self.reference_combo.currentData()))
        self.clear_references_button = QPushButton("Clear References")
        self.clear_references_button.clicked.connect(self.clear_references)
        self.export_report_button = QPushButton("Export Report…")
        self.export_report_button.clicked.connect(self.choose_export_report)
        self.export_chart_button = QPushButton("Export Chart…")
        self.export_chart_button.clicked.connect(self.choose_export_chart)
        self.chart_combo = ElidingCombo()   # "gemm: Throughput (TFLO" was cut mid-word
        self.chart_combo.currentIndexChanged.connect(self._draw_chart)

        self.reference_info = ElidedLabel(lines=2)
        self.reference_info.setProperty("role", "hint")
        self.run_reference_button = QPushButton("Run It Here")
        self.run_reference_button.setToolTip("Queue the reference's workload with its "
                                             "parameters on the chosen device")
        self.run_reference_button.clicked.connect(self.run_reference)
        self._devices: list = []

    def _build_verdicts(self) -> None:
        """The summary line, the folded warnings, the verdict table and the charts."""
        self.summary = ElidedLabel(lines=3)
        self.summary.hint = legend()
        self.summary.setProperty("role", "hint")
        self.warnings_button = QToolButton()
        self.warnings_button.setCheckable(True)
        self.warnings_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.warnings_button.setAutoRaise(True)
        self.warnings_button.toggled.connect(self._fold_warnings)
        self.warnings = QLabel()
        self.warnings.setWordWrap(True)
        self.warnings.setTextFormat(Qt.TextFormat.PlainText)
        self.warnings.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Unfolded, the warnings scroll in a strip of their own: the chart keeps its height.
        self.warnings_area = QScrollArea()
        self.warnings_area.setWidget(self.warnings)
        self.warnings_area.setWidgetResizable(True)
        self.warnings_area.setFrameShape(QFrame.Shape.NoFrame)
        self.warnings_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.warnings_area.setMaximumHeight(MAX_WARNINGS_H)
        self.warnings_area.hide()
        self.warnings.hide()
        self.table = QTableWidget()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.verticalHeader().hide()
        self.bars = CompareBarChart()
        self.curves = {m: CurveChart(m) for m in CURVE_METRICS}
        self.chart_stack = QStackedWidget()
        for chart in (self.bars, *self.curves.values()):
            self.chart_stack.addWidget(chart)

    def _lay_out(self) -> None:
        """The tab's layout: reference rows, summary, warnings, then verdicts over the chart."""
        tools = QHBoxLayout()
        tools.addWidget(QLabel("Reference:"))
        tools.addWidget(self.reference_combo, 1)
        tools.addWidget(self.add_reference_button)
        tools.addWidget(self.clear_references_button)
        repeat = QHBoxLayout()
        repeat.addWidget(self.reference_info, 2)
        repeat.addWidget(QLabel("Run on:"))
        repeat.addWidget(self.device_combo, 1)
        repeat.addWidget(self.run_reference_button)
        head = QHBoxLayout()
        head.addWidget(self.summary, 1)
        head.addWidget(self.warnings_button)
        chart_box = QWidget()
        chart_col = QVBoxLayout(chart_box)
        chart_col.setContentsMargins(0, 0, 0, 0)
        chart_col.setSpacing(2)
        chart_bar = QHBoxLayout()
        chart_bar.addWidget(QLabel("Chart:"))
        chart_bar.addWidget(self.chart_combo, 1)
        # The exports beside what they export: with them in the reference's row, that row
        # needed 600 px and the window's narrowest left Compare 480 (it scrolled sideways).
        chart_bar.addWidget(self.export_chart_button)
        chart_bar.addWidget(self.export_report_button)
        chart_col.addLayout(chart_bar)
        self.saved_label = ElidedLabel(lines=1)   # 'Saved to …' after an export
        self.saved_label.setProperty("role", "hint")
        self.saved_label.hide()
        chart_col.addWidget(self.saved_label)
        chart_col.addWidget(self.chart_stack, 1)
        # The verdicts come first, as tall as their rows up to a third; the chart takes the rest
        # (a one-row comparison left it 60 px under a legend) and what the window grows by.
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(chart_box)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        self.chart_stack.setMinimumHeight(MIN_CHART_H)
        # Below its minimum the tab scrolls instead of squeezing: at the window's smallest the
        # chart was 30 px tall and every button clipped.
        self.content = QWidget()
        self.content.setMinimumSize(*MIN_CONTENT)
        # The reference's two rows: above the verdicts, or under the chart where the tab is
        # short (_place_reference).
        self.reference_box = QWidget()
        rows = QVBoxLayout(self.reference_box)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.setSpacing(4)
        rows.addLayout(tools)
        rows.addLayout(repeat)
        layout = QVBoxLayout(self.content)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(4)
        layout.addWidget(self.reference_box)
        layout.addLayout(head)
        layout.addWidget(self.warnings_area)
        layout.addWidget(self.splitter, 1)
        self.scroll = QScrollArea()
        self.scroll.setWidget(self.content)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll)

    # ------------------------------------------------------------------ input

    def set_records(self, records: list[RunRecord]) -> None:
        """The runs to compare (the Results selection); drawn now if in view, else when shown."""
        self.records = list(records)
        self._stale = not self.isVisible()
        if not self._stale:
            self._refresh()

    def add_reference(self, ref_id: str | None) -> None:
        rec = next((r for r in self._published if r.id == ref_id), None)
        if rec is not None and rec not in self.references:
            self.references.append(rec)
            # The line under the picker describes the reference just compared, not another.
            self.reference_combo.setCurrentIndex(self.reference_combo.findData(rec.id))
            self._refresh()

    def clear_references(self) -> None:
        self.references = []
        self._refresh()

    def set_devices(self, devices: list) -> None:
        """The usable devices (siliconbench.core.frameworks.DeviceInfo) a reference can be repeated on."""
        self._devices = [d for d in devices if d.usable]
        self._show_reference()

    def current_reference(self) -> RunRecord | None:
        ref_id = self.reference_combo.currentData()
        return next((r for r in self._published if r.id == ref_id), None)

    def _show_reference(self) -> None:
        from siliconbench.core.catalogue import workload
        from siliconbench.core.frameworks import runs_on as frameworks_of
        rec = self.current_reference()
        # One line in view; everything it says on hover.
        self.reference_info.setText(reference_line(rec) if rec else "")
        self.reference_info.setToolTip(reference_details(rec) if rec else "")
        self.device_combo.clear()
        if rec is not None:
            runs_on = frameworks_of(workload(rec.workload))
            # The reference's own framework first: that is the like-for-like comparison.
            devices = sorted((d for d in self._devices if d.framework in runs_on),
                             key=lambda d: d.framework != rec.framework)
            for d in devices:
                self.device_combo.addItem(f"{d.name} ({d.framework} {d.id})",
                                          (d.framework, d.id))
        self.device_combo.setEnabled(self.device_combo.count() > 0)
        self.run_reference_button.setEnabled(self.device_combo.count() > 0)

    def reference_spec(self) -> RunSpec | None:
        """The run that repeats the chosen reference on the chosen device."""
        rec, where = self.current_reference(), self.device_combo.currentData()
        if rec is None or where is None:
            return None
        return RunSpec(rec.workload, where[0], where[1], spec_params(rec))

    def run_reference(self) -> None:
        spec = self.reference_spec()
        if spec is not None:
            # Compared with the reference as soon as the run is selected.
            self.add_reference(self.reference_combo.currentData())
            self.run_requested.emit([spec])

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self._refresh()

    def sides(self) -> list[Side]:
        return unique_labels(sides_for(self.records) + [reference_side(r)
                                                        for r in self.references])

    # ------------------------------------------------------------------ drawing

    def _refresh(self) -> None:
        sides = self.sides()
        self.comparison = compared(sides) if len(sides) >= 2 else None
        cmp = self.comparison
        self.summary.setText(summary_text(cmp, self.records, self.references))
        warnings = cmp.warnings if cmp else []
        self.warnings.setText("\n".join(f"⚠ {w[:1].upper()}{w[1:]}." for w in warnings))
        self.warnings_button.setText(f"⚠ {len(warnings)} warning{'s' * (len(warnings) != 1)}")
        self.warnings_button.setVisible(bool(warnings))
        self._fold_warnings(self.warnings_button.isChecked())
        self._fill_table()
        self._fit_table()
        chosen = self.chart_combo.currentData()
        self.chart_combo.blockSignals(True)
        self.chart_combo.clear()
        groups = chart_groups(cmp) + self._curves_unmatched(cmp) if cmp else []
        for workload, metric, unit in groups:
            self.chart_combo.addItem(f"{workload}: {metric_heading(metric, unit)}",
                                     (workload, metric, unit))
        self.chart_combo.setCurrentIndex(groups.index(first_chart(groups, chosen))
                                         if groups else -1)
        self.chart_combo.blockSignals(False)
        self._draw_chart()
        for button in (self.export_report_button, self.export_chart_button):
            button.setEnabled(cmp is not None and bool(cmp.rows or cmp.best))

    def _curves_unmatched(self, cmp: Comparison) -> list[tuple[str, str, str]]:
        """Curves the sides measured that the comparison matched no row of: two LLM runs
        that generated different numbers of tokens share no decode point, yet their decode
        curves read side by side (Compare opened them on the peak memory). Only of workloads
        the comparison has rows of: runs that share nothing are not drawn as if they did."""
        from siliconbench.gui.chart_series import chart_of
        have = set(chart_groups(cmp))
        compared = {workload for workload, _, _ in have}
        out: list[tuple[str, str, str]] = []
        for side in cmp.sides:
            for rec in side.records:
                for row in rec.rows:
                    kind = chart_of(rec.workload, row)
                    key = (rec.workload, kind, CURVE_METRICS[kind].unit) \
                        if kind in CURVE_METRICS else None
                    if key and rec.workload in compared and key not in have \
                            and key not in out:
                        out.append(key)
        return out

    def _fold_warnings(self, shown: bool) -> None:
        shown = shown and not self.warnings_button.isHidden()
        self.warnings.setVisible(shown)
        self.warnings_area.setVisible(shown)
        if shown:   # as tall as the warnings, up to MAX_WARNINGS_H
            self.warnings.adjustSize()
            self.warnings_area.setFixedHeight(min(MAX_WARNINGS_H,
                                                  self.warnings.sizeHint().height() + 4))

    def headers(self) -> list[str]:
        cmp = self.comparison
        return headers(cmp.sides, cmp.rows) if cmp else headers([])

    def _fill_table(self) -> None:
        fill_table(self.table, self.comparison, self.headers(), self.theme)

    def table_height(self) -> int:
        """The height that shows the header and every row of the verdict table."""
        t = self.table
        return rows_height(t, [t.rowHeight(r) for r in range(t.rowCount())
                               if not t.isRowHidden(r)], t.horizontalScrollBar().maximum() > 0)

    def _fit_table(self) -> None:
        total = sum(self.splitter.sizes())
        if total <= 0:           # not laid out yet: the stretch factors decide
            return
        least = one_row_height(self.table) if self.is_short() else MIN_TABLE_H
        self.table.setMinimumHeight(least)
        top = max(least, min(self.table_height(), total // 3))
        self.splitter.setSizes([top, total - top])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_reference(self.height() < SHORT_H)
        self._fit_table()

    def is_short(self) -> bool:
        """Whether the tab is laid out short (_place_reference)."""
        return self.content.layout().indexOf(self.reference_box) != 0

    def _place_reference(self, short: bool) -> None:
        """Where the tab is short (the window at its smallest), the chart comes before the
        reference's rows: they go under it, a scroll away, the sides' names and the
        reference's description take a line each, and the verdicts a row; the chart keeps
        MIN_CHART_H in view. At the window's smallest it showed 60 px, the rest scrolled
        off below those rows."""
        for label, lines in ((self.summary, 3), (self.reference_info, 2)):
            if label.lines != (1 if short else lines):
                label.lines = 1 if short else lines
                label.setText(label.text())     # its height for its lines
        if short == self.is_short():
            return
        layout = self.content.layout()
        layout.setContentsMargins(8, 2 if short else 6, 8, 6)
        layout.removeWidget(self.reference_box)
        layout.insertWidget(layout.count() if short else 0, self.reference_box)

    def _draw_chart(self) -> None:
        cmp = self.comparison
        key = self.chart_combo.currentData()
        rows = [r for r in cmp.rows if (r.workload, r.metric, r.unit) == key] if cmp and key \
            else []
        bests = [b for b in table_bests(cmp) if (b.workload, b.metric, b.unit) == key] \
            if cmp and key else []
        blank = self._drawing_nothing(key)
        # Why a side has nothing drawn (one rank's bus bandwidth), then the best vs best.
        notes = [f"{n[:1].upper()}{n[1:]}." for side in blank for n in one_rank_notes([side])]
        lines = [f"{line}." for line in best_lines(cmp, only_unshared=True, bests=bests)] \
            if bests else []
        runs = [rec for s in cmp.sides if all(s is not b for b in blank)
                for rec in s.records] if cmp else []
        if key and (bests or not rows) and key[1] in CURVE_METRICS:
            # A curve no row matched, or each side's sweep where they share no point: each
            # side's best ringed, the ratio under the chart.
            chart = self.curves[key[1]]
            chart.set_marked([(c.run_id, p) for b in bests
                              for c, p in zip(b.cells, b.points) if c is not None])
            chart.set_note(" ".join(notes + ringed_note(lines)))
            chart.set_records([rec for rec in runs if rec.workload == key[0]], self.run_names())
        elif is_curve(rows):
            chart = self.curves[rows[0].metric]
            chart.set_marked([])
            chart.set_note(" ".join(notes))
            # The curve chart draws every run's sweep: give it the runs this comparison used.
            used = {i for r in rows for c in r.cells if c is not None
                    for i in c.run_ids or [c.run_id]}
            chart.set_records([rec for rec in runs if rec.id in used], self.run_names())
        else:
            chart = self.bars
            chart.set_note(" ".join(notes + (lines if len(lines) <= MAX_BEST_LINES else [
                f"The bars named best vs best: each side's best; the table's best vs best "
                f"rows give their {len(lines)} ratios."])))
            # A best vs best is a group of bars of its own, named so.
            chart.set_rows(cmp, rows + [ComparedRow(b.workload, b.metric, b.unit, {}, b.cells,
                                                    b.baseline) for b in bests],
                           [point_label(r.params) for r in rows]
                           + [best_row_texts(b)[FIXED.index("Point")] for b in bests])
        # What the table says, said here too: with two runs selected that share nothing,
        # 'Select two or more runs' under 'Nothing to compare' read as a contradiction; with
        # every side of one rank, why no bus bandwidth is drawn.
        chart.empty.setText(EMPTY_CHART if cmp is None else " ".join(notes) or
                            "Nothing to draw: the sides share no workload and point.")
        self.chart_stack.setCurrentWidget(chart)

    def run_names(self) -> dict[str, str]:
        """{run id: its side's name}, the run's time after it where the side holds several:
        the curves' legend names the sides as the table and the summary do."""
        sides = self.comparison.sides if self.comparison else []
        return {rec.id: side.label + (f" · {rec.when}" if len(side.records) > 1 else "")
                for side in sides for rec in side.records}

    def _drawing_nothing(self, key: tuple | None) -> list[Side]:
        """The sides whose every value of this chart's metric is 0 (one rank's bus
        bandwidth, which no log axis can place): left off the chart and its legend, and
        said why under it."""
        if self.comparison is None or key is None:
            return []
        out = []
        for side in self.comparison.sides:
            values = [row.value for rec in side.records if rec.workload == key[0]
                      for row in rec.rows if (row.metric, row.unit) == key[1:]
                      and row.value is not None]
            if values and not any(values):
                out.append(side)
        return out

    def current_chart(self) -> Chart:
        return self.chart_stack.currentWidget()

    def chart_title(self) -> str:
        """An exported chart's title: what it shows and the sides' letters."""
        sides = self.comparison.sides if self.comparison else []
        names = ", ".join(f"{side_letter(i)} = {s.label}" for i, s in enumerate(sides))
        return f"{self.chart_combo.currentText()}" + (f" · {names}" if names else "")

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        for chart in (self.bars, *self.curves.values()):
            chart.apply_theme(theme)
        self._fill_table()

    def set_y_mode(self, mode: str) -> None:
        """The charts' y axis (View > Y Axis): "auto", "linear" or "log"."""
        for chart in (self.bars, *self.curves.values()):
            chart.set_y_mode(mode)

    # ------------------------------------------------------------------ export

    def export_report(self, path: str) -> None:
        """The comparison as HTML or CSV, by the file's extension (OSError if unwritable)."""
        if self.comparison is None:
            raise ValueError("Nothing to compare yet.")
        text = to_csv(self.comparison) if path.lower().endswith(".csv") else \
            to_html(self.comparison)
        from siliconbench.core.files import write_atomic
        write_atomic(path, text)  # a full disk leaves the old file as it was

    def choose_export_report(self) -> QFileDialog:
        def chosen(paths: list[str], name_filter: str) -> None:
            path = paths[0]
            if not Path(path).suffix:
                path += ".csv" if "csv" in name_filter.lower() else ".html"
            self._write(lambda: self.export_report(path), path)
        return file_dialog(self, "Export Comparison Report",
                           str(Path.home() / "siliconbench-compare.html"),
                           "HTML report (*.html);;CSV table (*.csv)", chosen, save=True)

    def choose_export_chart(self) -> QFileDialog:
        def chosen(paths: list[str], name_filter: str) -> None:
            path = paths[0]
            if not Path(path).suffix:
                path += ".svg" if "svg" in name_filter.lower() else ".png"
            self._write(lambda: export_chart(path, self.current_chart(), self.chart_title()),
                        path)
        return file_dialog(self, "Export Chart", str(Path.home() / "siliconbench-compare.png"),
                           "PNG image (*.png);;SVG image (*.svg)", chosen, save=True)

    def _write(self, write, path: str) -> None:
        try:
            write()
        except (OSError, ValueError) as e:
            message_sheet(self, "Export failed", f"Cannot write {path}: {e}")
            return
        # Where it went, under the buttons that wrote it (the dialog had closed on it).
        self.saved_label.setText(f"Saved to {path}")
        self.saved_label.setToolTip(path)
        self.saved_label.show()
