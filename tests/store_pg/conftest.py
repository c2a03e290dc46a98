"""A real PostgreSQL server for the shared-store tests, started by the tests themselves
(tests/helpers/pg_server.py: initdb into a temporary folder, a Unix socket in that folder only, no TCP
port), stopped and removed at the end whatever happened; the tests skip, saying why, only where
PostgreSQL's binaries are missing.

Every test gets a database of its own, set up by `siliconbench store init` with two machines'
roles and an admin's; their passwords are in a ~/.pgpass-format file named by PGPASSFILE, as a
lab would keep them, never in an address."""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.pg_server import MISSING, Server, end_server, have_binaries, start_server

ROLES = {"mach_a": "pass-a", "mach_b": "pass-b", "lab_admin": "pass-admin",
         "outsider": "pass-out"}
_databases = itertools.count()


def _server_with_roles():
    if not have_binaries():
        pytest.skip(f"{MISSING}; the shared-store tests need a real server")
    server = start_server()
    try:
        import psycopg
        with psycopg.connect(server.url(), autocommit=True) as db:
            for role, password in ROLES.items():
                db.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        yield server
    finally:
        end_server(server)


@pytest.fixture(scope="session")
def pg_server():
    """One server for the session (each xdist worker its own), with the machines' roles."""
    yield from _server_with_roles()


@pytest.fixture
def own_server():
    """A server of the test's own, which the test may stop and start (the fault tests)."""
    yield from _server_with_roles()


@dataclass
class Shared:
    """A database set up by `siliconbench store init`; url(role) connects as that role."""
    server: Server
    dbname: str

    def url(self, user: str = "mach_a") -> str:
        return self.server.url(user, self.dbname)

    def admin(self):
        import psycopg
        return psycopg.connect(self.server.url("postgres", self.dbname), autocommit=True)

    def count(self, run_id: str | None = None) -> int:
        with self.admin() as db:
            if run_id is None:
                return db.execute("SELECT count(*) FROM siliconbench.runs").fetchone()[0]
            return db.execute("SELECT count(*) FROM siliconbench.runs WHERE id = %s",
                              (run_id,)).fetchone()[0]


def new_database(server: Server, tmp_path: Path, monkeypatch, upto=None) -> Shared:
    import psycopg

    from siliconbench.core.store_pg import PG_SCHEMA_VERSION, init
    dbname = f"lab{os.getpid()}_{next(_databases)}"
    with psycopg.connect(server.url(), autocommit=True) as db:
        # FILE_COPY, not PostgreSQL 15's default WAL_LOG: that one writes the whole template
        # into the WAL for each database, and the session server's stop and removal then
        # checkpointed and deleted it all (15.7 s at the end of each worker's session).
        # Before 15 there is no STRATEGY, and copying the files is what CREATE DATABASE does.
        copy = " STRATEGY = FILE_COPY" if db.info.server_version >= 150000 else ""
        db.execute(f"CREATE DATABASE {dbname}{copy}")
    init(server.url("postgres", dbname), machines=["mach_a", "mach_b"], admins=["lab_admin"],
         upto=upto or PG_SCHEMA_VERSION)
    passfile = tmp_path / "pgpass"
    passfile.write_text("".join(f"*:*:*:{role}:{password}\n"
                                for role, password in ROLES.items()))
    passfile.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    return Shared(server, dbname)


@pytest.fixture
def shared(pg_server, tmp_path, monkeypatch) -> Shared:
    return new_database(pg_server, tmp_path, monkeypatch)


@pytest.fixture(autouse=True)
def no_store_left_set(monkeypatch):
    """`--store URL` sets SILICONBENCH_STORE in the process (for the children a run starts):
    put back as it was after each test, so no other test finds a shared store."""
    monkeypatch.setenv("SILICONBENCH_STORE", "")
    monkeypatch.delenv("SILICONBENCH_STORE")
