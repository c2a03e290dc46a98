"""One results-store interface (siliconbench.core.run_store.RunStore) that both stores implement,
chosen once by open_store at the command's and the app's start and passed down: nothing below
them opens a store (issue 52)."""

from __future__ import annotations

import ast
import inspect
import textwrap
import typing
from pathlib import Path

import pytest

from siliconbench.core.run_store import RunStore, open_store
from siliconbench.core.store import Store
from siliconbench.core.store_sync import SharedStore
from tests.helpers.recorded import recorded

PACKAGE = Path(__file__).resolve().parents[2] / "siliconbench"

# Where a store may be opened (relative to siliconbench/), and why.
MAY_OPEN = {
    # The store layer: the stores themselves, and the one function that chooses.
    "core/store.py": "Store.reopen: another connection to the same file, for another thread",
    "core/store_sync.py": "SharedStore.reopen, and the shared store's local file",
    "core/store_pg.py": "store_pg.check: `store check` and Preferences' Test Connection",
    "core/run_store.py": "open_store: the one place the store is chosen",
    # The command and the app: they choose the store once and pass it down.
    "core/cli/commands.py": "each command that reads or keeps runs opens the store it chose",
    "gui/app.py": "the app's start",
    "gui/main_window.py": "a window built without a store (tests, build_rest) opens the chosen one",
    # A run's thread keeps the run in the store the command or the app chose (its address is
    # passed in): a connection of its own, since SQLite connections are not for sharing
    # between threads.
    "core/runner.py": "execute_kept: the run's own connection to the chosen store",
}
OPENERS = {"Store", "SharedStore", "SharedDatabase", "open_store"}


def opened_at(path: Path) -> list[int]:
    """The lines of `path` that construct a store (a call of one of OPENERS)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                else None
            if name in OPENERS:
                lines.append(node.lineno)
    return lines


def test_no_module_below_the_command_or_the_app_opens_a_store():
    found = {str(p.relative_to(PACKAGE)): opened_at(p) for p in PACKAGE.rglob("*.py")}
    below = {where: lines for where, lines in found.items() if lines and where not in MAY_OPEN}
    assert below == {}, ("a store is opened below the command or the app: choose it with "
                         "run_store.open_store there and pass it down", below)
    # The allow-list holds only what still needs it.
    assert [where for where in MAY_OPEN if not found.get(where)] == []


def test_the_check_finds_a_store_opened_where_none_may_be(tmp_path):
    module = tmp_path / "somewhere.py"
    module.write_text("from siliconbench.core.store import Store\n\n"
                      "def f():\n    # Store() in a comment is no call\n"
                      "    return Store().runs()\n", encoding="utf-8")
    assert opened_at(module) == [5]


def _members(proto: type) -> set[str]:
    if hasattr(typing, "get_protocol_members"):
        return set(typing.get_protocol_members(proto))
    return {n for n in (*vars(proto), *proto.__annotations__) if not n.startswith("_")}


def _provided(cls: type) -> set[str]:
    """The class's and bases' attributes, and what its methods assign to self."""
    names = set()
    for base in cls.__mro__[:-1]:
        names |= set(vars(base)) | set(getattr(base, "__annotations__", {}))
        tree = ast.parse(textwrap.dedent(inspect.getsource(base)))
        names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                  and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
                  and n.value.id == "self"}
    return names


def lacks(cls: type) -> list[str]:
    """What `cls` lacks of RunStore: a member, or a method taking other arguments."""
    has, out = _provided(cls), []
    for name in sorted(_members(RunStore)):
        if name not in has:
            out.append(name)
            continue
        wanted = getattr(RunStore, name, None)
        given = inspect.getattr_static(cls, name, None)
        if inspect.isfunction(wanted) and inspect.isfunction(given):
            params = list(inspect.signature(wanted).parameters.values())
            args = [None] * sum(p.default is inspect.Parameter.empty for p in params)
            keywords = {p.name: p.default for p in params[1:]
                        if p.default is not inspect.Parameter.empty}
            try:
                inspect.signature(given).bind(*args, **keywords)
            except TypeError as e:
                out.append(f"{name}: takes other arguments than RunStore ({e})")
    return out


@pytest.mark.parametrize("cls", [Store, SharedStore])
def test_both_stores_implement_the_run_store_protocol(cls):
    assert lacks(cls) == []


def test_a_store_missing_a_member_is_found():
    class Partial(Store):
        def get(self):   # no run id
            return None
    said = lacks(Partial)
    assert len(said) == 1 and said[0].startswith("get: takes other arguments than RunStore")
    assert "sync_state" not in _members(RunStore) and "offline" in _members(RunStore)


def test_open_store_chooses_the_file_or_the_shared_store(siliconbench_home, monkeypatch):
    """Store() is this machine's file whatever SILICONBENCH_STORE says (it returned a
    SharedStore, another class, where SILICONBENCH_STORE named a server); open_store chooses."""
    monkeypatch.delenv("SILICONBENCH_STORE", raising=False)
    store = open_store()
    assert type(store) is Store and isinstance(store, RunStore)
    assert store.path == siliconbench_home / "results.sqlite3" and store.offline is None
    rec = recorded("gemm-torch")
    store.save(rec)
    other = store.reopen()
    assert type(other) is Store and other.path == store.path and other.get(rec.id).id == rec.id
    other.close()
    store.close()
    # An address no server answers: the shared store, offline, runs kept here meanwhile.
    monkeypatch.setenv("SILICONBENCH_STORE", "postgresql://nobody@127.0.0.1:1/none"
                                             "?connect_timeout=2")
    assert type(Store()) is Store
    shared = open_store(notice=lambda _: None)
    assert type(shared) is SharedStore and isinstance(shared, RunStore)
    assert shared.offline and shared.local.path == siliconbench_home / "results.sqlite3"
    shared.close()
