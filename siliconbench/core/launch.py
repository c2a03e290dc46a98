"""A distributed run's child is the framework's own launcher (mlx.launch, torchrun) with its
ranks: the command line, free ports checked before the start, and the one sentence that says
which rank failed and why, read from the launcher's own report."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import socket
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from siliconbench.core import hosts as hosts_mod
from siliconbench.core.hosts import HostsError
from siliconbench.core.text import clip

LAUNCHED_ENV = "SILICONBENCH_LAUNCHED"   # set for every rank: it announces itself
SSH_TIMEOUT_S = 5                        # a host that has not answered SSH by then is down
WATCH_S = 1.0   # how often the run's ports are looked at until the ranks have formed a group
_PORT_IN_USE = re.compile(r"EADDRINUSE|[Aa]ddress already in use|Couldn't bind socket "
                          r"\(error: 98\)")


class LaunchError(ValueError):
    """The ranks cannot be started as asked; the message is one sentence for the user."""


def rank_error_line(rank: int, message: str) -> str:
    """What a rank other than 0 writes on stderr about its error (Launch.failure reads it)."""
    return f"rank {rank}: {message}"


def launcher(framework: str):
    from siliconbench.core.frameworks import implementation
    return implementation(framework, "launcher")


def backend_refused(framework: str, params: dict, device: str) -> str | None:
    """One sentence when the framework cannot use the run's backend on `device` on this
    machine, or not for as many ranks as it starts here: a distributed run (and the scaling
    workload's worlds) is refused before anything starts."""
    part = launcher(framework)
    return part.refuse_backend(params["backend"], device) or \
        part.refuse_ranks(params["backend"], device, local_ranks(params))


def local_ranks(params: dict) -> int:
    """How many of a run's ranks start on this machine, as far as the parent can tell:
    every rank when every host is this machine's loopback (a scaling run's largest world at
    most), else 0: which host this machine is, if any, only the ranks know."""
    hosts = hosts_mod.parse(params["hosts"]).hosts
    if not all(h.local for h in hosts):
        return 0
    ranks = params["processes"] * len(hosts)
    return min(ranks, max(params.get("world_sizes") or [ranks]))


def find_executable(name: str) -> str | None:
    """The launcher of this Python's installation first (a venv need not be on PATH)."""
    here = Path(sys.executable).with_name(name)
    return str(here) if here.is_file() and os.access(here, os.X_OK) else shutil.which(name)


def port_free(port: int, address: str = "127.0.0.1") -> bool:
    """Whether a rank could bind `address`:`port` now (a listener on every interface, or on
    this address, holds it)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family) as s:
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True


def _ephemeral_low() -> int:
    """The lowest port the system hands to outgoing connections and to bind(port 0): Linux
    says it in /proc; macOS (and IANA) start at 49152."""
    try:
        from siliconbench.core.files import read_small
        return int(read_small("/proc/sys/net/ipv4/ip_local_port_range", 4096,
                              "system file").split()[0])
    except (OSError, ValueError, IndexError):
        return 49152


class PortReservation:
    """`count` consecutive free ports, held for this run against other SiliconBench runs on
    this machine (a lock file per port) until release(); the ranks bind them meanwhile."""

    def __init__(self, first: int, locks: list) -> None:
        self.first, self._locks = first, locks

    def release(self) -> None:
        """The lock files go while still locked, then their locks: a run that opened one
        meanwhile finds, once it has the lock, that the name no longer leads to its file
        (_lock checks), so no two runs ever hold one port's lock."""
        for path, fd in self._locks:
            with contextlib.suppress(OSError):
                os.unlink(path)
            os.close(fd)
        self._locks = []


def _lock(path: Path) -> int:
    """The lock of one port, held: its descriptor. OSError when another run holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_ino != os.stat(path, follow_symlinks=False).st_ino:
            raise OSError("the lock file was released meanwhile")
    except BaseException:
        os.close(fd)
        raise
    return fd


def lock_folder() -> Path:
    """The folder of the port locks, this user's own: made private, and refused in one
    sentence when it is a link, someone else's or open to others (whoever could write there
    could hold every lock, or make a lock a link to a file of yours)."""
    import stat
    import tempfile
    folder = Path(tempfile.gettempdir()) / f"siliconbench-ports-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise LaunchError(f"{folder}, where SiliconBench keeps its port locks, is not a "
                          "private folder of yours (a link, another user's, or writable by "
                          "others); remove it, or choose the ports with --port.")
    return folder


RUN_FOLDER = "siliconbench-run-"        # a distributed run's own folder (its ranks' TMPDIR)
_OWNED = re.compile(rf"(?:{RUN_FOLDER}|{hosts_mod.HOSTS_FOLDER})(\d+)-")


def clean_stale() -> None:
    """What killed runs left behind, removed: this user's run and hostfile folders whose
    owner is no longer alive, and the port lock files that no run holds (a held lock is
    its run alive; one taken here is unlinked while held, as release() does, so a run that
    opened it meanwhile backs off)."""
    import stat
    import tempfile
    for entry in _entries(tempfile.gettempdir()):
        owner = _OWNED.match(entry.name)
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if owner and stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() \
                and not _owner_alive(int(owner.group(1)), info.st_mtime):
            shutil.rmtree(entry.path, ignore_errors=True)
    try:
        folder = lock_folder()
    except LaunchError:
        return      # reserve_ports says why
    for entry in _entries(folder):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fd = _lock(Path(entry.path))
                PortReservation(0, [(Path(entry.path), fd)]).release()


def _entries(folder: str) -> list:
    try:
        with os.scandir(folder) as found:
            return list(found)
    except OSError:
        return []


def _owner_alive(pid: int, since: float) -> bool:
    """Whether `pid` may still be the process that made a folder last changed at `since`:
    one that started later only took its pid, and a zombie has ended."""
    import psutil
    try:
        owner = psutil.Process(pid)
        return owner.create_time() <= since + 1 and owner.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def reserve_ports(count: int, addresses: list[str] = ("127.0.0.1",)) -> PortReservation:
    """Ports for a run's ranks, chosen below the system's ephemeral range: ports in it are
    what every outgoing connection takes (gloo's, another test's, a browser's), so one free
    now may be taken before the ranks bind it (CI saw it once: "Couldn't bind socket").
    A random start keeps two runs that start together apart; the lock files make sure. Each
    port must be free on every address the ranks will bind."""
    import random
    high = min(_ephemeral_low(), 32768)
    low = max(1024, high - 12000)
    folder = lock_folder()
    for _ in range(100):
        first = random.randrange(low, high - count)
        locks = []
        try:
            for port in range(first, first + count):
                path = folder / str(port)
                locks.append((path, _lock(path)))      # OSError: another run's
                if not all(port_free(port, a) for a in addresses):
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
    folder: str | None = None           # the run's own folder: TMPDIR of the launcher and ranks
    env: dict = field(default_factory=dict)     # what the launcher's environment adds
    strangers: list = field(default_factory=list)   # what watch() saw take a rank's place
    _watching: threading.Event = field(default_factory=threading.Event)

    def watch(self, launcher_pid: int) -> None:
        """Until the ranks have formed their group (observe) or the run ends (close), look at
        the run's ports every WATCH_S for a connection a rank accepted from a process that is
        not the run's (`strangers`): the transports have no authentication, so it is taken
        for a rank and the group never forms. One that leaves at once is gone by the
        failure, but the rank's end of it stays, half closed, until the ring gives up (32 s):
        that is what is seen. Each look reads every socket of the machine (psutil: 0.16 s on
        a loaded 2-core VM), so it stops once the group is formed."""
        def look() -> None:
            ours: set = set()
            while not self._watching.wait(WATCH_S):
                if found := strangers(self.ports, launcher_pid, ours):
                    self.strangers = found
                    return
        threading.Thread(target=look, daemon=True, name="ports-watch").start()

    @property
    def intruded(self) -> bool:
        """Whether watch() saw a process that is not the run's, still connected, take a
        rank's place where that alone stops the group from forming (the framework's launcher
        says so: MLX's ring): the run can end at once instead of waiting for the framework to
        give up. One that has left is not enough: a rank killed before a look saw its socket
        leaves the same half-closed end (failure() tells them apart once the run is over)."""
        return any(pid is not None for pid, *_ in self.strangers) and \
            launcher(self.framework).STRANGER_ENDS_GROUP

    def observe(self, event: dict) -> None:
        """An event of rank 0: the settings it records once its group is joined end the
        watch."""
        if event.get("event") == "settings" and "world_size" in event.get("settings", {}):
            self._watching.set()

    def close(self) -> None:
        """The run has ended: its ports go back, its folder goes."""
        self._watching.set()
        self.release_ports()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

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
        if intruders := foreign_connections(self.ports):
            return _taken_for_a_rank(*intruders[0])
        first = launcher(self.framework).first_failure(stderr)
        if self.strangers:
            pid, name, port, peer = self.strangers[0]
            if pid is not None:
                return _taken_for_a_rank(pid, name, port)
            # A rank killed by a signal (not the launcher's SIGTERM) half-closes its own
            # connections as a stranger that left does: the rank's death is the cause.
            if not (first and first[1] is not None and first[1] < 0
                    and first[1] != -signal.SIGTERM):
                return (f"A program of this machine connected to port {port} (from port "
                        f"{peer}) while the ranks were forming their group, was taken for a "
                        "rank and left, so the group never formed; run again, or choose "
                        "other ports with --port.")
        if _PORT_IN_USE.search(stderr):
            return (f"A port the ranks need ({_ports_text(self.ports)}) is in use by another "
                    "program; choose another with --port (0 picks a free one).")
        if first is None or (first[0] == 0 and rank0_error):
            return None
        rank, code = first
        said = re.search("^" + re.escape(rank_error_line(rank, "")) + "(.+)$", stderr, re.M)
        return (f"Rank {rank} of {self.world} (on {self.host_of(rank)}) {_cause(code)}"
                f"{f' ({said.group(1)})' if said else ''}; every other rank was ended.")


def foreign_connections(ports: list[int]) -> list[tuple[int, str, int]]:
    """(pid, name, port) of each process of this machine still connected to one of the run's
    ports once its ranks have ended: a process that connected first is taken for a rank (the
    ranks' transports have no authentication), and the group never forms. Other users'
    processes are seen as root only (psutil), and macOS lists them to root only."""
    import psutil
    try:
        connections = psutil.net_connections("tcp")
    except (psutil.AccessDenied, OSError):
        return []
    found = []
    for c in connections:
        if c.raddr and c.raddr.port in ports and c.pid and c.pid != os.getpid():
            try:
                found.append((c.pid, psutil.Process(c.pid).name(), c.raddr.port))
            except psutil.Error:
                continue
    return sorted(set(found), key=lambda f: (f[2], f[0]))


def _taken_for_a_rank(pid: int, name: str, port: int) -> str:
    return (f"Another program ({name}, pid {pid}) connected to port {port}, where the ranks "
            "were forming their group, and was taken for a rank; end it, or choose other "
            "ports with --port.")


def strangers(ports: list[int], launcher_pid: int,
              ours: set) -> list[tuple[int | None, str | None, int, int]]:
    """(pid, name, port, peer port) of each connection that a rank (a process under the
    launcher) accepted on one of the run's ports from a process that is not the run's: its
    pid and name while it is connected, None for both once it has left (the rank's end is
    then half closed, and the peer's end belongs to no process). `ours` keeps, from one look
    to the next, the local end of every socket seen owned by the run: a rank that connected
    and then died is not taken for a stranger."""
    import psutil
    try:
        connections = psutil.net_connections("tcp")
        run = {launcher_pid, *(p.pid for p in psutil.Process(launcher_pid)
                               .children(recursive=True))}
    except (psutil.Error, OSError):
        return []
    ours |= {c.laddr for c in connections if c.pid in run}
    owner = {(c.laddr, c.raddr): c.pid for c in connections if c.raddr}
    found = []
    for c in connections:
        if c.pid not in run or c.laddr.port not in ports or not c.raddr or c.raddr in ours:
            continue
        pid = owner.get((c.raddr, c.laddr))
        if pid is None and c.status != psutil.CONN_CLOSE_WAIT:
            continue        # a peer whose socket was not seen yet
        try:
            name = psutil.Process(pid).name() if pid is not None else None
        except psutil.Error:
            continue
        found.append((pid, name, c.laddr.port, c.raddr.port))
    return found


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
    LaunchError when it cannot start: a host list that is not one, no launcher, a port in use,
    hosts it cannot reach. Nothing is started, and no host is asked, before the hosts parse.
    The run's folder (its ranks' TMPDIR, and the hostfile SiliconBench writes for the
    launcher) is made last; Launch.close() removes it."""
    part = launcher(framework)
    clean_stale()
    try:
        parsed = hosts_mod.parse(params["hosts"])
    except HostsError as e:
        raise LaunchError(str(e)) from None
    backend = params["backend"]
    if parsed.backend and parsed.backend != backend and \
            not (backend == "auto" and parsed.backend == "ring"):
        raise LaunchError(f'The hostfile asks for the "{clip(parsed.backend, 20)}" '
                          "backend; SiliconBench takes the backend from --backend only: "
                          'remove "backend" from the hostfile, or pass --backend.')
    if problem := part.refuse(parsed.hosts, backend):
        raise LaunchError(problem)
    addresses = [h.address for h in parsed.hosts]
    exe = find_executable(part.EXECUTABLE)
    if exe is None:
        raise LaunchError(f"{part.EXECUTABLE}, the launcher of {framework}'s distributed "
                          f"runs, was not found next to {sys.executable} or on PATH; "
                          "reinstall the framework to get it.")
    world = params["processes"] * len(addresses)
    count = len(part.ports(0, world))
    binds = _bound_here(parsed.hosts)
    reservation = None
    if params["port"]:
        port = params["port"]
        ports = part.ports(port, world)
        if ports[-1] > 65535:
            raise LaunchError(f"The ranks need ports {port}-{ports[-1]}; choose a lower --port.")
        busy = [p for p in ports if not all(port_free(p, a) for a in binds)]
        if busy:
            raise LaunchError(f"Port {busy[0]} on this machine is in use by another "
                              "program; choose another with --port (0 picks a free one).")
    if problem := unreachable(list(dict.fromkeys(h.ssh for h in parsed.hosts
                                                 if not h.local))):
        raise LaunchError(problem)
    if not params["port"]:
        reservation = reserve_ports(count, binds)
        port, ports = reservation.first, part.ports(reservation.first, world)
    folder = hosts_mod.owned_folder(RUN_FOLDER)
    launch = Launch(framework, [], addresses, params["processes"], ports, reservation,
                    folder=folder)
    try:
        launch.command, launch.env = part.command(exe, worker, params["processes"],
                                                  parsed.hosts, folder, port, backend, env)
    except ValueError as e:
        launch.close()
        raise LaunchError(str(e)) from None
    return launch


def _bound_here(hosts) -> list[str]:
    """The addresses of this machine that the ranks' listening sockets bind: loopback when
    every rank is here, else this machine's addresses among the hosts' (those that are not
    this machine's are another host's to check)."""
    if all(h.local for h in hosts):
        return ["127.0.0.1"]
    mine = _own_addresses()
    return [a for a in dict.fromkeys(h.address for h in hosts) if a in mine] or ["127.0.0.1"]


def _own_addresses() -> set[str]:
    import psutil
    return {a.address for addrs in psutil.net_if_addrs().values() for a in addrs
            if a.family in (socket.AF_INET, socket.AF_INET6)}


def unreachable(names: list[str]) -> str | None:
    """One sentence on the first host the launcher could not start ranks on, or None. The
    launchers start every rank over SSH with this machine's Python path; a host that does not
    answer would otherwise hang the run or fail it with pages of SSH's output. Every host is
    asked at once, and the first failure ends the others' questions: 200 hosts that do not
    answer are refused within one SSH time-out, not one per sixteen."""
    if not names:
        return None
    ssh = shutil.which("ssh")
    if ssh is None:
        return "ssh was not found on this machine; the launcher starts the other hosts' ranks over SSH."
    import subprocess
    import time
    asked = {}
    try:
        for name in names:
            cmd = hosts_mod.ssh_command(ssh, name, ["test", "-x", sys.executable],
                                        "-o", f"ConnectTimeout={SSH_TIMEOUT_S}")
            asked[name] = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                           text=True, start_new_session=True)
        deadline = time.monotonic() + 3 * SSH_TIMEOUT_S
        waiting = dict(asked)
        while waiting:
            for name, p in list(waiting.items()):
                if p.poll() is None:
                    continue
                del waiting[name]
                if (said := _ssh_answer(name, p.returncode, p.stderr.read())) is not None:
                    return said
            if time.monotonic() > deadline:
                return (f"Host {next(iter(waiting))} did not answer over SSH within "
                        f"{3 * SSH_TIMEOUT_S} s.")
            time.sleep(0.02)
        return None
    finally:
        for p in asked.values():
            if p.poll() is None:
                p.kill()
            p.wait()
            p.stderr.close()


def _ssh_answer(name: str, code: int, stderr: str) -> str | None:
    if code == 0:
        return None
    if code == 1:        # `test -x` said no: SSH works, the Python is not there
        return (f"Host {name} has no {sys.executable}; SiliconBench must sit at the same path "
                "on every host.")
    said = (stderr.strip().splitlines() or ["no reason given"])[-1]
    return f"Host {name} does not answer over SSH ({clip(said, 200)})."
