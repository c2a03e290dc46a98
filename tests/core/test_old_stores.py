"""A store written before a reshape of the code opens after it, unchanged: the same runs, the
same exports byte for byte (but the JSON's time of export), and the window shows them (tests/data/stores/README.md says how
the store was made)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from siliconbench.core.catalogue import headline
from tests.helpers.cli_processes import run_cli

OLD = Path(__file__).parent.parent / "data" / "stores"


@pytest.fixture
def store(siliconbench_home):
    """This test's store: a copy of the store the pre-reshape code wrote."""
    from siliconbench.core.store import Store
    siliconbench_home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(OLD / "pre-reshape.sqlite3", siliconbench_home / "results.sqlite3")
    s = Store(siliconbench_home / "results.sqlite3")
    yield s
    s.close()


def test_every_old_run_reads_back_as_it_was_written(store):
    raw = sqlite3.connect(OLD / "pre-reshape.sqlite3")
    written = {run_id: record for run_id, record in raw.execute("SELECT id, record FROM runs")}
    raw.close()
    runs = store.runs()
    assert store.unreadable == []
    assert {r.id for r in runs} == set(written) and len(runs) == 5
    for rec in runs:
        assert rec.to_dict() == json.loads(written[rec.id])
    statuses = sorted(r.status for r in runs)
    assert statuses == ["failed", "ok", "ok", "ok", "ok"]
    assert all(headline(r) is not None for r in runs)


@pytest.mark.parametrize("suffix", ["csv", "json"])
def test_todays_export_of_an_old_store_is_the_old_one(store, tmp_path, suffix):
    out = tmp_path / f"runs.{suffix}"
    result = run_cli("export", "-o", str(out))
    assert result.returncode == 0, result.stderr
    new, old = out.read_text(), (OLD / f"pre-reshape.{suffix}").read_text()
    if suffix == "json":    # the one line that differs: when the file was written
        new, old = (text.split("\n", 2)[2] for text in (new, old))
        assert '"exported_at"' not in new
    else:                   # since issue 41 a column no run fills is left out (pct_of_peak)
        old = _without_empty_columns(old)
    assert new == old


def _without_empty_columns(text: str) -> str:
    import csv
    import io
    lines = list(csv.reader(io.StringIO(text, newline="")))
    keep = [j for j in range(len(lines[0])) if any(line[j] for line in lines[1:])]
    assert len(keep) == len(lines[0]) - 1       # the old file had one: % of peak, for CPUs
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows([[line[j] for j in keep]
                                                     for line in lines])
    return out.getvalue()


def test_the_window_lists_and_draws_the_old_runs(window, qtbot):
    from siliconbench.gui.results_browser import BEST, cell_text
    window.results.reload()
    qtbot.waitUntil(lambda: window.results.model.rowCount() == 5, timeout=10_000)
    gemm = next(r for r in window.store.runs() if r.label == "pre-reshape")
    window.results.select_ids({gemm.id})
    chart = window.charts.curves["tflops"]
    qtbot.waitUntil(chart.has_data, timeout=10_000)
    assert chart.point_count() == 2
    assert "TFLOPS [" in cell_text(gemm, BEST)
