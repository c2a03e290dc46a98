"""The store when things go wrong: a full disk, a damaged or foreign store, a read-only folder,
many processes at once. Each test is the failure that showed the problem; the rule in every
one is that nothing measured is lost and the user reads one sentence saying what to do."""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from siliconbench.core import store_schema
from siliconbench.core.files import write_atomic
from siliconbench.core.results import RunRecord, records_from_json, records_to_json
from siliconbench.core.runner import RunNotStored, RunSpec, execute
from siliconbench.core.store import Store, StoreError
from tests.helpers.cli_processes import run_cli, wait_until_gone
from tests.helpers.fake_workloads import FRAMEWORK
from tests.helpers.store_disk import fill, remount, small_disk

# ---------------------------------------------------------------- helpers


@pytest.fixture(autouse=True)
def no_process_left_behind(siliconbench_home):
    """Every process a test starts carries its SILICONBENCH_HOME, whatever session it is in."""
    yield
    for home in {siliconbench_home, Path(os.environ["SILICONBENCH_HOME"])}:  # or the test's own
        assert wait_until_gone(home) == []

@pytest.fixture(scope="module")
def real_run(tmp_path_factory) -> RunRecord:
    """One record a real (test-workload) run wrote; tests store copies of it under new ids."""
    from siliconbench.core.catalogue import catalogue
    saved = {k: os.environ.get(k) for k in ("SILICONBENCH_HOME", "SILICONBENCH_EXTRA_WORKLOADS")}
    os.environ["SILICONBENCH_HOME"] = str(tmp_path_factory.mktemp("real-run"))
    os.environ["SILICONBENCH_EXTRA_WORKLOADS"] = "tests.helpers.fake_workloads"
    catalogue.cache_clear()
    try:
        return execute(RunSpec("fake-ok", FRAMEWORK, params={"steps": 3}), None)
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        catalogue.cache_clear()


def copies(rec: RunRecord, n: int) -> list[RunRecord]:
    return [dataclasses.replace(rec, id=uuid.uuid4().hex) for _ in range(n)]


def one_sentence(err: str) -> None:
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


# ---------------------------------------------------------------- full disk

def test_a_failed_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    """Without a filesystem to fill: the disk fills as the new file is flushed."""
    out = tmp_path / "runs.csv"
    out.write_text("the previous export\n")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError):
        write_atomic(out, "x" * 10_000)
    assert out.read_text() == "the previous export\n"
    assert os.listdir(tmp_path) == ["runs.csv"]  # no half-written temporary left behind


def test_export_over_a_file_on_a_full_disk_keeps_the_file(tmp_path, real_run):
    Store().import_records(copies(real_run, 20))
    with small_disk(tmp_path / "disk") as disk:
        out = disk / "runs.json"
        out.write_text("the previous export\n")
        fill(disk)
        r = run_cli("export", "-o", str(out))
        assert r.returncode == 2
        one_sentence(r.stderr)
        assert "No space left on device; the file was left as it was" in r.stderr
        assert out.read_text() == "the previous export\n"
        assert sorted(os.listdir(disk)) == ["filler", "runs.json"]


@pytest.mark.usefixtures("fake_workloads")
def test_a_run_on_a_full_disk_is_kept_in_a_file_and_earlier_runs_survive(tmp_path, monkeypatch,
                                                                        real_run):
    with small_disk(tmp_path / "disk", "2m") as disk:
        monkeypatch.setenv("SILICONBENCH_HOME", str(disk / "home"))
        earlier = copies(real_run, 3)
        s = Store()
        s.import_records(earlier)
        s.close()
        fill(disk)
        r = run_cli("run", "fake-ok", "--steps", "3", "--framework", FRAMEWORK, cwd=tmp_path)
        assert r.returncode == 1
        assert "Traceback" not in r.stderr  # not from the log handler either
        line = r.stderr.strip().splitlines()[-1]
        assert "is full" in line and "free some space" in line
        kept = next(tmp_path.glob("siliconbench-unsaved-run-*.json"))
        assert f"written to {kept} instead" in line
        assert line.endswith(f"add it to the store with: siliconbench import {kept}")
        os.remove(disk / "filler")
        assert {r.id for r in earlier} <= {r.id for r in Store().runs()}
        assert run_cli("import", str(kept)).returncode == 0
        [rec] = [r for r in Store().runs() if r.id not in {e.id for e in earlier}]
        assert rec.status == "ok" and len(rec.rows) == 3


def test_the_wal_is_given_back_after_a_big_import(real_run):
    big = dataclasses.replace(real_run, stderr_tail="x" * 100_000)
    s = Store()
    s.import_records(copies(big, 150))  # ~15 MB in one transaction
    assert len(s.runs()) == 150
    assert os.path.getsize(f"{s.path}-wal") <= store_schema.WAL_LIMIT_BYTES


# ---------------------------------------------------------------- damaged stores

def test_damaged_runs_are_named_and_the_rest_rescued(tmp_path, real_run):
    good, bad_json, no_field = copies(real_run, 3)
    s = Store()
    s.import_records([good, bad_json, no_field])
    d = no_field.to_dict()
    del d["workload"]
    s.db.execute("UPDATE runs SET record = '{\"rows\": [' WHERE id = ?", (bad_json.id,))
    s.db.execute("UPDATE runs SET record = ? WHERE id = ?", (json.dumps(d), no_field.id))
    s.db.commit()
    r = run_cli("results", "--json")
    assert r.returncode == 0
    assert [x["id"] for x in json.loads(r.stdout)] == [good.id]
    one_sentence(r.stderr)
    assert "2 run(s)" in r.stderr and bad_json.id[:8] in r.stderr and no_field.id[:8] in r.stderr
    out = tmp_path / "rescued.sbresults"
    r = run_cli("export", "-o", str(out))
    assert r.returncode == 1 and "damaged and were left out" in r.stderr
    assert [x["id"] for x in json.loads(out.read_text())["runs"]] == [good.id]


def test_a_damaged_page_costs_only_its_runs(tmp_path, real_run):
    """Garbage over one page of the table: every run on other pages is still read."""
    path = tmp_path / "damaged.sqlite3"
    s = Store(path)
    recs = copies(dataclasses.replace(real_run, stderr_tail="y" * 1500), 40)
    s.import_records(recs)
    s.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = s.db.execute("PRAGMA page_size").fetchone()[0]
    # A leaf page of the table in its middle (dbstat lists the table's pages).
    pages = s.db.execute("SELECT pageno, ncell FROM dbstat WHERE name = 'runs' AND "
                         "pagetype = 'leaf'").fetchall()
    s.close()
    if not pages:
        pytest.skip("this SQLite has no dbstat table")
    target, on_page = pages[len(pages) // 2]
    with open(path, "r+b") as f:
        f.seek((target - 1) * page)
        f.write(b"\xff" * page)
    s = Store(path)
    found = s.runs()
    # The runs lost are those whose cells were on that page, however many a page holds.
    assert 0 < len(recs) - len(found) <= on_page, (len(found), on_page, s.unreadable)
    assert s.unreadable and len(found) + len(s.unreadable) >= len(recs) - 5


@pytest.mark.parametrize("damage, says", [
    ("drop", "damaged (it has no table of runs); move it aside"),
    ("folder", "is a folder, not a database; move it aside"),
    ("garbage", "is damaged (file is not a database); move it aside"),
])
def test_a_broken_store_is_one_sentence_and_left_untouched(siliconbench_home, damage, says):
    path = siliconbench_home / "results.sqlite3"
    if damage == "drop":
        s = Store()
        s.db.execute("DROP TABLE runs")
        s.close()
    elif damage == "folder":
        path.mkdir(parents=True)
    else:
        siliconbench_home.mkdir(parents=True)
        path.write_bytes(b"not a database at all, " * 100)
    before = path.read_bytes() if path.is_file() else None
    for args in (["results"], ["results", "--json"], ["export", "-o", "x.csv"]):
        r = run_cli(*args)
        assert r.returncode == 2, r
        one_sentence(r.stderr)
        assert says in r.stderr
    assert (path.read_bytes() if path.is_file() else None) == before


def test_siliconbench_home_being_a_file_is_one_sentence(siliconbench_home):
    siliconbench_home.write_text("I am a file")
    r = run_cli("results")
    assert r.returncode == 2
    one_sentence(r.stderr)
    assert "is a file" in r.stderr and "SILICONBENCH_HOME" in r.stderr
    assert siliconbench_home.read_text() == "I am a file"


@pytest.mark.usefixtures("fake_workloads")
def test_a_read_only_store_is_read_and_a_new_run_kept_beside(tmp_path, monkeypatch, real_run):
    with small_disk(tmp_path / "disk", "4m") as disk:
        monkeypatch.setenv("SILICONBENCH_HOME", str(disk))
        earlier = copies(real_run, 2)
        s = Store()
        s.import_records(earlier)
        s.close()
        remount(disk, "ro")
        r = run_cli("results", "--json")
        assert r.returncode == 0, r.stderr
        assert {x["id"] for x in json.loads(r.stdout)} == {e.id for e in earlier}
        r = run_cli("run", "fake-ok", "--steps", "2", "--framework", FRAMEWORK, cwd=tmp_path)
        assert r.returncode == 1
        line = r.stderr.strip().splitlines()[-1]
        assert "read-only" in line and "siliconbench import" in line
        kept = next(tmp_path.glob("siliconbench-unsaved-run-*.json"))
        remount(disk, "rw")
        assert run_cli("import", str(kept)).returncode == 0
        s = Store()
        assert len(s.runs()) == 3
        s.close()


def test_a_failed_final_save_raises_with_the_record_kept(tmp_path, monkeypatch, real_run):
    """In process: the save at the end fails (a damaged page, say); the runner keeps the
    record in a file and says so; the file imports."""
    s = Store()

    def broken(rec):
        raise StoreError("The results store cannot be written (database disk image is "
                         "malformed).")
    monkeypatch.setattr(s, "save", broken)
    monkeypatch.setenv("SILICONBENCH_EXTRA_WORKLOADS", "tests.helpers.fake_workloads")
    from siliconbench.core.catalogue import catalogue
    catalogue.cache_clear()
    with pytest.raises(RunNotStored) as e:
        execute(RunSpec("fake-ok", FRAMEWORK, params={"steps": 2}), s)
    catalogue.cache_clear()
    assert e.value.path.parent == s.path.parent and e.value.path.exists()
    assert "siliconbench import" in str(e.value)
    [rec] = records_from_json(e.value.path.read_text())
    assert rec.status == "ok" and len(rec.rows) == 2


# ---------------------------------------------------------------- concurrent processes

# Each says it is ready (imports done, record read), then waits for the start time the test
# writes into `go` once all ten are ready, and opens the store at that moment.
SAVE_ONE = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from siliconbench.core.results import records_from_json
    from siliconbench.core.store import Store
    [rec] = records_from_json(open(sys.argv[1]).read())
    go = Path(sys.argv[2])
    Path(sys.argv[1] + ".ready").touch()
    deadline = time.monotonic() + 120
    while not go.exists():
        if time.monotonic() > deadline:
            sys.exit("no start time came within 120 s")
        time.sleep(0.01)
    start = float(go.read_text())
    time.sleep(max(0.0, start - time.time() - 0.01))
    while time.time() < start:  # all open the new store within a millisecond
        pass
    Store().save(rec)
""")


def test_ten_processes_creating_the_store_at_once_all_succeed(tmp_path, real_run):
    recs = copies(real_run, 10)
    files = []
    for i, rec in enumerate(recs):
        files.append(tmp_path / f"r{i}.json")
        files[-1].write_text(records_to_json([rec]))
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", SAVE_ONE, str(f), str(go)],
                              stderr=subprocess.PIPE, text=True) for f in files]
    deadline = time.monotonic() + 120
    while not all(Path(f"{f}.ready").exists() or p.poll() is not None
                  for f, p in zip(files, procs)):
        assert time.monotonic() < deadline, "the ten processes were not all ready in 120 s"
        time.sleep(0.01)
    # written whole, then renamed: no process reads half a start time
    (tmp_path / "go.part").write_text(str(time.time() + 0.2))
    (tmp_path / "go.part").rename(go)
    results = [(p.wait(60), p.stderr.read()) for p in procs]
    assert [rc for rc, _ in results] == [0] * 10, results
    assert {r.id for r in Store().runs()} == {r.id for r in recs}


def test_a_new_store_held_by_another_process_waits_to_become_wal(tmp_path):
    """SQLite does not call the busy handler for the switch to WAL: while another connection
    holds the write lock of a new store, opening it failed at once with "database is locked"
    (the ten racing processes above met it 1 open in 100). Here the holder is sure to be
    there: the open must wait for it, then switch."""
    path = tmp_path / "new.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # a new file, still in SQLite's default journal mode
    opened: list = []
    opener = threading.Thread(target=lambda: opened.append(_open(path)))
    opener.start()
    opener.join(1.0)
    assert opened == [], "it waits while the other holds the file"
    holder.execute("COMMIT")
    holder.close()
    opener.join(60)
    [s] = opened
    assert not isinstance(s, Exception), s
    assert s.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    s.close()


def _open(path):
    try:
        return Store(path)
    except StoreError as e:
        return e


HOLD_LOCK = textwrap.dedent("""
    import sqlite3, sys, time
    con = sqlite3.connect(sys.argv[1], isolation_level=None)
    con.execute("BEGIN IMMEDIATE")
    print("locked", flush=True)
    sys.stdin.readline()   # until the test lets go
    con.execute("COMMIT")
""")


@pytest.mark.usefixtures("fake_workloads")
def test_imports_and_a_run_wait_for_a_long_lock_and_lose_nothing(tmp_path, real_run):
    """A writer holds the lock past SQLite's old 5 s timeout: the others wait, say so, and
    every record arrives."""
    Store().close()
    recs = copies(real_run, 3)
    files = []
    for i, rec in enumerate(recs):
        files.append(tmp_path / f"r{i}.json")
        files[-1].write_text(records_to_json([rec]))
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(Store().path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    cli = [sys.executable, "-m", "siliconbench.core.cli"]
    others = [subprocess.Popen(cli + ["import", str(f)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for f in files]
    others.append(subprocess.Popen(cli + ["run", "fake-ok", "--steps", "2", "--json",
                                          "--framework", FRAMEWORK],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    # The lock is let go once the first import has waited past the notice time and said so,
    # and then past SQLite's old 5 s timeout: ordered by what it says, not by a start-up
    # time a loaded machine may outlast.
    said = []
    for line in others[0].stderr:
        said.append(line)
        if "waiting for another SiliconBench process" in line:
            time.sleep(5.0 - store_schema.WAIT_NOTICE_S + 1.0)
            break
    holder.stdin.close()
    outs = [(p.wait(120), *p.communicate()) for p in others]
    outs[0] = (outs[0][0], outs[0][1], "".join(said) + outs[0][2])
    assert holder.wait(30) == 0
    assert [rc for rc, _, _ in outs] == [0] * 4, outs
    waited = [err for _, _, err in outs if "waiting for another SiliconBench process" in err]
    assert waited, "at least one of them waited past the notice time and said so"
    assert all("locked" not in err for _, _, err in outs)
    run_id = json.loads(outs[-1][1])["id"]
    assert {r.id for r in Store().runs()} == {r.id for r in recs} | {run_id}
    assert wait_until_gone(Path(os.environ["SILICONBENCH_HOME"])) == []
