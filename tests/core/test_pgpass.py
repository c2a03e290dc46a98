"""The password file written as libpq reads it (escaped `:` and `\\`, mode 0600), the entry for
the same server, database and user replaced, and never written through a link or into a FIFO.
libpq itself reads what is written: tests/store_pg/test_store_pg_at_start.py connects with it."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from siliconbench.core.pgpass import PgpassError, fields, keep_password, password_in


def test_a_password_in_either_address_form_is_found():
    assert password_in("postgresql://mach_a:s3cret@db.lab/lab") == "s3cret"
    assert password_in("host=/tmp/x dbname=lab user=mach_a password='a b'") == "a b"
    assert password_in("postgresql://mach_a@db.lab/lab") is None
    assert password_in("service=lab") is None
    assert password_in("host='unclosed") is None   # unreadable: nothing to keep


def test_colons_and_backslashes_are_escaped_and_read_back(tmp_path):
    path = tmp_path / "pgpass"
    keep_password(r"postgresql://mach_a:p%3Aw%5Cd@db.lab:5433/lab", path)
    line = path.read_text()
    assert line == "db.lab:5433:lab:mach_a:p\\:w\\\\d\n"
    assert fields(line.rstrip("\n")) == ["db.lab", "5433", "lab", "mach_a", "p:w\\d"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_same_server_and_user_is_replaced_and_others_kept(tmp_path):
    path = tmp_path / "pgpass"
    path.write_text("# mine\n*:*:*:other:keep-me\ndb.lab:*:lab:mach_a:old\n")
    path.chmod(0o644)
    keep_password("host=db.lab dbname=lab user=mach_a password=new", path)
    assert path.read_text() == ("db.lab:*:lab:mach_a:new\n# mine\n*:*:*:other:keep-me\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_link_is_refused_and_its_target_left_alone(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("precious\n")
    link = tmp_path / "pgpass"
    link.symlink_to(target)
    with pytest.raises(PgpassError, match="is a link"):
        keep_password("host=db dbname=lab user=u password=p", link)
    assert target.read_text() == "precious\n" and link.is_symlink()


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "pgpass"
    os.mkfifo(fifo)
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(_try(fifo)), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "keep_password waited on a FIFO"
    assert isinstance(outcome[0], PgpassError) and "not a plain file" in str(outcome[0])


def _try(path):
    try:
        return keep_password("host=db dbname=lab user=u password=p", path)
    except PgpassError as e:
        return e


def test_a_line_break_in_the_password_is_refused(tmp_path):
    with pytest.raises(PgpassError, match="line break"):
        keep_password("host=db dbname=lab user=u password='a\nb'", tmp_path / "pgpass")
    assert not (tmp_path / "pgpass").exists()
