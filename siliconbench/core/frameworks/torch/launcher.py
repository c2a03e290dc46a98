"""torchrun, PyTorch's own launcher, as a distributed run's child: its command line, the
rendezvous port, and its report of a rank that failed. No torch import here: the parent
process uses this module."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
from collections.abc import Callable

# torchrun, whose presence says the installation has torch.distributed's launcher; the run
# starts it as siliconbench.core.frameworks.torch.torchrun_bound.
EXECUTABLE = "torchrun"
# A stray connection to torchrun's store or gloo's ports is not shown to stop the group from
# forming, so a run does not end on one (siliconbench.core.launch.Launch.intruded).
STRANGER_ENDS_GROUP = False
# Set when every rank is on this machine: the folder whose files are the run's stores (the
# agents' rendezvous and the ranks' group) in place of TCPStores. A TCPStore client looks up
# the name of the address it connects to (c10d's socket.cpp formats it with getnameinfo),
# and it connects over IPv6 first: ::ffff:127.0.0.1 is in no /etc/hosts, so each agent and
# rank sent a reverse DNS query for 127.0.0.1 off the machine.
STORE_ENV = "SILICONBENCH_TORCH_STORE"
# torchrun's ChildFailedError summary: every rank that failed and how, the first observed
# under "Root Cause".
_ROOT = re.compile(r"Root Cause.*?rank\s*:\s*(\d+).*?exitcode\s*:\s*(-?\d+)", re.S)
_FAILURE = re.compile(r"^\s*rank\s*:\s*(\d+).*?exitcode\s*:\s*(-?\d+)", re.S | re.M)


def refuse(hosts, backend: str) -> str | None:
    """One sentence when torchrun cannot run on these hosts as given, else None."""
    local = [h for h in hosts if h.local]
    if local and len(local) < len(hosts):
        return (f"{local[0].address} is this machine's loopback and cannot be one of several "
                "hosts that are not all this machine; name this machine by the address the "
                "other hosts reach it at.")
    return None


def refuse_backend(backend: str, device: str) -> str | None:
    """One sentence when PyTorch cannot run its collectives on `backend` for `device` here,
    else None: said before anything starts, not by every rank once started."""
    if device.startswith("mps"):
        return ("PyTorch has no collective backend for MPS tensors; run it on the CPU "
                "(--device cpu), where gloo works.")
    if backend in ("ring", "jaccl"):
        return (f"PyTorch has no {backend} backend; choose gloo or nccl (auto: nccl on CUDA, "
                "gloo elsewhere).")
    if backend == "mpi":
        return ("PyTorch's mpi backend takes its ranks from mpirun, and SiliconBench starts "
                "them with torchrun; choose gloo or nccl (auto: nccl on CUDA, gloo elsewhere).")
    if backend == "nccl" and not device.startswith("cuda"):
        return (f"NCCL sums CUDA tensors only, and this run is on {_on(device)}; choose gloo (or "
                "auto), or run on --device cuda.")
    return None


def nccl(backend: str, device: str) -> bool:
    """Whether the run's collectives are NCCL's (auto: NCCL on CUDA)."""
    return backend == "nccl" or backend == "auto" and device.startswith("cuda")


def refuse_ranks(backend: str, device: str, local_ranks: int,
                 gpus: Callable[[], int] | None = None) -> str | None:
    """One sentence when NCCL cannot give each of the `local_ranks` ranks on one machine a
    GPU of its own, else None: NCCL refuses two ranks of a group on one GPU ("invalid
    usage", Duplicate GPU detected) once every rank has started. `gpus()`: that machine's
    CUDA GPUs, asked only when it matters (by default: PyTorch's device list, without
    importing torch here)."""
    if local_ranks < 2 or not nccl(backend, device):
        return None
    if device != "cuda":
        return (f"NCCL runs one rank per GPU, and --device {device} puts all {local_ranks} "
                "ranks of this machine on that one GPU; run --device cuda (a GPU each), or "
                "--processes 1.")
    have = (gpus or _listed_gpus)()
    if have == 0:
        return ("NCCL runs one rank per GPU, and PyTorch finds no CUDA GPU on this machine; "
                "run on the CPU (--device cpu), where gloo needs no GPU.")
    if have < local_ranks:
        return (f"NCCL runs one rank per GPU: {local_ranks} ranks need {local_ranks} GPUs and "
                f"this machine has {have}; run --processes {have}, or run on the "
                "CPU (--device cpu), where gloo needs no GPU.")
    return None


def rank_device(device: str, backend: str, local_rank: int) -> str:
    """The device of the rank whose index among its machine's ranks is `local_rank`:
    torchrun's convention (cuda:LOCAL_RANK) for NCCL on --device cuda, a GPU for each rank;
    any other device as given (an indexed GPU, with one rank: refuse_ranks)."""
    return f"cuda:{local_rank}" if device == "cuda" and nccl(backend, device) else device


def _listed_gpus() -> int:
    """This machine's CUDA GPUs as PyTorch's device list says (kept beside the store while
    the installation and the visible GPUs stay the same)."""
    from siliconbench.core.devices import discover_devices
    return sum(d.usable and d.id.startswith("cuda:")
               for d in discover_devices(["torch"], fresh=False))


def command(exe: str, worker: list[str], processes: int, hosts, folder: str,
            port: int, backend: str, env: dict[str, str]) -> tuple[list[str], dict]:
    """One machine: `--nproc-per-node N` with a static rendezvous whose store, like the
    ranks', is a file of the run's folder (STORE_ENV), and gloo and NCCL on the loopback
    interface (siliconbench.core.hosts.loopback_env), so that nothing of the run listens
    beyond this machine, and no name is looked up.
    Several hosts: one torchrun per host (`--nnodes`, `--node-rank`, the first host's address
    as the rendezvous), started together by siliconbench.core.frameworks.torch.nodes; the others over
    SSH, at this machine's paths. Each torchrun is siliconbench.core.frameworks.torch.torchrun_bound: its
    store listens on the rendezvous address only."""
    if worker[1:3] != ["-m", "siliconbench.core.worker"]:
        raise ValueError("torchrun cannot start the worker of a Mac app bundle; run the "
                         "all-reduce from the siliconbench command.")
    torchrun = [worker[0], "-m", "siliconbench.core.frameworks.torch.torchrun_bound"]
    from siliconbench.core.hosts import loopback_env
    local = all(h.local for h in hosts)
    extra = loopback_env(hosts)
    if local:
        extra[STORE_ENV] = folder
    if len(hosts) == 1 and local:
        return ([*torchrun, "--nnodes", "1", "--nproc-per-node", str(processes),
                 "--master-addr", "127.0.0.1", "--master-port", str(port), *worker[1:]],
                extra)
    nodes = []
    for rank, host in enumerate(hosts):
        node = [*torchrun, "--nnodes", str(len(hosts)), "--node-rank", str(rank),
                "--nproc-per-node", str(processes),
                "--master-addr", "127.0.0.1" if local else hosts[0].address,
                "--master-port", str(port), *worker[1:]]
        nodes.append(node if local else _over_ssh(host.ssh, node, env))
    return [worker[0], "-m", "siliconbench.core.frameworks.torch.nodes", json.dumps(nodes)], extra


def _over_ssh(host: str, command: list[str], env: dict[str, str]) -> list[str]:
    """`-tt`: the remote torchrun gets SIGHUP, and ends its ranks, when the connection
    closes; SSH passes no environment, so the run's variables go on the command line, each
    quoted (the remote shell reads it as words, never as code)."""
    from siliconbench.core.hosts import ssh_command
    remote = (f"cd {shlex.quote(os.getcwd())} && exec "
              + shlex.join(["env", *(f"{k}={v}" for k, v in env.items()), *command]))
    return ssh_command("ssh", host, [remote], "-tt")


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


def _on(device: str) -> str:
    return "the CPU" if device == "cpu" else device
