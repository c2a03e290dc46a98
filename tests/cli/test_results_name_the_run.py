"""`siliconbench results` names what each run measured as the app's Results do (the Workload
column, store_schema.run_kind): a TF32 GEMM is not read as a plain float32 one, a sustained run
says so, with the precision its intervals measured. On real records: the H200's TF32 GEMM and
a 1-minute sustained GEMM of this CPU (tests/data/sustained)."""

from __future__ import annotations

import json
from pathlib import Path

from siliconbench.core.results import RunRecord
from siliconbench.gui.results_model import workload_text
from tests.helpers.cli_processes import cli

DATA = Path(__file__).resolve().parents[1] / "data"
FILES = (DATA / "h200" / "h200-gemmtf32.json", DATA / "sustained" / "gemm-cpu-1min.json")


def test_results_name_tf32_and_sustained_runs_as_the_window_does(capsys, monkeypatch,
                                                                  tmp_path):
    monkeypatch.setenv("COLUMNS", "240")      # no cell folded onto two lines
    code, _, err = cli(capsys, monkeypatch, "import", *map(str, FILES), home=tmp_path)
    assert code == 0, err
    code, out, err = cli(capsys, monkeypatch, "results", home=tmp_path)
    assert code == 0, err
    assert "gemm · float32 · TF32" in out
    assert "gemm · float32 · sustained 1 min" in out
    for path in FILES:                         # the window's Workload column, for each
        rec = RunRecord.from_dict(json.loads(path.read_text("utf-8")))
        kind = workload_text(rec).split(" · ", 1)[1]
        assert f"gemm · {kind}" in out
