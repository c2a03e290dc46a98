"""A real PostgreSQL server for the shared-store tests, started by the tests themselves: initdb
into a temporary folder, listening on a Unix socket in that folder only (no TCP port), stopped
and removed at the end whatever happened. As root (CI, this machine) the server runs as the
`postgres` user, which PostgreSQL requires; otherwise as the user running the tests.

Every test gets a database of its own, set up by `siliconbench store init` with two machines'
roles and an admin's; their passwords are in a ~/.pgpass-format file named by PGPASSFILE, as a
lab would keep them, never in an address."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

BIN_DIRS = ["/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin",
            "/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/14/bin"]
ROLES = {"mach_a": "pass-a", "mach_b": "pass-b", "lab_admin": "pass-admin",
         "outsider": "pass-out"}
_databases = itertools.count()


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for folder in BIN_DIRS:
        if os.access(Path(folder) / name, os.X_OK):
            return str(Path(folder) / name)
    return None


@dataclass
class Server:
    folder: Path
    as_postgres: bool

    def _run(self, *argv: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_postgres else []
        subprocess.run(prefix + list(argv), check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self._run(_binary("pg_ctl"), "-D", str(self.folder / "data"), "-w", "-t", "60",
                  "-l", str(self.folder / "log"), "-o",
                  f"-c listen_addresses='' -c unix_socket_directories={self.folder} "
                  "-c fsync=off -c max_connections=60", "start")

    def stop(self) -> None:
        if (self.folder / "data" / "postmaster.pid").exists():
            self._run(_binary("pg_ctl"), "-D", str(self.folder / "data"), "-w", "-m", "fast",
                      "stop")

    def url(self, user: str = "postgres", dbname: str = "postgres") -> str:
        return f"host={self.folder} dbname={dbname} user={user}"


def _start_server() -> Server:
    if _binary("initdb") is None or _binary("pg_ctl") is None:
        pytest.skip("PostgreSQL's initdb and pg_ctl are not installed (Debian: apt install "
                    "postgresql; macOS: brew install postgresql); the shared-store tests need "
                    "a real server")
    as_postgres = os.geteuid() == 0
    folder = Path(tempfile.mkdtemp(prefix="sbpg-"))   # short: a socket path has 107 bytes
    if as_postgres:
        shutil.chown(folder, "postgres")
    server = Server(folder, as_postgres)
    try:
        server._run(_binary("initdb"), "-D", str(folder / "data"), "-U", "postgres",
                    "--auth=trust", "-E", "UTF8", "--no-sync")
        # The superuser by trust (the test's set-up); every other role by its password.
        (folder / "data" / "pg_hba.conf").write_text(
            "local all postgres trust\nlocal all all scram-sha-256\n")
        server.start()
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return server


def _end_server(server: Server) -> None:
    try:
        server.stop()
    finally:
        shutil.rmtree(server.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server():
    """One server for the session (each xdist worker its own), with the machines' roles."""
    server = _start_server()
    try:
        import psycopg
        with psycopg.connect(server.url(), autocommit=True) as db:
            for role, password in ROLES.items():
                db.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        yield server
    finally:
        _end_server(server)


@pytest.fixture
def own_server():
    """A server of the test's own, which the test may stop and start (the fault tests)."""
    server = _start_server()
    try:
        import psycopg
        with psycopg.connect(server.url(), autocommit=True) as db:
            for role, password in ROLES.items():
                db.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        yield server
    finally:
        _end_server(server)


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
        db.execute(f"CREATE DATABASE {dbname}")
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
