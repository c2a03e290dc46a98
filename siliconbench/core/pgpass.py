"""A shared store's password kept where libpq looks for it: the password file (~/.pgpass, or
the file PGPASSFILE names; %APPDATA%\\postgresql\\pgpass.conf on Windows), as pgAdmin's "Save
password" does. SiliconBench itself keeps no password: Preferences keeps the address without
it (siliconbench.core.store_pg.without_password) and offers this instead.

The file is libpq's format, one `hostname:port:database:username:password` a line, `:` and `\\`
escaped with a backslash, `*` for any. It is written whole to a new file of mode 0600 beside
it and renamed over it, never through a link (a link or anything but a plain file there is
refused in one sentence), and an entry for the same server, database and user is replaced
rather than left first, where libpq would still find the old password."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

MAX_BYTES = 1 << 20   # a password file larger than this is not one


class PgpassError(Exception):
    """One sentence: why the password could not be kept."""


def password_in(address: str) -> str | None:
    """The password typed in a store's address (postgresql://user:pw@host/db or libpq's
    key=value form), or None."""
    try:
        from psycopg.conninfo import conninfo_to_dict
        return conninfo_to_dict(address).get("password") or None
    except Exception:   # psycopg missing, or an address libpq cannot read: nothing to keep
        return None


def pgpass_path() -> Path:
    """The password file libpq reads."""
    given = os.environ.get("PGPASSFILE")
    if given:
        return Path(given)
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", Path.home())) / "postgresql" / "pgpass.conf"
    return Path.home() / ".pgpass"


def escape(field: str) -> str:
    return field.replace("\\", "\\\\").replace(":", "\\:")


def fields(line: str) -> list[str]:
    """A password file line's fields, unescaped (the password is all after the fourth `:`)."""
    out: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\" and i + 1 < len(line):
            current.append(line[i + 1])
            i += 2
            continue
        if c == ":" and len(out) < 4:
            out.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    out.append("".join(current))
    return out


def entries(address: str) -> list[list[str]]:
    """The password file's entries for an address with a password in it: one per host it
    names, `*` for a field the address leaves to libpq's default."""
    from psycopg.conninfo import conninfo_to_dict
    given = conninfo_to_dict(address)
    password = given.get("password") or ""
    if not password:
        raise PgpassError("The address has no password to keep.")
    if "\n" in password or "\r" in password:
        raise PgpassError("A password with a line break cannot be kept in the password file; "
                          "keep it in PGPASSWORD or a service file instead.")
    hosts = (given.get("host") or "*").split(",")
    ports = (given.get("port") or "").split(",")
    return [[host or "*", (ports[i] if i < len(ports) else ports[-1]) or "*",
             given.get("dbname") or "*", given.get("user") or "*", password]
            for i, host in enumerate(hosts)]


def _read(path: Path) -> str:
    """The file's text, read without following a link; "" when there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)   # a FIFO: no wait
                     | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return ""
    except OSError as e:
        if path.is_symlink():
            raise PgpassError(f"{path} is a link; SiliconBench does not write a password "
                              "through one (make it a plain file).") from None
        raise PgpassError(f"{path} cannot be read ({e.strerror}).") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise PgpassError(f"{path} is not a plain file; SiliconBench writes no password "
                              "there.")
        if info.st_size > MAX_BYTES:
            raise PgpassError(f"{path} is larger than a password file ({info.st_size:,} "
                              "bytes); SiliconBench leaves it as it is.")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(MAX_BYTES).decode("utf-8", "replace")
    finally:
        os.close(fd)


def keep_password(address: str, path: Path | None = None) -> Path:
    """Put the password typed in `address` into the password file (mode 0600, written whole
    and renamed into place); the file written. PgpassError with one sentence when it cannot."""
    path = path or pgpass_path()
    new = entries(address)
    if path.is_symlink():
        raise PgpassError(f"{path} is a link; SiliconBench does not write a password through "
                          "one (make it a plain file).")
    old = _read(path)
    wanted = {tuple(e[:4]) for e in new}
    kept = [line for line in old.splitlines()
            if line.lstrip().startswith("#") or tuple(fields(line)[:4]) not in wanted]
    text = "".join(":".join(escape(f) for f in e) + "\n" for e in new)
    text += "".join(line + "\n" for line in kept)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".pgpass-")   # mode 0600
    except OSError as e:
        raise PgpassError(f"The password file cannot be written in {path.parent} "
                          f"({e.strerror}).") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, 0o600)
        os.replace(temp, path)   # replaces a link put there meanwhile, never its target
    except OSError as e:
        Path(temp).unlink(missing_ok=True)
        raise PgpassError(f"The password file {path} cannot be written ({e.strerror}).") \
            from None
    return path
