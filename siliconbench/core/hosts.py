"""The hosts of a distributed run, as the `hosts` parameter gives them: empty (this machine
over loopback), a comma-separated list of addresses, or the path of a hostfile in
mlx.launch's JSON format (docs/distributed.md, "The hostfile").

Hosts are data: each one must parse as a host name or an IP address, with an optional
`user@`, before anything is started; a hostfile carries hosts and nothing else that changes
what runs (mlx.launch would export its "envs" into every rank and switch to its "backend").
Whatever is refused is refused here, in one sentence, so that no launcher, `ssh` or rank
ever sees a host string that could be read as an option or a shell word."""

from __future__ import annotations

import ipaddress
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from siliconbench.core.files import write_atomic
from siliconbench.core.text import clip

LOOPBACK = ("127.0.0.1", "localhost", "::1")
MAX_HOSTS = 256                 # more than any cluster SiliconBench is run across
MAX_HOSTFILE_BYTES = 1 << 20    # a hostfile of MAX_HOSTS entries is a few tens of KB
PATH_SHOWN = 1024               # a path is quoted whole (up to this)
HOST_SHOWN = 80                 # a host string, in a sentence, to this
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,31}")
_SCOPE = re.compile(r"[A-Za-z0-9_.-]{1,32}")     # an IPv6 zone: fe80::1%en0
# What a hostfile may hold, beside "hosts": "backend" only as the run's own --backend, and
# "envs" only empty (mlx.distributed_config writes both keys).
_FILE_KEYS = {"hosts", "backend", "envs"}
_ENTRY_KEYS = {"ssh", "ips", "rdma"}


class HostsError(ValueError):
    """The message is one sentence for the user."""


@dataclass(frozen=True)
class Host:
    """One host of the run: how SSH reaches it, and the address its ranks connect over."""
    ssh: str
    address: str
    rdma: tuple = ()    # a hostfile's JACCL devices, passed on unchanged (names, checked)

    @property
    def local(self) -> bool:
        return self.address in LOOPBACK


@dataclass(frozen=True)
class Hosts:
    """The parsed `hosts` parameter: its hosts, and a hostfile's "backend" ("" without)."""
    hosts: tuple[Host, ...]
    from_file: bool = False
    backend: str = ""


def parse(hosts: str) -> Hosts:
    """The hosts the parameter names; HostsError (one sentence) for anything that is not a
    list of host names and addresses or a hostfile of them."""
    text = (hosts or "").strip()
    if not text:
        return Hosts((Host("127.0.0.1", "127.0.0.1"),))
    path = _hostfile_path(text)
    if path is not None:
        return _read_hostfile(path)
    names = [h.strip() for h in text.split(",")]
    if not any(names):
        raise HostsError("The host list names no host; give addresses separated by commas, "
                         "or leave it empty for this machine.")
    if "" in names:
        raise HostsError(f"The host list {clip(text, HOST_SHOWN)} has an empty entry "
                         "between its commas.")
    _count(len(names), "The host list")
    return Hosts(tuple(Host(n, destination(n).rpartition("@")[2]) for n in names))


def _hostfile_path(text: str) -> Path | None:
    """The hostfile `text` names, or None when it is a host list. A name is tried as a file
    only when something is there (a long host list is no path, whatever the OS says of it);
    what looks like a path and is not there is refused as such."""
    if "," not in text:
        try:
            os.stat(text)
            return Path(text)
        except (OSError, ValueError):
            pass
    if ("/" in text or text.endswith(".json")) and not text.startswith("-") \
            and not any(c.isspace() for c in text):
        raise HostsError(f"There is no hostfile at {clip(text, PATH_SHOWN)}.")
    return None


def _read_hostfile(path: Path) -> Hosts:
    from siliconbench.core.files import NotReadable, read_small
    name = clip(str(path), PATH_SHOWN)
    what = f"{name} is not an mlx.launch hostfile"
    try:
        data = json.loads(read_small(path, MAX_HOSTFILE_BYTES, "hostfile"))
    except NotReadable as e:
        raise HostsError(str(e)) from None
    except OSError as e:
        raise HostsError(f"{name} cannot be read ({e.strerror or e}).") from None
    except ValueError:
        raise HostsError(f"{what} (it is not JSON).") from None
    except RecursionError:      # a hostfile is two levels deep; Python's parser stops at ~1000
        raise HostsError(f"{what} (its JSON nests lists or objects too deep to read).") from None
    backend = ""
    if isinstance(data, dict):      # newer mlx.distributed_config: {"backend", "envs", "hosts"}
        unknown = sorted(set(data) - _FILE_KEYS)
        if unknown:
            raise HostsError(f"{what}: it holds {_keys(unknown)}, and a hostfile may hold only "
                             '"hosts" (and "backend", "envs" as mlx.distributed_config writes '
                             "them).")
        if data.get("envs"):
            raise HostsError(f"{name} sets environment variables for every rank "
                             '("envs"); SiliconBench runs ranks with its own environment only: '
                             'remove "envs" from the hostfile.')
        backend = data.get("backend") or ""
        if not isinstance(backend, str):
            raise HostsError(f'{what}: its "backend" is not a name.')
        data = data.get("hosts")
    if not isinstance(data, list) or not data:
        raise HostsError(f'{what} (a JSON list of {{"ssh": host, "ips": [addresses]}}, or '
                         'an object whose "hosts" is one); it names no host.')
    _count(len(data), name)
    return Hosts(tuple(_entry(e, i, what) for i, e in enumerate(data)), True, backend)


def _entry(entry, i: int, what: str) -> Host:
    if not isinstance(entry, dict) or not isinstance(entry.get("ssh"), str):
        raise HostsError(f'{what}: host {i + 1} is not {{"ssh": host, "ips": [addresses]}}.')
    unknown = sorted(set(entry) - _ENTRY_KEYS)
    if unknown:
        raise HostsError(f'{what}: host {i + 1} holds {_keys(unknown)}, where a host has only '
                         '"ssh", "ips" and "rdma".')
    ssh = entry["ssh"]
    name = destination(ssh)
    ips = entry.get("ips", [])
    if not isinstance(ips, list) or not all(isinstance(a, str) for a in ips):
        raise HostsError(f'{what}: the "ips" of host {i + 1} ({clip(ssh, HOST_SHOWN)}) is '
                         "not a list of addresses.")
    for a in ips:
        if not _is_ip(a):
            raise HostsError(f"The address {clip(a, HOST_SHOWN)} of host "
                             f"{clip(ssh, HOST_SHOWN)} in the hostfile is not an IP address.")
    rdma = entry.get("rdma") or []
    if not isinstance(rdma, list) or not all(d is None or (isinstance(d, str) and
                                                           _SCOPE.fullmatch(d)) for d in rdma):
        raise HostsError(f'{what}: the "rdma" of host {i + 1} is not a list of device names.')
    host = name.rpartition("@")[2]
    address_ = ips[0] if ips else host
    if (host in LOOPBACK) != (address_ in LOOPBACK):
        raise HostsError(f"Host {i + 1} of the hostfile is reached over SSH as "
                         f"{clip(ssh, HOST_SHOWN)} and its ranks connect over "
                         f"{clip(address_, HOST_SHOWN)}: only one of them is this machine's "
                         "loopback; name this machine 127.0.0.1 in both \"ssh\" and \"ips\", "
                         "or another host in both.")
    return Host(ssh, address_, tuple(rdma))


def destination(text: str) -> str:
    """`text` when it is `[user@]host` with host a host name or an IP address; HostsError
    otherwise. What passes can never be read by ssh as an option, nor by a shell as more
    than one word."""
    user, at, host = text.rpartition("@")
    if at and not _USER.fullmatch(user):
        raise HostsError(f"{clip(text, HOST_SHOWN)} is not a host: the user before @ is not "
                         "a user name.")
    address(host, whole=text)
    return text


def address(text: str, whole: str | None = None) -> str:
    """`text` when it is a host name or an IP address, HostsError otherwise."""
    if _is_ip(text):
        return text
    if (len(text) <= 253 and _HOSTNAME.fullmatch(text)
            and not text.replace(".", "").isdigit()):     # 1.2.3 is no name, and no address
        return text
    raise HostsError(f"{clip(whole or text, HOST_SHOWN)} is not a host name or an IP "
                     "address.")


def ssh_command(ssh: str, destination_: str, command: list[str], *options: str) -> list[str]:
    """ssh's command line for one host: BatchMode (no prompt for a password nobody sees),
    the options, `--` and then the destination, checked here again: after `--` even a host
    that slipped through could not be read as an option."""
    destination(destination_)
    return [ssh, "-o", "BatchMode=yes", *options, "--", destination_, *command]


def _is_ip(text: str) -> bool:
    ip, percent, scope = text.partition("%")
    if percent and not _SCOPE.fullmatch(scope):
        return False
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        return False
    return True


def _count(n: int, what: str) -> None:
    if n > MAX_HOSTS:
        raise HostsError(f"{what} names {n:,} hosts; SiliconBench runs across at most "
                         f"{MAX_HOSTS}.")


def _keys(keys: list[str]) -> str:
    return ", ".join(f'"{clip(k, 40)}"' for k in keys)


def host_list(hosts: str) -> list[str]:
    """The hosts' addresses, one per host (several entries may name the same machine)."""
    return [h.address for h in parse(hosts).hosts]


def world_size(params: dict) -> int:
    return params["processes"] * len(host_list(params["hosts"]))


def loopback_interface() -> str | None:
    """The network interface that holds 127.0.0.1 (lo on Linux, lo0 on macOS)."""
    import socket

    import psutil
    for name, addresses in psutil.net_if_addrs().items():
        if any(a.family == socket.AF_INET and a.address == "127.0.0.1" for a in addresses):
            return name
    return None


def loopback_env(hosts: list[Host] | tuple[Host, ...]) -> dict[str, str]:
    """What a run whose every rank is on this machine adds to its ranks' environment so that
    the collectives' own sockets bind loopback too: gloo's pairs (PyTorch on a CPU) and NCCL's
    bootstrap (PyTorch and MLX on CUDA), which otherwise take the interface of the machine's
    host name. Nothing for a run across hosts: there the hosts' shared interface is theirs."""
    iface = loopback_interface() if all(h.local for h in hosts) else None
    return {"GLOO_SOCKET_IFNAME": iface, "NCCL_SOCKET_IFNAME": iface} if iface else {}


def hostfile_json(hosts: list[Host]) -> str:
    """An mlx.launch hostfile of exactly these hosts, and nothing else: what SiliconBench
    hands mlx.launch instead of the user's file."""
    return json.dumps({"hosts": [{"ssh": h.ssh, "ips": [h.address],
                                  **({"rdma": list(h.rdma)} if h.rdma else {})}
                                 for h in hosts]})


HOSTS_FOLDER = "siliconbench-hosts-"    # the scaling workload's hostfiles of its worlds


def owned_folder(prefix: str) -> str:
    """A new private temporary folder whose name holds this process's pid, its owner: a
    run started after the owner was killed (SIGKILL runs no clean-up) removes it
    (siliconbench.core.launch.clean_stale)."""
    import tempfile
    return tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-")


def first_hosts(hosts: str, count: int, folder) -> str:
    """The `hosts` parameter naming only the first `count` hosts: the list cut short, or a
    hostfile of the first entries written into `folder`."""
    parsed = parse(hosts)
    if not (hosts or "").strip():
        return ""
    chosen = list(parsed.hosts[:count])
    if not parsed.from_file:
        return ",".join(h.ssh for h in chosen)
    out = Path(folder) / f"hosts-{count}.json"
    data = json.loads(hostfile_json(chosen))
    if parsed.backend:
        data["backend"] = parsed.backend
    write_atomic(out, json.dumps(data), own=True)
    return str(out)
