"""A PyTorch run across several hosts as one child of the run. torchrun starts the ranks of
one host, so such a run takes one torchrun per host (`--nnodes`, `--node-rank`, the first
host as the rendezvous): started here for this machine and over SSH for the others. This
process relays their output line by line and ends them all when one fails or it is told to
end (SIGTERM). No torch import: it only starts and watches processes.

    python -m siliconbench.core.frameworks.torch.nodes '[[torchrun ...], [ssh, -tt, mac2, ...], ...]'
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

_LOCK = threading.Lock()


def _relay(stream, out) -> None:
    for line in stream:
        with _LOCK:      # whole lines: the run reads one JSON event a line
            out.write(line.replace("\r", ""))   # ssh -tt's terminal ends lines in \r\n
            out.flush()


def main(argv: list[str]) -> int:
    commands = json.loads(argv[0])
    nodes = {}
    relays = []
    for cmd in commands:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        nodes[p.pid] = p
        for stream, out in ((p.stdout, sys.stdout), (p.stderr, sys.stderr)):
            relays.append(threading.Thread(target=_relay, args=(stream, out), daemon=True))
            relays[-1].start()

    def end(*_) -> None:
        # A local torchrun ends its ranks on SIGTERM; ssh -tt's remote one gets SIGHUP when
        # its connection closes, and ends its ranks the same way.
        for p in nodes.values():
            if p.returncode is None:
                p.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, end)
    first_failure = 0
    while any(p.returncode is None for p in nodes.values()):
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        if pid not in nodes:
            continue
        nodes[pid].returncode = code = os.waitstatus_to_exitcode(status)
        if code != 0 and first_failure == 0:
            first_failure = code
            end()
    for t in relays:
        t.join(timeout=5)
    return 1 if first_failure else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
