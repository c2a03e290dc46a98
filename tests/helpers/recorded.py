"""Run records that real runs wrote (tests/data/records, made by make_records.py there):
what the view tests replay instead of rows typed by hand."""

from __future__ import annotations

import json
from pathlib import Path

from siliconbench.core.results import RunRecord, records_from_file

FOLDER = Path(__file__).resolve().parents[1] / "data" / "records"


def recorded(stem: str) -> RunRecord:
    """A fresh copy of one recorded run (callers may change it)."""
    return RunRecord.from_dict(json.loads((FOLDER / f"{stem}.json").read_text("utf-8")))


def stems() -> list[str]:
    return sorted(p.stem for p in FOLDER.glob("*.json"))


def every_run() -> list[RunRecord]:
    return [recorded(s) for s in stems()]


def real_runs() -> list:
    return [r for stem in ("gemm-torch", "bandwidth-torch", "llm-torch")
            for r in records_from_file(FOLDER / f"{stem}.json")]


def gemm_runs() -> list[RunRecord]:
    """Two quick GEMM runs of this machine on torch and one on MLX."""
    return [recorded("gemm-torch"), recorded("gemm-torch-second"), recorded("gemm-mlx")]
