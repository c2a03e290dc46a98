"""Runs a workload and keeps its record: the run itself is a ChildRun (siliconbench.core.child:
a child process, its event stream turned into a run record), and execute() keeps that record in
the store from the run's start, whatever its outcome. Device discovery is
siliconbench.core.devices. Their public names are offered here too, as before; the limits
their code reads (KILL_GRACE_S, SILENT_RANKS_S) live in siliconbench.core.child alone."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable
from pathlib import Path

from siliconbench.core.child import ChildRun, RunSpec, UsageError, prepare, worker_command
from siliconbench.core.devices import DEVICE_CACHE, discover_devices
from siliconbench.core.logs import log
from siliconbench.core.results import RunRecord

__all__ = ["DEVICE_CACHE", "ChildRun", "RunNotStored", "RunSpec", "UsageError",
           "discover_devices", "execute", "execute_kept", "prepare", "with_ceilings",
           "worker_command"]


class RunNotStored(Exception):
    """The run ended but the store could not keep it; `path` is the result file it went to
    instead (None if none could be written). The message is one sentence for the user."""

    def __init__(self, record: RunRecord, why: str, path) -> None:
        self.record, self.why, self.path = record, why, path
        where = (f"The run was written to {path} instead; add it to the store with: "
                 f"siliconbench import {path}") if path else \
            "No file could be written either; export the run while it is on screen."
        super().__init__(f"{why} {where}")


class _Keeper:
    """Keeps a run in the store from its start: a kill at any moment loses nothing measured.
    Progress saves that fail (a lock held elsewhere, a full disk) wait for the next row;
    only the final save decides."""

    def __init__(self, store, rec: RunRecord) -> None:
        self.store, self.rec = store, rec
        self._save(store.begin_run)

    def _save(self, write) -> str | None:
        from siliconbench.core.store import StoreError
        try:
            write(self.rec)
            return None
        except StoreError as e:
            return str(e)

    def on_event(self, event: dict) -> None:
        if event.get("event") in ("started", "row", "warning"):
            self._save(self.store.update_run)

    def forget(self) -> None:
        self._save(lambda rec: self.store.delete([rec.id]))

    def finish(self) -> None:
        from siliconbench.core.store import keep_elsewhere
        why = self._save(self.store.save)
        if why is not None:
            path = keep_elsewhere(self.rec, self.store.path.parent)
            log.error("run %s could not be stored (%s); kept in %s", self.rec.id, why, path)
            raise RunNotStored(self.rec, why, path)


def execute(spec: RunSpec, store=None, on_event: Callable[[dict], None] | None = None,
            started: Callable[[ChildRun], None] | None = None) -> RunRecord:
    """Run to the end and keep the record in `store` (when given), whatever the outcome:
    written when the run starts, again as each row arrives, and at the end. RunNotStored when
    the final save fails (the record is then in a result file). A KeyboardInterrupt (Ctrl-C,
    or SIGTERM/SIGHUP turned into one by the command line) cancels the run, keeps it, and is
    raised again once the record is safe."""
    user_on_event = on_event or (lambda e: None)
    keeper: _Keeper | None = None
    if store is not None:
        spec = with_ceilings(spec, store)

    def follow(event: dict) -> None:
        if keeper is not None:
            keeper.on_event(event)
        user_on_event(event)
    child = ChildRun(spec, follow)
    interrupted: KeyboardInterrupt | None = None
    try:
        child.start()
        if store is not None:
            keeper = _Keeper(store, child.record)
        if started is not None:
            started(child)
        rec = child.wait()
    except UsageError:
        if keeper is not None:
            keeper.forget()  # nothing was run: the run was impossible as asked
        raise
    except KeyboardInterrupt as e:
        if not child.started:
            raise  # nothing started, nothing to keep
        interrupted = e
        with _signals_held():  # a second Ctrl-C must not lose the record being saved
            child.cancel(getattr(e, "reason", None) or "cancelled by the user (Ctrl-C)")
            child.stop()
            rec = child.wait()
            if keeper is not None:
                keeper.finish()
    finally:
        child.close()
    if interrupted is not None:
        interrupted.record = rec  # what was kept, for the sentence that ends the command
        raise interrupted
    if keeper is not None:
        keeper.finish()
    return rec


def with_ceilings(spec: RunSpec, store) -> RunSpec:
    """The spec with the bounds its workload's numbers are held against (Workload.held_against)
    read from `store`, the store the command or the app opened: the run's own process gets
    them in its spec and never opens the store. A store that cannot be read gives none (the
    workload then holds its numbers to the published peak, or measures its own bound)."""
    import dataclasses

    from siliconbench.core.catalogue import UnknownWorkload, workload
    from siliconbench.core.kit.ceilings import stored_bounds
    from siliconbench.core.store import StoreError
    try:
        held = workload(spec.workload).held_against
    except UnknownWorkload:
        return spec           # ChildRun's prepare says so, in one sentence
    if not held or spec.ceilings:
        return spec
    try:
        return dataclasses.replace(spec, ceilings=stored_bounds(store, held))
    except StoreError as e:
        log.warning("the stored bounds could not be read (%s): the run goes without", e)
        return spec


def execute_kept(spec: RunSpec, store_path=None, on_event: Callable[[dict], None] | None = None,
                 started: Callable[[ChildRun], None] | None = None
                 ) -> tuple[RunRecord, RunNotStored | None]:
    """execute() with a store connection of its own to the store the command or the app chose
    (`store_path`: its path or address; None: siliconbench.core.run_store.open_store's
    choice): the caller's thread may be any. A store that cannot be opened (a full disk, a damaged file)
    or cannot keep the run does not cost the run: it goes to a result file, and the second
    value says where."""
    from siliconbench.core.run_store import open_store
    from siliconbench.core.store import StoreError, home, keep_elsewhere
    try:
        store = open_store(store_path)
    except StoreError as e:
        rec = execute(spec, None, on_event, started)
        folder = Path(store_path).parent if store_path else home()
        return rec, RunNotStored(rec, str(e), keep_elsewhere(rec, folder))
    try:
        return execute(spec, store, on_event, started), None
    except RunNotStored as e:
        return e.record, e
    finally:
        store.close()


@contextlib.contextmanager
def _signals_held():
    """Ctrl-C, SIGTERM and SIGHUP do nothing until the block is done: the run is being
    cancelled and kept already, and a second Ctrl-C cancels like the first. Their handlers
    are swapped for one that ignores them, since Python runs every signal handler in the main
    thread whichever thread the signal reached: blocking them in the main thread only (as
    before) let the kernel hand a second Ctrl-C to a reader thread, and it interrupted the
    save. Outside the main thread, where handlers cannot be set, the block runs as it is."""
    held = [s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) if s is not None]
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {}
    try:
        for sig in held:
            before[sig] = signal.signal(sig, lambda *_: None)
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
