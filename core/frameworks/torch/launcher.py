"""torchrun, PyTorch's own launcher, as a distributed run's child: its command line, the
rendezvous port, and its report of a rank that failed. No torch import here: the parent
process uses this module."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal

from core.hosts import LOOPBACK

EXECUTABLE = "torchrun"
# torchrun's ChildFailedError summary: every rank that failed and how, the first observed
# under "Root Cause".
_ROOT = re.compile(r"Root Cause.*?rank\s*:\s*(\d+).*?exitcode\s*:\s*(-?\d+)", re.S)
_FAILURE = re.compile(r"^\s*rank\s*:\s*(\d+).*?exitcode\s*:\s*(-?\d+)", re.S | re.M)


def command(exe: str, worker: list[str], processes: int, hostfile: str | None,
            addresses: list[str],
            port: int, backend: str, env: dict[str, str]) -> list[str]:
    """One machine: `--nproc-per-node N` with a static rendezvous on 127.0.0.1:port. Several
    hosts: one torchrun per host (`--nnodes`, `--node-rank`, the first host's address as the
    rendezvous), started together by core.frameworks.torch.nodes; the others over SSH, at
    this machine's paths."""
    if worker[1:3] != ["-m", "core.worker"]:
        raise ValueError("torchrun cannot start the worker of a Mac app bundle; run the "
                         "all-reduce from the siliconbench command.")
    if len(addresses) == 1 and addresses[0] in LOOPBACK:
        return [exe, "--nproc-per-node", str(processes), "--master-addr", "127.0.0.1",
                "--master-port", str(port), *worker[1:]]
    nodes = []
    for rank, address in enumerate(addresses):
        node = [exe, "--nnodes", str(len(addresses)), "--node-rank", str(rank),
                "--nproc-per-node", str(processes), "--master-addr", addresses[0],
                "--master-port", str(port), *worker[1:]]
        nodes.append(node if address in LOOPBACK else _over_ssh(address, node, env))
    return [worker[0], "-m", "core.frameworks.torch.nodes", json.dumps(nodes)]


def _over_ssh(host: str, command: list[str], env: dict[str, str]) -> list[str]:
    """`-tt`: the remote torchrun gets SIGHUP, and ends its ranks, when the connection
    closes; SSH passes no environment, so the run's variables go on the command line."""
    remote = (f"cd {shlex.quote(os.getcwd())} && exec "
              + shlex.join(["env", *(f"{k}={v}" for k, v in env.items()), *command]))
    return ["ssh", "-tt", "-o", "BatchMode=yes", host, remote]


def ports(port: int, world: int) -> list[int]:
    return [port]


def first_failure(stderr: str) -> tuple[int, int | None] | None:
    """The rank that failed first: one killed by a signal if any, since the others' errors
    ("Connection closed by peer") follow from it, even when torchrun observed them first.
    SIGTERM is how torchrun itself ends the other ranks once one has failed."""
    m = _ROOT.search(stderr)
    if m is None:
        return None
    report = stderr[stderr.find("ChildFailedError"):]   # every host's report
    killed = [(int(r), int(c)) for r, c in _FAILURE.findall(report)
              if int(c) < 0 and int(c) != -signal.SIGTERM]
    return killed[0] if killed else (int(m.group(1)), int(m.group(2)))
