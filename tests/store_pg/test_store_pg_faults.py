"""Nothing is lost while the shared store cannot be reached: the server stopped before a run,
during a run and between runs; each run is kept in this machine's store, marked unsent, and is in
the shared store exactly once after `siliconbench store sync`. And what the server says when it
refuses (a wrong password, a missing database, a permission denied, an older or newer schema) is
one sentence and a non-zero exit."""

from __future__ import annotations

import pytest

from siliconbench.core import cli
from siliconbench.core.run_store import open_store
from siliconbench.core.store import Store, StoreError
from siliconbench.core.store_pg import PG_SCHEMA_VERSION, SharedDatabase
from tests.helpers.h200_records import h200
from tests.helpers.recorded import recorded
from tests.store_pg.conftest import new_database


def _sync(capsys, url: str) -> tuple[int, str]:
    code = cli.main(["store", "sync", "--store", url])
    return code, capsys.readouterr().out


def test_runs_made_while_the_server_is_down_arrive_once_after_sync(own_server, tmp_path,
                                                                   monkeypatch, capsys):
    shared = new_database(own_server, tmp_path, monkeypatch)
    url = shared.url("mach_a")
    first, during, between, before = (recorded("gemm-torch"), recorded("infer-torch"),
                                      h200("h200-gemm"), recorded("train-torch"))
    said = []
    lab = open_store(url, notice=said.append)
    lab.save(first)                        # the server up: sent at once
    assert shared.count(first.id) == 1

    lab.begin_run(during)                  # the server dies while a run is under way
    own_server.stop()
    lab.update_run(during)
    lab.save(during)
    lab.save(between)                      # and a run between: the same store, still down
    lab.close()
    assert len(said) == 2 and all("kept on this machine" in s for s in said)

    later = open_store(url, notice=said.append)   # a run made with the server down from the start
    assert later.offline is not None
    later.save(before)
    with pytest.raises(StoreError, match="cannot be reached"):
        later.listing()                      # a read says why it cannot
    later.close()
    kept = Store(tmp_path / "sb-home" / "results.sqlite3")
    assert {r.id for r in kept.runs()} >= {first.id, during.id, between.id, before.id}
    kept.close()

    code, out = _sync(capsys, url)           # still down: the runs wait, and it says so
    assert code == 1 and "3 kept here unsent" in out

    own_server.start()
    code, out = _sync(capsys, url)
    assert code == 0 and "Sent 3 runs" in out
    for rec in (first, during, between, before):
        assert shared.count(rec.id) == 1
    assert shared.count() == 4
    code, out = _sync(capsys, url)           # nothing left to send: nothing sent twice
    assert code == 0 and "Sent 0 runs" in out
    assert shared.count() == 4


def test_a_run_sent_before_its_mark_was_cleared_is_kept_once(shared, capsys):
    """A crash after the server committed a run but before this machine noted it: the next
    sync sends it again and the run id keeps it once."""
    url = shared.url("mach_a")
    rec = recorded("gemm-torch")
    lab = open_store(url)
    lab.begin_run(rec)                # marked unsent
    lab._connected().insert([(rec, False)])
    lab.local.save(rec)
    assert lab.sync().already == 1
    assert shared.count(rec.id) == 1
    lab.close()


def test_push_sends_the_runs_this_machine_kept_before(shared, siliconbench_home, capsys):
    here = Store(siliconbench_home / "results.sqlite3")
    records = [recorded("gemm-torch"), recorded("bandwidth-torch"), h200("h200-train")]
    here.save(records[0])
    here.import_records(records[1:])
    here.close()
    for expected in ("Sent 3 runs to the shared store.",
                     "Sent 0 runs to the shared store; 3 were there already."):
        assert cli.main(["store", "push", "--store", shared.url("mach_a")]) == 0
        assert capsys.readouterr().out.strip() == expected
    assert shared.count() == 3


def _one_sentence(capsys, argv) -> str:
    code = cli.main(argv)
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert err.count("\n") == 0 and err.endswith(".") and "Traceback" not in err \
        and "internal error" not in err
    return err


def test_a_wrong_password_is_one_sentence(shared, monkeypatch, capsys):
    (shared.server.folder / "wrong").write_text("*:*:*:mach_a:not-the-password\n")
    (shared.server.folder / "wrong").chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(shared.server.folder / "wrong"))
    err = _one_sentence(capsys, ["results", "--store", shared.url("mach_a")])
    assert "refused the password" in err and "~/.pgpass" in err


def test_a_missing_database_is_one_sentence(shared, capsys):
    url = shared.server.url("mach_a", "no_such_lab")
    err = _one_sentence(capsys, ["results", "--store", url])
    assert 'database "no_such_lab" does not exist' in err and "createdb" in err


def test_a_role_outside_the_lab_is_refused_in_one_sentence(shared, capsys):
    err = _one_sentence(capsys, ["results", "--store", shared.url("outsider")])
    assert "permission denied" in err and "siliconbench_writer" in err


def test_a_database_without_the_tables_says_how_to_make_them(pg_server, capsys):
    err = _one_sentence(capsys, ["results", "--store", pg_server.url("postgres")])
    assert "siliconbench store init URL" in err


def test_an_older_schema_is_brought_up_to_date_by_the_admin_only(pg_server, tmp_path,
                                                                  monkeypatch):
    shared = new_database(pg_server, tmp_path, monkeypatch, upto=1)
    with pytest.raises(StoreError, match="older SiliconBench .* store init"):
        SharedDatabase(shared.url("mach_a"))
    SharedDatabase(shared.url("lab_admin")).close()
    with shared.admin() as db:
        assert db.execute("SELECT version FROM siliconbench.schema_version").fetchone()[0] \
            == PG_SCHEMA_VERSION
        assert db.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'runs_newest'"
                          ).fetchone()[0] == 1
    SharedDatabase(shared.url("mach_a")).close()


def test_a_newer_schema_is_refused_in_one_sentence(shared, capsys):
    with shared.admin() as db:
        db.execute("UPDATE siliconbench.schema_version SET version = %s",
                   (PG_SCHEMA_VERSION + 1,))
    err = _one_sentence(capsys, ["results", "--store", shared.url("mach_a")])
    assert "newer SiliconBench" in err and "update SiliconBench" in err


def test_store_init_sets_up_once_and_refuses_a_machine_s_role(pg_server, tmp_path, monkeypatch,
                                                               capsys):
    shared = new_database(pg_server, tmp_path, monkeypatch)
    assert cli.main(["store", "init", shared.url("postgres"), "--machine", "mach_a"]) == 0
    out = capsys.readouterr().out
    assert "mach_a is a member of siliconbench_writer." in out
    assert f"The schema is at version {PG_SCHEMA_VERSION} (already)." in out
    err = _one_sentence(capsys, ["store", "init", shared.url("mach_a")])
    assert "store init as a superuser or the database's owner" in err
