"""The hosts of a distributed run, as the `hosts` parameter gives them: empty (this machine
over loopback), a comma-separated list of addresses, or the path of an mlx.launch hostfile
(JSON: a list of {"ssh": name, "ips": [addresses]})."""

from __future__ import annotations

import json
from pathlib import Path

LOOPBACK = ("127.0.0.1", "localhost", "::1")


class HostsError(ValueError):
    """The message is one sentence for the user."""


def host_list(hosts: str) -> list[str]:
    """The hosts' addresses, one per host (several entries may name the same machine)."""
    return [address for _, address in _entries(hosts)]


def ssh_names(hosts: str) -> list[str]:
    """How SSH reaches each host that is not this machine's loopback (a hostfile's "ssh"
    name, else the address), each once."""
    names = [name for name, address in _entries(hosts) if address not in LOOPBACK]
    return list(dict.fromkeys(names))


def _entries(hosts: str) -> list[tuple[str, str]]:
    """(ssh name, address) of each host."""
    text = (hosts or "").strip()
    if not text:
        return [("127.0.0.1", "127.0.0.1")]
    if Path(text).is_file():
        try:
            entries = json.loads(Path(text).read_text())
            if isinstance(entries, dict):  # newer mlx.distributed_config: {"hosts": [...]}
                entries = entries["hosts"]
            return [(e["ssh"], (e.get("ips") or [e["ssh"]])[0]) for e in entries]
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            raise HostsError(f"{text} is not an mlx.launch hostfile (a JSON list of "
                             '{"ssh": host, "ips": [addresses]}).') from None
    return [(h.strip(), h.strip()) for h in text.split(",") if h.strip()]


def is_local(hosts: str) -> bool:
    return all(h in LOOPBACK for h in host_list(hosts))


def world_size(params: dict) -> int:
    return params["processes"] * len(host_list(params["hosts"]))


def first_hosts(hosts: str, count: int, folder) -> str:
    """The `hosts` parameter naming only the first `count` hosts: the list cut short, or a
    hostfile of the first entries written into `folder`."""
    text = (hosts or "").strip()
    if not text:
        return ""
    if Path(text).is_file():
        entries = json.loads(Path(text).read_text())
        wrapped = isinstance(entries, dict)
        chosen = (entries["hosts"] if wrapped else entries)[:count]
        out = Path(folder) / f"hosts-{count}.json"
        out.write_text(json.dumps({**entries, "hosts": chosen} if wrapped else chosen))
        return str(out)
    return ",".join(host_list(text)[:count])
