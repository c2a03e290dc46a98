"""The shared store's rules that row-level security alone cannot say, as a migration of
siliconbench.core.store_pg (its PG_MIGRATIONS' third entry), checked by the database itself so
that a writer talking to the server directly cannot get round them:

- A machine's name (a run's label) belongs to the role that first sent a run of its own under
  it (`siliconbench.machine_names`): another role's run under that name is refused, and a row
  whose label column says other than its record (or its listing) is refused, so no writer can
  publish runs as another machine. (Unlabelled runs are told apart by their owner: two roles'
  runs are two machines, whatever hardware they give; siliconbench.core.compare_words.)
- Writers neither update nor delete the table directly, so they cannot lock it (LOCK TABLE
  needs UPDATE, DELETE or TRUNCATE): they relabel and delete their own runs through two
  functions that run as the admin group and check who asks (set_label, delete_runs). A run
  deleted leaves a tombstone (`siliconbench.deleted`), and a run with a tombstone is not added
  again: `siliconbench store push` does not bring back what the lab deleted.
- The owner of a row is a machine's or an admin's own role, never the two group roles (a writer
  could SET ROLE to its group and write rows every writer could then change).
- A record or listing that is not JSON is refused."""

from __future__ import annotations

REFUSED = "SB001"   # the SQLSTATE of a row these rules refuse (that row alone)

SCHEMA = "siliconbench"
ADMIN_ROLE = "siliconbench_admin"
WRITER_ROLE = "siliconbench_writer"

_GUARD = f"""
CREATE FUNCTION {SCHEMA}.runs_guard() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    claimed name;
    said text;
BEGIN
    IF TG_OP = 'INSERT' AND EXISTS (SELECT 1 FROM {SCHEMA}.deleted d WHERE d.id = NEW.id) THEN
        RETURN NULL;   -- deleted in the shared store: not brought back
    END IF;
    IF NEW.owner IN ('{WRITER_ROLE}', '{ADMIN_ROLE}') THEN
        RAISE EXCEPTION 'a run is owned by a machine''s own role, not by %', NEW.owner
            USING ERRCODE = 'SB001';
    END IF;
    BEGIN
        said := NEW.record::jsonb ->> 'label';
    EXCEPTION WHEN others THEN
        RAISE EXCEPTION 'the run % has a record that is not JSON', NEW.id
            USING ERRCODE = 'SB001';
    END;
    IF said IS DISTINCT FROM NEW.label THEN
        RAISE EXCEPTION 'the run %''s label column differs from its record''s', NEW.id
            USING ERRCODE = 'SB001';
    END IF;
    IF NEW.listing IS NOT NULL THEN
        BEGIN
            said := NEW.listing::jsonb ->> 'label';
        EXCEPTION WHEN others THEN
            RAISE EXCEPTION 'the run % has a listing that is not JSON', NEW.id
                USING ERRCODE = 'SB001';
        END;
        IF said IS DISTINCT FROM NEW.label THEN
            RAISE EXCEPTION 'the run %''s label column differs from its listing''s', NEW.id
                USING ERRCODE = 'SB001';
        END IF;
    END IF;
    IF NEW.label IS NOT NULL THEN
        IF NEW.imported = 0 THEN
            INSERT INTO {SCHEMA}.machine_names VALUES (lower(NEW.label), NEW.owner)
                ON CONFLICT (name) DO NOTHING;
        END IF;
        SELECT m.owner INTO claimed FROM {SCHEMA}.machine_names m
            WHERE m.name = lower(NEW.label);
        IF claimed IS NOT NULL AND claimed <> NEW.owner THEN
            RAISE EXCEPTION 'the machine name "%" belongs to the role %', NEW.label, claimed
                USING ERRCODE = 'SB001';
        END IF;
    END IF;
    RETURN NEW;
END $$"""

_MAY_CHANGE = (f"(r.owner = session_user OR pg_has_role(session_user, '{ADMIN_ROLE}', "
               "'MEMBER'))")

_SET_LABEL = f"""
CREATE FUNCTION {SCHEMA}.set_label(run_id text, new_label text, new_record text,
                                   new_listing text) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE n integer;
BEGIN
    UPDATE {SCHEMA}.runs r SET label = new_label, record = new_record, listing = new_listing
        WHERE r.id = run_id AND {_MAY_CHANGE};
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$"""

_DELETE = f"""
CREATE FUNCTION {SCHEMA}.delete_runs(run_ids text[]) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE n integer;
BEGIN
    WITH gone AS (DELETE FROM {SCHEMA}.runs r WHERE r.id = ANY(run_ids) AND {_MAY_CHANGE}
                  RETURNING r.id, r.owner),
         kept AS (INSERT INTO {SCHEMA}.deleted (id, owner, deleted_by)
                  SELECT id, owner, session_user FROM gone ON CONFLICT (id) DO NOTHING)
    SELECT count(*) INTO n FROM gone;
    RETURN n;
END $$"""

_BOTH = f"{WRITER_ROLE}, {ADMIN_ROLE}"

MIGRATION: list[str] = [
    f"CREATE TABLE {SCHEMA}.machine_names (name TEXT PRIMARY KEY, owner NAME NOT NULL)",
    f"CREATE TABLE {SCHEMA}.deleted (id TEXT PRIMARY KEY, owner NAME NOT NULL, "
    "deleted_by NAME NOT NULL, deleted_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    # Names a run already in the store claims: the first role to have sent one of its own.
    f"INSERT INTO {SCHEMA}.machine_names SELECT DISTINCT ON (lower(label)) lower(label), owner "
    f"FROM {SCHEMA}.runs WHERE label IS NOT NULL AND imported = 0 "
    "ORDER BY lower(label), seq",
    _GUARD, _SET_LABEL, _DELETE,
    f"CREATE TRIGGER runs_guard BEFORE INSERT OR UPDATE ON {SCHEMA}.runs FOR EACH ROW "
    f"EXECUTE FUNCTION {SCHEMA}.runs_guard()",
    f"REVOKE UPDATE, DELETE ON {SCHEMA}.runs FROM {WRITER_ROLE}",
    f"GRANT SELECT ON {SCHEMA}.machine_names, {SCHEMA}.deleted TO {_BOTH}",
    f"GRANT INSERT, UPDATE, DELETE ON {SCHEMA}.machine_names TO {ADMIN_ROLE}",
    f"REVOKE ALL ON FUNCTION {SCHEMA}.runs_guard(), {SCHEMA}.set_label(text, text, text, text),"
    f" {SCHEMA}.delete_runs(text[]) FROM PUBLIC",
    f"GRANT EXECUTE ON FUNCTION {SCHEMA}.set_label(text, text, text, text), "
    f"{SCHEMA}.delete_runs(text[]) TO {_BOTH}",
]
