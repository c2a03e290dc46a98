"""The results store (WAL, schema version, dedup on import, refusal of foreign files) and the
exports (tidy CSV with injection escaped, JSON that round-trips unchanged)."""

import csv
import io
import json
import sqlite3

import pytest

from siliconbench.core import export
from siliconbench.core import store as store_mod
from siliconbench.core.results import NotAResultFile, Row, RunRecord, records_from_json
from siliconbench.core.stats import summarize
from siliconbench.core.store import Store, StoreError


def record(**kw) -> RunRecord:
    rows = [Row("tflops", 1.5, "TFLOPS", {"size": 256, "dtype": "float32"},
                summarize([1.4, 1.5, 1.6]), ["noisy"], None, 12.5, [1.4, 1.5, 1.6]),
            Row("tflops", None, "TFLOPS", {"size": 256, "dtype": "float64"},
                flags=["unsupported"], note="float64 matmul is not supported on mps")]
    base = dict(workload="gemm", framework="torch", device="mps", params={"sizes": [256]},
                machine={"model_name": "MacBook Pro (14-inch, 2021)", "chip": "Apple M1 Max"},
                rows=rows)
    return RunRecord(**(base | kw))


def test_store_keeps_runs_and_uses_wal(siliconbench_home):
    s = Store()
    a, b = record(status="failed", reason="out of memory"), record()
    s.save(a)
    s.save(b)
    assert s.path == siliconbench_home / "results.sqlite3"
    assert s.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert s.db.execute("PRAGMA user_version").fetchone()[0] == store_mod.SCHEMA_VERSION
    assert {r.id for r in s.runs()} == {a.id, b.id}
    assert s.get(a.id).to_dict() == a.to_dict()
    assert [r.id for r in s.runs(status="failed")] == [a.id]
    s.set_label([a.id], "Studio")
    assert s.get(a.id).machine_label == "Studio"
    assert s.find(a.id[:6])[0].id == a.id
    assert s.delete([a.id]) == 1 and s.get(a.id) is None


def test_import_dedups_by_id():
    s = Store()
    recs = [record(), record()]
    assert s.import_records(recs) == (2, 0, 0)     # added, completed, already here
    assert s.import_records(recs) == (0, 0, 2)
    assert len(s.runs()) == 2


def test_newer_store_is_refused_with_a_sentence(tmp_path):
    path = tmp_path / "future.sqlite3"
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version = 99")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="newer SiliconBench"):
        Store(path)


def test_migration_from_an_empty_database_runs_every_step(tmp_path):
    s = Store(tmp_path / "old.sqlite3")
    assert s.db.execute("PRAGMA user_version").fetchone()[0] == len(store_mod.MIGRATIONS)


def test_json_export_round_trips_unchanged():
    recs = [record(label="=cmd|' /C calc'!A0"), record(status="cancelled", reason="cancelled")]
    back = records_from_json(export.to_json(recs))
    assert [r.to_dict() for r in back] == [r.to_dict() for r in recs]


def test_csv_is_tidy_and_escapes_formulas():
    rec = record(label="=HYPERLINK(\"http://x\")")
    rows = list(csv.DictReader(io.StringIO(export.to_csv([rec]))))
    assert len(rows) == 2
    first = rows[0]
    assert first["run_id"] == rec.id and first["workload"] == "gemm"
    assert first["framework"] == "torch" and first["device"] == "mps"
    assert first["size"] == "256" and first["dtype"] == "float32"
    assert (first["metric"], first["value"], first["unit"]) == ("tflops", "1.5", "TFLOPS")
    assert (first["median"], first["p25"], first["p75"], first["n"]) == ("1.5", "1.45", "1.55", "3")
    assert first["flags"] == "noisy" and first["pct_of_peak"] == "12.5"
    assert first["machine"].startswith("'=")  # would run as a formula in a spreadsheet
    assert rows[1]["value"] == "" and rows[1]["flags"] == "unsupported"


@pytest.mark.parametrize("text, says", [
    ("not json at all", "not JSON"),
    ("[1, 2, 3]", "not a SiliconBench run record"),
    (json.dumps({"hello": "world"}), "not a SiliconBench run record"),
    (json.dumps({"format": "siliconbench-results", "runs": "x"}), "no list of runs"),
    (json.dumps(record().to_dict() | {"status": "exploded"}), r"damaged run record \(status"),
    (json.dumps(record().to_dict() | {"schema": 7}), "newer SiliconBench"),
])
def test_foreign_or_damaged_files_are_refused(text, says):
    with pytest.raises(NotAResultFile, match=says):
        records_from_json(text)
