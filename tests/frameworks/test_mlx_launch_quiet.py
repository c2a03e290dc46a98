"""mlx.launch as a distributed run starts it (siliconbench.core.frameworks.mlx.launch_quiet):
its own main, without the busy loop of its rank threads, which took a core from the ranks
being timed."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("mlx._distributed_utils.launch")

RANK_SLEEPS_S = 2.0


def launcher_cpu_s(launcher: list[str], tmp_path) -> tuple[float, str]:
    """The CPU seconds the launcher (with the rank it reaped) used while its one rank slept,
    and what the rank printed; its stdin open and empty, as a run gives it."""
    rank = [sys.executable, "-c", f"import time; time.sleep({RANK_SLEEPS_S}); print('slept')"]
    log = tmp_path / "launcher.out"
    with open(log, "wb") as out:
        proc = subprocess.Popen([*launcher, "--hosts", "127.0.0.1", "-n", "1", "--", *rank],
                                stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT)
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        proc.stdin.close()
    said = log.read_text(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, said
    return usage.ru_utime + usage.ru_stime, said


def test_the_launcher_waits_for_its_ranks_instead_of_spinning(tmp_path):
    """While a rank sleeps 2 s, the launcher (with that rank) uses a fraction of a CPU-second:
    Python's start and mlx's import. mlx.launch as installed used a core the whole time
    (1.7 CPU-s for a 1.5 s sleep here): each rank's thread asked select() whether the rank's
    stdin could take a write, which a pipe always can."""
    cpu, out = launcher_cpu_s([sys.executable, "-m",
                               "siliconbench.core.frameworks.mlx.launch_quiet"], tmp_path)
    assert "slept" in out
    assert cpu < 0.5 * RANK_SLEEPS_S, f"the launcher used {cpu:.2f} CPU-s"


def test_a_run_starts_mlx_launch_through_the_quiet_main(tmp_path):
    from siliconbench.core.frameworks.mlx.launcher import command
    from siliconbench.core.hosts import parse
    worker = [sys.executable, "-m", "siliconbench.core.worker", "run"]
    cmd, _ = command("/usr/bin/mlx.launch", worker, 2, parse("127.0.0.1").hosts,
                     str(tmp_path), 40000, "ring", {})
    assert cmd[:3] == [sys.executable, "-m", "siliconbench.core.frameworks.mlx.launch_quiet"]
    assert cmd[cmd.index("--") + 1:] == worker
    # A Mac app bundle's worker is its own executable: mlx.launch as it is.
    bundle = ["/Applications/SiliconBench.app/Contents/MacOS/SiliconBench", "--worker"]
    cmd, _ = command("/usr/bin/mlx.launch", bundle, 2, parse("127.0.0.1").hosts,
                     str(tmp_path), 40000, "ring", {})
    assert cmd[0] == "/usr/bin/mlx.launch"
