"""Run records an NVIDIA H200 wrote (tests/data/h200, its
README says which command made each), replayed beside this machine's CPU runs
(tests/helpers/recorded.py) so the views are tested on runs 1,000x apart; and those an NVIDIA H100
host wrote (tests/data/h100), its GPU's and its own Xeon CPU's."""

from __future__ import annotations

from pathlib import Path

from siliconbench.core.results import RunRecord, records_from_file
from tests.helpers.recorded import every_run

FOLDER = Path(__file__).resolve().parents[1] / "data" / "h200"
H100 = FOLDER.parent / "h100"


def h200_stems() -> list[str]:
    return sorted(p.stem for p in FOLDER.glob("*.json"))


def h200(stem: str) -> RunRecord:
    """A fresh copy of one H200 run, read as import reads a file (siliconbench.core.results)."""
    (rec,) = records_from_file(FOLDER / f"{stem}.json")
    return rec


def h200_runs() -> list[RunRecord]:
    return [h200(s) for s in h200_stems()]


def gpu_and_cpu() -> list[RunRecord]:
    """Every H200 run and every CPU run recorded here, together: what a person selects."""
    return h200_runs() + every_run()


def h100(stem: str) -> list[RunRecord]:
    """The runs of one H100 file (h100-quick-suite.json holds nine, CPU and GPU)."""
    return records_from_file(H100 / f"{stem}.json")


def h100_runs() -> list[RunRecord]:
    return [r for p in sorted(H100.glob("*.json")) for r in records_from_file(p)]
