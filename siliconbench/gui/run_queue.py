"""The run queue: runs wait their turn and execute one at a time (two benchmarks at once would
disturb each other's numbers), each in a QThread that drives siliconbench.core.runner, which does the work in
a child process. The GUI thread only ever sees Qt signals, so it never blocks on a run."""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QThread, Signal

from siliconbench.core.results import Row, RunRecord
from siliconbench.core.runner import ChildRun, RunSpec, UsageError, execute, execute_kept

QUEUED, RUNNING, OK, FAILED, CANCELLED = "queued", "running", "ok", "failed", "cancelled"
ENDED = (OK, FAILED, CANCELLED)
_job_ids = itertools.count(1)


@dataclass
class RunJob:
    """One run as the queue shows it; `record` fills in live as events arrive."""

    spec: RunSpec
    title: str
    id: int = field(default_factory=lambda: next(_job_ids))
    state: str = QUEUED
    done: float = 0.0
    total: float = 0.0
    step: str = ""
    reason: str | None = None
    record: RunRecord | None = None
    saved: bool = False                    # the record is in the store
    started_at: float | None = None
    measuring_since: float | None = None   # first progress event: the framework is loaded
    ended_at: float | None = None
    batch: int = 0                         # runs queued together share it (RunQueue.enqueue)

    def __post_init__(self) -> None:
        s = self.spec
        self.record = RunRecord(workload=s.workload, framework=s.framework, device=s.device,
                                params=dict(s.params), label=s.label)

    @property
    def ended(self) -> bool:
        return self.state in ENDED

    @property
    def fraction(self) -> float:
        if self.ended:
            return 1.0
        if self.state == RUNNING and self.total:
            return max(0.0, min(1.0, self.done / self.total))
        return 0.0

    def elapsed_s(self) -> float | None:
        """Seconds since it started (until it ended), or None before."""
        if self.started_at is None:
            return None
        return (self.ended_at or time.monotonic()) - self.started_at

    def kind(self) -> tuple:
        """What makes two runs alike in length: workload, where, parameters, quick."""
        s = self.spec
        return (s.workload, s.framework, s.device,
                json.dumps(s.params, sort_keys=True, default=str), bool(getattr(s, "quick", 0)))

    def eta_s(self) -> float | None:
        """Seconds left, extrapolated from the steps done since measuring began."""
        if self.state != RUNNING or not self.measuring_since or not self.done or not self.total:
            return None
        elapsed = time.monotonic() - self.measuring_since
        return elapsed * (self.total - self.done) / self.done


class RunThread(QThread):
    """Drives one siliconbench.core.runner run; everything it learns goes out as signals."""

    attached = Signal(object)       # the child's run record (id, machine, name), before any event
    event = Signal(object)          # a runner event dict
    ended = Signal(object, str)     # (RunRecord, "") or (None, reason: nothing was run)

    def __init__(self, spec: RunSpec, parent: QObject | None = None,
                 store_path=None) -> None:
        super().__init__(parent)
        self.spec = spec
        self.store_path = store_path      # where the run is kept as it goes (siliconbench.core.runner)
        self.not_stored: str | None = None  # why the store could not keep it, if it could not
        self._lock = threading.Lock()
        self._child: ChildRun | None = None
        self._cancel = False
        self.outcome: tuple[RunRecord | None, str] | None = None  # read after wait()

    def run(self) -> None:
        try:
            if self.store_path is None:
                rec = execute(self.spec, None, on_event=self.event.emit, started=self._started)
            else:
                # The run is in the store from its start, so quitting or a crash of the app
                # loses nothing; a store that cannot keep it leaves a result file instead.
                rec, not_stored = execute_kept(self.spec, self.store_path,
                                               on_event=self.event.emit, started=self._started)
                self.not_stored = str(not_stored) if not_stored else None
            self.outcome = (rec, "")
        except UsageError as e:
            self.outcome = (None, str(e))
        except Exception as e:  # a bug must fail this run, never the window
            self.outcome = (None, f"internal error: {type(e).__name__}: {e}")
        self.ended.emit(*self.outcome)

    def _started(self, child: ChildRun) -> None:
        with self._lock:
            self._child = child
            cancel = self._cancel
        self.attached.emit(child.record)
        if cancel:
            child.cancel()

    @property
    def child(self) -> ChildRun | None:
        with self._lock:
            return self._child

    def cancel(self) -> None:
        """From any thread: ChildRun.cancel only sets a flag its wait loop polls."""
        with self._lock:
            self._cancel = True
            child = self._child
        if child is not None:
            child.cancel()


class RunQueue(QObject):
    """Jobs in order; one runs at a time. Finished records are saved to the store."""

    job_added = Signal(object)       # RunJob
    job_changed = Signal(object)     # progress, state
    row_arrived = Signal(object)     # RunJob whose record has a new row
    job_ended = Signal(object)       # RunJob, after its record was saved
    changed = Signal()               # overall progress or membership

    def __init__(self, store=None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.jobs: list[RunJob] = []
        self._running: tuple[RunJob, RunThread] | None = None

    # ------------------------------------------------------------ adding and removing

    def enqueue(self, specs: list[RunSpec], titles: list[str] | None = None) -> list[RunJob]:
        titles = titles or [f"{s.workload} on {s.framework}:{s.device}" for s in specs]
        # The model, precision and TF32 the run measures, named on its row.
        from siliconbench.gui.results_browser import run_kind
        kinds = [run_kind(s.workload, s.params) for s in specs]
        titles = [f"{t} · {k}" if k and k not in t else t for t, k in zip(titles, kinds,
                                                                        strict=True)]
        batch = next(_job_ids)
        jobs = [RunJob(spec, title, batch=batch)
                for spec, title in zip(specs, titles, strict=True)]
        for job in jobs:
            self.jobs.append(job)
            self.job_added.emit(job)
        self.changed.emit()
        self._start_next()
        return jobs

    def cancel(self, job: RunJob) -> None:
        if job.state == QUEUED:
            job.state, job.reason = CANCELLED, "cancelled before it started"
            self.job_changed.emit(job)
            self.job_ended.emit(job)
            self.changed.emit()
        elif job.state == RUNNING and self._running and self._running[0] is job:
            job.step = "cancelling…"
            self.job_changed.emit(job)
            self._running[1].cancel()

    def cancel_all(self) -> None:
        for job in list(self.jobs):
            if job.state == QUEUED:
                self.cancel(job)
        if self._running:
            self.cancel(self._running[0])

    def clear_finished(self) -> None:
        self.jobs = [j for j in self.jobs if not j.ended]
        self.changed.emit()

    # ------------------------------------------------------------ state

    @property
    def busy(self) -> bool:
        return self._running is not None or any(j.state == QUEUED for j in self.jobs)

    @property
    def current(self) -> RunJob | None:
        return self._running[0] if self._running else None

    def overall(self) -> tuple[float, int, int]:
        """(fraction done over the listed jobs, jobs ended, jobs listed)."""
        if not self.jobs:
            return 0.0, 0, 0
        ended = sum(j.ended for j in self.jobs)
        return sum(j.fraction for j in self.jobs) / len(self.jobs), ended, len(self.jobs)

    def live_telemetry(self) -> dict | None:
        """The running run's telemetry so far, shaped like RunRecord.telemetry; None if none."""
        child = self._running[1].child if self._running else None
        sampler = getattr(child, "telemetry", None)
        return {"series": sampler.snapshot()} if sampler is not None else None

    def eta_s(self) -> float | None:
        """The running job's estimate plus each waiting job's (estimate()); None while any
        part is unknown."""
        left, unknown = self.estimate()
        return None if unknown else left

    def estimate(self) -> tuple[float | None, int]:
        """(seconds left for the running job and the waiting jobs whose length is known, how
        many waiting jobs' length is not). A waiting job takes as long as the last finished
        run like it (same workload, device, parameters), or as the running one will if it is
        like it; a 'about 3 s left' with two long runs queued counted only the running one."""
        current = self.current
        if current is None:
            return None, 0
        left = current.eta_s()
        lengths = {j.kind(): j.elapsed_s() for j in self.jobs if j.state == OK}
        if left is not None and current.elapsed_s() is not None:
            lengths.setdefault(current.kind(), current.elapsed_s() + left)
        unknown = 0
        for job in self.jobs:
            if job.state == QUEUED:
                known = lengths.get(job.kind())
                if known is None:
                    unknown += 1
                elif left is not None:
                    left += known
        return left, unknown

    # ------------------------------------------------------------ running

    def _start_next(self) -> None:
        if self._running is not None:
            return
        job = next((j for j in self.jobs if j.state == QUEUED), None)
        if job is None:
            return
        thread = RunThread(job.spec, self,
                           store_path=self.store.path if self.store is not None else None)
        thread.attached.connect(lambda rec, j=job: self._on_attached(j, rec))
        thread.event.connect(lambda event, j=job: self._on_event(j, event))
        thread.ended.connect(lambda rec, reason, j=job: self._on_ended(j, rec, reason))
        thread.finished.connect(lambda t=thread: self._on_thread_finished(t))
        job.state, job.step, job.started_at = RUNNING, "starting…", time.monotonic()
        self._running = (job, thread)
        self.job_changed.emit(job)
        self.changed.emit()
        thread.start()

    def _on_attached(self, job: RunJob, rec: RunRecord) -> None:
        # The live record takes the real record's id, so a plot keeps its series at the end,
        # and its machine, name and time, so its legend reads as it will when it is stored.
        job.record.id, job.record.created_at = rec.id, rec.created_at
        job.record.machine, job.record.label = dict(rec.machine), rec.label
        job.step = "loading the framework…"
        self.job_changed.emit(job)

    def _on_event(self, job: RunJob, event: dict) -> None:
        kind = event.get("event")
        rec = job.record
        if kind == "started":
            rec.device_name = event.get("device_name")
            rec.software.update(event.get("software") or {})
            rec.settings.update(event.get("settings") or {})
            job.step = "warming up…"
        elif kind == "settings":
            rec.settings.update(event.get("settings") or {})
        elif kind == "progress":
            if job.measuring_since is None:
                job.measuring_since = time.monotonic()
            job.done, job.total = float(event["done"]), float(event["total"])
            job.step = event.get("message") or job.step
        elif kind == "row":
            rec.rows.append(Row.from_dict(event["row"]))
            self.row_arrived.emit(job)
        elif kind == "warning":
            rec.warnings.append(event.get("message", ""))
        elif kind == "error":
            job.step = event.get("message", "error")
        self.job_changed.emit(job)
        self.changed.emit()

    def _on_ended(self, job: RunJob, rec: RunRecord | None, reason: str) -> None:
        if job.ended:
            return  # shutdown() already handled it
        if rec is None:
            job.state, job.reason = FAILED, reason
        else:
            job.record, job.state, job.reason = rec, rec.status, rec.reason
            thread = self._running[1] if self._running and self._running[0] is job else None
            not_stored = thread.not_stored if thread is not None else None
            if self.store is not None and not_stored is None:
                job.saved = True  # the run's thread kept it as it went
            elif not_stored:  # keep the record on screen; say where it was kept instead
                job.reason = ((job.reason + "; ") if job.reason else "") + not_stored
        job.ended_at = time.monotonic()
        job.step = {OK: "done", CANCELLED: "cancelled"}.get(job.state, "failed")
        self.job_changed.emit(job)
        self.job_ended.emit(job)
        self.changed.emit()

    def _on_thread_finished(self, thread: RunThread) -> None:
        if self._running and self._running[1] is thread:
            self._running = None
        thread.deleteLater()
        self._start_next()
        self.changed.emit()  # `busy` may have just become false

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Cancel everything and wait for the running thread (the window is closing)."""
        for job in self.jobs:
            if job.state == QUEUED:
                job.state = CANCELLED
        if self._running:
            job, thread = self._running
            thread.cancel()
            # Save the cancelled run now: the queued `ended` signal will not be delivered.
            if thread.wait(int(timeout_s * 1000)) and thread.outcome is not None:
                self._on_ended(job, *thread.outcome)
