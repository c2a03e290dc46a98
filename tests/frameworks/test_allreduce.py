"""The allreduce workload through the engines' own launchers (mlx.launch, torchrun) over
loopback: right sums at world sizes 1 and 2, a wrong sum flagged, and the failures: a rank
killed mid-run, a port in use, no launcher, a cancel. No process may be left behind: every
process a run starts carries the test's SILICONBENCH_HOME (tests/helpers/cli_processes.py)."""

import os
import signal
import socket
import threading

import pytest

from siliconbench.core.runner import ChildRun, RunSpec, UsageError
from siliconbench.core.store import Store
from tests.helpers.cli_processes import run_cli, wait_until_gone

ENGINES = ["mlx", "torch"]
TINY = {"sizes": [64], "dtypes": ["float32"]}


@pytest.fixture(autouse=True)
def no_process_left_behind(siliconbench_home, short_protocol):
    yield
    assert wait_until_gone(siliconbench_home) == []


def spec(framework, **params):
    return RunSpec("allreduce", framework, "cpu", {**TINY, **params}, quick=True,
                   time_limit_s=300)


HOSTFILE = '{"hosts": [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}, ' \
           '{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}]}'


def two_loopback_hosts(framework, folder):
    """The multi-host path with two "hosts" that are this machine, one rank on each: MLX's
    from an mlx.launch hostfile, torch's one torchrun per host (siliconbench.core.frameworks.torch.nodes)."""
    if framework == "torch":
        return "127.0.0.1,127.0.0.1"
    (folder / "hosts.json").write_text(HOSTFILE)
    return str(folder / "hosts.json")


# Two ranks from the command, on two loopback hosts: the layout whose full run nothing else
# makes. Two ranks on one host sum right in test_a_killed_rank_is_named_and_every_other_rank_ends
# and finish in test_scaling.py (test_replicas_that_differ_are_flagged).
@pytest.mark.parametrize("framework", ENGINES)
def test_two_ranks_from_the_command_sum_right(framework, tmp_path):
    hosts = two_loopback_hosts(framework, tmp_path)
    planned = ChildRun(spec(framework, processes=1, hosts=hosts))._launch.command
    if framework == "torch":
        assert planned[1:3] == ["-m", "siliconbench.core.frameworks.torch.nodes"]
    else:
        assert "--hostfile" in planned
    out = run_cli("run", "allreduce", "--framework", framework, "--processes", "1",
                  "--hosts", hosts,
                  "--sizes", "64,4096", "--dtypes", "float32,bfloat16", "--quick", timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Bus bandwidth" in out.stdout and "Latency" in out.stdout
    [rec] = Store().runs()
    assert rec.status == "ok" and rec.settings["world_size"] == 2
    assert sorted(rec.settings["hosts"]) == ["0", "1"]
    # Each host's fingerprint, as that host's rank saw it: here both ranks are this machine.
    [(host, machine)] = rec.settings["machines"].items()
    assert host == rec.settings["hosts"]["0"] == rec.settings["hosts"]["1"]
    assert machine["cpu_model"] == rec.machine["cpu_model"]
    assert machine["frameworks"] == rec.machine["frameworks"]
    assert machine["python_version"] == rec.machine["python_version"] and machine["siliconbench"]
    by = {(r.metric, r.params["size"], r.params["dtype"]): r for r in rec.rows}
    assert len(by) == 3 * 2 * 2
    for (metric, size, dtype), row in by.items():
        assert row.value > 0 and "wrong_result" not in row.flags, row
    for size, dtype in [(64, "float32"), (4096, "bfloat16")]:
        # nccl-tests: algbw = bytes / time, busbw = algbw x 2(n-1)/n (= algbw at n = 2).
        seconds = [us / 1e6 for us in by["latency", size, dtype].samples]
        assert by["algbw", size, dtype].samples == pytest.approx([size / s / 1e9 for s in seconds])
        assert by["busbw", size, dtype].samples == by["algbw", size, dtype].samples


# On MLX: the bus factor is the engines' common code; torch's group of one sums right in
# test_a_wrong_sum_is_caught_on_every_call[torch], and torchrun starts a lone rank in
# test_scaling.py's world of one.
def test_one_rank_moves_no_bus_data():
    rec = ChildRun(spec("mlx", processes=1)).start().wait()
    assert rec.status == "ok", rec.reason
    assert rec.settings["world_size"] == 1
    busbw = next(r for r in rec.rows if r.metric == "busbw")
    assert busbw.value == 0 and "wrong_result" not in busbw.flags


@pytest.mark.parametrize("framework", ENGINES)
def test_a_wrong_sum_is_caught_on_every_call(framework, monkeypatch):
    """The check itself, in this process on a group of one: expecting another sum fails."""
    from siliconbench.core.frameworks import framework as info
    from siliconbench.core.frameworks import implementation
    from siliconbench.core.launch import reserve_ports
    ports = reserve_ports(1)
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")  # torch's rendezvous, as torchrun sets it
    monkeypatch.setenv("MASTER_PORT", str(ports.first))
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")

    class Ctx:
        device = info(framework).load().resolve("cpu")
    group = implementation(framework, "allreduce").join(Ctx(), "auto", 1)
    try:
        for dtype in ("float32", "bfloat16"):
            right = group.checked_all_sum(8, dtype, [1, 2, 3, 4], [1, 2, 3, 4], [0, 7])
            wrong = group.checked_all_sum(8, dtype, [1, 2, 3, 4], [1, 2, 3, 5], [0, 7])
            for op in (right, wrong, right, wrong):
                op.call()
            assert (right.wrong_calls(), right.last_right()) == (0, True)
            assert (wrong.wrong_calls(), wrong.last_right()) == (2, False)
    finally:
        ports.release()
        if framework == "torch":
            group.dist.destroy_process_group()


# Two ranks: on one host (each engine), and torch's across two "hosts" that are this machine
# (one torchrun per host, started together by siliconbench.core.frameworks.torch.nodes).
LAYOUTS = [pytest.param("mlx", {"processes": 2}, id="mlx"),
           pytest.param("torch", {"processes": 2}, id="torch"),
           pytest.param("torch", {"processes": 1, "hosts": "127.0.0.1,127.0.0.1"},
                        id="torch-two-nodes")]


def _run_until_rows(framework, rows, then, **params):
    """Start a long run of two ranks; once `rows` rows are in, call then(child)."""
    seen = threading.Event()
    count = [0]

    def on_event(event):
        count[0] += event.get("event") == "row"
        if count[0] >= rows:
            seen.set()
    child = ChildRun(spec(framework, sizes=[2**k for k in range(4, 24)], **params),
                     on_event).start()
    threading.Thread(target=lambda: seen.wait(240) and then(child), daemon=True).start()
    return child.wait(), child


@pytest.mark.parametrize("framework, layout", LAYOUTS)
def test_a_killed_rank_is_named_and_every_other_rank_ends(framework, layout):
    launcher_files = []

    def kill_rank_1(child):
        launcher_files.extend(os.listdir(child._launch.folder))
        os.kill(child._ranks[1].pid, signal.SIGKILL)
    rec, child = _run_until_rows(framework, 3, kill_rank_1, **layout)
    assert rec.status == "failed"
    assert rec.reason == "Rank 1 of 2 (on 127.0.0.1) was killed (SIGKILL); every other rank " \
                         "was ended."
    assert len(rec.rows) >= 3  # what was measured is kept, and summed right
    assert rec.settings["world_size"] == 2 and sorted(rec.settings["hosts"]) == ["0", "1"]
    assert all("wrong_result" not in r.flags and r.value > 0 for r in rec.rows)
    # The launcher's temporary files (mlx.launch's pid files and hostfiles, torchrun's
    # torchelastic_* folder) were in the run's own folder, which went with the run.
    assert [f for f in launcher_files if f.startswith(("tmp.", "torchelastic_"))], \
        launcher_files
    assert not os.path.exists(child._launch.folder)


# The same runner code ends every layout's ranks: torch on one host is covered by the kill.
@pytest.mark.parametrize("framework, layout", [LAYOUTS[0], LAYOUTS[2]])
def test_cancel_ends_every_rank(framework, layout):
    rec, child = _run_until_rows(framework, 1, lambda c: c.cancel(), **layout)
    assert rec.status == "cancelled" and len(rec.rows) >= 1
    assert sorted(child._ranks) == [0, 1]


@pytest.mark.parametrize("framework", ENGINES)
def test_a_port_in_use_is_one_sentence(framework):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(UsageError) as e:
            ChildRun(spec(framework, port=port))
    assert str(e.value) == f"Port {port} on this machine is in use by another program; " \
                           "choose another with --port (0 picks a free one)."


def test_ports_picked_for_a_run_lie_outside_the_systems_ephemeral_range():
    """The ports of outgoing connections come from that range: a port picked there was
    taken by another program's connection before the ranks bound it (CI, 1 run in ~100)."""
    from siliconbench.core.launch import reserve_ports
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        ephemeral = range(*(int(p) for p in f.read().split()))
    held = [reserve_ports(4) for _ in range(20)]
    try:
        assert all(1024 <= r.first and r.first + 3 < ephemeral.start for r in held)
    finally:
        for r in held:
            r.release()


def test_two_runs_started_together_never_pick_the_same_ports(monkeypatch):
    """Both draw the same first port; the one that asks second is given other ports, and the
    ports are free again once the first run releases them."""
    import random

    from siliconbench.core.launch import reserve_ports
    first = reserve_ports(2)
    draws = iter([first.first + 1, first.first, first.first + 100])
    monkeypatch.setattr(random, "randrange", lambda a, b: next(draws))
    second = reserve_ports(2)
    assert second.first == first.first + 100
    first.release()
    monkeypatch.setattr(random, "randrange", lambda a, b: first.first)
    again = reserve_ports(2)
    assert again.first == first.first
    second.release()
    again.release()


def test_a_missing_launcher_is_one_sentence(monkeypatch):
    from siliconbench.core.frameworks.torch import launcher
    monkeypatch.setattr(launcher, "EXECUTABLE", "torchrun-not-installed")
    with pytest.raises(UsageError, match=r"^torchrun-not-installed, the launcher of torch's "
                                         r"distributed runs, was not found next to .* or on "
                                         r"PATH; reinstall the framework to get it\.$"):
        ChildRun(spec("torch"))


def test_a_file_that_is_no_hostfile_is_one_sentence(tmp_path):
    bad = tmp_path / "hosts.txt"
    bad.write_text("mac1 mac2\n")
    with pytest.raises(UsageError) as e:
        ChildRun(spec("mlx", hosts=str(bad)))
    assert str(e.value) == f"{bad} is not an mlx.launch hostfile (it is not JSON)."


def test_hosts_with_other_versions_end_the_run_with_one_sentence():
    """What each rank announces (real announcements of this machine), one host's MLX older."""
    import copy
    import socket

    from siliconbench import __version__
    from siliconbench.core.launch import Launch
    from siliconbench.core.machine import probe
    first = {"rank": 0, "host": socket.gethostname(), "machine": probe().to_dict(),
             "siliconbench": __version__}
    same = copy.deepcopy(first) | {"rank": 1}
    older = copy.deepcopy(first) | {"rank": 2, "host": "mac-studio"}
    older["machine"]["frameworks"]["mlx"] = "0.29.1"
    launch = Launch("mlx", [], ["a", "b", "c"], 1, [0])
    assert launch.mismatch(first) is None and launch.mismatch(same) is None
    mlx = first["machine"]["frameworks"]["mlx"]
    assert launch.mismatch(older) == (f"Host mac-studio runs mlx 0.29.1 where {first['host']} "
                                      f"runs mlx {mlx}; install the same versions on every host.")


def test_torchrun_blames_the_killed_rank_not_the_one_that_lost_its_peer():
    """torchrun 2.14's report of a real run here whose rank 1 was killed: it observed rank 0's
    exit (gloo: "Connection closed by peer") first, in the same second."""
    from pathlib import Path

    from siliconbench.core.frameworks.torch.launcher import first_failure
    report = (Path(__file__).parent.parent / "data" / "torchrun-killed-rank.txt").read_text()
    assert first_failure(report) == (1, -9)
    assert first_failure(report.replace("-9 (pid: 23905)  (SIGKILL)", "1 (pid: 23905)")) == (0, 1)
    # torchrun ends the others with SIGTERM: such a rank is no cause.
    ended = report.replace("exitcode  : 1 (pid: 23904) ", "exitcode  : -15 (pid: 23904)")
    assert first_failure(ended.replace("Failures:\n[1]", "Failures:\n[0]:\n  rank      : 0 "
                                       "(local_rank: 0)\n  exitcode  : -15\n[1]")) == (1, -9)


def test_mlx_launch_blames_the_killed_rank_not_the_one_that_lost_its_peer():
    """mlx.launch's report (0.32.4) of a real run in CI whose rank 1 was killed: it saw rank 0
    exit ("[ring] connection to a peer was lost") first."""
    from pathlib import Path

    from siliconbench.core.frameworks.mlx.launcher import first_failure
    from siliconbench.core.launch import Launch
    report = (Path(__file__).parent.parent / "data" / "mlx-launch-killed-rank.txt").read_text()
    assert report.index("rank 0 exited with code 1") < report.index("rank 1 exited with code -9")
    assert first_failure(report) == (1, -9)
    launch = Launch("mlx", [], ["127.0.0.1"], 2, [1, 2])
    assert launch.failure(report, "RuntimeError: [ring] connection to a peer was lost") == \
        "Rank 1 of 2 (on 127.0.0.1) was killed (SIGKILL); every other rank was ended."
    # mlx.launch ends the others with SIGTERM: such a rank is no cause, a failing one is.
    assert first_failure(report.replace("code -9", "code -15")) == (0, 1)


def test_a_rank_on_another_host_is_never_taken_for_a_local_process():
    """Its pid may be a process of this machine: ending the run must not end that one."""
    import copy

    from siliconbench.core.machine import probe
    from siliconbench.core.results import RunRecord
    child = ChildRun(spec("mlx", processes=2))      # planned, not started
    child.record = RunRecord(workload="allreduce", framework="mlx", device="cpu", params={})
    here = {"event": "rank", "rank": 0, "pid": os.getpid(), "host": socket.gethostname(),
            "machine": probe().to_dict(), "siliconbench": "1"}
    there = copy.deepcopy(here) | {"rank": 1, "host": "mac-studio-2"}
    assert child._on_rank(here) is None and child._on_rank(there) is None
    assert list(child._ranks) == [0]
    assert child.record.settings["hosts"] == {"0": socket.gethostname(), "1": "mac-studio-2"}
    assert set(child.record.settings["machines"]) == {socket.gethostname(), "mac-studio-2"}


def test_a_remote_hosts_torchrun_starts_over_ssh_at_this_machines_paths():
    import json
    import shlex

    from siliconbench.core.frameworks.torch.launcher import command
    from siliconbench.core.hosts import parse
    hosts = parse("10.0.0.1,admin@10.0.0.2").hosts
    cmd, env = command("/opt/sb/bin/torchrun", ["/opt/sb/bin/python", "-m", "siliconbench.core.worker", "run"],
                       2, hosts, "/tmp/run", 29500, "auto", {"SILICONBENCH_LAUNCHED": "1"})
    assert env == {}        # gloo's interface is the remote host's to choose
    first, second = json.loads(cmd[-1])
    # `--` before every destination: nothing after it is an option to ssh.
    assert first[:4] == ["ssh", "-o", "BatchMode=yes", "-tt"] and first[4:6] == ["--", "10.0.0.1"]
    assert second[4:6] == ["--", "admin@10.0.0.2"]
    remote = shlex.split(second[-1])
    assert remote[:2] == ["cd", os.getcwd()] and remote[3:6] == ["exec", "env",
                                                                 "SILICONBENCH_LAUNCHED=1"]
    assert remote[6:] == ["/opt/sb/bin/python", "-m", "siliconbench.core.frameworks.torch.torchrun_bound",
                          "--nnodes", "2", "--node-rank", "1",
                          "--nproc-per-node", "2", "--master-addr", "10.0.0.1",
                          "--master-port", "29500", "-m", "siliconbench.core.worker", "run"]


def test_a_stopped_rank_is_named_once_the_ranks_fall_silent(monkeypatch):
    """Rank 1 stopped (SIGSTOP): rank 0 waits in the collective for ever, so nothing more is
    heard; after the silence limit every rank is ended and the stopped one named."""
    import siliconbench.core.child

    def stop_rank_1(child):
        os.kill(child._ranks[1].pid, signal.SIGSTOP)
        # Only now: on a busy machine a point may take longer than this before the stop.
        monkeypatch.setattr(siliconbench.core.child, "SILENT_RANKS_S", 2.0)
    rec, child = _run_until_rows("mlx", 3, stop_rank_1, processes=2)
    assert rec.status == "failed"
    assert rec.reason == "No rank reported for 2 s: rank 1 (on 127.0.0.1) of 2 is stopped; " \
                         "every rank was ended."
    assert len(rec.rows) >= 3
