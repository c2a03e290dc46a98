"""A process of this machine that connects to an MLX rank's ring port before the ranks do
is taken for a rank, and the ring never forms. One that stays is named by the sockets left
at the end (tests/core/test_hosts_security.py); one that connects and leaves at once was
gone by then, and the run failed after 32 s with only MLX's "[ring] Couldn't connect
(error: 111)". The launch watches the ports while the group forms and names it too."""

import socket
import threading
import time

from siliconbench.core.store import Store
from tests.cli_processes import run_cli


def test_a_program_that_connects_to_a_ranks_port_and_leaves_is_named():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    came_from, stop = [], threading.Event()

    def connect_and_leave():
        while not stop.is_set():
            with socket.socket() as s:
                try:
                    s.connect(("127.0.0.1", port))
                except OSError:
                    time.sleep(0.002)
                    continue
                came_from.append(s.getsockname()[1])
                return          # closed at once
    thread = threading.Thread(target=connect_and_leave, daemon=True)
    thread.start()
    try:
        out = run_cli("run", "allreduce", "--framework", "mlx", "--processes", "2", "--port",
                      str(port), "--sizes", "64", "--quick", timeout=180)
    finally:
        stop.set()
        thread.join()
    assert came_from, "the stand-in intruder never connected"
    assert out.returncode == 1, out.stderr
    said = (f"A program of this machine connected to port {port} (from port {came_from[0]}) "
            "while the ranks were forming their group, was taken for a rank and left, so the "
            "group never formed; run again, or choose other ports with --port.")
    assert f"The run failed: {said}" in " ".join(out.stdout.split())
    [rec] = Store().runs()
    assert rec.reason == said
