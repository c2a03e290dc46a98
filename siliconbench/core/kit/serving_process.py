"""A server the serve workload starts (llama.cpp's, mlx_lm.server): bound to 127.0.0.1 on a
free port, waited on until it answers, and stopped at the end. It runs in the run's own
process group, so whatever ends the run's process ends it too (a cancel or a time limit
signals the whole group); on Linux the kernel also kills it when the run's process dies
(PR_SET_PDEATHSIG), so a killed `siliconbench run` leaves no server behind; elsewhere the
run's process ends its group when its parent goes (siliconbench.core.worker)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable

from siliconbench.core.kit.serving_http import Target

STOP_GRACE_S = 5.0
LOG_LINES = 20


class ServerStartFailed(RuntimeError):
    """The server never answered: the message says why, with its last lines of output."""


def free_port() -> int:
    """A port no one listens on now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:     # runs in the child between fork and exec (Linux)
    import ctypes
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class ServerProcess:
    """start(), wait_ready(...), stop(); a context manager that stops it however the block
    ends."""

    def __init__(self, command: list[str], env: dict | None = None, name: str = "server"
                 ) -> None:
        self.command, self.env, self.name = command, env, name
        self.proc: subprocess.Popen | None = None
        self._log = tempfile.TemporaryFile()

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        linux = sys.platform.startswith("linux")
        self.proc = subprocess.Popen(
            self.command, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            env=self.env, preexec_fn=_die_with_parent if linux else None)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def tail(self) -> str:
        """The server's last lines of output."""
        self._log.flush()
        self._log.seek(0, os.SEEK_END)
        size = self._log.tell()
        self._log.seek(max(0, size - 8192))
        text = self._log.read().decode("utf-8", errors="replace")
        return "\n".join(deque(text.splitlines(), maxlen=LOG_LINES))

    def last_words(self) -> str:
        """'; it said: LAST LINE' for a failure's sentence; its whole tail goes to stderr
        (the record's stderr_tail)."""
        tail = self.tail()
        print(f"{self.name}'s last output:\n{tail}", file=sys.stderr)
        # Not its access log ('127.0.0.1 - - [date] "GET /health HTTP/1.1" 503 -'); an
        # error's line where there is one (a traceback's last).
        lines = [x.strip() for x in tail.splitlines()
                 if x.strip() and not re.search(r' - - \[.*\] "[A-Z]+ ', x)]
        errors = [x for x in lines if re.match(r"[A-Za-z_.]*(Error|Exception)\b", x)]
        said = (errors or lines)[-1:]
        return f"; it said: {said[0][:300]}" if said else ""

    def wait_ready(self, target: Target, path: str, timeout_s: float,
                   failed_status: int | None = None,
                   cancelled: Callable[[], bool] = lambda: False) -> float:
        """Seconds until GET `path` answered 200; ServerStartFailed where the server ended
        first, answered `failed_status` (the server's word that it cannot serve: mlx_lm's
        /health once its model failed to load) or did not answer within `timeout_s`."""
        from siliconbench.core.kit.serving_http import ServerFault, fetch
        t0 = time.monotonic()
        while True:
            code = self.proc.poll()
            if code is not None:
                raise ServerStartFailed(f"the {self.name} ended (exit code {code}) before it "
                                        f"answered{self.last_words()}")
            try:
                response, _ = asyncio.run(fetch(target, "GET", path))
            except ServerFault:
                response = None
            if response is not None and response.status == 200:
                return time.monotonic() - t0
            if response is not None and response.status == failed_status:
                raise ServerStartFailed(f"the {self.name} answered HTTP {failed_status} at "
                                        f"{path}: it cannot serve{self.last_words()}")
            if time.monotonic() - t0 > timeout_s or cancelled():
                raise ServerStartFailed(f"the {self.name} did not answer at "
                                        f"{target.url(path)} within {timeout_s:g} s"
                                        f"{self.last_words()}")
            time.sleep(0.2)

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after STOP_GRACE_S; its exit code."""
        p = self.proc
        if p is None:
            return None
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        return p.returncode
