"""The local results store: SQLite (WAL) in the user data directory, one row per run with the
full record as JSON. Every run is kept, failed and cancelled ones too; imports dedup by run id.

A run is written when it starts and again as its rows arrive, marked in `live_runs` with the
process that owns it; a run whose process vanished (killed, the machine stopped) reads as
failed with the reason INTERRUPTED and the rows measured until then. A damaged row costs only
that run: the others are read, and `unreadable` says which were not."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, NamedTuple
from urllib.parse import quote

from siliconbench.core.results import RunRecord, records_to_json

# Each entry upgrades the database by one version; PRAGMA user_version says where it is.
# Statements, not scripts: executescript would commit the migration's lock away.
MIGRATIONS: list[list[str]] = [
    ["""CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        workload TEXT NOT NULL,
        framework TEXT NOT NULL,
        device TEXT NOT NULL,
        status TEXT NOT NULL,
        label TEXT,
        source TEXT NOT NULL,
        imported INTEGER NOT NULL DEFAULT 0,
        record TEXT NOT NULL
    )""",
     "CREATE INDEX runs_by_time ON runs(created_at)"],
    # Runs under way: the process writing each (pid and start time, against pid reuse).
    ["""CREATE TABLE live_runs (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        started REAL NOT NULL
    )"""],
    # What a listing of runs reads of each (listing_of): its cost is the same whatever a
    # record holds (thousands of samples, a telemetry series). Filled by _fill_listings.
    ["ALTER TABLE runs ADD COLUMN listing TEXT"],
]
COLUMNS = ("id, created_at, workload, framework, device, status, label, source, imported, "
           "record, listing")
SCHEMA_VERSION = len(MIGRATIONS)

# What a run's record says while it runs, so that a kill at any moment leaves it true.
INTERRUPTED = ("interrupted: SiliconBench ended before the run did (it was killed or the "
               "machine stopped); the rows measured until then are kept")
WAIT_NOTICE_S = 3.0        # waiting this long for another process's write: say so
WAIT_FOREVER_S = 86_400.0  # sqlite's busy timeout: a record is never dropped for a lock
DISK_FULL_BYTES = 1 << 20
WAL_LIMIT_BYTES = 8 << 20
# A run owned by a process on another host name cannot be asked after: it counts as under way
# for this long after it began, and as interrupted after (no run SiliconBench makes lasts a
# week). Also what ends a run killed before this machine's name changed.
OTHER_HOST_ALIVE_S = 7 * 86_400.0


class Imported(NamedTuple):
    """What an import did: runs added, runs here as interrupted that the file completed, and
    runs already here (the same run, or a finished one that a partial copy does not replace)."""
    added: int
    completed: int
    skipped: int

    def summary(self, refused: int = 0) -> str:
        """One line: what the import added, completed and found here, and how many files it
        refused (each named in a sentence of its own before)."""
        line = f"Imported {_count(self.added, 'run')}"
        if self.completed:
            line += (f"; completed {_count(self.completed, 'run')} kept here as interrupted "
                     "(the file's record got further)")
        if self.skipped:
            line += f"; {self.skipped} {_was(self.skipped)} already in the store"
        if refused:
            line += f"; {_count(refused, 'file')} {_was(refused)} refused (named above)"
        return line + "."


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'s' * (n != 1)}"


def _was(n: int) -> str:
    return "was" if n == 1 else "were"


class StoreError(RuntimeError):
    """The store cannot be used; the message is one sentence for the user."""


def home() -> Path:
    """SILICONBENCH_HOME, or the platform's user data dir (~/Library/Application Support/
    SiliconBench on a Mac)."""
    env = os.environ.get("SILICONBENCH_HOME")
    if env:
        return Path(env).expanduser()
    import platformdirs
    return Path(platformdirs.user_data_dir("SiliconBench", appauthor=False))


def default_path() -> Path:
    return home() / "results.sqlite3"


def _say(message: str) -> None:
    print(f"siliconbench: {message}", file=sys.stderr, flush=True)


class Store:
    def __init__(self, path: Path | None = None,
                 notice: Callable[[str], None] = _say) -> None:
        self.path = Path(path) if path else default_path()
        self.notice = notice                 # a sentence while we wait for another process
        self.unreadable: list[tuple[str, str]] = []  # (run id, why) from the last read
        self.read_only = False
        self.why_read_only: str | None = None  # the sentence a write gets, when not the usual
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise StoreError(f"{_first_file(folder)} is a file, but SiliconBench keeps its "
                             "results in a folder there; move the file aside or set "
                             "SILICONBENCH_HOME to a folder.") from None
        except OSError as e:
            raise StoreError(f"The folder {folder} for the results store cannot be created "
                             f"({e.strerror}); set SILICONBENCH_HOME to a writable folder.") \
                from None
        if self.path.is_dir():
            raise StoreError(f"The results store {self.path} is a folder, not a database; "
                             "move it aside and SiliconBench will start a new store.")
        self.read_only = not os.access(folder, os.W_OK) or (
            self.path.exists() and not os.access(self.path, os.W_OK))
        if self.read_only and not self.path.exists():
            raise StoreError(f"The results store cannot be created in {folder} (the folder is "
                             "read-only); set SILICONBENCH_HOME to a writable folder.")
        self.db = self._connect()
        try:
            self._migrate()
            self._sweep_vanished()
        except BaseException as e:
            self.db.close()  # a store we refuse is left as it was, and not held open
            if isinstance(e, sqlite3.DatabaseError):
                raise self._error(e, "read") from None
            raise

    # ------------------------------------------------------------ opening

    def _connect(self) -> sqlite3.Connection:
        if not self.read_only:
            db = sqlite3.connect(self.path, timeout=WAIT_FOREVER_S, check_same_thread=False)
            try:
                self._wait_for_lock(lambda: _use_wal(db))
                # After a big import the WAL shrinks back at its next checkpoint.
                db.execute(f"PRAGMA journal_size_limit = {WAL_LIMIT_BYTES}")
            except sqlite3.DatabaseError as e:
                db.close()
                error = self._error(e, "read")
                if "is full" not in str(error) or not self.path.exists():
                    raise error from None
                # A full disk: WAL cannot make its side files, but reading needs no write
                # (results, --show and export still work); writes get the sentence.
                self.read_only, self.why_read_only = True, str(error)
                return self._connect()
            return db
        # A read-only folder: WAL cannot make its side files, so read the file as it is.
        uri = "file:" + quote(str(self.path.resolve()))
        for mode in ("?mode=ro", "?mode=ro&immutable=1"):
            db = sqlite3.connect(uri + mode, uri=True, timeout=WAIT_FOREVER_S,
                                 check_same_thread=False)
            try:
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
                return db
            except sqlite3.OperationalError:
                db.close()
        raise StoreError(f"The results store {self.path} cannot be opened read-only; copy it "
                         "to a writable folder and set SILICONBENCH_HOME there.")

    def _migrate(self) -> None:
        version = self._user_version()
        if version > SCHEMA_VERSION:
            raise StoreError(f"The results store {self.path} was written by a newer "
                             "SiliconBench; update SiliconBench to use it.")
        if version < SCHEMA_VERSION and not self.read_only:
            # Under the write lock, looking again: another process may have just done it.
            with self._transaction():
                version = self._user_version()
                for target in range(version + 1, SCHEMA_VERSION + 1):
                    for statement in MIGRATIONS[target - 1]:
                        self.db.execute(statement)
                    self.db.execute(f"PRAGMA user_version = {target}")
                if version < 3:
                    self._fill_listings()
        if not self._has_table("runs"):
            raise StoreError(f"The results store {self.path} is damaged (it has no table of "
                             "runs); move it aside and SiliconBench will start a new store.")

    def _fill_listings(self) -> None:
        """The listing of every run kept before there was one (once, in the migration)."""
        for run_id, text in self.db.execute("SELECT id, record FROM runs").fetchall():
            try:
                rec = RunRecord.from_dict(json.loads(text), validate_schema=False)
            except (ValueError, TypeError, KeyError, AttributeError):
                continue   # read (and named as damaged) in full, as before
            self.db.execute("UPDATE runs SET listing = ? WHERE id = ?",
                            (listing_of(rec, rec.to_dict()), run_id))

    def _user_version(self) -> int:
        return self.db.execute("PRAGMA user_version").fetchone()[0]

    def _has_table(self, name: str) -> bool:
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                               (name,)).fetchone() is not None

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------ writing

    def _wait_for_lock(self, acquire: Callable[[], object]) -> None:
        """acquire() under sqlite's (long) busy timeout, with a sentence if it takes a while."""
        timer = threading.Timer(WAIT_NOTICE_S, self.notice, args=(
            f"waiting for another SiliconBench process to finish writing to {self.path}…",))
        timer.daemon = True
        timer.start()
        try:
            acquire()
        finally:
            timer.cancel()

    @contextmanager
    def _transaction(self, wait: bool = True) -> Iterator[sqlite3.Connection]:
        """One short write transaction. wait=False gives up at once when another process
        holds the lock (a run's progress saves: the final save waits)."""
        if self.read_only:
            raise StoreError(self.why_read_only or f"The results store {self.path} is read-only"
                             " (its folder or file cannot be written); nothing can be added "
                             "to it.")
        if not wait:
            self.db.execute("PRAGMA busy_timeout = 100")
        try:
            self._wait_for_lock(lambda: self.db.execute("BEGIN IMMEDIATE"))
        except sqlite3.DatabaseError as e:
            raise self._error(e, "written") from None
        finally:
            if not wait:
                self.db.execute(f"PRAGMA busy_timeout = {int(WAIT_FOREVER_S * 1000)}")
        try:
            yield self.db
            self.db.commit()
        except BaseException as e:
            self.db.rollback()
            if isinstance(e, sqlite3.DatabaseError):
                raise self._error(e, "written") from None
            raise
        self._shrink_wal()

    def _shrink_wal(self) -> None:
        """After a big write (an import), give the WAL's space back now: left alone it keeps
        its size until some later write, and it can fill a disk (journal_size_limit only
        trims it then). A reader in another process may hold it; then the next write tries."""
        try:
            if os.path.getsize(f"{self.path}-wal") <= WAL_LIMIT_BYTES:
                return
        except OSError:
            return
        self.db.execute("PRAGMA busy_timeout = 1000")
        try:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.DatabaseError:
            pass  # busy or failing: the data is safe in the WAL meanwhile
        finally:
            self.db.execute(f"PRAGMA busy_timeout = {int(WAIT_FOREVER_S * 1000)}")

    def _error(self, e: sqlite3.DatabaseError, action: str) -> StoreError:
        """One sentence for what went wrong, saying what to do."""
        text = str(e)
        if "disk is full" in text or self._disk_full():
            return StoreError(f"The disk holding the results store {self.path} is full ({text});"
                              " free some space and try again.")
        if "readonly" in text:
            return StoreError(f"The results store {self.path} is read-only ({text}); nothing "
                              "can be added to it.")
        if isinstance(e, sqlite3.DatabaseError) and any(
                w in text for w in ("malformed", "not a database", "no such table")):
            return StoreError(f"The results store {self.path} is damaged ({text}); move it "
                              "aside and SiliconBench will start a new store (siliconbench "
                              "export may rescue what can still be read from it).")
        return StoreError(f"The results store {self.path} cannot be {action} ({text}).")

    def _disk_full(self) -> bool:
        try:
            return shutil.disk_usage(self.path.parent).free < DISK_FULL_BYTES
        except OSError:
            return False

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
            db.execute("INSERT OR REPLACE INTO live_runs VALUES (?,?,?,?)",
                       (rec.id, host, pid, started))

    def update_run(self, rec: RunRecord) -> None:
        """The rows so far of a run under way. Gives up (StoreError) rather than wait for
        another process's lock: the next row or the final save tries again."""
        with self._transaction(wait=False) as db:
            d = _interrupted(rec)
            db.execute("UPDATE runs SET record = ?, listing = ? WHERE id = ?",
                       (json.dumps(d), listing_of(rec, d), rec.id))

    def _live(self) -> list[tuple]:
        """(id, host, pid, started, created_at) of each run marked as under way."""
        if not self._has_table("live_runs"):
            return []
        return self.db.execute("SELECT l.id, l.host, l.pid, l.started, r.created_at FROM "
                               "live_runs l LEFT JOIN runs r ON r.id = l.id").fetchall()

    def _sweep_vanished(self) -> None:
        """Forget the owners of runs whose process has ended: they read as INTERRUPTED. Only
        tidying (reads judge each owner themselves): skipped on a store that cannot be
        written, a full disk or a lock held elsewhere, so that reading never needs a write."""
        if self.read_only:
            return
        gone = [row[0] for row in self._live() if not _alive(*row[1:])]
        if not gone:
            return
        try:
            with self._transaction(wait=False) as db:
                db.executemany("DELETE FROM live_runs WHERE id = ?", [(i,) for i in gone])
        except StoreError:
            pass

    def _under_way(self) -> set[str]:
        """Runs another process (or this one) is still measuring: not listed until they end."""
        return {row[0] for row in self._live() if _alive(*row[1:])}

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

    # ------------------------------------------------------------ reading

    def _read(self, sql: str, args=(), column: str = "record") -> list[RunRecord]:
        """The records a query selects (id, record), leaving out, and naming in `unreadable`,
        those that cannot be read; a damaged page costs the runs on it, not the store.
        column="listing": what a listing reads of each (listing_of), the whole record where
        a store that could not be migrated (read-only) has none."""
        self.unreadable = []
        light = column != "record"
        if light and self._has_column("runs", "listing"):
            sql = sql.replace("SELECT id, record", "SELECT id, coalesce(listing, record)", 1)
        else:
            column = "record"
        try:
            rows = self.db.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as e:
            rows = self._read_row_by_row(sql, args, e, column)
        hidden = self._under_way() if rows else set()
        found = []
        for run_id, text in rows:
            if run_id in hidden:
                continue
            try:
                d = json.loads(text)
                if not light:
                    found.append(RunRecord.from_dict(d, validate_schema=False))
                elif "row_count" in d:
                    found.append(Listed.from_dict(d, validate_schema=False))
                else:   # a store that could not be migrated, or a damaged listing
                    found.append(listed(RunRecord.from_dict(d, validate_schema=False)))
            except (ValueError, TypeError, KeyError, AttributeError) as e:
                self.unreadable.append((run_id, f"{type(e).__name__}: {e}"))
        return found

    def _has_column(self, table: str, name: str) -> bool:
        return any(row[1] == name for row in self.db.execute(f"PRAGMA table_info({table})"))

    def _read_row_by_row(self, sql: str, args, error: sqlite3.DatabaseError,
                         column: str = "record") -> list:
        try:
            rowids = [r[0] for r in self.db.execute(
                "SELECT rowid FROM runs" + sql.split(" FROM runs", 1)[1], args)]
        except sqlite3.DatabaseError:
            raise self._error(error, "read") from None
        rows = []
        pick = "record" if column == "record" else f"coalesce({column}, record)"
        for rowid in rowids:
            try:
                rows.append(self.db.execute(f"SELECT id, {pick} FROM runs WHERE rowid = ?",
                                            (rowid,)).fetchone())
            except sqlite3.DatabaseError as e:
                self.unreadable.append((f"row {rowid}", str(e)))
        return [r for r in rows if r is not None]

    def get(self, run_id: str) -> RunRecord | None:
        found = self._read("SELECT id, record FROM runs WHERE id = ?", (run_id,))
        return found[0] if found else None

    def find(self, prefix: str) -> list[RunRecord]:
        """The run whose id is `prefix`, else the runs whose id starts with it (users type the
        first few characters). Case counts, and _ is no wildcard: imported ids may differ
        from each other in case alone, or be another id's first characters."""
        return self._read("SELECT id, record FROM runs WHERE id = ?", (prefix,)) \
            or self._read("SELECT id, record FROM runs WHERE substr(id, 1, ?) = ? "
                          "ORDER BY created_at", (len(prefix), prefix))

    def listing(self, limit: int | None = None) -> list[Listed]:
        """The runs as a listing shows them (Listed), newest first: reads the same few hundred
        bytes of each, whatever its record holds."""
        return self.runs(limit, column="listing")

    def runs(self, limit: int | None = None, workload: str | None = None,
             status: str | None = None, column: str = "record") -> list[RunRecord]:
        """Newest first."""
        sql, args = "SELECT id, record FROM runs WHERE 1=1", []
        if workload:
            sql += " AND workload = ?"
            args.append(workload)
        if status:
            sql += " AND status = ?"
            args.append(status)
        sql += " ORDER BY created_at DESC, rowid DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        return self._read(sql, args, column)

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


def _use_wal(db: sqlite3.Connection) -> None:
    """Put the store in WAL mode. WAL is a property of the file, so after the first open this
    only reads the mode. The conversion needs the file to itself, and SQLite does not call the
    busy handler for it: processes that create a new store at the same moment would get
    "database is locked" at once (1 open in 100 with ten at once here), so wait our turn."""
    delay, deadline = 0.001, time.monotonic() + WAIT_FOREVER_S
    while True:
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                return
            db.execute("PRAGMA journal_mode=WAL")  # a file system without WAL keeps its mode
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(2 * delay, 0.05)


def _first_file(folder: Path) -> Path:
    """The part of `folder` that exists as a file (SILICONBENCH_HOME=a file, say)."""
    for p in [folder, *folder.parents]:
        if p.exists():
            return p
    return folder


def _interrupted(rec: RunRecord) -> dict:
    return rec.to_dict() | {"status": "failed", "reason": INTERRUPTED}


@dataclass
class Listed(RunRecord):
    """A run as a listing reads it (listing_of): `rows` holds its headline row alone (without
    samples), `row_count` how many rows the record has; no telemetry, settings or text beyond
    a few hundred characters."""
    row_count: int = 0


_LISTED_TEXT = 500   # characters of a reason, a note or a parameter a listing keeps


def _short(value):
    return value[:_LISTED_TEXT] if isinstance(value, str) else value


def listing_of(rec: RunRecord, d: dict) -> str:
    """What a listing of runs (siliconbench results) reads of a record whose JSON is `d`: its
    own short fields, the machine's scalars, the number of rows and the headline row, each
    bounded, so listing a store costs the same whatever one record holds."""
    from siliconbench.core.catalogue import headline
    best = headline(rec)
    head = None
    if best is not None:
        head = best.to_dict() | {"samples": [], "note": _short(best.note),
                                 "params": {k: _short(v) for k, v in
                                            list(best.params.items())[:50]
                                            if not isinstance(v, list)}}
    small = {k: d.get(k) for k in ("schema", "id", "workload", "framework", "device",
                                   "device_name", "status", "label", "created_at",
                                   "finished_at", "source")}
    small |= {"reason": _short(d.get("reason")), "params": {}, "row_count": len(rec.rows),
              "rows": [head] if head else [],
              "machine": {k: _short(v) for k, v in list(rec.machine.items())[:100]
                          if not isinstance(v, (dict, list))}}
    return json.dumps(small)


def listed(rec: RunRecord) -> Listed:
    return Listed.from_dict(json.loads(listing_of(rec, rec.to_dict())), validate_schema=False)


def _unfinished(status: str | None, reason: str | None) -> bool:
    return status == "failed" and reason == INTERRUPTED


def _completes(here: str, rec: RunRecord) -> bool:
    """Whether `rec` should replace the stored record `here` (its JSON) of the same run: the
    stored one never finished (INTERRUPTED) and `rec` did, or got further (more rows). A
    stored record that cannot be read is replaced by a good one."""
    try:
        old = json.loads(here)
        old_status, old_reason, old_rows = old["status"], old.get("reason"), len(old["rows"])
    except (ValueError, TypeError, KeyError):
        return True
    if not _unfinished(old_status, old_reason):
        return False
    return not _unfinished(rec.status, rec.reason) or len(rec.rows) > old_rows


def _this_process() -> tuple[str, int, float]:
    import psutil
    return socket.gethostname(), os.getpid(), psutil.Process().create_time()


def _alive(host: str, pid: int, started: float, created_at: str | None = None) -> bool:
    """Whether the process that owns a run still runs. On this machine: the process with that
    pid and start time (against pid reuse) exists, whatever host name the row gives (the
    machine may have been renamed since: a Mac's name changes with the network). Under
    another host name, not found here: another machine's process (a store on a shared drive),
    which cannot be asked; it counts as alive for OTHER_HOST_ALIVE_S after the run began
    (`created_at`, the record's), so a run killed before this machine's name changed comes
    back as interrupted, not hidden for good."""
    import psutil
    try:
        if abs(psutil.Process(pid).create_time() - started) < 1.0:
            return True
    except psutil.AccessDenied:
        if host == socket.gethostname():
            return True   # someone else's process, but it exists
    except (psutil.NoSuchProcess, ValueError, OverflowError, TypeError):
        pass
    if host == socket.gethostname():
        return False
    return _age_s(created_at) < OTHER_HOST_ALIVE_S


def _age_s(created_at: str | None) -> float:
    """Seconds since an ISO time; infinite for one that cannot be read (or none)."""
    import datetime as dt
    try:
        t = dt.datetime.fromisoformat(created_at)
        if t.tzinfo is None:
            t = t.replace(tzinfo=dt.timezone.utc)
        return time.time() - t.timestamp()
    except (TypeError, ValueError, OverflowError):
        return float("inf")


def keep_elsewhere(rec: RunRecord, near: Path) -> Path | None:
    """Write a run the store could not keep as a result file (`siliconbench import` reads
    it): beside the store, else in the working folder, else the temporary folder."""
    from siliconbench.core.files import write_atomic
    import tempfile
    name = f"siliconbench-unsaved-run-{rec.id[:8]}.json"
    for folder in (near, Path.cwd(), Path(tempfile.gettempdir())):
        try:
            write_atomic(folder / name, records_to_json([rec]))
            return folder / name
        except OSError:
            continue
    return None
