"""A real PostgreSQL server for the shared-store tests (tests/store_pg) and benchmark
(benchmarks/store_pg.py): initdb into a temporary folder, listening on a Unix socket in that
folder (and on 127.0.0.1 only when a port is given), stopped and removed by end_server. As root
the server runs as the `postgres` user, which PostgreSQL requires; otherwise as the user
running it. The superuser `postgres` connects without a password (the set-up's own), every
other role with its password."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

MISSING = ("PostgreSQL's initdb and pg_ctl are not installed (Debian: apt install postgresql; "
           "macOS: brew install postgresql)")
HBA = ("local all postgres trust\nlocal all all scram-sha-256\n"
       "host all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n")


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    # Debian keeps them off PATH, one folder per major version: the newest.
    for folder in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True,
                         key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0):
        if os.access(folder / name, os.X_OK):
            return str(folder / name)
    return None


def have_binaries() -> bool:
    return _binary("initdb") is not None and _binary("pg_ctl") is not None


@dataclass
class Server:
    folder: Path
    as_postgres: bool
    port: int | None = None

    def _run(self, *argv: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_postgres else []
        subprocess.run(prefix + list(argv), check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        listen = "127.0.0.1" if self.port else ""
        self._run(_binary("pg_ctl"), "-D", str(self.folder / "data"), "-w", "-t", "60",
                  "-l", str(self.folder / "log"), "-o",
                  f"-c listen_addresses='{listen}' -c port={self.port or 5432} "
                  f"-c unix_socket_directories={self.folder} -c fsync=off "
                  "-c max_connections=60", "start")

    def stop(self) -> None:
        if (self.folder / "data" / "postmaster.pid").exists():
            self._run(_binary("pg_ctl"), "-D", str(self.folder / "data"), "-w", "-m", "fast",
                      "stop")

    def url(self, user: str = "postgres", dbname: str = "postgres", tcp: bool = False) -> str:
        host = f"127.0.0.1 port={self.port}" if tcp else f"{self.folder} port={self.port or 5432}"
        return f"host={host} dbname={dbname} user={user}"


def start_server(port: int | None = None) -> Server:
    """A new server, started (RuntimeError where the binaries are missing)."""
    if not have_binaries():
        raise RuntimeError(MISSING + ".")
    as_postgres = os.geteuid() == 0
    folder = Path(tempfile.mkdtemp(prefix="sbpg-"))   # short: a socket path has 107 bytes
    if as_postgres:
        shutil.chown(folder, "postgres")
    server = Server(folder, as_postgres, port)
    try:
        server._run(_binary("initdb"), "-D", str(folder / "data"), "-U", "postgres",
                    "--auth=trust", "-E", "UTF8", "--no-sync")
        (folder / "data" / "pg_hba.conf").write_text(HBA)
        server.start()
    except BaseException:
        end_server(server)
        raise
    return server


def end_server(server: Server) -> None:
    """Stop the server (if it runs) and remove its folder, whatever happens."""
    try:
        server.stop()
    finally:
        shutil.rmtree(server.folder, ignore_errors=True)
