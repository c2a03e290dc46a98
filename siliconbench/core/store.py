"""The local results store: SQLite (WAL) in the user data directory, one row per run with the
full record as JSON. Every run is kept, failed and cancelled ones too; imports dedup by run id.

A run is written when it starts and again as its rows arrive, marked in `live_runs` with the
process that owns it; a run whose process vanished (killed, the machine stopped) reads as
failed with the reason INTERRUPTED and the rows measured until then. A damaged row costs only
that run: the others are read, and `unreadable` says which were not.

Store is the file opened (siliconbench.core.store_schema: schema, migrations, transactions),
its reads (siliconbench.core.store_reads) and its writes, here; the public names of the first
two are offered here too."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from siliconbench.core.results import RunRecord, records_to_json
from siliconbench.core.store_reads import StoreReads, this_machine
from siliconbench.core.store_schema import (
    COLUMNS,
    MIGRATIONS,
    SCHEMA_VERSION,
    Imported,
    Listed,
    StoreError,
    default_path,
    home,
    listed,
    listing_of,
)

__all__ = ["INTERRUPTED", "MIGRATIONS", "SCHEMA_VERSION", "Imported", "Listed", "Store",
           "StoreError", "default_path", "home", "keep_elsewhere", "listed", "listing_of"]

# What a run's record says while it runs, so that a kill at any moment leaves it true.
INTERRUPTED = ("interrupted: SiliconBench ended before the run did (it was killed or the "
               "machine stopped); the rows measured until then are kept")


class Store(StoreReads):
    """The results store on this machine: the file opened (store_schema.Database), its reads
    (StoreReads) and the writes here; siliconbench.core.run_store.RunStore is what it offers.
    A lab's shared store is another class (siliconbench.core.store_sync.SharedStore);
    siliconbench.core.run_store.open_store chooses between them."""

    offline: str | None = None   # this machine's own store: always at hand

    def reopen(self) -> Store:
        """Another connection to this file (for another thread)."""
        return Store(self.path, notice=self.notice)

    def _tidy(self) -> None:
        self._sweep_vanished()

    def _row_values(self, rec: RunRecord, imported: bool, record: dict | None = None) -> tuple:
        d = record or rec.to_dict()
        return (rec.id, rec.created_at, rec.workload, rec.framework, rec.device, d["status"],
                rec.label, rec.source, int(imported), json.dumps(d), listing_of(rec, d))

    def save(self, rec: RunRecord) -> None:
        """Keep a finished run (or a run's final word: it is no longer under way)."""
        with self._transaction() as db:
            db.execute(f"INSERT OR REPLACE INTO runs ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       self._row_values(rec, False))
            db.execute("DELETE FROM live_runs WHERE id = ?", (rec.id,))

    def begin_run(self, rec: RunRecord) -> None:
        """The run has started in this process: keep it now, as INTERRUPTED until it ends."""
        host, pid, started = _this_process()
        with self._transaction() as db:
            db.execute(f"INSERT OR REPLACE INTO runs ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       self._row_values(rec, False, _interrupted(rec)))
            db.execute("INSERT OR REPLACE INTO live_runs (id, host, pid, started, machine) "
                       "VALUES (?,?,?,?,?)", (rec.id, host, pid, started, this_machine()))

    def update_run(self, rec: RunRecord) -> None:
        """The rows so far of a run under way. Gives up (StoreError) rather than wait for
        another process's lock: the next row or the final save tries again."""
        with self._transaction(wait=False) as db:
            d = _interrupted(rec)
            db.execute("UPDATE runs SET record = ?, listing = ? WHERE id = ?",
                       (json.dumps(d), listing_of(rec, d), rec.id))

    def _sweep_vanished(self) -> None:
        """Forget the owners of runs whose process has ended: they read as INTERRUPTED. Only
        tidying (reads judge each owner themselves): skipped on a store that cannot be
        written, a full disk or a lock held elsewhere, so that reading never needs a write."""
        if self.read_only:
            return
        gone = [run_id for run_id, alive in self._live() if not alive]
        if not gone:
            return
        try:
            with self._transaction(wait=False) as db:
                db.executemany("DELETE FROM live_runs WHERE id = ?", [(i,) for i in gone])
        except StoreError:
            pass

    def import_records(self, records: list[RunRecord]) -> Imported:
        """Add records not already here (by id), all in one transaction. A run kept here as
        interrupted (begun in this store, then killed or unsaved: a full disk) is replaced by
        the file's record when that one finished, or got further: the record that finished
        wins, and a finished run is never replaced by a partial one."""
        added = completed = 0
        with self._transaction():
            for rec in records:
                values = self._row_values(rec, True)
                cur = self.db.execute(f"INSERT OR IGNORE INTO runs ({COLUMNS}) VALUES "
                                      "(?,?,?,?,?,?,?,?,?,?,?)", values)
                if cur.rowcount:
                    added += 1
                    continue
                here = self.db.execute("SELECT record FROM runs WHERE id = ?",
                                       (rec.id,)).fetchone()[0]
                if _completes(here, rec):
                    # Every column but `imported`: a run begun here stays one measured here.
                    self.db.execute("UPDATE runs SET created_at = ?, workload = ?, framework = ?,"
                                    " device = ?, status = ?, label = ?, source = ?, record = ?, "
                                    "listing = ? WHERE id = ?",
                                    values[1:8] + values[9:] + values[:1])
                    self.db.execute("DELETE FROM live_runs WHERE id = ?", (rec.id,))
                    completed += 1
        return Imported(added, completed, len(records) - added - completed)

    def set_label(self, run_ids: list[str], label: str | None) -> None:
        with self._transaction() as db:
            for run_id in run_ids:
                rec = self.get(run_id)
                if rec is None:
                    continue
                rec.label = label or None
                d = rec.to_dict()
                db.execute("UPDATE runs SET label = ?, record = ?, listing = ? WHERE id = ?",
                           (rec.label, json.dumps(d), listing_of(rec, d), run_id))

    def delete(self, run_ids: list[str]) -> int:
        with self._transaction() as db:
            db.executemany("DELETE FROM live_runs WHERE id = ?", [(i,) for i in run_ids])
            return sum(db.execute("DELETE FROM runs WHERE id = ?", (i,)).rowcount
                       for i in run_ids)


    # ------------------------------------------------------------ the outbox (a lab's store)
    # siliconbench.core.store_sync.SharedStore keeps here the runs not yet sent.

    def open_outbox(self) -> None:
        if not self._has_table("unsent"):
            with self._transaction() as db:
                db.execute("CREATE TABLE IF NOT EXISTS unsent (id TEXT PRIMARY KEY)")

    def mark_unsent(self, run_ids: list[str], unsent: bool = True) -> None:
        statement = "INSERT OR IGNORE INTO unsent VALUES (?)" if unsent else \
            "DELETE FROM unsent WHERE id = ?"
        with self._transaction() as db:
            db.executemany(statement, [(i,) for i in run_ids])

    def unsent(self) -> list[str]:
        """The runs waiting to be sent, but not those still under way."""
        under_way = self._under_way()
        return [r[0] for r in self.db.execute("SELECT id FROM unsent").fetchall()
                if r[0] not in under_way]

    def finished_ids(self) -> list[str]:
        """Every run kept here, oldest first, but not those still under way."""
        under_way = self._under_way()
        return [r[0] for r in self.db.execute("SELECT id FROM runs ORDER BY created_at")
                if r[0] not in under_way]

    def imported_flags(self, run_ids: list[str]) -> dict[str, bool]:
        """Whether each run came by import (rather than measured here)."""
        rows = self.db.execute(f"SELECT id, imported FROM runs WHERE id IN "
                               f"({','.join('?' * len(run_ids))})", run_ids).fetchall()
        return {i: bool(flag) for i, flag in rows}


def _interrupted(rec: RunRecord) -> dict:
    return rec.to_dict() | {"status": "failed", "reason": INTERRUPTED}


def _unfinished(status: str | None, reason: str | None) -> bool:
    return status == "failed" and reason == INTERRUPTED


def _completes(here: str, rec: RunRecord) -> bool:
    """Whether `rec` should replace the stored record `here` (its JSON) of the same run: the
    stored one never finished (INTERRUPTED) and `rec` did, or got further (more rows). A
    stored record that cannot be read is replaced by a good one."""
    try:
        old = json.loads(here)
        old_status, old_reason, old_rows = old["status"], old.get("reason"), len(old["rows"])
    except (ValueError, TypeError, KeyError, RecursionError, MemoryError):
        return True
    if not _unfinished(old_status, old_reason):
        return False
    return not _unfinished(rec.status, rec.reason) or len(rec.rows) > old_rows


def _this_process() -> tuple[str, int, float]:
    import psutil
    return socket.gethostname(), os.getpid(), psutil.Process().create_time()


def keep_elsewhere(rec: RunRecord, near: Path) -> Path | None:
    """Write a run the store could not keep as a result file (`siliconbench import` reads
    it): beside the store, else in the working folder, else the temporary folder."""
    import tempfile

    from siliconbench.core.files import write_atomic
    name = f"siliconbench-unsaved-run-{rec.id[:8]}.json"
    for folder in (near, Path.cwd(), Path(tempfile.gettempdir())):
        try:
            write_atomic(folder / name, records_to_json([rec]), own=True)
            return folder / name
        except OSError:
            continue
    return None
