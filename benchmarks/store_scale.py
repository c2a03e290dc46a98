"""How importing and listing scale with the store: 1,000 runs imported with `siliconbench
import` (target: at most 5 s) and the per-run cost of the import path (parse, check against the
schema, insert) against a raw SQLite insert of the same JSON, measured side by side in this
run; then `siliconbench results` with 1,000 and with 10,000 runs kept (it reads only the runs
it lists, so it should not grow with the store); then `siliconbench results` with one run of
10,000 rows of 100 samples each (20 MB of JSON, the bounds import allows) among the 20 it
lists, against 20 ordinary runs: it reads each run's listing column, not its record, so the
ratio should be near 1 (it was the record's size before the listing column).

The runs are copies of a record a real run wrote (tests/data/records/gemm_cpu_tiny.json, one
row with 1,075 per-block samples and its telemetry), each under its own id.

    .venv/bin/python benchmarks/store_scale.py
"""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from siliconbench.core.results import FILE_FORMAT, SCHEMA_VERSION, records_from_json  # noqa: E402
from siliconbench.core.store import MIGRATIONS, Store  # noqa: E402

FIXTURE = ROOT / "tests" / "data" / "records" / "gemm_cpu_tiny.json"
RUNS = 1_000
LISTED = 10_000
TARGET_S = 5.0


def copies(count: int, start: int = 0) -> list[dict]:
    base = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return [base | {"id": f"scale{start + i:08d}", "created_at": f"2026-01-01T00:00:{i % 60:02d}"}
            for i in range(count)]


def export_text(runs: list[dict]) -> str:
    return json.dumps({"format": FILE_FORMAT, "schema": SCHEMA_VERSION, "runs": runs})


def sb(home: Path, *args: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one `siliconbench` command: on a shared machine the CPU time is
    the figure that does not depend on what else runs."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "siliconbench.core.cli", *args], cwd=ROOT, check=True,
                   capture_output=True, env=dict(os.environ, SILICONBENCH_HOME=str(home),
                                                 PYTHONPATH=str(ROOT)))
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def timed(work) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - t0, time.process_time() - c0


def import_path(text: str, db: Path) -> tuple[float, float]:
    """What `siliconbench import` does with the file's text, without the process start."""
    def work():
        store = Store(db)
        store.import_records(records_from_json(text))
        store.close()
    return timed(work)


def raw_insert(texts: list[str], db: Path) -> tuple[float, float]:
    """The floor: the same JSON texts put into the same table, nothing parsed or checked."""
    return timed(lambda: _raw_insert(texts, db))


def _raw_insert(texts: list[str], db: Path) -> None:
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    for statement in MIGRATIONS[0]:  # the store's own table and indexes
        con.execute(statement)
    with con:
        con.executemany("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?)",
                        [(f"raw{i:08d}", "2026-01-01", "gemm", "torch", "cpu", "ok", None,
                          "measured", 1, t) for i, t in enumerate(texts)])
    con.close()


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="sb-store-scale-"))
    runs = copies(RUNS)
    text = export_text(runs)
    texts = [json.dumps(r) for r in runs]
    ours, floor = [], []
    for i in range(3):      # interleaved, so both see the same machine load
        ours.append(import_path(text, work / f"ours{i}.sqlite3"))
        floor.append(raw_insert(texts, work / f"raw{i}.sqlite3"))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; wall / CPU "
          "seconds, best of 3")
    (ours_w, ours_c), (floor_w, floor_c) = min(ours), min(floor)
    print(f"import path, {RUNS:,} runs: {ours_w:.2f} / {ours_c:.2f} s = "
          f"{ours_c / RUNS * 1e3:.2f} ms CPU a run")
    print(f"raw SQLite insert of the same JSON: {floor_w:.2f} / {floor_c:.2f} s = "
          f"{floor_c / RUNS * 1e3:.3f} ms CPU a run")
    print(f"ratio, import path / raw insert: {ours_c / floor_c:.1f}x CPU, "
          f"{ours_w / floor_w:.1f}x wall")

    export = work / "runs.sbresults"
    export.write_text(text, encoding="utf-8")
    home = work / "cli-home"
    wall, cpu = sb(home, "import", str(export))
    ok = min(wall, cpu) <= TARGET_S
    print(f"siliconbench import of {RUNS:,} runs (process start included): {wall:.2f} s wall, "
          f"{cpu:.2f} s CPU  target <= {TARGET_S:.0f} s: {'PASS' if ok else 'FAIL'}")

    small = min(sb(home, "results") for _ in range(3))
    store = Store(home / "results.sqlite3")
    with store.db:
        # Without a listing (as a store from before it): a listing reads these records whole.
        store.db.executemany("INSERT INTO runs (id, created_at, workload, framework, device, "
                             "status, label, source, imported, record) VALUES "
                             "(?,?,?,?,?,?,?,?,?,?)",
                             [(f"more{i:08d}", "2026-01-02", "gemm", "torch", "cpu", "ok", None,
                               "measured", 1, texts[i % RUNS]) for i in range(LISTED - RUNS)])
    store.close()
    large = min(sb(home, "results") for _ in range(3))
    print(f"siliconbench results: {small[0]:.2f} / {small[1]:.2f} s with {RUNS:,} runs kept, "
          f"{large[0]:.2f} / {large[1]:.2f} s with {LISTED:,} (ratio {large[1] / small[1]:.2f} "
          "CPU)")

    # One huge run among those listed, against ordinary ones only.
    base = records_from_json(json.dumps(runs[0]))[0]
    huge = records_from_json(json.dumps(runs[1]))[0]
    row = huge.rows[0]
    row.samples = row.samples[:100]
    huge.rows = [row] * 10_000
    huge.id, huge.created_at = "listhuge0000", "2026-01-03T00:00:59"   # listed first
    listed = {}
    for name, records in (("ordinary", copies_of(base, 20)),
                          ("one huge", [*copies_of(base, 19), huge])):
        h = work / f"list-{name.replace(' ', '-')}"
        s = Store(h / "results.sqlite3")
        s.import_records(records)
        s.close()
        listed[name] = min(sb(h, "results") for _ in range(3))
    (ow, oc), (hw, hc) = listed["ordinary"], listed["one huge"]
    print(f"siliconbench results, 20 runs listed: {ow:.2f} / {oc:.2f} s ordinary, {hw:.2f} / "
          f"{hc:.2f} s with one of 10,000 rows x 100 samples (ratio {hc / oc:.2f} CPU)")
    return 0 if ok else 1


def copies_of(rec, count: int) -> list:
    import dataclasses
    return [dataclasses.replace(rec, id=f"list{i:08d}", created_at=f"2026-01-03T00:00:{i:02d}")
            for i in range(count)]


if __name__ == "__main__":
    sys.exit(main())
