"""Two MLX runs of two ranks whose port a stranger of this machine (this process) connects to
first (tests/core/test_hosts_security.py): one where it stays connected, one where it leaves
at once. The second fails only when MLX gives up, after about 32 s of retries in which a
test worker would sit idle, so both are made in a process of their own started when the
session starts (tests/conftest.py: EARLY, tests.helpers.cli_processes.start_shared)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil

from tests.helpers.cli_processes import make_in_background, start_cli, wait_until_gone

NAME = "intruded-runs"


def intruded_run(leave: bool, home: Path) -> dict:
    """An MLX run of two ranks, in the store at `home`, whose port a process of this machine
    (this one) connects to as soon as it listens, before rank 1 does; it stays connected, or
    leaves at once. The run's output on one line, the port, the intruder's own port, pid and
    name, and the processes the run left behind."""
    import threading

    from siliconbench.core.launch import reserve_ports
    # Two ports below the ephemeral range, as a run picks its own. The port bind(0) handed
    # out, and the next one (rank 1's), were in that range, where any outgoing connection may
    # take them before the run binds them: once in a whole suite under load the run ended
    # before the stand-in connected (its words were not kept; this is the likely cause).
    reservation = reserve_ports(2)
    port = reservation.first
    reservation.release()
    held, came_from, stop = [], [], threading.Event()

    def connect_first():
        while not stop.is_set():
            s = socket.socket()
            try:
                s.connect(("127.0.0.1", port))
                held.append(s)
                came_from.append(s.getsockname()[1])
                if leave:
                    s.close()
                return
            except OSError:
                s.close()
                time.sleep(0.002)
    thread = threading.Thread(target=connect_first, daemon=True)
    thread.start()
    started = time.monotonic()
    proc = start_cli("run", "allreduce", "--framework", "mlx", "--processes", "2", "--port",
                     str(port), "--sizes", "64", "--quick",
                     env={**os.environ, "SILICONBENCH_HOME": str(home)})
    try:
        stdout, stderr = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    finally:
        stop.set()
        thread.join()
        for s in held:
            s.close()
    assert held, f"the stand-in intruder never connected: {stdout} {stderr}"
    assert proc.returncode == 1
    return {"said": " ".join(stdout.split()), "port": port, "came_from": came_from[0],
            "took_s": time.monotonic() - started,
            "pid": os.getpid(), "name": psutil.Process().name(),
            "left_behind": [p.pid for p in wait_until_gone(home)]}


def make(home: Path) -> dict:
    """Both runs ("stays", "left") at once, each in a store of its own under `home`."""
    with ThreadPoolExecutor(2) as pool:
        runs = {name: pool.submit(intruded_run, name == "left", home / name)
                for name in ("stays", "left")}
        return {name: run.result() for name, run in runs.items()}


if __name__ == "__main__":
    make_in_background(NAME, make)
