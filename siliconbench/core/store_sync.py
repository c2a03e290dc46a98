"""A machine's view of the shared store: runs are written here first, into the local SQLite
store (siliconbench.core.store.Store), marked unsent, and sent to the shared one
(siliconbench.core.store_pg) when they end, and again by `siliconbench store sync` while it
cannot be reached. So a run made offline, or under way when the server dies, is kept here and
arrives later, once: the run id is the shared table's key (ON CONFLICT DO NOTHING), and the
mark goes only after the server committed it.

Which store a command uses: SILICONBENCH_STORE (set by `--store URL`, or by the app from its
Preferences) naming a PostgreSQL server, else the local file, as before (shared_url)."""

from __future__ import annotations

import os
from typing import NamedTuple

from siliconbench.core.results import RunRecord
from siliconbench.core.store_pg import SharedDatabase, StoreURL, is_url
from siliconbench.core.store_schema import Imported, StoreError

ENV = "SILICONBENCH_STORE"


def shared_url(path=None) -> str | None:
    """The shared store's address siliconbench.core.run_store.open_store(path) opens, or None for a local file: the path given
    when it is an address, else SILICONBENCH_STORE when no path is given."""
    if isinstance(path, StoreURL):
        return path.url
    if path is None:
        path = os.environ.get(ENV) or None
    return path if is_url(path) else None


class Sent(NamedTuple):
    """What a sync or a push did: runs sent, runs the shared store had already, runs left
    here (unsent, with why), runs deleted in the shared store (not sent again), runs its
    rules refused (another role's machine name; with the first reason)."""
    sent: int
    already: int
    left: int
    why: str | None = None
    deleted: int = 0
    refused: int = 0
    refusal: str | None = None

    def summary(self) -> str:
        line = f"Sent {self.sent:,} run{'s' * (self.sent != 1)} to the shared store"
        if self.already:
            line += f"; {self.already:,} {_was(self.already)} there already"
        if self.deleted:
            line += (f"; {self.deleted:,} {_was(self.deleted)} deleted from it and "
                     f"{'is' if self.deleted == 1 else 'are'} not sent again")
        if self.refused:
            line += (f"; {self.refused:,} {_was(self.refused)} refused ({self.refusal}) and "
                     "stay on this machine")
        if self.left:
            line += (f"; {self.left:,} kept here unsent ({self.why}); run siliconbench store "
                     "sync when it can be reached")
        return line + "."


class SharedStore:
    """The store a lab's machine uses: reads from the shared database; each run written to the
    local store first and sent when it ends (see the module's text)."""

    read_only = False

    def __init__(self, url: str, local) -> None:
        """`local`: this machine's store (siliconbench.core.store.Store), where runs wait."""
        self.url, self.path = url, StoreURL(url)
        self.local, self.notice = local, local.notice
        self.local.open_outbox()
        self._shared: SharedDatabase | None = None
        self.offline: str | None = None   # why the shared store could not be reached
        try:
            self._connected()
        except StoreError as e:   # runs are kept here meanwhile; a read says why it cannot
            self.offline = str(e)

    @property
    def unreadable(self) -> list[tuple[str, str]]:
        return self._shared.unreadable if self._shared is not None else []

    def _connected(self) -> SharedDatabase:
        """The shared database, connecting (again) when needed; StoreError when it cannot."""
        if self._shared is not None and not self._shared.db.closed \
                and not self._shared.db.broken:
            return self._shared
        if self._shared is not None:
            self._shared.close()
            self._shared = None
        self._shared = SharedDatabase(self.url)
        self.offline = None
        return self._shared

    def reopen(self) -> SharedStore:
        """Another connection to the shared store, and to this machine's (for another
        thread)."""
        return SharedStore(self.url, self.local.reopen())

    def close(self) -> None:
        if self._shared is not None:
            self._shared.close()
        self.local.close()

    # ------------------------------------------------------------ reads: the shared store

    def get(self, run_id: str):
        return self._connected().get(run_id)

    def get_many(self, run_ids: list[str]):
        return self._connected().get_many(run_ids)

    def find(self, prefix: str):
        return self._connected().find(prefix)

    def runs(self, *args, **kwargs):
        return self._connected().runs(*args, **kwargs)

    def listing(self, limit: int | None = None):
        return self._connected().listing(limit)

    # ------------------------------------------------------------ a run: here first

    def begin_run(self, rec: RunRecord) -> None:
        self.local.begin_run(rec)
        self.local.mark_unsent([rec.id])

    def update_run(self, rec: RunRecord) -> None:
        self.local.update_run(rec)

    def save(self, rec: RunRecord) -> None:
        """Keep the run here, then send every unsent run (this one first). A shared store that
        cannot take it now is one sentence; the run waits here for `siliconbench store
        sync`."""
        self.local.mark_unsent([rec.id])
        self.local.save(rec)
        done = self.sync()
        if done.left:
            self.notice(f"the run {rec.id[:8]} is kept on this machine and not yet in the "
                        f"shared store ({done.why}); siliconbench store sync sends it.")
        elif done.refused:
            self.notice(f"the shared store refused {_count(done.refused)} ({done.refusal}); "
                        f"the run {rec.id[:8]} stays on this machine alone.")

    def sync(self) -> Sent:
        """Send the runs kept here unsent (not those still under way)."""
        return self._send(self.local.unsent())

    def push(self) -> Sent:
        """Send every run of the local store (`siliconbench store push`), once each."""
        return self._send(self.local.finished_ids())

    def _send(self, ids: list[str]) -> Sent:
        if not ids:
            return Sent(0, 0, 0)
        imported = self.local.imported_flags(ids)
        records = [(rec, imported.get(rec.id, False)) for rec in
                   (self.local.get(i) for i in ids) if rec is not None]
        try:
            done = self._connected().insert(records)
        except StoreError as e:
            self.offline = str(e)
            return Sent(0, 0, len(records), _short(str(e)))
        # a run refused or deleted there stays here, and is not retried
        self.local.mark_unsent(ids, unsent=False)
        already = len(records) - len(done.added) - len(done.refused) - len(done.deleted)
        return Sent(len(done.added), already, 0, deleted=len(done.deleted),
                    refused=len(done.refused),
                    refusal=done.refused[0][1] if done.refused else None)

    # ------------------------------------------------------------ other writes: the shared store

    def import_records(self, records: list[RunRecord]):
        done = self._connected().insert([(rec, True) for rec in records])
        if done.refused:
            self.notice(f"the shared store refused {len(done.refused):,} of the runs "
                        f"({done.refused[0][1]}).")
        if done.deleted:
            n = len(done.deleted)
            self.notice(f"{n:,} of the runs {_was(n)} deleted from the shared store before, "
                        f"so {'it was' if n == 1 else 'they were'} not added again.")
        return Imported(len(done.added), 0, len(records) - len(done.added)
                        - len(done.refused) - len(done.deleted))   # those: said above

    def set_label(self, run_ids: list[str], label: str | None) -> None:
        self._connected().set_label(run_ids, label)

    def delete(self, run_ids: list[str]) -> int:
        return self._connected().delete(run_ids)


def _count(n: int) -> str:
    return f"{n:,} run{'s' * (n != 1)}"


def _was(n: int) -> str:
    return "was" if n == 1 else "were"


def _short(sentence: str) -> str:
    """A sentence made a clause (to sit inside another)."""
    return sentence[0].lower() + sentence[1:].rstrip(".") if sentence else sentence
