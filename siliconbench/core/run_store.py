"""The results store as the command and the app use it: one interface (RunStore) that the
embedded SQLite store (siliconbench.core.store.Store) and a lab's shared PostgreSQL store
(siliconbench.core.store_sync.SharedStore) both implement, and the one function that chooses
which (open_store). The command (siliconbench.core.cli) and the app (siliconbench.gui.app,
main_window) call it once at their start and pass the store down; nothing below them opens a
store (tests/core/test_run_store.py holds the few that must, with why)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from siliconbench.core.results import RunRecord
from siliconbench.core.store_schema import Imported, Listed


@runtime_checkable
class RunStore(Protocol):
    """What a results store offers. `path`: where it is (a file, or a shared store's address
    without password, siliconbench.core.store_pg.StoreURL); `unreadable`: the runs the last
    read could not read, with why; `offline`: why the shared store cannot be reached now
    (its sync state: runs wait on this machine until it can), None when it can or the store
    is this machine's own."""

    path: Path | str
    read_only: bool
    unreadable: list[tuple[str, str]]
    offline: str | None

    def save(self, rec: RunRecord) -> None: ...

    def begin_run(self, rec: RunRecord) -> None: ...

    def update_run(self, rec: RunRecord) -> None: ...

    def listing(self, limit: int | None = None) -> list[Listed]: ...

    def runs(self, limit: int | None = None, workload: str | None = None,
             status: str | None = None, column: str = "record") -> list[RunRecord]: ...

    def get(self, run_id: str) -> RunRecord | None: ...

    def get_many(self, run_ids: list[str]) -> list[RunRecord]: ...

    def find(self, prefix: str) -> list[RunRecord]: ...

    def delete(self, run_ids: list[str]) -> int: ...

    def set_label(self, run_ids: list[str], label: str | None) -> None: ...

    def import_records(self, records: list[RunRecord]) -> Imported: ...

    def reopen(self) -> RunStore: ...

    def close(self) -> None: ...


def chosen_address(where=None) -> str | None:
    """The shared store's address the store `where` names, or None for a file: `where` when it
    is an address (or a StoreURL), else SILICONBENCH_STORE (--store URL, the app's
    Preferences) when `where` is None."""
    from siliconbench.core.store_sync import shared_url
    return shared_url(where)


def open_store(where=None, notice: Callable[[str], None] | None = None) -> RunStore:
    """The store a command or the app uses: the shared store `where` or SILICONBENCH_STORE
    names (runs kept on this machine first, in its own file), else the file `where` (default:
    this machine's, siliconbench.core.store_schema.default_path). StoreError, one sentence,
    when it cannot be opened."""
    from siliconbench.core.store import Store, default_path
    extra = {} if notice is None else {"notice": notice}
    url = chosen_address(where)
    if url is not None:
        from siliconbench.core.store_sync import SharedStore
        return SharedStore(url, Store(default_path(), **extra))
    return Store(Path(where) if where is not None else None, **extra)


__all__ = ["RunStore", "chosen_address", "open_store"]
