"""mlx.launch, MLX's own launcher, as a distributed run's child: its command line, the ports
its ring backend listens on, and its report of a rank that failed. No MLX import here: the
parent process uses this module."""

from __future__ import annotations

import re
import signal

EXECUTABLE = "mlx.launch"
# mlx.launch ends the other ranks when one fails, says which, and itself exits 0.
_FAILED = re.compile(r"Node with rank (\d+) (?:exited with code (-?\d+)|was killed)")


def command(exe: str, worker: list[str], processes: int, hostfile: str | None,
            addresses: list[str],
            port: int, backend: str, env: dict[str, str]) -> list[str]:
    """`-n` repeats each host; `--hosts` takes IP addresses (the ring backend needs them),
    `--hostfile` mlx.launch's JSON hostfile. Ranks on other hosts get only the `--env`
    variables, and need SiliconBench at the same path there."""
    cmd = [exe, "-n", str(processes), "--starting-port", str(port)]
    cmd += ["--hostfile", hostfile] if hostfile else ["--hosts", ",".join(addresses)]
    if backend != "auto":
        cmd += ["--backend", backend]
    for key, value in env.items():
        cmd += ["--env", f"{key}={value}"]
    return [*cmd, "--", *worker]


def ports(port: int, world: int) -> list[int]:
    """The ring backend: one port per rank, counting up from the first."""
    return list(range(port, port + world))


def first_failure(stderr: str) -> tuple[int, int | None] | None:
    """(rank, exit code or None when mlx.launch killed it) of the rank that failed first: one
    killed by a signal if any, since the others' errors ("connection to a peer was lost")
    follow from it, even when mlx.launch saw them end first. SIGTERM is how mlx.launch itself
    ends the other ranks once one has failed."""
    ended = [(int(r), int(c) if c else None) for r, c in _FAILED.findall(stderr)]
    killed = [(r, c) for r, c in ended if c is not None and c < 0 and c != -signal.SIGTERM]
    return (killed or ended or [None])[0]
