"""The local store under the cases of issue 51: a row nested too deep to read costs that run
alone (results, results --json, export and import read the others; it was "internal error:
RecursionError"), and a run killed on this machine under its old host name comes back at once
as interrupted, while a run really under way elsewhere never makes `results` say "No runs
yet"."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3

import pytest

from siliconbench.core import store_reads
from siliconbench.core.store import INTERRUPTED, Store
from tests.helpers.cli_processes import cli_in_process as sb
from tests.helpers.cli_processes import dead_pid
from tests.helpers.recorded import FOLDER, real_runs


def _nested(depth: int) -> str:
    return '{"id": "x", "params": ' + "[" * depth + "]" * depth + "}"


def test_a_record_nested_too_deep_costs_that_run_alone(siliconbench_home, tmp_path, capsys):
    *kept, deep = real_runs()
    s = Store()
    s.import_records([*kept, deep])
    s.close()
    db = sqlite3.connect(siliconbench_home / "results.sqlite3")
    db.execute("UPDATE runs SET record = ?, listing = ? WHERE id = ?",
               (_nested(100_000), _nested(100_000), deep.id))
    db.commit()
    db.close()
    out_file = tmp_path / "all.json"
    for argv in (["results"], ["results", "--json"], ["export", "-o", out_file]):
        code, out, err = sb(capsys, *argv)
        assert code in (0, 1), (argv, err)   # export: 1, a run was left out
        assert err.count("\n") == 1 and "1 run(s)" in err and deep.id[:8] in err, (argv, err)
        assert "RecursionError" in err and "internal error" not in err
        assert all(r.id[:8] in out for r in kept) or argv[0] == "export"
    assert {r["id"] for r in json.loads(out_file.read_text())["runs"]} == {r.id for r in kept}
    # Importing the run again replaces the row that cannot be read (it was never finished
    # to anyone's knowledge): no internal error.
    source = next(p for p in sorted(FOLDER.glob("*.json"))
                  if json.loads(p.read_text())["id"] == deep.id)
    code, out, err = sb(capsys, "import", source)
    assert code == 0, err
    assert "completed 1 run" in out


@pytest.mark.skipif(getattr(store_reads, "this_machine", lambda: "")() is None, reason="this machine has no id to be known by")
def test_a_run_killed_here_under_an_old_host_name_comes_back_at_once(siliconbench_home, capsys):
    """The machine renamed since the run began (a Mac's name follows its network), the run
    killed: its process is not here, and the row names this machine, so it is interrupted."""
    *kept, killed = real_runs()
    killed.created_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")   # moments ago
    s = Store()
    s.import_records(kept)
    s.begin_run(killed)
    s.db.execute("UPDATE live_runs SET host = 'old-name.local', pid = ?, started = 1.0",
                 (dead_pid(),))
    s.db.commit()
    s.close()
    [back] = [r for r in Store().runs() if r.id == killed.id]
    assert back.status == "failed" and back.reason == INTERRUPTED
    code, out, err = sb(capsys, "results")
    assert code == 0 and killed.id[:8] in out, err


def test_a_run_under_way_on_another_machine_is_not_no_runs_yet(siliconbench_home, capsys):
    """The store on a shared drive, its only run begun by another machine moments ago: it is
    under way there, and `results` says so rather than "No runs yet"."""
    [*_, elsewhere] = real_runs()
    elsewhere.created_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    s = Store()
    s.begin_run(elsewhere)
    s.db.execute("UPDATE live_runs SET host = 'other-mac.local', pid = ?, started = 1.0",
                 (dead_pid(),))
    if s._has_column("live_runs", "machine"):
        s.db.execute("UPDATE live_runs SET machine = 'another machine 1 2'")
    s.db.commit()
    s.close()
    code, out, err = sb(capsys, "results")
    assert code == 0, err
    assert "No runs yet" not in out
    assert "No finished runs yet" in out and "1 run under way" in out
