"""Reading the store never needs a write: on a full disk and on a read-only store, `results`,
`results --show` and `export` work, and a run whose process died still shows as interrupted
(opening the store used to sweep dead owners, a write, and a full disk refused every read).
A run marked as under way by a process under another host name does not hide for good: this
machine may have been renamed since (a Mac's name follows the network)."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
from pathlib import Path

import psutil

from siliconbench.core import store as store_mod
from siliconbench.core import store_reads
from siliconbench.core.results import records_from_file
from siliconbench.core.store import INTERRUPTED, Store
from tests.helpers.cli_processes import cli_in_process as sb
from tests.helpers.cli_processes import dead_pid, run_cli
from tests.helpers.recorded import FOLDER, real_runs
from tests.helpers.store_disk import fill, remount, small_disk


def store_with_a_dead_owner(home: Path, host: str | None = None, begun: dt.datetime | None = None,
                            pid: int | None = None, started: float | None = None,
                            machine: str | None = None) -> tuple:
    """A store of real runs, one of them begun by a process that is gone (killed); `machine`:
    another machine's (store_reads.this_machine), where the run began elsewhere."""
    os.environ["SILICONBENCH_HOME"] = str(home)
    *kept, killed = real_runs()
    if begun is not None:
        killed.created_at = begun.isoformat(timespec="seconds")
    s = Store()
    s.import_records(kept)
    s.begin_run(killed)
    s.db.execute("UPDATE live_runs SET host = ?, pid = ?, started = ?",
                 (host or socket.gethostname(), pid or dead_pid(),
                  started if started is not None else 1.0))
    if machine is not None:
        s.db.execute("UPDATE live_runs SET machine = ?", (machine,))
    s.db.commit()
    s.close()
    return kept, killed


def live_rows(home: Path) -> int:
    """Runs marked as under way, read without a Store (which would tidy them)."""
    import sqlite3
    db = sqlite3.connect(f"file:{home / 'results.sqlite3'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT count(*) FROM live_runs").fetchone()[0]
    finally:
        db.close()


def reads_work(tmp_path: Path, kept, killed) -> None:
    r = run_cli("results", "--json")
    assert r.returncode == 0, r.stderr
    listed = {x["id"]: x for x in json.loads(r.stdout)}
    assert set(listed) == {x.id for x in [*kept, killed]}
    assert listed[killed.id]["status"] == "failed" and listed[killed.id]["reason"] == INTERRUPTED
    r = run_cli("results")
    assert r.returncode == 0 and killed.id[:8] in r.stdout, r.stderr
    r = run_cli("results", "--show", killed.id)
    assert r.returncode == 0 and killed.id[:8] in r.stdout, r.stderr
    out = tmp_path / "all.sbresults"
    r = run_cli("export", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert {x["id"] for x in json.loads(out.read_text())["runs"]} == set(listed)


# ---------------------------------------------------------------- no write to read

def test_a_full_disk_still_lists_shows_and_exports(tmp_path):
    """Issue 30: with the store's disk full, results, results --show and export all said 'The
    disk holding the results store … is full'."""
    with small_disk(tmp_path / "disk", "2m") as disk:
        home = disk / "home"
        kept, killed = store_with_a_dead_owner(home)
        before = (home / "results.sqlite3").read_bytes()
        fill(disk)
        reads_work(tmp_path, kept, killed)
        # Nothing was written: the dead owner is still marked, the file as it was.
        assert (home / "results.sqlite3").read_bytes() == before
        r = run_cli("import", str(FOLDER / "mlp-torch.json"))
        assert r.returncode == 2 and "is full" in r.stderr and "free some space" in r.stderr
        os.remove(disk / "filler")
        assert live_rows(home) == 1
        Store().close()       # with room again, opening tidies the dead owner away
        assert live_rows(home) == 0


def test_a_read_only_store_lists_shows_and_exports_a_killed_run(tmp_path):
    with small_disk(tmp_path / "disk", "4m") as disk:
        kept, killed = store_with_a_dead_owner(disk / "home")
        remount(disk, "ro")
        try:
            reads_work(tmp_path, kept, killed)
        finally:
            remount(disk, "rw")


def test_a_failing_tidy_up_costs_nothing(tmp_path, monkeypatch):
    """Without a filesystem to fill: the sweep's write fails (a lock held elsewhere, a full
    disk); the store opens and reads all the same."""
    kept, killed = store_with_a_dead_owner(tmp_path / "home")
    real_transaction = Store._transaction

    def failing(self, wait=True):
        raise store_mod.StoreError("The disk holding the results store is full.")
    monkeypatch.setattr(Store, "_transaction", failing)
    s = Store()
    assert {r.id for r in s.runs()} == {r.id for r in [*kept, killed]}
    s.close()
    monkeypatch.setattr(Store, "_transaction", real_transaction)
    assert live_rows(tmp_path / "home") == 1


# ---------------------------------------------------------------- another host name

def ago(days: float) -> dt.datetime:
    return dt.datetime.now(dt.UTC) - dt.timedelta(days=days)


def listed() -> set[str]:
    s = Store()
    try:
        return {r.id for r in s.runs()}
    finally:
        s.close()


def test_a_run_killed_before_the_machine_was_renamed_comes_back(tmp_path):
    """Issue 30: a live_runs row naming another host counted as alive forever, so the run
    never appeared in results or export again."""
    kept, killed = store_with_a_dead_owner(tmp_path / "home", host="old-name.local",
                                           begun=ago(store_reads.OTHER_HOST_ALIVE_S / 86_400 + 1))
    assert killed.id in listed()
    [back] = [r for r in Store().runs() if r.id == killed.id]
    assert back.status == "failed" and back.reason == INTERRUPTED


def test_a_run_under_way_on_another_host_stays_hidden_while_it_may_run(tmp_path):
    kept, killed = store_with_a_dead_owner(tmp_path / "home", host="other-mac.local",
                                           begun=ago(0.01), machine="another machine")
    assert listed() == {r.id for r in kept}


def test_this_machine_renamed_while_a_run_goes_on_keeps_it_under_way(tmp_path):
    """The owner is found here by pid and start time, whatever host name the row gives."""
    me = psutil.Process()
    kept, killed = store_with_a_dead_owner(tmp_path / "home", host="old-name.local",
                                           begun=ago(30), pid=me.pid, started=me.create_time())
    assert listed() == {r.id for r in kept}
    assert live_rows(tmp_path / "home") == 1


def test_a_dead_owner_on_this_host_reads_as_interrupted(tmp_path):
    kept, killed = store_with_a_dead_owner(tmp_path / "home", begun=ago(0.01))
    assert killed.id in listed()
    assert live_rows(tmp_path / "home") == 0      # tidied away, where it can be written


# ---------------------------------------------------------------- listing costs the same

def every_real_run() -> list:
    return [r for f in sorted(FOLDER.glob("*.json")) for r in records_from_file(f)]


def test_a_listing_reads_the_same_few_bytes_whatever_a_record_holds(capsys):
    """Issue 30: after a record of 10^6 rows was imported, every `results` listing took 25 s
    and 2.5 GB. A listing reads each run's `listing` (siliconbench.core.store.listing_of), not its record:
    here a record at the bounds of rows and text lists in as many bytes as a small one."""
    import copy

    from siliconbench.core.catalogue import headline
    runs = every_real_run()
    big = copy.deepcopy(next(r for r in runs if r.workload == "gemm"))
    big.id, big.created_at = "b" * 32, dt.datetime.now(dt.UTC).isoformat()
    big.rows = big.rows * 5_000
    big.reason, big.warnings = "r" * 65_536, ["w" * 65_536] * 100
    s = Store()
    s.import_records([*runs, big])
    sizes = dict(s.db.execute("SELECT id, length(listing) FROM runs").fetchall())
    record_size = s.db.execute("SELECT length(record) FROM runs WHERE id = ?",
                               (big.id,)).fetchone()[0]
    assert record_size > 10_000_000 and sizes[big.id] < 4_000, (record_size, sizes[big.id])
    assert max(sizes.values()) < 4_000
    # What the listing shows is what the whole record gives.
    full = {r.id: r for r in s.runs()}
    for r in s.listing():
        whole = full[r.id]
        assert (r.row_count, r.status, r.reason[:500] if r.reason else None,
                r.machine_label, r.identity) == (len(whole.rows), whole.status,
                                                 whole.reason[:500] if whole.reason else None,
                                                 whole.machine_label, whole.identity)
        best, whole_best = headline(r), headline(whole)
        assert (best and (best.value, best.stats, best.params)) == \
            (whole_best and (whole_best.value, whole_best.stats, whole_best.params))
    s.close()
    rc, out, err = sb(capsys, "results")
    assert rc == 0, err
    [line] = [x for x in out.splitlines() if big.id[:8] in x]
    assert "│ 10000 " in line    # its rows, counted without reading them


def test_a_store_kept_before_listings_gets_them_and_a_read_only_one_lists_without(
        monkeypatch, capsys):
    runs = every_real_run()
    s = Store()
    s.import_records(runs)
    s.db.execute("ALTER TABLE runs DROP COLUMN listing")    # as SiliconBench kept it before
    s.db.execute("ALTER TABLE live_runs DROP COLUMN machine")
    s.db.execute("PRAGMA user_version = 2")
    s.db.commit()
    path = s.path
    s.close()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if mode == os.W_OK
                        else real_access(p, mode, **kw))
    s = Store()                         # read-only: listed from the records themselves
    assert s.read_only and {r.id: r.row_count for r in s.listing()} == \
        {r.id: len(r.rows) for r in runs}
    s.close()
    monkeypatch.setattr(os, "access", real_access)
    s = Store()                         # writable: the migration fills every listing
    assert s.db.execute("SELECT count(*) FROM runs WHERE listing IS NULL").fetchone()[0] == 0
    assert {r.id: r.row_count for r in s.listing()} == {r.id: len(r.rows) for r in runs}
    s.close()
    assert path.exists()


def test_an_llm_run_kept_without_its_points_still_shows(capsys):
    """A record imported before import checked an LLM row's parameters (issue 30: 'internal
    error: KeyError: 'prompt'') shows its rows; only the llama-bench table is left out."""
    rec = records_from_file(FOLDER / "llm-torch.json")[0]
    for row in rec.rows:
        row.params = {}
    s = Store()
    s.save(rec)
    s.close()
    rc, out, err = sb(capsys, "results", "--show", rec.id[:8])
    assert rc == 0 and "internal error" not in err, err
    assert "Decode" in out and "llama-bench style" not in out
    Store().save(records_from_file(FOLDER / "llm-torch.json")[0])   # whole again
    rc, out, err = sb(capsys, "results", "--show", rec.id[:8])
    assert rc == 0 and "llama-bench style" in out, err


def _older_listing(text: str) -> str:
    """A listing as SiliconBench wrote it before form 2 (no params, warnings or flags)."""
    d = json.loads(text)
    for key in ("v", "warnings", "warning_count", "flags"):
        d.pop(key, None)
    return json.dumps(d | {"params": {}})


def _shown(listing) -> dict:
    return {r.id: (r.params, r.warnings, r.warning_count, r.flags, r.machine, r.row_count)
            for r in listing}


def test_listings_of_an_older_form_are_read_from_the_record_and_refilled(monkeypatch):
    """Issue 52: the app's Results shows a run's model and precision, warnings and flags from
    its listing; a listing an older SiliconBench wrote has none of them, so it is read from
    the run's record (read-only) and rewritten on opening (migration 5)."""
    runs = every_real_run()
    s = Store()
    s.import_records(runs)
    wanted = _shown(s.listing())
    assert any(p for p, *_ in wanted.values()) and any(f for *_, f, _, _ in wanted.values())
    assert any(w for _, w, *_ in wanted.values())
    for run_id, text in s.db.execute("SELECT id, listing FROM runs").fetchall():
        s.db.execute("UPDATE runs SET listing = ? WHERE id = ?", (_older_listing(text), run_id))
    s.db.commit()
    assert _shown(s.listing()) == wanted        # read from the records
    s.db.execute("PRAGMA user_version = 4")
    s.db.commit()
    s.close()
    s = Store()                                 # the migration writes them again
    assert all(t.startswith('{"v": 2,') for (t,) in s.db.execute("SELECT listing FROM runs"))
    assert _shown(s.listing()) == wanted
    s.close()


def test_a_listing_of_hostile_types_reads_as_none(qtbot):
    """A listing's row is text another machine may have written (a shared store): values of
    the wrong type in what a listing adds read as none, and Results still shows the run."""
    from siliconbench.gui.results_browser import COLUMNS, cell_text
    s = Store()
    runs = every_real_run()[:3]
    s.import_records(runs)
    for (run_id, text), bad in zip(s.db.execute("SELECT id, listing FROM runs").fetchall(),
                                   ({"flags": "noisy", "warnings": {"a": 1},
                                     "warning_count": "9", "params": [1, 2]},
                                    {"flags": {"noisy": "two"}, "warnings": [1, None],
                                     "row_count": None},
                                    {"flags": None, "warnings": None, "params": None}),
                                   strict=True):
        s.db.execute("UPDATE runs SET listing = ? WHERE id = ?",
                     (json.dumps(json.loads(text) | bad), run_id))
    s.db.commit()
    listed = s.listing()
    assert len(listed) == 3 and s.unreadable == []
    for r in listed:
        assert isinstance(r.flags, dict) and all(isinstance(n, int) for n in r.flags.values())
        assert isinstance(r.params, dict) and all(isinstance(w, str) for w in r.warnings)
        assert isinstance(r.warning_count, int) and isinstance(r.row_count, int)
        assert all(isinstance(cell_text(r, c), str) for c in range(len(COLUMNS)))
    s.close()
