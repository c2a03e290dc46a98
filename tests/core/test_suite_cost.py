"""benchmarks/suite_cost.py: its recorder, in real processes, and how it files them."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from tests.helpers.cli_processes import ROOT

_spec = importlib.util.spec_from_file_location("suite_cost", ROOT / "benchmarks" / "suite_cost.py")
suite_cost = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(suite_cost)


def _recorded(tmp_path, code: str, log=None) -> subprocess.CompletedProcess:
    (tmp_path / "sitecustomize.py").write_text(suite_cost.RECORDER)
    env = dict(os.environ, PYTHONPATH=str(tmp_path),
               **{suite_cost.LOG_ENV: str(log or tmp_path / "log.jsonl")})
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60)


def test_a_process_records_its_frameworks_and_cpu_however_it_ends(tmp_path):
    log = tmp_path / "log.jsonl"
    log.touch()
    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass\n"
    assert _recorded(tmp_path, "import mlx.core\n" + spin).returncode == 0
    assert _recorded(tmp_path, spin + "import os\nos._exit(3)").returncode == 3
    first, second = [json.loads(line) for line in log.read_text().splitlines()]
    assert first["mods"] == ["mlx.core"] and second["mods"] == []
    assert first["cpu"] >= 0.2 and second["cpu"] >= 0.2
    assert not first["pytest"] and not second["pytest"]


def test_the_recorder_never_writes_through_a_link_nor_makes_its_log(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("kept\n")
    link = tmp_path / "log.jsonl"
    link.symlink_to(outside)
    assert _recorded(tmp_path, "pass", log=link).returncode == 0
    assert outside.read_text() == "kept\n"
    missing = tmp_path / "missing.jsonl"
    assert _recorded(tmp_path, "pass", log=missing).returncode == 0
    assert not missing.exists()


def test_processes_are_filed_by_their_frameworks_with_the_pytest_ones_apart():
    records = [{"cpu": 3.0, "mods": ["torch"], "pytest": False},
               {"cpu": 4.0, "mods": ["torch"], "pytest": False},
               {"cpu": 90.0, "mods": ["torch"], "pytest": True},
               {"cpu": 0.3, "mods": [], "pytest": False},
               {"cpu": 0.2, "mods": ["coremltools"], "pytest": False},
               {"cpu": 1.5, "mods": ["mlx.core", "mlx_lm"], "pytest": False}]
    costs = {("torch",): 2.5, (): 0.02, ("coremltools",): None, ("mlx.core", "mlx_lm"): 3.0}
    rows = suite_cost.summarise(records, costs)
    assert [(r["pytest"], r["mods"], r["processes"]) for r in rows] == [
        (True, ("torch",), 1), (False, ("torch",), 2), (False, ("mlx.core", "mlx_lm"), 1),
        (False, (), 1), (False, ("coremltools",), 1)]
    assert rows[1]["cpu"] == pytest.approx(7.0) and rows[1]["imports"] == pytest.approx(5.0)
    # An import never counts for more than the processes' own CPU (an MLX run hides torch).
    assert rows[2]["imports"] == pytest.approx(1.5)
    assert rows[3]["imports"] == pytest.approx(0.02) and rows[4]["imports"] is None
