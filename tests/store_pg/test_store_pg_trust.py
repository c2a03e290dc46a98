"""The shared store trusts no writer (issue 51): a machine's name belongs to the role that
first sent its runs, checked by the database, so another writer cannot publish runs under it,
and a run another role copies from a machine's hardware is another machine to Compare; who
sent each run is shown. A writer cannot lock the table, and a lock held elsewhere (an admin's)
is one sentence for a read and "kept here, unsent" for a save. A run deleted in the shared store
is not brought back by `store push`. A row nested too deep to read costs that run, not the
listing. Reserved role names get advice that fits them."""

from __future__ import annotations

import json
import threading
import uuid

import psycopg
import pytest

from siliconbench.core import cli
from siliconbench.core.compare_words import group_runs, machine_names
from siliconbench.core.run_store import open_store
from siliconbench.core.store_pg import SharedDatabase
from tests.helpers.recorded import recorded
from tests.store_pg.conftest import new_database


def _as(shared, role: str):
    return psycopg.connect(shared.url(role), autocommit=True)


def _run(label: str | None = None, stem: str = "gemm-torch"):
    rec = recorded(stem)
    rec.id, rec.label = str(uuid.uuid4()), label
    return rec


def _insert(db, rec, label_column="record", owner=None):
    """A row as a writer talking to the server directly would insert it."""
    d = rec.to_dict()
    label = rec.label if label_column == "record" else label_column
    db.execute("INSERT INTO siliconbench.runs (id, created_at, workload, framework, device, "
               "status, label, source, record" + (", owner" if owner else "") + ") VALUES "
               "(%s, %s, %s, %s, %s, %s, %s, %s, %s" + (", %s" if owner else "") + ")",
               (rec.id, rec.created_at, rec.workload, rec.framework, rec.device, d["status"],
                label, rec.source, json.dumps(d), *([owner] if owner else [])))


def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


# ---------------------------------------------------------------- a machine's name

def test_another_writer_cannot_send_runs_under_a_machine_s_name(shared):
    said = []
    a, b = open_store(shared.url("mach_a")), open_store(shared.url("mach_b"), notice=said.append)
    mine = _run("Lab Mac Studio")
    a.save(mine)
    forged = _run("lab mac studio")          # the same name in other letters
    b.save(forged)
    assert shared.count(forged.id) == 0
    assert said and "belongs to the role mach_a" in said[0] and "kept on this machine" not in said[0]
    # Refused again on a push, said, and kept on B's machine (whose store, in this test, is
    # A's too: A's run under that name is refused to B as well).
    done = b.push()
    assert done.refused == 2 and "belongs to the role mach_a" in done.summary()
    assert shared.count(forged.id) == 0 and b.local.get(forged.id) is not None
    with _as(shared, "mach_b") as db:        # straight to the server: the database refuses
        for rec, column in ((_run("Lab Mac Studio"), "record"),      # the name itself
                            (_run("Lab Mac Studio"), None),          # the column left empty
                            (_run(None), "Lab Mac Studio")):         # or the record's
            with pytest.raises(psycopg.Error) as refused:
                _insert(db, rec, column)
            assert refused.value.sqlstate == "SB001"
        db.execute("SET ROLE siliconbench_writer")   # a row every writer could then change
        with pytest.raises(psycopg.Error, match="machine's own role"):
            _insert(db, _run("B's box"), owner="siliconbench_writer")
    b.save(own := _run("B's box"))            # B's own name is B's
    assert shared.count(own.id) == 1
    assert {r.id: r.owner for r in a.runs()} == {mine.id: "mach_a", own.id: "mach_b"}
    a.close()
    b.close()


def test_a_run_copied_from_a_machine_s_hardware_is_another_machine(shared, capsys):
    """An unlabelled run carries no name to claim (two identical Macs in one lab are two
    machines): Compare tells the copy apart by the role that sent it, and says so."""
    a, b = open_store(shared.url("mach_a")), open_store(shared.url("mach_b"))
    mine, copy = _run(None), _run(None)
    a.save(mine)
    b.save(copy)                               # the same hardware, sent by another role
    runs = a.runs()
    assert {r.id: r.owner for r in runs} == {mine.id: "mach_a", copy.id: "mach_b"}
    assert len(group_runs(runs)) == 2          # not one machine's repeats
    names = machine_names(runs)
    assert names[copy.id].endswith("[sent by mach_b]") and names[mine.id].endswith(
        "[sent by mach_a]")
    code, out, err = _cli(capsys, "--store", shared.url("mach_a"), "results")
    assert code == 0, err
    assert "sent by" in out and "mach_a" in out and "mach_b" in out
    a.close()
    b.close()


# ---------------------------------------------------------------- locks

@pytest.mark.parametrize("mode", ["ACCESS EXCLUSIVE", "EXCLUSIVE", "SHARE"])
def test_a_writer_cannot_lock_the_table(shared, mode):
    with _as(shared, "mach_b") as b:
        with pytest.raises(psycopg.errors.InsufficientPrivilege), b.transaction():
            b.execute(f"LOCK TABLE siliconbench.runs IN {mode} MODE")


@pytest.mark.timeout(90)
def test_a_held_lock_is_one_sentence_and_a_save_waits_here(shared, capsys):
    first = _run(None)
    open_store(shared.url("mach_a")).save(first)
    holder = shared.admin()                    # an admin's session (or a migration) holds it
    holder.execute("BEGIN")
    holder.execute("LOCK TABLE siliconbench.runs IN ACCESS EXCLUSIVE MODE")
    release = threading.Timer(60, holder.close)   # only so an old SiliconBench fails, not hangs
    release.start()
    try:
        code, out, err = _cli(capsys, "--store", shared.url("mach_a"), "results")
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and "held by another session's lock" in err
        said = []
        lab = open_store(shared.url("mach_a"), notice=said.append)
        late = _run(None, "infer-torch")
        lab.save(late)
        assert len(said) == 1 and "kept on this machine" in said[0]
        assert "held by another session's lock" in said[0]
        lab.close()
    finally:
        release.cancel()
        holder.close()
    code, out, _ = _cli(capsys, "store", "sync", "--store", shared.url("mach_a"))
    assert code == 0 and "Sent 1 run" in out
    assert shared.count(late.id) == 1


# ---------------------------------------------------------------- tombstones

def test_store_push_does_not_bring_back_a_run_deleted_in_the_shared_store(shared, tmp_path,
                                                                          capsys):
    a = open_store(shared.url("mach_a"))
    gone, by_admin, kept = _run(None), _run(None, "infer-torch"), _run(None, "train-torch")
    for rec in (gone, by_admin, kept):
        a.save(rec)
    assert a.delete([gone.id]) == 1
    admin = open_store(shared.url("lab_admin"))
    assert admin.delete([by_admin.id]) == 1
    admin.close()
    a.close()
    code, out, err = _cli(capsys, "store", "push", "--store", shared.url("mach_a"))
    assert code == 0, err
    assert "2 were deleted from it and are not sent again" in out and "1 was there" in out
    assert shared.count(gone.id) == shared.count(by_admin.id) == 0 and shared.count() == 1
    with _as(shared, "mach_a") as db:          # nor straight to the server
        _insert(db, gone)
        assert db.execute("SELECT count(*) FROM siliconbench.deleted").fetchone()[0] == 2
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            db.execute("DELETE FROM siliconbench.deleted")
    assert shared.count(gone.id) == 0
    from siliconbench.core.results import records_to_json
    (tmp_path / "gone.json").write_text(records_to_json([gone]))   # nor by an import
    code, out, err = _cli(capsys, "import", tmp_path / "gone.json", "--store",
                          shared.url("mach_a"))
    assert "Imported 0 runs." in out and "1 of the runs was deleted from the shared" in err
    assert shared.count(gone.id) == 0


# ---------------------------------------------------------------- unreadable rows

def _nested(depth: int) -> str:
    return '{"id": "deep", "params": ' + "[" * depth + "]" * depth + "}"


def test_the_database_refuses_a_record_it_cannot_read(shared):
    with _as(shared, "mach_b") as b:
        for record in (_nested(100_000), "not json"):
            with pytest.raises(psycopg.Error) as refused:
                b.execute("INSERT INTO siliconbench.runs (id, created_at, workload, framework, "
                          "device, status, source, record) VALUES ('deep', 'now', 'gemm', "
                          "'torch', 'cpu', 'ok', 'measured', %s)", (record,))
            assert refused.value.sqlstate == "SB001"
    assert shared.count() == 0


def test_a_row_nested_too_deep_is_left_out_and_counted(shared, tmp_path, capsys):
    a = open_store(shared.url("mach_a"))
    good = _run(None)
    a.save(good)
    a.close()
    with shared.admin() as db:                 # a row from before the rules, or damaged
        db.execute("SET session_replication_role = replica")
        db.execute("INSERT INTO siliconbench.runs (id, created_at, workload, framework, device,"
                   " status, source, record, listing) VALUES ('deep', '2099-01-01', 'gemm', "
                   "'torch', 'cpu', 'ok', 'measured', %s, %s)",
                   (_nested(100_000), _nested(100_000)))
    url = shared.url("mach_b")
    for argv in (["results"], ["results", "--json"], ["export", "-o", tmp_path / "all.json"]):
        code, out, err = _cli(capsys, "--store", url, *argv)
        assert code in (0, 1), (argv, err)
        assert "1 run(s)" in err and "deep" in err and "RecursionError" in err, argv
        assert err.count("\n") == 1, err
        if argv[0] == "results":
            assert good.id[:8] in out
    assert [r["id"] for r in json.loads((tmp_path / "all.json").read_text())["runs"]] == \
        [good.id]


# ---------------------------------------------------------------- role names

@pytest.mark.parametrize("name", ["pg_lab", "public", "none", "siliconbench_writer"])
def test_a_reserved_role_name_is_refused_with_advice_that_fits(pg_server, name, capsys):
    code, out, err = _cli(capsys, "store", "init", pg_server.url(), "--machine", name)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "choose another name" in err and "reached" not in err


def test_a_superuser_is_no_machine_s_role(shared, capsys):
    code, out, err = _cli(capsys, "store", "init", shared.url("postgres"), "--machine",
                          "postgres")
    assert code == 2 and "is a superuser" in err and "role of its own" in err
    with shared.admin() as db:                 # and it was not made a member
        assert db.execute("SELECT count(*) FROM pg_auth_members WHERE member = 'postgres'::"
                          "regrole AND roleid = 'siliconbench_writer'::regrole").fetchone()[0] \
            == 0


def test_connecting_as_a_reserved_name_is_not_told_to_create_it(shared, capsys):
    code, out, err = _cli(capsys, "--store", shared.url("pg_lab"), "results")
    assert code == 2 and err.count("\n") == 1
    assert "PostgreSQL's own" in err and "store init" not in err


# ---------------------------------------------------------------- an older store

def test_an_older_store_brought_up_gives_each_name_to_its_first_sender(pg_server, tmp_path,
                                                                      monkeypatch):
    """Schema 2 let any writer use any name: the admin's SiliconBench, opening it, gives each
    name to the role that sent the first run of its own under it, and the rules hold from
    then on; what was there stays readable."""
    shared = new_database(pg_server, tmp_path, monkeypatch, upto=2)
    first, second, later = _run("Old Name"), _run("old name", "infer-torch"), _run("Old Name")
    for role, rec in (("mach_a", first), ("mach_b", second)):
        with _as(shared, role) as db:
            _insert(db, rec)
    SharedDatabase(shared.url("lab_admin")).close()      # an admin, not a superuser, migrates
    said = []
    b = open_store(shared.url("mach_b"), notice=said.append)
    b.save(later)
    assert shared.count(later.id) == 0 and "belongs to the role mach_a" in said[0]
    assert {r.id: r.owner for r in b.runs()} == {first.id: "mach_a", second.id: "mach_b"}
    b.close()
    with _as(shared, "mach_b") as db, pytest.raises(psycopg.errors.InsufficientPrivilege):
        db.execute("UPDATE siliconbench.runs SET label = NULL")
