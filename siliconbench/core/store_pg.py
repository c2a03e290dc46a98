"""The shared results store: PostgreSQL (14 or later) through psycopg 3, for a lab whose
machines keep their runs in one place. The same `runs` table as the SQLite store (store_schema's
COLUMNS) plus `owner` (the database role that wrote the row) and `seq` (the order rows arrived,
SQLite's rowid), in a schema of its own (`siliconbench`); what differs in SQL is here.

Who may do what is the database's business, not the client's: `init` creates two group roles,
siliconbench_writer (every machine's login role is a member) and siliconbench_admin, and
row-level security on `runs`: everyone reads every run, a writer inserts, edits and deletes only
rows whose owner is itself, the admin edits and deletes any. Credentials are libpq's (the URL,
~/.pgpass, a service file, PGPASSWORD); SiliconBench keeps none. Every failure reaches the user
as one sentence (sentence()) saying what to fix."""

from __future__ import annotations

import json
import os
import re
from typing import NamedTuple

from siliconbench.core.results import RunRecord
from siliconbench.core.store_address import UnreadableAddress, is_url, scrub, shown
from siliconbench.core.store_pg_rules import ADMIN_ROLE, REFUSED, SCHEMA, WRITER_ROLE
from siliconbench.core.store_pg_rules import MIGRATION as _RULES
from siliconbench.core.store_schema import (
    COLUMNS,
    LISTING_HEAD,
    LISTING_VERSION,
    MIGRATIONS,
    Listed,
    StoreError,
    home,
    listed,
    listing_of,
)

_SQLITE_RUNS = MIGRATIONS[0][0]
CONNECT_TIMEOUT_S = 5     # an unreachable server: the run is kept here instead, soon
# A lock another session holds (a migration, an admin's LOCK TABLE) is waited on this long,
# a statement this long, then the command says so in a sentence and a run is kept here
# unsent; libpq's `options=-c lock_timeout=...` in the address (or PGOPTIONS) sets others.
LOCK_TIMEOUT_MS = 3_000
STATEMENT_TIMEOUT_MS = 60_000
_ROLES = f"{WRITER_ROLE}, {ADMIN_ROLE}"

# Each entry brings the shared store up by one version (siliconbench.schema_version says
# where it is); run by `siliconbench store init` or by the admin's SiliconBench on opening.
PG_MIGRATIONS: list[list[str]] = [
    # SQLite's table as its migrations left it (one definition), with who wrote each row
    # and the order rows came in (SQLite's rowid).
    [_SQLITE_RUNS.replace("CREATE TABLE runs (", f"CREATE TABLE {SCHEMA}.runs (", 1)
     .rstrip().removesuffix(")") + ", listing TEXT, owner NAME NOT NULL DEFAULT current_user, "
     "seq BIGINT GENERATED ALWAYS AS IDENTITY)",
     f"GRANT SELECT, INSERT, UPDATE, DELETE ON {SCHEMA}.runs TO {_ROLES}",
     f"ALTER TABLE {SCHEMA}.runs ENABLE ROW LEVEL SECURITY",
     f"CREATE POLICY read_all ON {SCHEMA}.runs FOR SELECT TO {_ROLES} USING (true)",
     f"CREATE POLICY insert_own ON {SCHEMA}.runs FOR INSERT TO {WRITER_ROLE} "
     "WITH CHECK (owner = current_user)",
     f"CREATE POLICY update_own ON {SCHEMA}.runs FOR UPDATE TO {WRITER_ROLE} "
     "USING (owner = current_user) WITH CHECK (owner = current_user)",
     f"CREATE POLICY delete_own ON {SCHEMA}.runs FOR DELETE TO {WRITER_ROLE} "
     "USING (owner = current_user)",
     f"CREATE POLICY admin_all ON {SCHEMA}.runs FOR ALL TO {ADMIN_ROLE} "
     "USING (true) WITH CHECK (true)"],
    # Listing newest first and a machine's runs (the machine filter, Compare's labels) read
    # an index, not the table, at 10,000 runs and at a million.
    [f"CREATE INDEX runs_newest ON {SCHEMA}.runs (created_at DESC, seq DESC)",
     f"CREATE INDEX runs_by_label ON {SCHEMA}.runs (lower(label), created_at DESC)",
     f"CREATE INDEX runs_by_owner ON {SCHEMA}.runs (owner)"],
    # A machine's name bound to the role that writes its runs, no direct UPDATE or DELETE
    # (nor LOCK) for writers, tombstones for deleted runs: siliconbench.core.store_pg_rules.
    _RULES,
]
PG_SCHEMA_VERSION = len(PG_MIGRATIONS)
_VALUES = ", ".join(["%s"] * len(COLUMNS.split(",")))


def without_password(url: str) -> str:
    """The address as shown and kept: libpq's own reading of it with the password taken out
    (store_address.shown); StoreError, one sentence that never repeats the address, where
    libpq cannot read it."""
    try:
        return shown(url)
    except UnreadableAddress as e:
        raise StoreError(str(e)) from None


class StoreURL(str):
    """A shared store's address as shown (without password); `url` is the address given, and
    `parent` the folder a run the store could not keep is written to (as for a file store)."""
    url: str

    def __new__(cls, url: str) -> StoreURL:
        address = super().__new__(cls, without_password(url))
        address.url = url
        return address

    @property
    def parent(self):
        return home()


def connect(url: str):
    """A connection (autocommit) to the server, or StoreError with the sentence that says what
    to fix. psycopg missing is a sentence too."""
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        raise StoreError("A shared store needs psycopg; install it with: pip install "
                         "'siliconbench[postgres]'.") from None
    without_password(url)   # an address libpq cannot read: one sentence, never echoed
    try:
        extra = {} if "connect_timeout" in conninfo_to_dict(url) else {
            "connect_timeout": CONNECT_TIMEOUT_S}
        db = psycopg.connect(url, autocommit=True, application_name="siliconbench", **extra)
    except psycopg.Error as e:
        raise StoreError(sentence(e, url)) from None
    try:
        given = (conninfo_to_dict(url).get("options") or "") + os.environ.get("PGOPTIONS", "")
        for name, ms in (("lock_timeout", LOCK_TIMEOUT_MS),
                         ("statement_timeout", STATEMENT_TIMEOUT_MS)):
            if name not in given:
                db.execute(f"SET {name} = {int(ms)}")
    except psycopg.Error as e:
        db.close()
        raise StoreError(sentence(e, url)) from None
    return db


def sentence(e: Exception, url: str) -> str:
    """One sentence for what the server or libpq said, naming what to fix."""
    where = f"The shared store {without_password(url)}"
    text = scrub(str(e).strip())     # libpq's details may quote the address back
    detail = text.rsplit("FATAL:", 1)[-1].strip().splitlines()[0] if text else type(e).__name__
    state = getattr(e, "sqlstate", None)
    user = _user_of(url)
    if user and reserved_role(user) and re.search(
            r"password authentication failed|no password supplied|does not exist", text):
        return (f"{where} refused the user {user} ({detail}): {reserved_role(user)}, so it is "
                "no machine's role; connect as the machine's own role (user=NAME in the "
                "address).")
    if "password authentication failed" in text or "no password supplied" in text:
        return (f"{where} refused the password ({detail}); fix it in ~/.pgpass, the service "
                "file or PGPASSWORD (SiliconBench keeps no password).")
    if re.search(r'database ".*" does not exist', text):
        return (f"{where} has no such database ({detail}); create it (createdb) or correct "
                "the database name in the address.")
    if state == "55P03":
        return (f"{where} is held by another session's lock ({detail}); try again later, or "
                "ask its admin to end that session (pg_stat_activity, pg_terminate_backend).")
    if state == "57014":
        return (f"{where} did not finish in time ({detail}); try again later, or ask its "
                "admin what holds it up.")
    if state == REFUSED:
        return f"{where} refused the run ({detail})."
    if re.search(r'role ".*" does not exist', text):
        return (f"{where} has no such user ({detail}); ask its admin to create it with: "
                "siliconbench store init URL --machine NAME.")
    if "pg_hba.conf" in text:
        return (f"{where} does not let this user connect from here ({detail}); ask its admin "
                "to allow it in pg_hba.conf.")
    if any(w in text for w in ("SSL", "certificate", "TLS")):
        return (f"{where} failed the TLS check ({detail}); check sslmode and sslrootcert "
                "(sslmode=verify-full needs the server's CA in ~/.postgresql/root.crt).")
    if state == "42501":
        return (f"{where} refused this ({detail}); the role needs to be a member of "
                f"{WRITER_ROLE} (siliconbench store init URL --machine NAME), and only "
                f"{ADMIN_ROLE} may change another machine's runs.")
    if state == "42P01" or state == "3F000":
        return (f"{where} has no SiliconBench tables; its admin creates them with: "
                "siliconbench store init URL.")
    if "definition of service" in text or "service file" in text:
        return f"{where} names a service libpq cannot find ({detail}); check ~/.pg_service.conf."
    return f"{where} cannot be reached ({detail}); check the address and that the server runs."


class SharedDatabase:
    """An open connection to the shared store, its schema current: reads and writes."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = StoreURL(url)
        self.unreadable: list[tuple[str, str]] = []
        self.db = connect(url)
        try:
            self._check_schema()
        except BaseException:
            self.db.close()
            raise

    def close(self) -> None:
        self.db.close()

    def _check_schema(self) -> None:
        version = self._version()
        if version > PG_SCHEMA_VERSION:
            raise StoreError(f"The shared store {self.path} was set up by a newer SiliconBench "
                             f"(schema {version}, this one knows {PG_SCHEMA_VERSION}); update "
                             "SiliconBench to use it.")
        if version < PG_SCHEMA_VERSION:
            try:
                migrate(self.db)
            except StoreError:
                raise
            except Exception as e:
                raise StoreError(
                    f"The shared store {self.path} has tables of an older SiliconBench (schema "
                    f"{version}, this one needs {PG_SCHEMA_VERSION}), and this role cannot "
                    f"bring them up to date ({_first_line(e)}); its admin does it with: "
                    "siliconbench store init URL.") from None

    def _version(self) -> int:
        import psycopg
        try:
            row = self.db.execute(f"SELECT version FROM {SCHEMA}.schema_version").fetchone()
        except psycopg.Error as e:
            raise StoreError(sentence(e, self.url)) from None
        return row[0] if row else 0

    def execute(self, sql: str, args=()):
        """One statement; a server error (a dropped connection, a refusal) as StoreError."""
        import psycopg
        try:
            return self.db.execute(sql, args)
        except psycopg.Error as e:
            raise StoreError(sentence(e, self.url)) from None

    # ------------------------------------------------------------ reads

    def _read(self, sql: str, args=(), column: str = "record") -> list[RunRecord]:
        """The records a query selects; those that cannot be read (a record nested too deep,
        not a record) are left out and named in `unreadable`, whatever the error. Each record
        read carries `owner`, the role that wrote it: part of its machine's identity."""
        sql = sql.replace("{column}", ("coalesce(listing, record)" if column == "listing"
                                       else "record") + ", owner")
        self.unreadable = []
        found = []
        rows = self.execute(sql, args).fetchall()
        stale = self._stale_records(rows) if column == "listing" else {}
        for run_id, text, owner in rows:
            try:
                d = json.loads(stale.get(run_id, text))
                rec = (Listed.from_dict(d, validate_schema=False)
                       if d.get("v") == LISTING_VERSION else
                       listed(RunRecord.from_dict(d, validate_schema=False))
                       if column == "listing" else
                       RunRecord.from_dict(d, validate_schema=False))
            except Exception as e:   # RecursionError, MemoryError too: this row alone
                self.unreadable.append((run_id, f"{type(e).__name__}: {str(e)[:200]}"))
                continue
            rec.owner = owner
            found.append(rec)
        return found

    def _stale_records(self, rows: list) -> dict[str, str]:
        """{run id: its record} for the rows whose listing is of an older form (written by an
        older SiliconBench), read in one query: listed from the record instead."""
        stale = [run_id for run_id, text, _ in rows if not text.startswith(LISTING_HEAD)]
        if not stale:
            return {}
        return dict(self.execute(f"SELECT id, record FROM {SCHEMA}.runs WHERE id = ANY(%s)",
                                 (stale,)).fetchall())

    def get(self, run_id: str) -> RunRecord | None:
        found = self._read(f"SELECT id, {{column}} FROM {SCHEMA}.runs WHERE id = %s", (run_id,))
        return found[0] if found else None

    def get_many(self, run_ids: list[str]) -> list[RunRecord]:
        """The whole records of these runs (those still here), in one query."""
        return self._read(f"SELECT id, {{column}} FROM {SCHEMA}.runs WHERE id = ANY(%s)",
                          (list(run_ids),))

    def find(self, prefix: str) -> list[RunRecord]:
        return self._read(f"SELECT id, {{column}} FROM {SCHEMA}.runs WHERE id = %s",
                          (prefix,)) or self._read(
            f"SELECT id, {{column}} FROM {SCHEMA}.runs WHERE left(id, %s) = %s "
            "ORDER BY created_at", (len(prefix), prefix))

    def runs(self, limit: int | None = None, workload: str | None = None,
             status: str | None = None, column: str = "record",
             label: str | None = None) -> list[RunRecord]:
        """Newest first; `label` keeps one machine's runs (its label, any case)."""
        given = {test: value for test, value in (
            ("workload = %s", workload), ("status = %s", status),
            ("lower(label) = lower(%s)", label)) if value}
        sql = (f"SELECT id, {{column}} FROM {SCHEMA}.runs WHERE "
               + " AND ".join(["true", *given]) + " ORDER BY created_at DESC, seq DESC"
               + (" LIMIT %s" if limit is not None else ""))
        args = [*given.values(), *([limit] if limit is not None else [])]
        return self._read(sql, args, column)

    def listing(self, limit: int | None = None) -> list[Listed]:
        return self.runs(limit, column="listing")

    def ids(self) -> set[str]:
        return {row[0] for row in self.execute(f"SELECT id FROM {SCHEMA}.runs").fetchall()}

    # ------------------------------------------------------------ writes

    def insert(self, records: list[tuple[RunRecord, bool]]) -> Inserted:
        """Add runs (record, imported) not here yet, in one transaction: what was added, what
        the store's rules refused (store_pg_rules: another role's machine name), and what was
        deleted here before (a tombstone: not brought back). A run already here (sent
        before, by this machine or pushed by another) is left as it is: the run id is the
        key, so a run sent twice is kept once."""
        import psycopg
        added, refused = [], []
        try:
            with self.db.transaction():
                for rec, imported in records:
                    d = rec.to_dict()
                    try:
                        with self.db.transaction():   # a savepoint: a refusal is this run's
                            row = self.db.execute(
                                f"INSERT INTO {SCHEMA}.runs ({COLUMNS}) VALUES ({_VALUES}) "
                                "ON CONFLICT (id) DO NOTHING RETURNING id",
                                (rec.id, rec.created_at, rec.workload, rec.framework,
                                 rec.device, d["status"], rec.label, rec.source,
                                 int(imported), json.dumps(d), listing_of(rec, d))).fetchone()
                    except psycopg.Error as e:
                        if getattr(e, "sqlstate", None) != REFUSED:
                            raise
                        refused.append((rec.id, _first_line(e)))
                        continue
                    if row:
                        added.append(row[0])
            left = [rec.id for rec, _ in records if rec.id not in set(added)]
            deleted = {r[0] for r in self.db.execute(
                f"SELECT id FROM {SCHEMA}.deleted WHERE id = ANY(%s)", (left,)).fetchall()} \
                if left else set()
        except psycopg.Error as e:
            raise StoreError(sentence(e, self.url)) from None
        return Inserted(added, refused, sorted(deleted))

    def set_label(self, run_ids: list[str], label: str | None) -> None:
        """Relabel runs: this role's own (any, for the admin), through the store's function
        (writers do not update the table: store_pg_rules)."""
        for run_id in run_ids:
            rec = self.get(run_id)
            if rec is not None:
                rec.label = label or None
                d = rec.to_dict()
                self.execute(f"SELECT {SCHEMA}.set_label(%s, %s, %s, %s)",
                             (run_id, rec.label, json.dumps(d), listing_of(rec, d)))

    def delete(self, run_ids: list[str]) -> int:
        """Runs deleted, each leaving a tombstone; another machine's runs stay unless this
        role is the admin."""
        return self.execute(f"SELECT {SCHEMA}.delete_runs(%s)",
                            (list(run_ids),)).fetchone()[0]


class Inserted(NamedTuple):
    """What SharedDatabase.insert did: run ids added; (run id, why) refused by the store's
    rules; run ids deleted in the shared store before, so not added again."""
    added: list[str]
    refused: list[tuple[str, str]]
    deleted: list[str]


def migrate(db, upto: int = PG_SCHEMA_VERSION) -> int:
    """Bring the schema up to version `upto` in one transaction, under a lock so two admins
    opening at once do it once; the version it was at."""
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(hashtext('siliconbench schema'))")
        if db.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (SCHEMA,)).fetchone() \
                is None:
            db.execute(f"CREATE SCHEMA {SCHEMA} AUTHORIZATION {ADMIN_ROLE}")
        # What a migration makes belongs to the admin role, not to whoever ran it, so that
        # any of the lab's admins can run the next one.
        if db.execute("SELECT pg_has_role(%s, 'MEMBER')", (ADMIN_ROLE,)).fetchone()[0]:
            db.execute(f"SET LOCAL ROLE {ADMIN_ROLE}")
        db.execute(f"CREATE TABLE IF NOT EXISTS {SCHEMA}.schema_version (version INTEGER)")
        row = db.execute(f"SELECT version FROM {SCHEMA}.schema_version").fetchone()
        if row is None:
            db.execute(f"INSERT INTO {SCHEMA}.schema_version VALUES (0)")
        version = row[0] if row else 0
        if version > PG_SCHEMA_VERSION:
            raise StoreError(f"The shared store was set up by a newer SiliconBench (schema "
                             f"{version}, this one knows {PG_SCHEMA_VERSION}); update "
                             "SiliconBench to use it.")
        for target in range(version + 1, upto + 1):
            for statement in PG_MIGRATIONS[target - 1]:
                db.execute(statement)
            db.execute(f"UPDATE {SCHEMA}.schema_version SET version = %s", (target,))
    return version


def init(url: str, machines: list[str] = (), admins: list[str] = (),
         upto: int = PG_SCHEMA_VERSION) -> list[str]:
    """`siliconbench store init URL`: the roles, the schema (or its migrations) and each
    machine's and admin's login role; one line for each thing done."""
    import psycopg
    from psycopg import sql
    for name in [*machines, *admins]:
        why = reserved_role(name)
        if why:
            raise StoreError(f"{name!r} cannot be a SiliconBench role: {why}; choose another "
                             "name (a machine's own, such as lab_mac_1).")
    db = connect(url)
    done = []
    try:
        with db.transaction():
            for role in (ADMIN_ROLE, WRITER_ROLE):
                if not _role_exists(db, role):
                    db.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(role)))
                    done.append(f"Created the role {role}.")
        before = migrate(db, upto)
        with db.transaction():
            db.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}, {}").format(
                sql.Identifier(SCHEMA), sql.Identifier(WRITER_ROLE),
                sql.Identifier(ADMIN_ROLE)))
            db.execute(sql.SQL("GRANT SELECT ON {}.schema_version TO {}, {}").format(
                sql.Identifier(SCHEMA), sql.Identifier(WRITER_ROLE),
                sql.Identifier(ADMIN_ROLE)))
            for names, group in ((machines, WRITER_ROLE), (admins, ADMIN_ROLE)):
                for name in names:
                    if group == WRITER_ROLE and db.execute(
                            "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = %s",
                            (name,)).fetchone() in ((True,),):
                        raise StoreError(
                            f"{name} is a superuser (or bypasses row-level security) of the "
                            f"shared store {without_password(url)}, which no rule binds, so it "
                            "cannot be a machine's role; give "
                            "each machine a role of its own (--machine NAME), and keep "
                            f"{name} for setting the store up.")
                    if not _role_exists(db, name):
                        db.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(name)))
                        done.append(f"Created the login role {name}; give it a password with "
                                    f"psql's \\password {name}.")
                    db.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(group),
                                                                sql.Identifier(name)))
                    done.append(f"{name} is a member of {group}.")
    except psycopg.Error as e:
        if getattr(e, "sqlstate", None) == "42501":
            raise StoreError(f"The shared store {without_password(url)} refused to be set up "
                             f"({_first_line(e)}); run siliconbench store init as a superuser "
                             "or the database's owner.") from None
        raise StoreError(sentence(e, url)) from None
    finally:
        db.close()
    after = min(upto, PG_SCHEMA_VERSION)
    done.append(f"The schema is at version {after}" + (
        f" (was {before})." if before != after else " (already)."))
    return done


def reserved_role(name: str) -> str | None:
    """Why `name` cannot be a machine's or an admin's role (a clause), or None: names PostgreSQL
    keeps for itself (pg_..., public, none) and SiliconBench's two group roles."""
    if name.startswith("pg_"):
        return "names beginning pg_ are PostgreSQL's own"
    if name in ("public", "none"):
        return f"PostgreSQL reserves the name {name}"
    if name in (WRITER_ROLE, ADMIN_ROLE):
        return f"{name} is SiliconBench's group role, which the machines' roles join"
    return None


def _user_of(url: str) -> str | None:
    try:
        from psycopg.conninfo import conninfo_to_dict
        return conninfo_to_dict(url).get("user")
    except Exception:   # unreadable, or psycopg missing: nothing to say about the user
        return None


def _role_exists(db, role: str) -> bool:
    return db.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() \
        is not None


def _first_line(e: Exception) -> str:
    return scrub((str(e).strip().splitlines() or [type(e).__name__])[0])


def check(url: str) -> tuple[bool, str]:
    """Whether the shared store at `url` answers, and one sentence on it (Preferences' Test
    Connection, `siliconbench store check`): how many runs of how many machines, or what to
    fix."""
    if not is_url(url):
        return False, "Give a PostgreSQL address: postgresql://user@host/db or service=NAME."
    try:
        shared = SharedDatabase(url)
    except StoreError as e:
        return False, str(e)
    try:
        runs, machines = shared.execute(
            f"SELECT count(*), count(DISTINCT coalesce(label, owner)) FROM {SCHEMA}.runs"
        ).fetchone()
        user = shared.execute("SELECT current_user").fetchone()[0]
    except StoreError as e:
        return False, str(e)
    finally:
        shared.close()
    return True, (f"The shared store {without_password(url)} answers: {runs:,} runs of {machines:,} "
            f"machines; this machine writes as {user}.")
