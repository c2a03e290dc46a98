"""The scaling workload through the engines' own launchers over loopback: world sizes 1 and 2
from the command, the replicas compared (and a test that the comparison fails when one
replica differs), a rank killed mid-run, a cancel, two loopback hosts from a hostfile. No
process may be left behind (tests/helpers/cli_processes.py)."""

import os
import signal
import threading
import time

import psutil
import pytest

from siliconbench.core.runner import ChildRun, RunSpec
from siliconbench.core.store import Store
from tests.helpers.cli_processes import processes_under, run_cli, wait_until_gone

ENGINES = ["mlx", "torch"]
TINY = {"widths": [32], "batch_size": 16}


@pytest.fixture(autouse=True)
def no_process_left_behind(siliconbench_home, short_protocol):
    yield
    assert wait_until_gone(siliconbench_home) == []


def spec(framework, workload="scaling", quick=True, **params):
    return RunSpec(workload, framework, "cpu", {**TINY, **params}, quick=quick,
                   time_limit_s=300)


def by_world(rec):
    return {(r.metric, r.params["world_size"]): r for r in rec.rows}


HOSTFILE = '{"hosts": [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}, ' \
           '{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}]}'


# MLX's one worker on each of two "hosts" (this machine) from an mlx.launch hostfile: world 1
# runs on the first only. torch's one worker: what the command adds to a world is the same for
# every engine, and each torch rank (torchrun, then 3 CPU-s of imports) costs more than the
# rest of the run; torch's two workers finish in test_replicas_that_differ_are_flagged[torch],
# and torchrun's launch, cancel and kill are tested in test_allreduce. MLX's two workers on one
# host finish in test_replicas_that_differ_are_flagged[mlx].
@pytest.mark.parametrize("framework", ENGINES)
def test_one_and_two_workers_from_the_command(framework, tmp_path):
    layout, worlds = ["--processes", "1"], [1]
    if framework == "mlx":
        (tmp_path / "hosts.json").write_text(HOSTFILE)
        layout, worlds = [*layout, "--hosts", str(tmp_path / "hosts.json")], [1, 2]
    out = run_cli("run", "scaling", "--framework", framework, *layout,
                  "--widths", "32", "--batch-size", "16", "--quick", timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Speedup" in out.stdout and "All-reduce share" in out.stdout
    [rec] = Store().runs()
    assert rec.status == "ok"
    assert rec.settings["world_sizes"] == worlds
    assert sorted(rec.settings["hosts"]) == [str(i) for i in range(len(worlds))]
    rows = by_world(rec)
    for n in worlds:
        total, worker = rows["samples_per_s", n], rows["worker_samples_per_s", n]
        assert total.value > 0 and total.unit == "img/s"
        assert total.samples == pytest.approx([n * s for s in worker.samples])
        assert rows["replica_difference", n].value == 0
        assert all("wrong_result" not in r.flags for r in rec.rows)
        assert 0 < rows["comm_share", n].value
        # speedup per timed block against one worker's median; efficiency = speedup / n
        one = rows["samples_per_s", 1].value
        assert rows["speedup", n].samples == pytest.approx([s / one for s in total.samples])
        assert rows["scaling_efficiency", n].samples == pytest.approx(
            [100 * s / n for s in rows["speedup", n].samples])
    assert rows["speedup", 1].value == pytest.approx(1)


@pytest.fixture
def tampered(extra_workloads):
    extra_workloads("tests.helpers.scaling_tampered")


@pytest.mark.parametrize("framework", ENGINES)
def test_replicas_that_differ_are_flagged(framework, tampered):
    # World 2 alone: world 1 of each engine runs in test_one_and_two_workers_from_the_command.
    rec = ChildRun(spec(framework, "scaling-tampered", processes=2, world_sizes=[2])
                   ).start().wait()
    assert rec.status == "ok", rec.reason
    rows = by_world(rec)
    assert {n for _, n in rows} == {2}
    assert rows["replica_difference", 2].value == pytest.approx(1e-3, rel=0.01)
    for metric in ("samples_per_s", "worker_samples_per_s", "comm_share",
                   "replica_difference"):
        assert "wrong_result" in rows[metric, 2].flags
    assert "weights differ after training" in rows["samples_per_s", 2].note


def _rank(home, rank, timeout=60):
    """The process of a rank of the world running now, once its launcher started it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in processes_under(home):
            try:
                env, cmd = p.environ(), " ".join(p.cmdline())
            except psutil.Error:
                continue
            if (env.get("RANK") or env.get("MLX_RANK")) == str(rank) and "siliconbench.core.worker" in cmd:
                return p
        time.sleep(0.05)
    raise AssertionError(f"rank {rank} never started")


def _in_world_two(framework, then):
    """A run of worlds 1 and 2; once world 2 has begun, call then(child)."""
    seen = threading.Event()

    def on_event(event):
        if event.get("event") == "progress" and \
                event.get("message", "").startswith("2 workers:"):
            seen.set()
    child = ChildRun(spec(framework, processes=2), on_event).start()
    threading.Thread(target=lambda: seen.wait(240) and then(child), daemon=True).start()
    return child.wait()


def test_a_killed_rank_is_named_and_every_other_rank_ends(siliconbench_home):
    """On MLX, as the cancel below: what is scaling's own here is the nested run (this run's
    worker starts one run per world), the same for both engines. torchrun's report of a killed
    rank is read, and its ranks ended, in tests/frameworks/test_allreduce.py."""
    rec = _in_world_two("mlx",
                        lambda child: os.kill(_rank(siliconbench_home, 1).pid, signal.SIGKILL))
    assert rec.status == "failed"
    assert rec.reason == "Rank 1 of 2 (on 127.0.0.1) was killed (SIGKILL); every other rank " \
                         "was ended."
    assert {r.params["world_size"] for r in rec.rows} == {1}   # world 1's rows are kept


def test_cancel_ends_every_rank():
    rec = _in_world_two("mlx", lambda child: child.cancel())
    assert rec.status == "cancelled"
    assert {r.params["world_size"] for r in rec.rows} == {1}


def test_a_world_size_the_ranks_cannot_make_is_one_sentence():
    # The layout check is the same for both engines: on MLX, whose child starts ~3 CPU-s
    # cheaper than one that imports torch.
    out = run_cli("run", "scaling", "--framework", "mlx", "--processes", "2",
                  "--world-sizes", "1,4", "--quick")
    assert out.returncode == 2
    assert out.stderr.strip().endswith("A world of 4 workers needs more ranks than the 2 "
                                       "given (2 on each of 1 hosts).")
