"""Every command reads the same from the shared store as from the embedded one: real records
(tests/data/records, tests/data/h200) saved and imported into both, then `results`, `export`
and `compare` run against each and their outputs compared byte for byte (the listing of the
shared store adds who sent each run)."""

from __future__ import annotations

import json
import re

import pytest

from siliconbench.core import cli
from siliconbench.core.run_store import open_store
from siliconbench.core.store import Store
from siliconbench.core.store_sync import SharedStore
from tests.helpers.h200_records import h200_runs
from tests.helpers.recorded import every_run, recorded


def _fill(store, records) -> None:
    """Half saved as runs made here, half imported, as a machine's store fills."""
    half = len(records) // 2
    for rec in records[:half]:
        store.save(rec)
    store.import_records(records[half:])


def _command(capsys, argv: list[str]) -> tuple[int, str]:
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out + (out.err if code else "")


def test_every_command_reads_the_same_from_either_store(shared, tmp_path, monkeypatch, capsys):
    records = every_run() + h200_runs()
    alone = tmp_path / "alone" / "results.sqlite3"
    local = Store(alone)
    _fill(local, records)
    local.close()
    monkeypatch.setenv("SILICONBENCH_STORE", shared.url("mach_a"))
    lab = open_store()
    assert isinstance(lab, SharedStore)
    _fill(lab, every_run() + h200_runs())
    lab.close()
    assert shared.count() == len(records)

    a, b = (recorded(stem).id[:8] for stem in ("gemm-torch", "gemm-torch-second"))
    commands = [["results", "--json", "--limit", "1000"], ["results", "--limit", "1000"],
                ["results", "--show", a], ["compare", a, b, "--json"],
                ["export", "-o", "{}/runs.json"], ["export", "-o", "{}/runs.csv"]]
    outputs = {}
    for where in ("postgres", "sqlite"):
        if where == "sqlite":   # the same runs in a file: SILICONBENCH_STORE names none
            monkeypatch.delenv("SILICONBENCH_STORE")
            monkeypatch.setenv("SILICONBENCH_HOME", str(alone.parent))
        folder = tmp_path / where
        folder.mkdir()
        for argv in commands:
            argv = [arg.format(folder) for arg in argv]
            code, out = _command(capsys, argv)
            assert code == 0, (argv, out)
            if argv[0] == "export":
                out = re.sub(r'"exported_at": "[^"]*"', "",   # the moment of the export
                             (folder / argv[-1].rsplit("/", 1)[1]).read_text())
            outputs[where, " ".join(argv).replace(str(folder), "")] = out
    for (where, argv), out in outputs.items():
        if where == "sqlite" and argv == "results --limit 1000":
            # The shared store's listing adds who sent each run (issue 51): the same runs,
            # each with its sender.
            table = outputs["postgres", argv]
            assert "sent by" in table and table.count("mach_a") == len(records)
            assert all(r.id[:8] in table and r.id[:8] in out for r in records)
        elif where == "sqlite":
            assert outputs["postgres", argv] == out, argv
    listed = json.loads(outputs["postgres", "results --json --limit 1000"])
    assert sorted(r["id"] for r in listed) == sorted(r.id for r in records)


def test_the_store_flag_picks_the_shared_store_on_any_command(shared, capsys):
    records = h200_runs()
    lab = open_store(shared.url("mach_a"))
    lab.import_records(records)
    lab.close()
    for argv in (["--store", shared.url("mach_a"), "results", "--json"],
                 ["results", "--json", "--store", shared.url("mach_b")]):
        code, out = _command(capsys, argv)
        assert code == 0
        assert sorted(r["id"] for r in json.loads(out)) == sorted(r.id for r in records)


@pytest.mark.parametrize("address", ["/a/file.sqlite3", "results"])
def test_a_store_flag_that_names_no_server_is_one_sentence(address, capsys):
    assert cli.main(["results", "--store", address]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--store takes a PostgreSQL address" in err
