"""The local results store: SQLite (WAL) in the user data directory, one row per run with the
full record as JSON. Every run is kept, failed and cancelled ones too; imports dedup by run id."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from core.results import RunRecord

# Each entry upgrades the database by one version; PRAGMA user_version says where it is.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE runs (
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
    );
    CREATE INDEX runs_by_time ON runs(created_at);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


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


class Store:
    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path else home() / "results.sqlite3"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, check_same_thread=False)
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self._migrate()
        except sqlite3.DatabaseError as e:
            raise StoreError(f"The results store {self.path} cannot be read ({e}).") from None

    def _migrate(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"The results store {self.path} was written by a newer "
                             "SiliconBench; update SiliconBench to use it.")
        for target in range(version + 1, SCHEMA_VERSION + 1):
            with self.db:
                self.db.executescript(MIGRATIONS[target - 1])
                self.db.execute(f"PRAGMA user_version = {target}")

    def close(self) -> None:
        self.db.close()

    def _row_values(self, rec: RunRecord, imported: bool) -> tuple:
        return (rec.id, rec.created_at, rec.workload, rec.framework, rec.device, rec.status,
                rec.label, rec.source, int(imported), json.dumps(rec.to_dict()))

    def save(self, rec: RunRecord) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?)",
                            self._row_values(rec, False))

    def import_records(self, records: list[RunRecord]) -> tuple[int, int]:
        """Add records not already here (by id), all in one transaction: (added, skipped)."""
        added = 0
        with self.db:
            for rec in records:
                cur = self.db.execute("INSERT OR IGNORE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?)",
                                      self._row_values(rec, True))
                added += cur.rowcount
        return added, len(records) - added

    def get(self, run_id: str) -> RunRecord | None:
        row = self.db.execute("SELECT record FROM runs WHERE id = ?", (run_id,)).fetchone()
        return RunRecord.from_dict(json.loads(row[0]), validate_schema=False) if row else None

    def find(self, prefix: str) -> list[RunRecord]:
        """The run whose id is `prefix`, else the runs whose id starts with it (users type the
        first few characters). Case counts, and _ is no wildcard: imported ids may differ
        from each other in case alone, or be another id's first characters."""
        rows = self.db.execute("SELECT record FROM runs WHERE id = ?", (prefix,)).fetchall() \
            or self.db.execute("SELECT record FROM runs WHERE substr(id, 1, ?) = ? "
                               "ORDER BY created_at", (len(prefix), prefix)).fetchall()
        return [RunRecord.from_dict(json.loads(r[0]), validate_schema=False) for r in rows]

    def runs(self, limit: int | None = None, workload: str | None = None,
             status: str | None = None) -> list[RunRecord]:
        """Newest first."""
        sql, args = "SELECT record FROM runs WHERE 1=1", []
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
        return [RunRecord.from_dict(json.loads(r[0]), validate_schema=False) for r in self.db.execute(sql, args)]

    def set_label(self, run_ids: list[str], label: str | None) -> None:
        with self.db:
            for run_id in run_ids:
                rec = self.get(run_id)
                if rec is None:
                    continue
                rec.label = label or None
                self.db.execute("UPDATE runs SET label = ?, record = ? WHERE id = ?",
                                (rec.label, json.dumps(rec.to_dict()), run_id))

    def delete(self, run_ids: list[str]) -> int:
        with self.db:
            return sum(self.db.execute("DELETE FROM runs WHERE id = ?", (i,)).rowcount
                       for i in run_ids)
