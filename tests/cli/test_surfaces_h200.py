"""The H200's records (tests/data/h200) through the command's surfaces, as a user gets them:
imported into a store, then `siliconbench results`, `results --show`, `results --json` and
`export` to CSV and JSON. Every power and efficiency figure the app's table marks 'power not
trusted' carries that mark on each of them (siliconbench.core.results.power_doubt), and every
run is listed under the GPU that ran it, not the host's CPU."""

import csv
import io
import json

import pytest

from tests.helpers.cli_processes import cli_in_process
from tests.helpers.h200_records import FOLDER, h200_runs

# The app's words, and what it reads them from (the telemetry's rows and their marks of how
# the power was measured), written out here so that the test stands apart from the code.
UNTRUSTED_POWER = "power not trusted"
UNTRUSTED = f"{UNTRUSTED_POWER}: "
POWER_METRICS = ("power", "joules_per_sample", "samples_per_watt", "tflops_per_watt")
TRUST_FLAGS = {"energy_counter", "power_samples"}


def untrusted(row) -> bool:
    """A power or efficiency row whose power no energy counter (nor enough samples inside
    its point) measured: the rows of these records the app's table shows as a dash."""
    return row.metric in POWER_METRICS and not TRUST_FLAGS & set(row.flags)


@pytest.fixture
def home(tmp_path, capsys, monkeypatch):
    """A store holding the H200's records, imported by the command."""
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "1000")      # one table line per row: nothing wraps
    rc, out, err = cli_in_process(capsys, "import", *sorted(FOLDER.glob("*.json")))
    assert rc == 0, err
    return tmp_path


def cli(capsys, *args) -> str:
    rc, out, err = cli_in_process(capsys, *args)
    assert rc == 0, err
    return out


def test_the_records_hold_untrusted_power_rows():
    """What the tests below stand on: the H200's power rows are one-sample powers."""
    rows = [row for rec in h200_runs() for row in rec.rows if untrusted(row)]
    assert len(rows) >= 20
    assert any(row.metric == "tflops_per_watt" and round(row.value, 2) == 4.59 for row in rows)


def test_csv_export_flags_every_untrusted_power_row(home, tmp_path, capsys):
    out = tmp_path / "h200.csv"
    cli(capsys, "export", "-o", str(out))
    lines = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    by_run = {rec.id: rec for rec in h200_runs()}
    assert len(lines) == sum(len(rec.rows) for rec in by_run.values())
    seen = 0
    for rec in by_run.values():
        mine = [line for line in lines if line["run_id"] == rec.id]
        assert len(mine) == len(rec.rows)
        for row, line in zip(rec.rows, mine):       # the CSV keeps the record's row order
            assert line["metric"] == row.metric
            flags = line["flags"].split(";") if line["flags"] else []
            if untrusted(row):
                seen += 1
                # The raw figure stays, at full precision, with its doubt beside it.
                assert float(line["value"]) == row.value
                assert [f for f in flags if f.startswith(UNTRUSTED)], line
            else:
                assert not any(f.startswith(UNTRUSTED_POWER) for f in flags), line
    assert seen >= 20


def test_json_export_keeps_the_figure_and_carries_the_flag(home, tmp_path, capsys):
    out = tmp_path / "h200.json"
    cli(capsys, "export", "-o", str(out))
    runs = {r["id"]: r for r in json.loads(out.read_text(encoding="utf-8"))["runs"]}
    listed = {r["id"]: r for r in json.loads(cli(capsys, "results", "--json"))}
    for rec in h200_runs():
        for doc in (runs[rec.id], listed[rec.id]):
            for row, written in zip(rec.rows, doc["rows"]):
                assert written["value"] == row.value
                assert any(f.startswith(UNTRUSTED) for f in written["flags"]) == untrusted(row)
    # Import reads the export back (the flag within the schema's bounds), and the doubt stays
    # one flag when that record is exported again.
    from siliconbench.core.export import to_json
    from siliconbench.core.results import records_from_file
    again = json.loads(to_json(records_from_file(out)))["runs"]
    for rec in again:
        for row in rec["rows"]:
            marks = sum(f.startswith(UNTRUSTED_POWER) for f in row["flags"])
            assert marks == (row["metric"] in POWER_METRICS
                             and not TRUST_FLAGS & set(row["flags"]))


def test_results_show_flags_every_untrusted_power_row(home, capsys):
    from siliconbench.core.numbers import metric_title, value_text
    for rec in h200_runs():
        printed = cli(capsys, "results", "--show", rec.id).splitlines()
        for row in rec.rows:
            if not untrusted(row):
                continue
            # The table's line of this row: its metric and its point's parameters.
            cells = [metric_title(row.metric), *map(str, row.params.values())]
            mine = [line for line in printed if all(c in line for c in cells)
                    and UNTRUSTED in line]
            assert mine, (rec.workload, row.metric, row.params)
            assert not any(value_text(row) in line for line in mine)   # never a bare figure
        assert sum(UNTRUSTED in line for line in printed) == \
            sum(untrusted(row) for row in rec.rows)
        assert "Tflops per watt" not in "\n".join(printed)


def test_results_lists_each_run_under_the_gpu_that_ran_it(home, capsys):
    printed = cli(capsys, "results").splitlines()
    for rec in h200_runs():
        line = next(line for line in printed if rec.id[:8] in line)
        assert "NVIDIA H200 (torch cuda)" in line, line
    # The host's CPU is the machine, beside the device, never in its place.
    assert all("Xeon" in line for line in printed if "NVIDIA H200" in line)
