"""The database, not SiliconBench, keeps each machine to its own runs: machine B's role, talking
to the server directly, cannot delete, edit or forge machine A's runs, nor switch the rules off;
the admin role can. And the app's Preferences never write a password to a settings file."""

from __future__ import annotations

import psycopg
import pytest

from siliconbench.core.run_store import open_store
from siliconbench.core.store_pg import without_password
from tests.helpers.h200_records import h200
from tests.helpers.recorded import recorded


def _as(shared, role: str):
    return psycopg.connect(shared.url(role), autocommit=True)


def test_machine_b_cannot_delete_or_alter_machine_a_s_run(shared):
    rec = recorded("gemm-torch")
    a = open_store(shared.url("mach_a"))
    a.save(rec)
    a.close()
    with _as(shared, "mach_b") as b:
        # Writers neither delete nor update the table directly (store_pg_rules), and through
        # the store's functions only their own runs: nothing happens to A's.
        for statement in ("DELETE FROM siliconbench.runs WHERE id = %s",
                          "UPDATE siliconbench.runs SET label = 'B was here' WHERE id = %s"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                b.execute(statement, (rec.id,))
        assert b.execute("SELECT siliconbench.delete_runs(%s)", ([rec.id],)).fetchone()[0] == 0
        assert b.execute("SELECT siliconbench.set_label(%s, 'B', '{}', NULL)",
                         (rec.id,)).fetchone()[0] == 0
        # Taking A's run over, forging a run in A's name, or switching the rules off: refused.
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            b.execute("INSERT INTO siliconbench.runs (id, created_at, workload, framework, "
                      "device, status, source, record, owner) VALUES ('forged', 'now', 'gemm', "
                      "'torch', 'cpu', 'ok', 'measured', '{}', 'mach_a')")
        for statement in ("ALTER TABLE siliconbench.runs DISABLE ROW LEVEL SECURITY",
                          "DROP POLICY read_all ON siliconbench.runs",
                          "TRUNCATE siliconbench.runs"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                b.execute(statement)
        assert b.execute("SELECT count(*) FROM siliconbench.runs").fetchone()[0] == 1
    b_store = open_store(shared.url("mach_b"))
    assert b_store.delete([rec.id]) == 0
    b_store.set_label([rec.id], "B was here")
    assert b_store.get(rec.id).label == rec.label   # everyone reads it, unchanged
    b_store.close()
    with shared.admin() as db:
        row = db.execute("SELECT owner, label FROM siliconbench.runs WHERE id = %s",
                         (rec.id,)).fetchone()
    assert row == ("mach_a", rec.label)


def test_each_machine_keeps_its_own_runs_and_the_admin_any(shared):
    mine, theirs = recorded("gemm-torch"), h200("h200-gemm")
    a, b = open_store(shared.url("mach_a")), open_store(shared.url("mach_b"))
    a.save(mine)
    b.save(theirs)
    b.set_label([theirs.id], "GPU box")
    assert a.get(theirs.id).label == "GPU box"
    admin = open_store(shared.url("lab_admin"))
    admin.set_label([mine.id], "renamed by the admin")
    assert b.get(mine.id).label == "renamed by the admin"
    assert admin.delete([mine.id, theirs.id]) == 2
    assert shared.count() == 0
    for store in (a, b, admin):
        store.close()


@pytest.mark.parametrize("given, shown", [
    ("postgresql://mach_a:s3cret@db.lab.example:5433/lab?sslmode=verify-full",
     "postgresql://mach_a@db.lab.example:5433/lab?sslmode=verify-full"),
    ("postgresql://db.lab.example/lab?user=mach_a&password=s3cret",
     "postgresql://db.lab.example/lab?user=mach_a"),
    ("host=db.lab.example dbname=lab user=mach_a password=s3cret sslmode=require",
     "host=db.lab.example dbname=lab user=mach_a sslmode=require"),
    ("service=lab", "service=lab"),
])
def test_an_address_is_shown_without_its_password(given, shown):
    from psycopg.conninfo import conninfo_to_dict
    assert conninfo_to_dict(without_password(given)) == conninfo_to_dict(shown)
    assert "s3cret" not in without_password(given)
