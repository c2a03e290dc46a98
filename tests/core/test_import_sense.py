"""Import takes every record SiliconBench writes and refuses, file by file, what no run can
have written: records of every workload (this machine's tiny runs, tests/data/records, and
the H200's, tests/data/h200) and the unsaved-run files SiliconBench writes when the store
cannot keep a run import; a file whose figures make no sense (a rate at or below zero, a
value its samples do not give, two runs with one id, an LLM point without its parameters,
more rows, samples or text than any run) is refused in one sentence naming it, and the other
files of the same import still come in. A run kept in the store as interrupted is completed
by the file that holds more of it."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from siliconbench.core import results
from siliconbench.core.results import NotAResultFile, records_from_file, records_to_json
from siliconbench.core.store import INTERRUPTED, Store, keep_elsewhere
from tests.helpers.cli_processes import cli_in_process as sb
from tests.helpers.dialogs import the_sheet
from tests.helpers.h200_records import FOLDER as H200  # tests/data/h200
from tests.helpers.recorded import FOLDER


def h200_files() -> list[Path]:
    files = sorted(H200.glob("*.json"))
    if not files:
        pytest.skip(f"the H200 records are not beside the checkout ({H200})")
    return files


def recorded_files() -> list[Path]:
    return sorted(FOLDER.glob("*.json"))


def doc(path: Path) -> dict:
    d = json.loads(path.read_text(encoding="utf-8"))
    return d["runs"][0] if "runs" in d else d


def stored_ids() -> set[str]:
    s = Store()
    try:
        return {r.id for r in s.runs()}
    finally:
        s.close()


def one_sentence(rc: int, err: str, *names: str) -> None:
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in err and "Traceback" not in err, err
    for name in names:
        assert name in lines[0], err


# ---------------------------------------------------------------- every record imports

def test_every_record_siliconbench_wrote_imports_with_a_bad_file_among_them(tmp_path, capsys):
    """Issue 30 (all-reduce records refused whole) and issue 31 (one bad file cancelled the
    import): all records of every workload, with one file that is not JSON among them."""
    files = h200_files() + recorded_files()
    bad = tmp_path / "notes.json"
    bad.write_text("these are my notes, not a result file")
    rc, out, err = sb(capsys, "import", *files[:3], bad, *files[3:])
    assert rc == 2, err
    assert err.strip().splitlines() == [
        f"siliconbench: {bad} is not a SiliconBench result file: it is not JSON; it was left "
        "out."]
    records = [r for f in files for r in records_from_file(f)]
    assert out.strip().splitlines()[-1] == \
        f"Imported {len(records)} runs; 1 file was refused (named above)."
    assert stored_ids() == {r.id for r in records}
    workloads = {r.workload for r in records}
    assert {"gemm", "bandwidth", "infer", "train", "llm", "mlp", "memory", "allreduce",
            "scaling"} <= workloads
    allreduce = next(r for r in records if r.id == doc(H200 / "h200-allred.json")["id"])
    assert allreduce.settings["machines"]["vm"]["gpu_name"] == "NVIDIA H200"
    # Every one of them then shows, as a person reads it.
    for rec in records:
        rc, out, err = sb(capsys, "results", "--show", rec.id)
        assert rc == 0 and rec.id[:8] in out, err


def test_every_unsaved_run_file_siliconbench_writes_imports(tmp_path, capsys):
    """siliconbench.core.store.keep_elsewhere writes a run the store could not keep; `siliconbench import`
    is the promised way back, for every workload, the per-host fingerprints of all-reduce and
    scaling runs included."""
    records = [r for f in h200_files() + recorded_files() for r in records_from_file(f)]
    for rec in records:
        if rec.workload in ("allreduce", "scaling") and "machines" not in rec.settings:
            # What today's runner keeps for each host (siliconbench.core.runner._on_rank).
            rec.settings["machines"] = {"vm": dict(rec.machine, siliconbench="0+unknown")}
    kept = [keep_elsewhere(rec, tmp_path) for rec in records]
    assert all(p is not None and p.name.startswith("siliconbench-unsaved-run-") for p in kept)
    rc, out, err = sb(capsys, "import", *kept)
    assert rc == 0, err
    assert out.strip() == f"Imported {len(records)} runs."
    s = Store()
    for rec in records:
        back = s.get(rec.id)
        assert back is not None and back.to_dict() == rec.to_dict()
    s.close()


# ---------------------------------------------------------------- an interrupted run comes back

def partial_and_whole():
    """The LLM run of the H200 (10 rows) as the store kept it when the disk filled after two
    rows, and the whole record the runner wrote beside the store."""
    whole = records_from_file(H200 / "h200-llm8b.json")[0] if h200_files() else None
    partial = copy.deepcopy(whole)
    partial.rows = partial.rows[:2]
    return partial, whole


def test_importing_the_unsaved_file_completes_the_interrupted_run(tmp_path, capsys):
    """Issue 30: 'Imported 0 run(s); 1 were already in the store' kept the 2-row interrupted
    copy, and the rows measured after the disk filled lived only in the file. Here the
    process that began the run is this one, still alive (the app after a failed final save)."""
    partial, whole = partial_and_whole()
    s = Store()
    s.begin_run(partial)          # as siliconbench.core.runner keeps a run from its start
    s.update_run(partial)
    s.close()
    kept = keep_elsewhere(whole, tmp_path)
    rc, out, err = sb(capsys, "import", kept)
    assert rc == 0, err
    assert out.strip() == "Imported 0 runs; completed 1 run kept here as interrupted (the " \
                          "file's record got further)."
    s = Store()
    [back] = s.runs()
    assert back.id == whole.id and back.status == "ok" and len(back.rows) == len(whole.rows)
    assert s.db.execute("SELECT status, imported FROM runs").fetchall() == [("ok", 0)]
    assert s.db.execute("SELECT count(*) FROM live_runs").fetchone()[0] == 0
    s.close()
    rc, out, err = sb(capsys, "import", kept)          # again: nothing changes
    assert rc == 0 and out.strip() == "Imported 0 runs; 1 was already in the store.", err


def test_a_finished_run_is_never_replaced_by_a_partial_copy(tmp_path, capsys):
    partial, whole = partial_and_whole()
    Store().save(whole)
    for copy_ in (partial, copy.deepcopy(whole)):
        copy_.status, copy_.reason = "failed", INTERRUPTED
        path = tmp_path / "copy.json"
        path.write_text(records_to_json([copy_]))
        rc, out, err = sb(capsys, "import", path)
        assert rc == 0 and out.strip() == "Imported 0 runs; 1 was already in the store.", err
    s = Store()
    [back] = s.runs()
    assert back.status == "ok" and len(back.rows) == len(whole.rows)
    s.close()


def test_a_longer_interrupted_copy_replaces_a_shorter_one(tmp_path, capsys):
    partial, whole = partial_and_whole()
    s = Store()
    s.begin_run(partial)
    s.db.execute("DELETE FROM live_runs")   # its process was killed and swept
    s.db.commit()
    s.close()
    longer = copy.deepcopy(whole)
    longer.rows = longer.rows[:5]
    longer.status, longer.reason = "failed", INTERRUPTED
    path = tmp_path / "longer.json"
    path.write_text(records_to_json([longer]))
    rc, out, err = sb(capsys, "import", path)
    assert rc == 0 and "completed 1 run" in out, err
    [back] = Store().runs()
    assert back.status == "failed" and len(back.rows) == 5


# ---------------------------------------------------------------- sense at import

def write(tmp_path: Path, d: dict, name: str = "changed.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(d))
    return path


def refused(capsys, path: Path, *says: str) -> str:
    rc, out, err = sb(capsys, "import", path)
    one_sentence(rc, err, str(path), "nothing was imported", *says)
    assert stored_ids() == set()
    return err


@pytest.mark.parametrize("stem, metric", [("gemm-torch", "tflops"),
                                          ("llm-torch", "decode_tokens_per_s"),
                                          ("bandwidth-torch", "gb_per_s"),
                                          ("infer-torch", "samples_per_s")])
@pytest.mark.parametrize("claim", [-5.0, 0.0])
def test_a_rate_at_or_below_zero_is_refused(tmp_path, capsys, stem, metric, claim):
    """Issue 30: '-5 TFLOPS [-5–-5]' became the headline while compare read the samples."""
    d = doc(FOLDER / f"{stem}.json")
    row = next(r for r in d["rows"] if r["metric"] == metric)
    row["value"] = claim
    if row["stats"]:
        row["stats"].update(median=claim, p25=claim, p75=claim, ci_low=claim, ci_high=claim)
    refused(capsys, write(tmp_path, d), "above zero")


def test_a_value_its_samples_do_not_give_is_refused(tmp_path, capsys):
    d = doc(FOLDER / "gemm-torch.json")
    row = next(r for r in d["rows"] if r["metric"] == "tflops")
    row["value"] *= 10
    refused(capsys, write(tmp_path, d), "samples do not")


def test_the_real_exceptions_to_the_median_still_import(capsys):
    """A latency percentile is not the median of its samples, one rank's bus bandwidth is 0,
    and a training's whole time (train_seconds, no statistics) is not its epochs' median."""
    for path in (H200 / "h200-infer.json", H200 / "h200-allred.json",
                 FOLDER / "mlp-torch.json"):
        records_from_file(path)  # no NotAResultFile
    assert sb(capsys, "import", *h200_files())[0] == 0


def test_two_runs_with_one_id_in_a_file_are_refused(tmp_path, capsys):
    """Issue 30: the second was dropped with '1 were already in the store' into an empty
    store."""
    a, b = doc(FOLDER / "gemm-torch.json"), doc(FOLDER / "bandwidth-torch.json")
    b["id"] = a["id"]
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"format": results.FILE_FORMAT, "schema": 1, "runs": [a, b]}))
    refused(capsys, path, f"two runs with the id {a['id'][:20]}")


def test_an_llm_point_without_its_parameters_is_refused(tmp_path, capsys):
    """Issue 30: it imported, then `results --show` ended in 'internal error: KeyError:
    'prompt''."""
    d = doc(FOLDER / "llm-torch.json")
    next(r for r in d["rows"] if r["metric"] == "prefill_tokens_per_s")["params"] = {}
    refused(capsys, write(tmp_path, d), "lacks the point's preset")


@pytest.mark.parametrize("where, make, says", [
    ("reason", lambda d: d.update(reason="x" * 65_537), "reason is longer than 65,536"),
    ("warning", lambda d: d.update(warnings=["w" * 65_537]),
     "warnings/0 is longer than 65,536"),
    ("warnings", lambda d: d.update(warnings=["a warning"] * 101),
     "warnings has more than 100 items"),
    ("note", lambda d: d["rows"][0].update(note="n" * 4_097), "note is longer than 4,096"),
    ("label", lambda d: d.update(label="L" * 201), "label is longer than 200"),
    ("rows", lambda d: d.update(rows=[d["rows"][0] | {"samples": [], "stats": None}] * 10_001),
     "rows has more than 10,000 items"),
    ("samples", lambda d: d["rows"][0].update(samples=d["rows"][0]["samples"][:1] * 100_001),
     "samples has more than 100,000 items"),
])
def test_text_rows_and_samples_past_any_real_run_are_refused(tmp_path, capsys, where, make,
                                                             says):
    """Issue 30: a 100 MB reason made `results --show` run for minutes; 10^6 rows were
    accepted and every listing then took 25 s. The bounds sit far above any real run's."""
    d = doc(FOLDER / "gemm-torch.json")
    make(d)
    refused(capsys, write(tmp_path, d), says, "more than any real run")


def test_a_file_larger_than_any_result_file_is_not_read(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(results, "MAX_FILE_BYTES", 1000)
    refused(capsys, FOLDER / "gemm-torch.json", "more than any result file (1,000)")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_fifo_or_a_link_to_dev_zero_is_one_sentence_at_once(tmp_path, capsys, kind):
    """Issue 30: a FIFO hung the command for good; a link to /dev/zero read gigabytes, then
    MemoryError."""
    path = tmp_path / "results.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    refused(capsys, path, "not a regular file")


def test_a_refusal_names_each_bad_file_and_the_good_ones_come_in(tmp_path, capsys):
    good = FOLDER / "gemm-torch.json"
    d = doc(FOLDER / "llm-torch.json")
    d["rows"][0]["params"] = {}
    broken, fifo = write(tmp_path, d, "broken.json"), tmp_path / "pipe.json"
    os.mkfifo(fifo)
    rc, out, err = sb(capsys, "import", broken, good, fifo, tmp_path / "gone.json")
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 3 and all(line.endswith("it was left out.") for line in lines), err
    assert [str(broken) in lines[0], str(fifo) in lines[1], "gone.json: no such file" in
            lines[2]] == [True, True, True]
    assert out.strip() == "Imported 1 run; 3 files were refused (named above)."
    assert stored_ids() == {doc(good)["id"]}


def test_the_schema_bounds_are_refused_before_the_sense_checks():
    """A bound breached is said as a bound, with its figure (never the value)."""
    d = doc(FOLDER / "gemm-torch.json")
    d["reason"] = "r" * 70_000
    with pytest.raises(NotAResultFile) as e:
        results.RunRecord.from_dict(d)
    assert str(e.value) == ("it is a damaged run record (reason is longer than 65,536 "
                            "characters, more than any real run)")


def test_the_h200_all_reduce_record_compares_with_itself_from_the_file(tmp_path, capsys):
    """Its one-rank bus bandwidth is 0 in every sample: Compare gives no ratio to a 0 (it
    divided by it: ZeroDivisionError) and judges the other rows."""
    path = H200 / "h200-allred.json"
    h200_files()
    twin = json.loads(path.read_text(encoding="utf-8"))
    twin["id"] = "0" * 32
    other = write(tmp_path, twin, "twin.json")
    rc, out, err = sb(capsys, "compare", path, other, "--json")
    assert rc == 0, err
    cells = [(row["metric"], row["cells"][1]["verdict"]) for row in json.loads(out)["rows"]]
    assert ("busbw", "no ratio: the first side measured 0") in cells
    assert ("algbw", "no significant difference") in cells


def test_the_app_imports_every_record_and_names_the_bad_file(window, store, tmp_path):
    """Issue 31: one refused file cancelled the app's whole import ('Nothing was imported'),
    naming only the first bad file. File > Import with every real record and one bad file."""
    files = h200_files() + recorded_files()
    bad = tmp_path / "notes.json"
    bad.write_text("these are my notes, not a result file")
    assert window.import_files([str(p) for p in [bad, *files]]) is False
    records = [r for f in files for r in records_from_file(f)]
    assert the_sheet(window).text().splitlines() == [
        "notes.json is not a SiliconBench result file: it is not JSON.",
        f"Imported {len(records)} runs; 1 file was refused (named above)."]
    assert {r.id for r in store.runs()} == {r.id for r in records}
    # Listed under Results; the selection stays the user's (issue 41).
    assert {r.id for r in window.results.model.records} == {r.id for r in records}
