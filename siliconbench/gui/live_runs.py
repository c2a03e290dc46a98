"""The run queue wired into the window: each measured row goes onto the charts as it arrives,
the running run's telemetry is redrawn each second, a finished run joins Results (the selection
stays the user's; Preferences can have new runs selected), batches asked to be compared are compared once they end, and the
status line counts the queue down."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer

from siliconbench.core.results import RunRecord
from siliconbench.core.runner import RunSpec
from siliconbench.gui.run_queue import RUNNING, RunJob, RunQueue

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from siliconbench.gui.charts.panel import ChartPanel
    from siliconbench.gui.compare_view import CompareView
    from siliconbench.gui.results_browser import ResultsBrowser

TELEMETRY_REFRESH_MS = 1000


class LiveRuns(QObject):
    """`queue`'s runs shown: rows and telemetry on `charts()`, finished runs in `results`, the
    queue counted down in `status`; `show_queue()` when a run is queued. A batch to compare
    is shown beside its references in `compare()` (the charts and Compare are built on first
    use); runs to compare are asked about first with `ask_before(specs, go)`."""

    def __init__(self, queue: RunQueue, results: ResultsBrowser, status: QStatusBar, *,
                 charts: Callable[[], ChartPanel], compare: Callable[[], CompareView],
                 show_queue: Callable[[], None], select_new: Callable[[], bool] = lambda: False,
                 ask_before: Callable[[list[RunSpec], Callable[[], object]], bool]) -> None:
        super().__init__(queue)
        self.queue, self.results, self.status = queue, results, status
        self.charts, self.compare, self.ask_before = charts, compare, ask_before
        self.select_new = select_new      # Preferences: select new runs when they finish
        self.compare_batches: set[int] = set()   # RunQueue batches to compare when done
        queue.row_arrived.connect(self._on_row)
        queue.job_ended.connect(self._on_job_ended)
        queue.changed.connect(self.update_status)
        queue.job_added.connect(lambda _: show_queue())
        self.telemetry_timer = QTimer(self)
        self.telemetry_timer.timeout.connect(self._poll_telemetry)
        self.telemetry_timer.start(TELEMETRY_REFRESH_MS)

    def running_records(self, except_ids: set[str] = frozenset()) -> list[RunRecord]:
        """The runs being measured that have rows to draw."""
        return [j.record for j in self.queue.jobs
                if j.state == RUNNING and j.record.rows and j.record.id not in except_ids]

    def _poll_telemetry(self) -> None:
        job = self.queue.current
        telemetry = self.queue.live_telemetry() if job is not None else None
        if telemetry and telemetry["series"]:
            job.record.telemetry = telemetry
            self.charts().update_telemetry(job.record)

    def _on_row(self, job: RunJob) -> None:
        """A live run's new row, drawn beside the selection; the tab in front stays the
        user's."""
        self.charts().update_record(job.record)

    def _on_job_ended(self, job: RunJob) -> None:
        batch = [j for j in self.queue.jobs if j.batch == job.batch]
        if job.saved:
            # The selection is the user's: the run joins Results unselected, unless
            # Preferences says to draw new runs (with the runs queued with it, then).
            together = {j.record.id for j in batch if j.saved}
            self.results.add_record(job.record, select=self.select_new(), together=together)
        if job.batch in self.compare_batches and all(j.ended for j in batch):
            self.compare_batches.discard(job.batch)
            # Only runs that finished: a cancelled Run It Here compared as an empty side and
            # took the selection with it.
            self.show_comparison([j.record for j in batch
                                  if j.saved and j.record.status == "ok"])
        self.update_status()

    def compare_when_done(self, jobs: list[RunJob]) -> None:
        """When these runs have ended, compare them with the published references they match
        (the quick suite, a reference repeated here)."""
        self.compare_batches.update(j.batch for j in jobs)

    def show_comparison(self, records: list[RunRecord]) -> None:
        from siliconbench.core.compare_words import matches, matching_references
        refs = matching_references(records)
        if not refs:
            return
        matched = [r for r in records if any(matches(r, ref) for ref in refs)]
        charts = self.charts()  # builds Compare if the window has not yet
        compare = self.compare()
        self.results.select_ids({r.id for r in matched})
        compare.clear_references()
        for ref in refs:
            compare.add_reference(ref.id)
        charts.setCurrentWidget(compare)

    def queue_compared(self, specs: list[RunSpec], titles: list[str]) -> list[RunJob]:
        """Queue these runs (after ask_before's question where they are big) and compare them
        when done; the runs queued now."""
        jobs: list[RunJob] = []

        def go() -> None:
            jobs.extend(self.queue.enqueue(specs, titles))
            self.compare_when_done(jobs)
        self.ask_before(specs, go)
        return jobs

    def queue_reference_run(self, specs: list[RunSpec]) -> None:
        """Compare's Run It Here: the reference's runs on this machine, compared when done."""
        self.queue_compared(specs, [f"{s.workload} · {s.framework} {s.device} (as the "
                                    "reference)" for s in specs])

    def update_status(self) -> None:
        fraction, ended, total = self.queue.overall()
        status = self.status
        if self.queue.busy:
            status.showMessage(f"Running: {ended} of {total} runs finished ({fraction:.0%}).")
        elif total:
            status.showMessage(f"Queue finished: {ended} run{'s' * (ended != 1)}.", 8000)
