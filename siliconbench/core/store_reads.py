"""Reading runs back from the results store: whole records, or listings (what a listing of runs
reads of each); a damaged row costs only that run (`unreadable` says which were not read), and
a run whose owner process still runs is under way, not listed until it ends."""

from __future__ import annotations

import functools
import json
import os
import socket
import sqlite3
import time
import uuid

from siliconbench.core.results import RunRecord
from siliconbench.core.store_schema import LISTING_VERSION, Database, Listed, listed

# A run owned by a process on another host name cannot be asked after: it counts as under way
# for this long after it began, and as interrupted after (no run SiliconBench makes lasts a
# week). Also what ends a run killed before this machine's name changed.
OTHER_HOST_ALIVE_S = 7 * 86_400.0


class StoreReads(Database):
    """The store's reads; siliconbench.core.store.Store adds its writes."""

    hidden: int = 0   # runs under way the last read left out (listed when they end)

    def _live(self) -> list[tuple[str, bool]]:
        """Each run marked as under way, and whether the process that owns it still runs."""
        if not self._has_table("live_runs"):
            return []
        machine = "l.machine" if self._has_column("live_runs", "machine") else "NULL"
        return [(row[0], _alive(*row[1:])) for row in self.db.execute(
            f"SELECT l.id, l.host, l.pid, l.started, r.created_at, {machine} FROM "
            "live_runs l LEFT JOIN runs r ON r.id = l.id").fetchall()]

    def _under_way(self) -> set[str]:
        """Runs another process (or this one) is still measuring: not listed until they end."""
        return {run_id for run_id, alive in self._live() if alive}

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
        self.hidden = 0
        found = []
        for run_id, text in rows:
            if run_id in hidden:
                self.hidden += 1
                continue
            try:
                d = json.loads(text)
                if not light:
                    found.append(RunRecord.from_dict(d, validate_schema=False))
                elif d.get("v") == LISTING_VERSION:
                    found.append(Listed.from_dict(d, validate_schema=False))
                else:   # a store that could not be migrated, a listing of an older form
                    if "row_count" in d:
                        d = json.loads(self.db.execute("SELECT record FROM runs WHERE id = ?",
                                                       (run_id,)).fetchone()[0])
                    found.append(listed(RunRecord.from_dict(d, validate_schema=False)))
            except Exception as e:   # RecursionError, MemoryError too: this run alone
                self.unreadable.append((run_id, f"{type(e).__name__}: {str(e)[:200]}"))
        return found

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

    def get_many(self, run_ids: list[str]) -> list[RunRecord]:
        """The whole records of these runs (those still here), in a few queries: what the
        app's Results reads of the runs selected."""
        found, unreadable = [], []
        for start in range(0, len(run_ids), 500):
            chunk = list(run_ids[start:start + 500])
            found += self._read(f"SELECT id, record FROM runs WHERE id IN "
                                f"({','.join('?' * len(chunk))})", chunk)
            unreadable += self.unreadable
        self.unreadable = unreadable
        return found

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


def _alive(host: str, pid: int, started: float, created_at: str | None = None,
           machine: str | None = None) -> bool:
    """Whether the process that owns a run still runs. On this machine: the process with that
    pid and start time (against pid reuse) exists, whatever host name the row gives (the
    machine may have been renamed since: a Mac's name changes with the network). This
    machine is the row's host name, or its `machine` (this_machine: the same machine, boot
    and process namespace, whatever its name). Otherwise another machine's process (a store
    on a shared drive), which cannot be asked; it counts as alive for OTHER_HOST_ALIVE_S
    after the run began (`created_at`, the record's), so a run killed before this machine
    was renamed and restarted comes back as interrupted, not hidden for good."""
    import psutil
    here = host == socket.gethostname() or (machine is not None and machine == this_machine())
    try:
        if abs(psutil.Process(pid).create_time() - started) < 1.0:
            return True
    except psutil.AccessDenied:
        if here:
            return True   # someone else's process, but it exists
    except (psutil.NoSuchProcess, ValueError, OverflowError, TypeError):
        pass
    if here:
        return False
    return _age_s(created_at) < OTHER_HOST_ALIVE_S


@functools.cache
def this_machine() -> str | None:
    """What names this machine as it runs now, whatever its host name: its machine id
    (systemd's, else the network card's address), its boot time and its process namespace
    (two containers of one image share a machine id and a boot, never a pid namespace); a
    pid found or not found here says whether a run of that machine still runs. None where
    no id can be had."""
    import psutil
    ident = None
    for name in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            with open(name, encoding="ascii", errors="replace") as f:
                ident = f.read(64).strip() or None
        except OSError:
            continue
        if ident:
            break
    if ident is None:
        node = uuid.getnode()
        if node & (1 << 40):   # a random number: getnode found no network card
            return None
        ident = f"{node:012x}"
    try:
        namespace = str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        namespace = ""
    return f"{ident} {int(psutil.boot_time())} {namespace}".strip()


def _age_s(created_at: str | None) -> float:
    """Seconds since an ISO time; infinite for one that cannot be read (or none)."""
    import datetime as dt
    try:
        t = dt.datetime.fromisoformat(created_at)
        if t.tzinfo is None:
            t = t.replace(tzinfo=dt.UTC)
        return time.time() - t.timestamp()
    except (TypeError, ValueError, OverflowError):
        return float("inf")

