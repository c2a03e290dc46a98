"""mlx.launch, MLX's own launcher, as a distributed run's child: its command line, the ports
its ring backend listens on, and its report of a rank that failed. No MLX import here: the
parent process uses this module."""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys

EXECUTABLE = "mlx.launch"
# mlx.launch ends the other ranks when one fails, says which, and itself exits 0.
_FAILED = re.compile(r"Node with rank (\d+) (?:exited with code (-?\d+)|was killed)")
# A process that is not the run's and connects to a rank's port while the ring forms is taken
# for a rank: the ring never forms, and MLX gives up after about 32 s. The run ends as soon as
# one still connected is seen (siliconbench.core.launch.Launch.intruded).
STRANGER_ENDS_GROUP = True


def refuse(hosts, backend: str) -> str | None:
    """One sentence for what mlx.launch would refuse, or do other than asked, said before it
    starts: it starts ranks here only for 127.0.0.1 (any other name it reaches over SSH), and
    its ring backend connects over IP addresses only."""
    for h in hosts:
        if h.address in ("localhost", "::1") or h.ssh in ("localhost", "::1"):
            return ("mlx.launch starts ranks on this machine only when it is named "
                    "127.0.0.1; write 127.0.0.1 instead of localhost or ::1.")
    local = [h for h in hosts if h.address == "127.0.0.1"]
    if local and len(local) < len(hosts):
        return ("127.0.0.1 is this machine's loopback and cannot be one of several hosts that "
                "are not all this machine; name this machine by the address the other hosts "
                "reach it at.")
    if backend in ("auto", "ring"):
        import ipaddress
        for h in hosts:
            try:
                ipaddress.ip_address(h.address.partition("%")[0])
            except ValueError:
                return (f"MLX's ring backend connects over IP addresses, and {h.address} is a "
                        "name: give its address, or a hostfile whose \"ips\" list it.")
    return None


def refuse_backend(backend: str, device: str) -> str | None:
    """One sentence when MLX cannot run its collectives on `backend` for `device` here, else
    None: said before anything starts (mlx.launch would start, fail and exit 0 unsaid)."""
    if backend == "gloo":
        return "MLX has no gloo backend; choose ring (or auto), jaccl, nccl or mpi."
    if backend == "jaccl" and sys.platform != "darwin":
        return ("MLX's jaccl backend runs over Thunderbolt RDMA between Macs, and this machine "
                "is not a Mac; choose ring (or auto).")
    if backend == "mpi" and shutil.which("mpirun") is None:
        return ("MLX's mpi backend starts its ranks with mpirun, which is not on this "
                "machine's PATH; install MPI, or choose ring (or auto).")
    if backend == "nccl" and device == "cpu":
        return ("NCCL sums GPU arrays only, and this run is on the CPU; choose ring (or auto), "
                "or run on --device gpu.")
    return None


def refuse_ranks(backend: str, device: str, local_ranks: int) -> str | None:
    """Nothing: mlx.launch gives each rank on a host a GPU of its own for NCCL (command),
    and how many CUDA GPUs this machine has MLX's device list (one "gpu") does not say."""
    return None


def command(exe: str, worker: list[str], processes: int, hosts, folder: str,
            port: int, backend: str, env: dict[str, str]) -> tuple[list[str], dict]:
    """mlx.launch with a hostfile that SiliconBench writes into the run's folder, of the
    checked hosts only (never the user's file: mlx.launch would take its "envs" and
    "backend"), each host repeated once per rank on it (mlx.launch's `-n` repeats only a
    --hosts list). `-n` still tells its NCCL launch how many ranks share a host: rank r
    sees GPU r mod n alone (CUDA_VISIBLE_DEVICES; without it every rank saw GPU 0, and NCCL
    refuses two ranks of a group on one GPU). Ranks on other hosts get only the `--env`
    variables, and need SiliconBench at the same path there."""
    from siliconbench.core.files import write_atomic
    from siliconbench.core.hosts import hostfile_json, loopback_env
    path = os.path.join(folder, "hosts.json")
    write_atomic(path, hostfile_json([h for h in hosts for _ in range(processes)]), own=True)
    # mlx.launch's own main, without its rank threads' busy loop (launch_quiet), where the
    # worker is this Python's module; a Mac app bundle's worker runs mlx.launch as it is.
    if worker[1:3] == ["-m", "siliconbench.core.worker"]:
        exe_args = [worker[0], "-m", "siliconbench.core.frameworks.mlx.launch_quiet"]
    else:
        exe_args = [exe]
    cmd = [*exe_args, "--starting-port", str(port), "--hostfile", path, "-n", str(processes)]
    if backend != "auto":
        cmd += ["--backend", backend]
    for key, value in env.items():
        cmd += ["--env", f"{key}={value}"]
    # The ring binds the hostfile's addresses (127.0.0.1 here); NCCL's bootstrap, on CUDA,
    # binds the interface loopback_env names.
    return [*cmd, "--", *worker], loopback_env(hosts)


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
