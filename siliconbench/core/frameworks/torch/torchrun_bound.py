"""torchrun whose rendezvous store listens on the rendezvous address only.

torchrun's static rendezvous starts its TCPStore, which binds every interface (`*:PORT`, IPv4
and IPv6) whatever --master-addr says, and the store has no authentication: anyone who can
reach the port reads and writes the run's keys. This module binds the listening socket
itself, on --master-addr (127.0.0.1 when every rank is on this machine), and hands it to the
store (TCPStore's `master_listen_fd`); everything else is torchrun's own `main`.

When every rank is on this machine (launcher.STORE_ENV names the run's folder) the store is a
file of that folder instead, nothing listens, and the agent looks up no name: a TCPStore
client asks the resolver for the name of the address it connects to, and torchelastic's
events ask socket.getfqdn() for this machine's, which goes to DNS wherever /etc/hosts does
not know it.

    python -m siliconbench.core.frameworks.torch.torchrun_bound TORCHRUN-ARGUMENTS...
"""

from __future__ import annotations

import os
import socket
import sys

from siliconbench.core.frameworks.torch.launcher import STORE_ENV


def _option(argv: list[str], name: str, default: str) -> str:
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
        if arg in ("-m", "--module"):       # the rest is the ranks' command line
            break
    return default


def listening_socket(address: str, port: int) -> socket.socket:
    family, kind, proto, _, where = socket.getaddrinfo(address, port,
                                                       type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(where)
    sock.listen(1024)
    return sock


def main(argv: list[str]) -> None:
    from torch.distributed import FileStore, TCPStore
    from torch.distributed.elastic.rendezvous import static_tcp_rendezvous
    from torch.distributed.run import main as torchrun

    if folder := os.environ.get(STORE_ENV):
        socket.getfqdn = _unresolved

        def file_store(host, port, world_size=None, is_master=False, *args, **kwargs):
            return FileStore(os.path.join(folder, "agents.store"), world_size or -1)

        static_tcp_rendezvous.TCPStore = file_store
        torchrun(argv)
        return
    server = None
    if _option(argv, "--node-rank", "0") == "0":      # the node that hosts the store
        server = listening_socket(_option(argv, "--master-addr", "127.0.0.1"),
                                  int(_option(argv, "--master-port", "29500")))

    def store(host, port, world_size=None, is_master=False, *args, **kwargs):
        if is_master and server is not None:
            kwargs["master_listen_fd"] = server.fileno()
        return TCPStore(host, port, world_size, is_master, *args, **kwargs)

    static_tcp_rendezvous.TCPStore = store
    torchrun(argv)


def _unresolved(name: str = "") -> str:
    """socket.getfqdn without asking the resolver: the name itself, or this machine's."""
    return name or socket.gethostname()


if __name__ == "__main__":
    main(sys.argv[1:])
