"""Which TCP sockets a local run opens: runs one `siliconbench` command and, while it runs,
reads the kernel's socket tables (/proc/net/tcp and tcp6) every 20 ms, then prints every
socket that was not there before it started, listening or connected, and whether each one's
address is loopback. A local all-reduce binds its rendezvous store, gloo's pairs and NCCL's
bootstrap to loopback (siliconbench.core.hosts.loopback_env); this shows it on the machine
where it runs, NCCL included, which needs a CUDA machine. Exit 0 when every new socket is on
loopback, 1 when one is not, 2 when no new socket was seen at all (the poll saw nothing to
judge). Linux only.

    python3 benchmarks/local_sockets.py run allreduce --framework torch --device cuda \
        --processes 1 --backend nccl --sizes 1048576

On an H100 on 2026-11-27 a one-rank NCCL run opened 8 sockets and a two-rank one 17, all
on 127.0.0.1 (tests/data/h100/README.md)."""

import ipaddress
import subprocess
import sys
import time

STATES = {"0A": "listening", "01": "connected"}


def sockets() -> set[tuple[str, str, str]]:
    """(state, local address, remote address) of each listening or connected TCP socket."""
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            with open(table, encoding="ascii") as f:
                lines = f.read().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] in STATES:
                found.add((STATES[fields[3]], address(fields[1], width),
                           address(fields[2], width)))
    return found


def address(text: str, width: int) -> str:
    """/proc/net/tcp's 'HEXIP:HEXPORT' (the IP in host byte order, 32-bit words) as ip:port."""
    ip, port = text.split(":")
    raw = b"".join(bytes.fromhex(ip[i:i + 8])[::-1] for i in range(0, width, 8))
    return f"{ipaddress.ip_address(raw)}:{int(port, 16)}"


def loopback(addr: str) -> bool:
    ip = ipaddress.ip_address(addr.rsplit(":", 1)[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


def main() -> int:
    if not sys.argv[1:]:
        print(__doc__)
        return 2
    before = sockets()
    cmd = [sys.executable, "-m", "siliconbench.core.cli", *sys.argv[1:]]
    proc = subprocess.Popen(cmd)
    seen: set[tuple[str, str, str]] = set()
    while proc.poll() is None:
        seen |= sockets() - before
        time.sleep(0.02)
    print(f"command exit {proc.returncode}: {' '.join(cmd[1:])}")
    # Connected sockets are listed by their local end; a listening one has no remote (0.0.0.0:0).
    rows = sorted(seen)
    for state, local, remote in rows:
        where = local if state == "listening" else f"{local} -> {remote}"
        print(f"  {state:9} {where:50} {'loopback' if loopback(local) else 'NOT LOOPBACK'}")
    if not rows:
        print("no new TCP socket was seen while it ran")
        return 2
    outside = [r for r in rows if not loopback(r[1])]
    print(f"{len(rows)} new sockets, {len(outside)} not on loopback")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
