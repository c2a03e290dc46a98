"""torchrun, PyTorch's own launcher, as a distributed run's child: its command line, the
rendezvous port, and its report of a rank that failed. No torch import here: the parent
process uses this module."""

from __future__ import annotations

import re

EXECUTABLE = "torchrun"
# torchrun's ChildFailedError summary: every rank that failed and how, the first observed
# under "Root Cause".
_ROOT = re.compile(r"Root Cause.*?rank\s*:\s*(\d+).*?exitcode\s*:\s*(-?\d+)", re.S)
_FAILURE = re.compile(r"^\s*rank\s*:\s*(\d+).*?exitcode\s*:\s*(-?\d+)", re.S | re.M)


def command(exe: str, worker: list[str], processes: int, hostfile: str | None,
            addresses: list[str],
            port: int, backend: str, env: dict[str, str]) -> list[str]:
    """One machine: `--nproc-per-node N` with a static rendezvous on 127.0.0.1:port.
    Several machines take one torchrun per host (`--nnodes`, `--node-rank`,
    `--master-addr`), which SiliconBench does not start yet."""
    if len(addresses) > 1 or addresses[0] not in ("127.0.0.1", "localhost"):
        raise ValueError("PyTorch runs across several hosts are not supported yet; run on "
                         "this machine (leave --hosts empty) or use --framework mlx.")
    if worker[1:3] != ["-m", "core.worker"]:
        raise ValueError("torchrun cannot start the worker of a Mac app bundle; run the "
                         "all-reduce from the siliconbench command.")
    return [exe, "--nproc-per-node", str(processes), "--master-addr", "127.0.0.1",
            "--master-port", str(port), *worker[1:]]


def ports(port: int, world: int) -> list[int]:
    return [port]


def first_failure(stderr: str) -> tuple[int, int | None] | None:
    """The rank that failed first: one killed by a signal if any, since the others' errors
    ("Connection closed by peer") follow from it, even when torchrun observed them first."""
    m = _ROOT.search(stderr)
    if m is None:
        return None
    report = stderr[stderr.rfind("ChildFailedError"):]
    killed = [(int(r), int(c)) for r, c in _FAILURE.findall(report) if int(c) < 0]
    return killed[0] if killed else (int(m.group(1)), int(m.group(2)))
