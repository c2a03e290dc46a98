"""The results store's SQLite file: where it lives, opening it (WAL; read-only where its folder
or file cannot be written, or the disk is full), its schema and the migrations that bring an
older file up to it, short write transactions, and the one sentence each failure reads as. What
a listing of runs reads of each record (listing_of) is kept in the file beside the record, so it
is here too. siliconbench.core.store builds the reads (store_reads) and writes on Database."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote

from siliconbench.core.files import not_regular
from siliconbench.core.results import RunRecord

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
    # The machine a run under way began on (store_reads.this_machine), beside its host name,
    # which changes (a Mac's follows the network): a run killed before a rename is judged by
    # its process here, not hidden as another machine's.
    ["ALTER TABLE live_runs ADD COLUMN machine TEXT"],
    # Listings of LISTING_VERSION 2 (the run's short params, warnings, flag counts: the app's
    # Results reads listings, not records): refilled by _fill_listings.
    ["UPDATE runs SET listing = NULL"],
]
COLUMNS = ("id, created_at, workload, framework, device, status, label, source, imported, "
           "record, listing")
SCHEMA_VERSION = len(MIGRATIONS)

WAIT_NOTICE_S = 3.0        # waiting this long for another process's write: say so
WAIT_FOREVER_S = 86_400.0  # sqlite's busy timeout: a record is never dropped for a lock
DISK_FULL_BYTES = 1 << 20
WAL_LIMIT_BYTES = 8 << 20


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


def _say(message: str) -> None:
    print(f"siliconbench: {message}", file=sys.stderr, flush=True)


class Database:
    """An open results store file, its schema current; reads and writes build on it."""

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
        what = not_regular(self.path)   # checked before SQLite opens it: a FIFO would block
        if what:
            raise StoreError(f"The results store {self.path} is {what}, not a database file; "
                             "move it aside and SiliconBench will start a new store.")
        self.read_only = not os.access(folder, os.W_OK) or (
            self.path.exists() and not os.access(self.path, os.W_OK))
        if self.read_only and not self.path.exists():
            raise StoreError(f"The results store cannot be created in {folder} (the folder is "
                             "read-only); set SILICONBENCH_HOME to a writable folder.")
        self.db = self._connect()
        try:
            self._migrate()
            self._tidy()
        except BaseException as e:
            self.db.close()  # a store we refuse is left as it was, and not held open
            if isinstance(e, sqlite3.DatabaseError):
                raise self._error(e, "read") from None
            raise

    def _tidy(self) -> None:
        """What opening does once the schema is current (the store forgets vanished runs)."""

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
                if version < 5:
                    self._fill_listings()
        if not self._has_table("runs"):
            raise StoreError(f"The results store {self.path} is damaged (it has no table of "
                             "runs); move it aside and SiliconBench will start a new store.")

    def _fill_listings(self) -> None:
        """The listing of every run kept before there was one (once, in the migration)."""
        for run_id, text in self.db.execute("SELECT id, record FROM runs").fetchall():
            try:
                rec = RunRecord.from_dict(json.loads(text), validate_schema=False)
            except Exception:   # RecursionError too: read (and named as damaged) in full
                continue
            self.db.execute("UPDATE runs SET listing = ? WHERE id = ?",
                            (listing_of(rec, rec.to_dict()), run_id))

    def _user_version(self) -> int:
        return self.db.execute("PRAGMA user_version").fetchone()[0]

    def _has_table(self, name: str) -> bool:
        return self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                               (name,)).fetchone() is not None

    def close(self) -> None:
        self.db.close()

    def _has_column(self, table: str, name: str) -> bool:
        return any(row[1] == name for row in self.db.execute(f"PRAGMA table_info({table})"))

    # ------------------------------------------------------------ transactions

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


@dataclass
class Listed(RunRecord):
    """A run as a listing reads it (listing_of): `rows` holds its headline row alone (without
    samples), `row_count` how many rows the record has; no telemetry, settings or text beyond
    a few hundred characters. `params` keeps the run's short values (its model, precision),
    `warnings` its first few (of `warning_count`), `flags` how many of its rows bear each
    flag: what the app's Results shows of a run without reading its record."""
    row_count: int = 0
    warning_count: int = 0
    flags: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        """What a listing adds, as its types say, whatever the row held (a shared store's rows
        are other machines' writing): a value of another type reads as none."""
        if not isinstance(self.params, dict):
            self.params = {}
        if not isinstance(self.warnings, list):
            self.warnings = []
        self.warnings = [w for w in self.warnings if isinstance(w, str)]
        if not isinstance(self.warning_count, int) or self.warning_count < len(self.warnings):
            self.warning_count = len(self.warnings)
        self.flags = {str(f): n for f, n in self.flags.items() if isinstance(n, int)} \
            if isinstance(self.flags, dict) else {}
        if not isinstance(self.row_count, int):
            self.row_count = len(self.rows)


# A listing of another form (an older SiliconBench's, without params, warnings or flags) is
# read from its record instead (store_reads, store_pg): a listing's text begins LISTING_HEAD.
LISTING_VERSION = 2
LISTING_HEAD = f'{{"v": {LISTING_VERSION},'
_LISTED_ITEMS = 50   # parameters, flags and list items a listing keeps
_LISTED_WARNINGS = 5, 300   # warnings a listing keeps, and characters of each
_LISTED_JSON = 1000  # a machine's core tiers kept up to this many characters
_MACHINE_LISTS = ("cpu_tiers",)   # what a machine's identity reads beside its plain values


_LISTED_TEXT = 500   # characters of a reason, a note or a parameter a listing keeps


def _short(value):
    return value[:_LISTED_TEXT] if isinstance(value, str) else value


def _small(value):
    """A value as a listing keeps it: text shortened, a list of plain values cut to its first
    few, anything else nested left out (None)."""
    if isinstance(value, list):
        if all(v is None or isinstance(v, (str, int, float, bool)) for v in value):
            return [_short(v) for v in value[:_LISTED_ITEMS]]
        return None
    return None if isinstance(value, dict) else _short(value)


def _machine_value(key: str, value):
    """A machine's value as a listing keeps it: its CPU's core tiers whole where short, since
    a machine's identity reads them (MachineInfo.key); no other list or table."""
    if isinstance(value, (dict, list)):
        if key not in _MACHINE_LISTS:
            return None
        try:
            return value if len(json.dumps(value)) <= _LISTED_JSON else None
        except (TypeError, ValueError, RecursionError):
            return None
    return _short(value)


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
    small = {"v": LISTING_VERSION}   # first: LISTING_HEAD
    small |= {k: d.get(k) for k in ("schema", "id", "workload", "framework", "device",
                                    "device_name", "status", "label", "created_at",
                                    "finished_at", "source")}
    flags: dict[str, int] = {}
    for row in rec.rows:
        for f in row.flags:
            if f in flags or len(flags) < _LISTED_ITEMS:
                flags[f] = flags.get(f, 0) + 1
    machine = {k: _machine_value(k, v) for k, v in list(rec.machine.items())[:100]}
    small |= {"reason": _short(d.get("reason")), "row_count": len(rec.rows),
              "rows": [head] if head else [], "flags": flags,
              "params": {k: _small(v) for k, v in
                         list(shown_params(rec).items())[:_LISTED_ITEMS]
                         if _small(v) is not None},
              "warning_count": len(rec.warnings),
              "warnings": [w[:_LISTED_WARNINGS[1]] if isinstance(w, str) else w
                           for w in rec.warnings[:_LISTED_WARNINGS[0]]],
              "machine": {k: v for k, v in machine.items() if v is not None}}
    return json.dumps(small)


def shown_params(rec: RunRecord) -> dict:
    """A run's parameters as Results names them: a sustained run's (--duration) precisions
    are those its intervals measured (one point unless named), not the workload's list."""
    params = rec.params or {}
    measured = list(dict.fromkeys(r.params["dtype"] for r in rec.rows
                                  if r.metric == "interval" and "dtype" in r.params))
    if params.get("duration") and measured and isinstance(params.get("dtypes"), list):
        params = {**params, "dtypes": measured}
    return params


def run_kind(workload: str, params: dict) -> str:
    """What a run measured within its workload: its model (a preset, or its own file's name),
    precision and TF32 ('llama-3.1-8b · bfloat16', 'float32 · TF32'); the Results' Workload
    column, the queue's rows and `siliconbench results` name it (a TF32 GEMM read like a plain float32 one)."""
    from siliconbench.core.catalogue import UnknownWorkload
    from siliconbench.core.catalogue import workload as find
    try:
        given = {p.name: p.default for p in find(workload).params}
    except UnknownWorkload:
        given = {}
    given.update(params or {})
    path = given.get("model_path")
    model = str(path).rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1] if path else \
        given.get("model") or given.get("preset")
    dtypes = given.get("dtypes")
    dtype = given.get("dtype") or (", ".join(map(str, dtypes)) if isinstance(dtypes, list)
                                   else None) or given.get("precision")
    parts = [str(x) for x in (model, dtype) if x]
    if given.get("tf32"):
        parts.append("TF32")
    if given.get("duration"):        # sustained mode (--duration, in minutes)
        parts.append(f"sustained {float(given['duration']):g} min")
    return " · ".join(parts)


def listed(rec: RunRecord) -> Listed:
    return Listed.from_dict(json.loads(listing_of(rec, rec.to_dict())), validate_schema=False)

