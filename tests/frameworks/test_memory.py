"""The memory workload: the doubling-then-bisection search, how a probe's record reads (fits,
out of memory, killed, other failure), the host-memory watch, and real probes in child
processes through the command, one of them out of memory."""

import importlib.util
import json
import sys
import time
from types import SimpleNamespace

import pytest

from siliconbench.core.results import Row
from siliconbench.core.store import Store
from siliconbench.core.workloads import memory
from tests.helpers.torch_cpu import run_cli, run_limited


def fake_probe(largest_fit: int, other_failure_at: int | None = None):
    tried = []

    def probe(batch_size: int) -> memory.Probe:
        tried.append(batch_size)
        if other_failure_at is not None and batch_size >= other_failure_at:
            return memory.Probe(batch_size, False, "an op is not supported", False)
        fits = batch_size <= largest_fit
        return memory.Probe(batch_size, fits, None if fits else "out of memory", not fits)
    return probe, tried


def test_doubling_then_bisection():
    probe, tried = fake_probe(37)
    assert memory.search(probe, 2, 4096, 3) == (36, 40)
    assert tried == [2, 4, 8, 16, 32, 64, 48, 40, 36]


def test_bisection_stops_when_adjacent():
    probe, tried = fake_probe(5)
    assert memory.search(probe, 2, 4096, 10) == (5, 6)
    assert tried == [2, 4, 8, 6, 5]


def test_everything_fits_up_to_the_limit_which_is_tried_itself():
    probe, tried = fake_probe(10_000)
    assert memory.search(probe, 2, 100, 3) == (100, None)
    assert tried == [2, 4, 8, 16, 32, 64, 100]


def test_a_failure_other_than_memory_ends_the_search():
    probe, tried = fake_probe(1000, other_failure_at=16)
    assert memory.search(probe, 2, 4096, 3) == (8, 16)
    assert tried == [2, 4, 8, 16]


def record(status: str, reason: str | None = None, rows=()):
    return SimpleNamespace(status=status, reason=reason, rows=list(rows))


def test_how_a_probe_record_reads():
    rows = [Row("samples_per_s", 10.0, "img/s", {}), Row("step_time", 1.0, "ms", {}),
            Row("peak_memory", 1e9, "bytes", {})]
    ok = memory.outcome(8, record("ok", rows=rows), None)
    assert ok.fits and [r.metric for r in ok.rows] == ["samples_per_s", "peak_memory"]
    oom = memory.outcome(8, record("failed", "out of memory at batch size 8 (...)"), None)
    assert not oom.fits and oom.out_of_memory
    killed = memory.outcome(8, record("failed", "the run's process was killed (SIGKILL), most "
                                                "likely by the system"), None)
    assert killed.out_of_memory
    swapping = memory.outcome(8, record("cancelled", "cancelled by the user"),
                              "the system swapped heavily (2 GB swapped in)")
    assert swapping.out_of_memory and swapping.reason.startswith("the system swapped")
    other = memory.outcome(8, record("failed", "RuntimeError: bad op"), None)
    assert not other.fits and not other.out_of_memory


def test_host_memory_watch_cancels_a_probe_when_memory_runs_short(monkeypatch):
    import psutil
    monkeypatch.setattr(memory, "WATCH_INTERVAL_S", 0.01)
    swap = SimpleNamespace(sin=0)
    monkeypatch.setattr(psutil, "swap_memory", lambda: swap)
    monkeypatch.setattr(psutil, "virtual_memory",
                        lambda: SimpleNamespace(total=16 << 30, available=8 << 30))
    child = SimpleNamespace(cancelled=False)
    child.cancel = lambda: setattr(child, "cancelled", True)
    with memory.HostMemoryWatch(child) as watch:
        swap.sin = 3 << 30
        for _ in range(500):
            if child.cancelled:
                break
            time.sleep(0.01)
    assert child.cancelled and watch.reason == "the system swapped heavily (3 GB swapped in)"

    monkeypatch.setattr(psutil, "virtual_memory",
                        lambda: SimpleNamespace(total=16 << 30, available=100 << 20))
    child.cancelled = False
    with memory.HostMemoryWatch(child) as watch:
        deadline = time.monotonic() + 60
        while not child.cancelled:
            assert time.monotonic() < deadline, "the watch did not cancel the run in 60 s"
            time.sleep(0.01)
    assert watch.reason == "the system ran low on memory (100 MB left)"


# The search with real probes: doubled from 2, then the limit itself (a PyTorch probe costs a
# third of a TensorFlow one here, so the search's several probes are PyTorch's).
@pytest.mark.usefixtures("short_protocol")   # the probes' rows, not their numbers
def test_probes_run_in_child_processes_through_the_command(capsys):
    code, rec, err = run_cli(capsys, "memory", "--model", "mobilenet_v2", "--image-size", "32",
                             "--start-batch", "2", "--max-batch", "3")
    assert code == 0, err
    *probes, final = rec["rows"]
    assert [(r["metric"], r["params"]["batch_size"], r["params"]["probe"]) for r in probes] == [
        ("samples_per_s", 2, 1), ("peak_memory", 2, 1),
        ("samples_per_s", 3, 2), ("peak_memory", 3, 2)]
    assert all(r["value"] > 0 for r in probes)
    assert all(r["samples"] for r in probes if r["metric"] == "samples_per_s")
    assert final["metric"] == "max_batch_size" and final["value"] == 3
    assert "up to --max-batch 3" in final["note"]
    assert Store().runs()[0].workload == "memory"      # the probes are not kept as runs


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_DATA bounds mmap only on Linux")
def test_out_of_memory_at_the_first_probe_fails_the_run_with_its_row(tmp_path):
    r = run_limited(["memory", "--model", "mobilenet_v2", "--image-size", "32",
                     "--start-batch", "4096"], tmp_path, 1200 << 20)
    assert r.returncode == 1, r.stderr
    rec = json.loads(r.stdout)
    assert rec["status"] == "failed"
    assert rec["reason"].startswith("out of memory at batch size 4096 (")
    assert rec["reason"].count("out of memory") == 1
    [row] = rec["rows"]
    assert row["value"] is None and row["params"]["batch_size"] == 4096
    assert row["note"].startswith("out of memory")


def test_start_above_the_limit_is_a_usage_error(capsys):
    code, _, err = run_cli(capsys, "memory", "--start-batch", "64", "--max-batch", "8")
    assert code == 2 and "--start-batch (64) must be at most --max-batch (8)." in err


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None,
                    reason="TensorFlow is not installed")
def test_the_search_runs_on_tensorflow_too(capsys):
    # One probe (a TensorFlow child costs some 15 CPU-seconds here): the search over several
    # is the framework-neutral code the PyTorch test above runs for real.
    code, rec, err = run_cli(capsys, "memory", "--framework", "tensorflow", "--model",
                             "mobilenet_v2", "--image-size", "32", "--start-batch", "2",
                             "--max-batch", "2")
    assert code == 0, err
    assert rec["framework"] == "tensorflow"
    rate, memory_row, final = rec["rows"]
    assert rate["metric"] == "samples_per_s" and rate["params"]["batch_size"] == 2
    assert rate["value"] > 0 and rate["samples"]
    assert memory_row["metric"] == "peak_memory" and memory_row["value"] > 0
    assert final["metric"] == "max_batch_size" and final["value"] == 2


@pytest.mark.skipif(importlib.util.find_spec("mlx") is None, reason="MLX is not installed")
def test_a_probe_the_framework_refuses_is_one_sentence_and_exit_2(capsys):
    code, _, err = run_cli(capsys, "memory", "--framework", "mlx", "--model", "resnet50")
    assert code == 2
    assert err.strip() == "siliconbench: resnet50 is not available on MLX; choose distilbert " \
                          "or bert-large."


def test_mlx_declares_the_models_its_train_part_builds():
    """child.prepare refuses other models from this list before any estimate: it must be
    what MLX's train part builds."""
    from siliconbench.core.frameworks import FRAMEWORKS
    from siliconbench.core.kit.encoders import ENCODERS
    assert FRAMEWORKS["mlx"].train_models == tuple(ENCODERS)
