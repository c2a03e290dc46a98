"""What the Keras and MLX workload tests check alike: a run through the CLI in a subprocess
(TensorFlow and MLX load only in child processes) and the rows torch's workloads give."""

import json
import math
from pathlib import Path

import pytest

from siliconbench.core.measure import SETTINGS_ENV
from tests.conftest import SHORT_PROTOCOL
from tests.helpers.cli_processes import sb, shared

TRAIN_METRICS = {"samples_per_s", "step_time", "tflops", "peak_memory"}
MLP_METRICS = {"samples_per_s", "step_time", "tflops", "train_seconds", "epoch_seconds",
               "us_per_sample", "final_loss", "final_accuracy"}
TINY_BERT = ["--model", "distilbert", "--layers", "1", "--seq-len", "16", "--batch-size", "2"]
# Eight steps of four images an epoch: MLX's CPU multiplies with a reference BLAS, where one
# 3000-1000 step of 32 images costs about a second.
TINY_SAMPLES = 32
TINY_MLP = ["--samples", str(TINY_SAMPLES), "--batch-size", "4", "--epochs", "1", "--depths",
            "2"]


def run(home, *args: str) -> dict:
    """`siliconbench run ARGS --quick --json` on the CPU: the record of a run that went well.
    The tests check its rows, checks and settings, not its numbers, so it runs the short
    protocol (conftest.SHORT_PROTOCOL): a one-layer DistilBERT step takes 0.3-1 s here, and
    the mixed-precision --check run cost 27.5 CPU-s on TensorFlow and 16.5 on MLX with QUICK's
    caps, 23.3 and 15.0 with these."""
    r = sb("run", *args, "--device", "cpu", "--quick", "--json", home=home,
           env_extra={SETTINGS_ENV: SHORT_PROTOCOL})
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["status"] == "ok", rec.get("reason")
    return rec


def shared_run(tmp_path_factory, name: str, *args: str) -> dict:
    """run(ARGS) once per test session, for every test that asserts on it (a TensorFlow or MLX
    run costs seconds of imports, tracing and steps): tests.helpers.cli_processes.shared."""
    return shared(tmp_path_factory, f"run-{name}", lambda home: run(home, *args))[1]


def by_metric(rec: dict) -> dict:
    """The rows of the published point: per-epoch rows and the --check row (checked by
    check_loss_row) left out, so one run with --check serves both kinds of test."""
    return {row["metric"]: row for row in rec["rows"]
            if "epoch" not in row["params"] and "check_steps" not in row["params"]}


def check_train(rec: dict, point: dict, unit: str, metrics=TRAIN_METRICS) -> dict:
    """Every row at the published point; throughput with its per-block samples."""
    rows = by_metric(rec)
    assert set(rows) == metrics
    assert all(row["params"] == point for row in rows.values())
    speed = rows["samples_per_s"]
    assert speed["unit"] == unit and speed["value"] > 0
    assert len(speed["samples"]) == speed["stats"]["n"] >= 3
    assert rows["step_time"]["unit"] == "ms"
    return rows


def check_mlp(rec: dict, preset: str) -> None:
    """The torch mlp's rows, flagged synthetic (no CIFAR-10 in a test's home)."""
    point = {"preset": preset, "depth": 2} if preset == "depth-sweep" else {"preset": preset}
    rows = check_train(rec, point, "img/s", MLP_METRICS)
    assert rec["settings"]["cifar"] == "synthetic" and rec["settings"]["samples"] == TINY_SAMPLES
    assert all("synthetic" in row["flags"] for row in rec["rows"])
    assert len(rows["train_seconds"]["samples"]) == 1                  # one epoch
    assert 0 <= rows["final_accuracy"]["value"] <= 1 and rows["final_loss"]["value"] > 0
    if preset == "3000-1000":
        assert {(r["metric"], r["params"]["epoch"]) for r in rec["rows"]
                if "epoch" in r["params"]} == {("loss", 1), ("accuracy", 1)}


def check_loss_row(rec: dict, point: dict, steps: int = 5) -> dict:
    """The --check row at the check's point, and both loss curves, finite, in the record."""
    [row] = [r for r in rec["rows"] if r["metric"] == "loss_rel_diff"]
    assert row["params"] == {**point, "check_steps": steps}
    assert row["note"].startswith(f"largest relative difference of {steps} training losses")
    losses = rec["settings"]["check_losses"]
    assert len(losses["device"]) == len(losses["cpu"]) == steps
    assert all(math.isfinite(v) for v in losses["device"] + losses["cpu"])
    return row


@pytest.fixture(scope="module")
def cpu_read(tmp_path_factory) -> dict:
    """A bandwidth run of this machine's CPU, its triad and read kernel at arrays past 4 times the
    last-level cache (a torch run through the CLI, in the short protocol): the bound a CPU's
    decode then divides, without measuring its own. Made once a session
    (tests.helpers.cli_processes.shared) and kept in each test's store by store_a_triad: each test
    made its own, 3-4.5 CPU-s each. A CPU run of any framework divides by it."""
    from siliconbench.core.kit.ceilings import last_level_cache

    def make(home: Path) -> dict:
        size = max(64, -(-4 * (last_level_cache() or 0) // 2**20))
        r = sb("run", "bandwidth", "--framework", "torch", "--device", "cpu", "--sizes-mb",
               str(size), "--ops", "triad,read", "--quick", "--json", home=home,
               env_extra={SETTINGS_ENV: SHORT_PROTOCOL})
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    return shared(tmp_path_factory, "cpu-read", make)[1]


def store_a_triad(home: Path, record: dict) -> float:
    """The cpu_read run kept in the store at `home`, as if measured there: the bound a CPU's
    decode then divides by, the higher of its read and triad (ceilings.decode_bound). GB/s."""
    from siliconbench.core.results import RunRecord
    from siliconbench.core.store import Store
    store = Store(home / "results.sqlite3")
    try:
        store.save(RunRecord.from_dict(record))
    finally:
        store.close()
    return max(row["value"] for row in record["rows"])
