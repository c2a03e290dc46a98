"""A distributed run's child is the framework's own launcher (mlx.launch, torchrun) with its
ranks: the command line, free ports checked before the start, and the one sentence that says
which rank failed and why, read from the launcher's own report."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from core.hosts import HostsError, host_list, is_local, ssh_names

LAUNCHED_ENV = "SILICONBENCH_LAUNCHED"   # set for every rank: it announces itself
SSH_TIMEOUT_S = 5                        # a host that has not answered SSH by then is down
_PORT_IN_USE = re.compile(r"EADDRINUSE|[Aa]ddress already in use|Couldn't bind socket "
                          r"\(error: 98\)")


class LaunchError(ValueError):
    """The ranks cannot be started as asked; the message is one sentence for the user."""


def rank_error_line(rank: int, message: str) -> str:
    """What a rank other than 0 writes on stderr about its error (Launch.failure reads it)."""
    return f"rank {rank}: {message}"


def launcher(framework: str):
    from core.frameworks import implementation
    return implementation(framework, "launcher")


def find_executable(name: str) -> str | None:
    """The launcher of this Python's installation first (a venv need not be on PATH)."""
    here = Path(sys.executable).with_name(name)
    return str(here) if here.is_file() and os.access(here, os.X_OK) else shutil.which(name)


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _ephemeral_low() -> int:
    """The lowest port the system hands to outgoing connections and to bind(port 0): Linux
    says it in /proc; macOS (and IANA) start at 49152."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 49152


class PortReservation:
    """`count` consecutive free ports, held for this run against other SiliconBench runs on
    this machine (a lock file per port) until release(); the ranks bind them meanwhile."""

    def __init__(self, first: int, locks: list) -> None:
        self.first, self._locks = first, locks

    def release(self) -> None:
        for f in self._locks:
            f.close()       # closing the file drops its lock
        self._locks = []


def reserve_ports(count: int) -> PortReservation:
    """Ports for a run's ranks, chosen below the system's ephemeral range: ports in it are
    what every outgoing connection takes (gloo's, another test's, a browser's), so one free
    now may be taken before the ranks bind it (CI saw it once: "Couldn't bind socket").
    A random start keeps two runs that start together apart; the lock files make sure."""
    import fcntl
    import random
    import tempfile
    high = min(_ephemeral_low(), 32768)
    low = max(1024, high - 12000)
    folder = Path(tempfile.gettempdir()) / f"siliconbench-ports-{os.getuid()}"
    folder.mkdir(exist_ok=True)
    for _ in range(100):
        first = random.randrange(low, high - count)
        locks = []
        try:
            for port in range(first, first + count):
                f = open(folder / str(port), "a")
                locks.append(f)
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)   # OSError: another run's
                if not port_free(port):
                    raise OSError
            return PortReservation(first, locks)
        except OSError:
            PortReservation(first, locks).release()
    raise LaunchError(f"No {count} consecutive free TCP ports were found on this machine.")


@dataclass
class Launch:
    """A distributed run's launcher command, its hosts, ranks and the ports it holds."""
    framework: str
    command: list[str]
    addresses: list[str]
    processes: int
    ports: list[int]
    reservation: PortReservation | None = None  # ports chosen for it: release() at its end
    first_rank: dict | None = None      # the first rank's announcement, which others match

    def mismatch(self, event: dict) -> str | None:
        """One sentence when an announced rank runs other versions (Python, the framework,
        SiliconBench) than the first rank to announce itself, else None."""
        if self.first_rank is None:
            self.first_rank = event
            return None
        want, got = _versions(self.first_rank, self.framework), _versions(event, self.framework)
        differ = [f"{name} {got[name]}" for name in want if got[name] != want[name]]
        if not differ:
            return None
        theirs = ", ".join(f"{name} {want[name]}" for name in want if got[name] != want[name])
        return (f"Host {event['host']} runs {', '.join(differ)} where {self.first_rank['host']} "
                f"runs {theirs}; install the same versions on every host.")

    def release_ports(self) -> None:
        """The ranks have ended: other runs may have the ports again."""
        if self.reservation is not None:
            self.reservation.release()

    @property
    def world(self) -> int:
        return self.processes * len(self.addresses)

    def host_of(self, rank: int) -> str:
        return self.addresses[min(rank // self.processes, len(self.addresses) - 1)]

    def failure(self, stderr: str, rank0_error: str | None) -> str | None:
        """One sentence on why the ranks failed, from the launcher's report; None when rank
        0's own error says it best (it failed first)."""
        if _PORT_IN_USE.search(stderr):
            return (f"A port the ranks need ({_ports_text(self.ports)}) is in use by another "
                    "program; choose another with --port (0 picks a free one).")
        first = launcher(self.framework).first_failure(stderr)
        if first is None or (first[0] == 0 and rank0_error):
            return None
        rank, code = first
        said = re.search("^" + re.escape(rank_error_line(rank, "")) + "(.+)$", stderr, re.M)
        return (f"Rank {rank} of {self.world} (on {self.host_of(rank)}) {_cause(code)}"
                f"{f' ({said.group(1)})' if said else ''}; every other rank was ended.")


def _versions(event: dict, framework: str) -> dict[str, str | None]:
    machine = event.get("machine") or {}
    return {"Python": machine.get("python_version"),
            framework: (machine.get("frameworks") or {}).get(framework),
            "SiliconBench": event.get("siliconbench")}


def _ports_text(ports: list[int]) -> str:
    return f"port {ports[0]}" if len(ports) == 1 else f"ports {ports[0]}-{ports[-1]}"


def _cause(code: int | None) -> str:
    if code is None:
        return "was ended by the launcher"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return "was killed (SIGKILL)" if -code == signal.SIGKILL else f"crashed ({name})"
    return f"exited with code {code}"


def plan(framework: str, params: dict, worker: list[str], env: dict[str, str]) -> Launch:
    """The launcher's command line for a run's params (processes, hosts, port, backend).
    LaunchError when it cannot start: no launcher, a port in use, hosts it cannot reach."""
    part = launcher(framework)
    try:
        addresses = host_list(params["hosts"])
    except HostsError as e:
        raise LaunchError(str(e)) from None
    exe = find_executable(part.EXECUTABLE)
    if exe is None:
        raise LaunchError(f"{part.EXECUTABLE}, the launcher of {framework}'s distributed "
                          f"runs, was not found next to {sys.executable} or on PATH; "
                          "reinstall the framework to get it.")
    world = params["processes"] * len(addresses)
    count = len(part.ports(0, world))
    if params["port"]:
        port, reservation = params["port"], None
        ports = part.ports(port, world)
        if ports[-1] > 65535:
            raise LaunchError(f"The ranks need ports {port}-{ports[-1]}; choose a lower --port.")
        if is_local(params["hosts"]):
            busy = [p for p in ports if not port_free(p)]
            if busy:
                raise LaunchError(f"Port {busy[0]} on this machine is in use by another "
                                  "program; choose another with --port (0 picks a free one).")
    hostfile = params["hosts"].strip() if Path(params["hosts"].strip() or "-").is_file() \
        else None
    if problem := unreachable(ssh_names(params["hosts"])):
        raise LaunchError(problem)
    if not params["port"]:
        reservation = reserve_ports(count)
        port, ports = reservation.first, part.ports(reservation.first, world)
    try:
        cmd = part.command(exe, worker, params["processes"], hostfile, addresses, port,
                           params["backend"], env)
    except ValueError as e:
        if reservation:
            reservation.release()
        raise LaunchError(str(e)) from None
    return Launch(framework, cmd, addresses, params["processes"], ports, reservation)


def unreachable(names: list[str]) -> str | None:
    """One sentence on the first host the launcher could not start ranks on, or None. The
    launchers start every rank over SSH with this machine's Python path; a host that does not
    answer would otherwise hang the run or fail it with pages of SSH's output."""
    if not names:
        return None
    ssh = shutil.which("ssh")
    if ssh is None:
        return "ssh was not found on this machine; the launcher starts the other hosts' ranks over SSH."
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=min(16, len(names))) as pool:
        answers = list(pool.map(lambda name: _ssh_check(ssh, name), names))
    return next((a for a in answers if a), None)


def _ssh_check(ssh: str, name: str) -> str | None:
    import subprocess
    cmd = [ssh, "-o", "BatchMode=yes", "-o", f"ConnectTimeout={SSH_TIMEOUT_S}", name,
           "test", "-x", sys.executable]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=3 * SSH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"Host {name} did not answer over SSH within {3 * SSH_TIMEOUT_S} s."
    if done.returncode == 0:
        return None
    if done.returncode == 1:        # `test -x` said no: SSH works, the Python is not there
        return (f"Host {name} has no {sys.executable}; SiliconBench must sit at the same path "
                "on every host.")
    said = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
    return f"Host {name} does not answer over SSH ({said})."
