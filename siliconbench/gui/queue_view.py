"""The run queue on screen: per run a progress bar, the current step, an ETA and a Cancel
button, a failed run's reason inline (its stderr on hover), a run's warnings counted (read on
hover), a context menu (cancel, details, copy); on top, the whole queue's progress."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from siliconbench.core.catalogue import headline
from siliconbench.core.numbers import duration
from siliconbench.gui.row_text import (
    flag_counts,
    value_with_spread,
    warning_count,
    warnings_tooltip,
)
from siliconbench.gui.run_queue import CANCELLED, FAILED, OK, QUEUED, RUNNING, RunJob, RunQueue
from siliconbench.gui.theme import LIGHT, Theme, font_pt

STDERR_TOOLTIP_LINES = 20


def duration_text(seconds: float | None) -> str:
    return "" if seconds is None else f"about {duration(seconds)} left"


def shiboken_valid(widget) -> bool:
    from shiboken6 import isValid
    return isValid(widget)


def queue_eta_text(left: float | None, unknown: int) -> str:
    """' · about 5 min left', or what is known and how many queued runs are not: ' · about
    3 s left for this run, then 2 queued runs of unknown length'."""
    if left is None and not unknown:
        return ""
    if not unknown:
        return f" · {duration_text(left)}"
    runs = f"{unknown} queued run{'s' * (unknown != 1)} of unknown length"
    return f" · {duration_text(left)}, then {runs}" if left is not None else f" · then {runs}"


def outcome_text(job: RunJob) -> str:
    """What a finished run came to, in a line."""
    if job.state == OK:
        # Points measured, not rows: an all-reduce point has three rows (bus and algorithm
        # bandwidth, latency), so 3 message sizes read "9 points"; a whole run's row (its
        # highest temperature) is no point of its own.
        points = {repr(sorted(r.params.items())) for r in job.record.rows if r.value is not None}
        n = len(points - {"[]"}) or len(points)
        text = f"Done · {n} point{'s' * (n != 1)}"
        best = headline(job.record)
        if best is not None:
            text += f" · best {value_with_spread(best)}"
        flagged = flag_counts(job.record.rows)
        if flagged:
            text += f" · {flagged}"
        if job.record.warnings:
            text += f" · {warning_count(job.record.warnings)} (hover to read)"
        return text
    kept = len(job.record.rows) if job.record else 0
    kept_text = f"{kept} result row{'s' * (kept != 1)} kept"
    if job.state == CANCELLED:
        return "Cancelled" + (f" · {kept_text}" if kept else "")
    return f"Failed: {job.reason or 'no reason given'}" + (f" ({kept_text})" if kept else "")


def _set_text(label: QLabel, text: str) -> None:
    # Progress events come many times a second; an unchanged label must not relayout.
    if label.text() != text:
        label.setText(text)


def _set_style(widget: QWidget, sheet: str) -> None:
    # Setting a style sheet re-polishes the widget, which is slow: only when it changes.
    if widget.styleSheet() != sheet:
        widget.setStyleSheet(sheet)


class JobRow(QFrame):
    def __init__(self, job: RunJob, queue: RunQueue, theme: Theme,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.job, self.queue, self.theme = job, queue, theme
        self.setObjectName("JobRow")
        grid = QVBoxLayout(self)
        grid.setContentsMargins(10, 6, 10, 6)
        grid.setSpacing(3)
        top = QHBoxLayout()
        self.title = QLabel(job.title)
        self.title.setStyleSheet("font-weight: 600;")
        self.eta = QLabel()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop this run; the points measured so far are kept")
        self.cancel_button.clicked.connect(lambda: queue.cancel(job))
        # Not a Tab stop: Tab after Run went through the queue's rows, and Space there
        # cancelled a run. The keyboard cancels with Run > Cancel Current Run (Ctrl+.) and
        # Cancel All.
        self.cancel_button.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        top.addWidget(self.title, 1)
        top.addWidget(self.eta)
        top.addWidget(self.cancel_button)
        grid.addLayout(top)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.bar.setMaximumHeight(8)
        grid.addWidget(self.bar)
        self.step = QLabel()
        self.step.setWordWrap(True)
        self.step.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        grid.addWidget(self.step)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(
            lambda pos: self.context_menu().popup(self.mapToGlobal(pos)))
        self.update_view()

    def context_menu(self) -> QMenu:
        """Cancel while it runs; the run's details (the dialog Results opens) and its line
        of text for the clipboard once it has a record."""
        menu = QMenu(self)
        if not self.job.ended:
            menu.addAction("Cancel Run", lambda: self.queue.cancel(self.job))
        if self.job.ended and self.job.record is not None:
            menu.addAction("Show Run Details…", self.show_details)
        menu.addAction("Copy Summary", lambda: QGuiApplication.clipboard().setText(
            f"{self.job.title}\t{self.step.text()}"))
        self._menu = menu  # kept alive while it is open
        return menu

    def show_details(self):
        from siliconbench.gui.run_detail import RunDetail
        self.detail = RunDetail(self.job.record, self.window())
        self.detail.show()
        return self.detail

    def update_view(self) -> None:
        job = self.job
        value = int(job.fraction * 1000)
        if self.bar.value() != value:
            self.bar.setValue(value)
        color = self.theme.muted
        if job.state == QUEUED:
            step, eta = "Waiting", ""
        elif job.state == RUNNING:
            counted = f"step {int(job.done) + 1} of {int(job.total)} · " if job.total and \
                job.done < job.total else ""
            step, eta = f"{counted}{job.step}", duration_text(job.eta_s())
            if not eta and job.elapsed_s() is not None:   # alive: how long it has run
                eta = f"{duration(job.elapsed_s())} elapsed"
            # Busy (indeterminate) until a step is done: a one-step run (an N=8192 product
            # on a CPU) showed an empty bar for minutes.
            self._set_range(0 if not job.total or not job.done else 1000)
        else:
            self._set_range(1000)
            step, eta = outcome_text(job), ""
            # Done reads as done, warnings or not (its line says '⚠ N warnings'): the warning
            # colour beside the error's made a finished run look failed.
            color = {OK: self.theme.ok, FAILED: self.theme.error}.get(job.state,
                                                                      self.theme.muted)
        _set_text(self.step, step)
        # The run's warnings, and a failed run's last stderr lines (kept with the run and in
        # the log), on hover.
        warned = warnings_tooltip(job.record.warnings) if job.record else ""
        tail = job.record.stderr_tail if job.state == FAILED and job.record else ""
        tip = "\n\n".join(t for t in (warned, "\n".join(
            tail.splitlines()[-STDERR_TOOLTIP_LINES:])) if t)
        if self.step.toolTip() != tip:
            self.step.setToolTip(tip)
        _set_style(self.step, f"color: {color}; font-size: {font_pt(0.92)}pt;")
        _set_text(self.eta, eta)
        _set_style(self.eta, f"color: {self.theme.muted}; font-size: {font_pt(0.92)}pt;")
        self.cancel_button.setVisible(not job.ended)
        self.bar.setVisible(not job.ended or job.state == OK)


    def _set_range(self, maximum: int) -> None:
        if self.bar.maximum() != maximum:
            self.bar.setRange(0, maximum)


class QueueView(QWidget):
    def __init__(self, queue: RunQueue, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.queue = queue
        self.theme = LIGHT
        self.rows: dict[int, JobRow] = {}
        self._pending: JobRow | None = None     # added, to be scrolled into view
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        head = QHBoxLayout()
        head.setContentsMargins(6, 0, 6, 0)
        self.overall_label = QLabel()
        self.overall = QProgressBar()
        self.overall.setRange(0, 1000)
        self.overall.setTextVisible(False)
        self.overall.setMaximumHeight(8)
        self.cancel_all_button = QPushButton("Cancel All")
        self.cancel_all_button.clicked.connect(queue.cancel_all)
        self.clear_button = QPushButton("Clear Finished")
        self.clear_button.clicked.connect(queue.clear_finished)
        head.addWidget(self.overall_label)
        head.addWidget(self.overall, 1)
        head.addWidget(self.cancel_all_button)
        head.addWidget(self.clear_button)
        layout.addLayout(head)
        self.scroll = QScrollArea()
        self.scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes to the rows' buttons
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        inner = QWidget()
        self.list = QVBoxLayout(inner)
        self.list.setContentsMargins(0, 0, 0, 0)
        self.list.setSpacing(6)
        self.empty = QLabel("No runs in the queue. Tick devices, choose a workload and press "
                            "Run: each device gets its own run, one after another.")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.list.addWidget(self.empty)
        self.list.addStretch(1)
        self.scroll.setWidget(inner)
        self.scroll.verticalScrollBar().rangeChanged.connect(self._show_pending)
        layout.addWidget(self.scroll, 1)
        queue.job_added.connect(self._add)
        queue.job_changed.connect(self._changed)
        queue.changed.connect(self._sync)
        # The ETA counts down between events too.
        self._tick = QTimer(self)
        self._tick.timeout.connect(self._refresh_running)
        self._tick.start(1000)
        self._sync()

    def _add(self, job: RunJob) -> None:
        row = JobRow(job, self.queue, self.theme)
        self._style_row(row)
        self.rows[job.id] = row
        self.list.insertWidget(self.list.count() - 1, row)
        # A run added (Run, Run It Here) is brought into view once laid out: it was added
        # below the fold of a long queue, out of sight.
        self._pending = row

    def _show_pending(self, *_) -> None:
        """Once the list has grown to hold it (the scroll bar's range changed)."""
        row, self._pending = self._pending, None
        if row is not None and shiboken_valid(row):
            self.scroll.ensureWidgetVisible(row)

    def _changed(self, job: RunJob) -> None:
        row = self.rows.get(job.id)
        if row is not None:
            row.update_view()

    def _refresh_running(self) -> None:
        current = self.queue.current
        if current is not None:
            self._changed(current)
            self._sync()

    def _sync(self) -> None:
        listed = {j.id for j in self.queue.jobs}
        for job_id in [i for i in self.rows if i not in listed]:
            self.rows.pop(job_id).deleteLater()
        fraction, ended, total = self.queue.overall()
        if self.overall.value() != int(fraction * 1000):
            self.overall.setValue(int(fraction * 1000))
        if total:
            text = f"{ended} of {total} run{'s' * (total != 1)} finished"
            _set_text(self.overall_label, text + queue_eta_text(*self.queue.estimate()))
        else:
            _set_text(self.overall_label, "Queue empty")
        self.empty.setVisible(not total)
        self.cancel_all_button.setEnabled(self.queue.busy)
        self.clear_button.setEnabled(ended > 0)

    def row_for(self, job: RunJob) -> JobRow | None:
        return self.rows.get(job.id)

    def _style_row(self, row: JobRow) -> None:
        t = self.theme
        row.theme = t
        row.setStyleSheet(f"#JobRow {{ background: {t.card}; border: 1px solid {t.border};"
                          " border-radius: 8px; } #JobRow QLabel { background: transparent; }")
        row.update_view()

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.empty.setStyleSheet(f"color: {theme.muted};")
        for row in self.rows.values():
            self._style_row(row)
