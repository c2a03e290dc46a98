"""A distributed run whose every rank is on this machine sends nothing beyond loopback and
asks no resolver: every connect() and sendto() of the command, its launcher and its ranks is
read from strace. (A Python-level watch of socket.getaddrinfo would miss what the frameworks'
C++ looks up: c10d's TCPStore client asked DNS for the name of ::ffff:127.0.0.1 in the agent
and in every rank.) strace exists on Linux only; .ci/run installs it."""

import ipaddress
import os
import re
import shutil
import subprocess
import sys

import pytest

from siliconbench.core.measure import SETTINGS_ENV
from tests.conftest import SHORT_PROTOCOL
from tests.helpers.cli_processes import _env

ENGINES = ["mlx", "torch"]
WORKLOADS = {"allreduce": ["--sizes", "4096", "--dtypes", "float32"],
             "scaling": ["--widths", "16", "--batch-size", "4"]}
_ADDRESS = re.compile(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"')


def traced_addresses(trace: str) -> list[tuple[str, str]]:
    """(address, line) of every IP address a connect/sendto/sendmsg of the trace named."""
    found = []
    for line in trace.splitlines():
        for v4, v6 in _ADDRESS.findall(line):
            found.append((v4 or v6, line))
    return found


def _loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def _strace() -> list[str] | str:
    """strace's command, or why it cannot run here. --seccomp-bpf (strace 5.3 and later)
    stops the traced processes at the traced calls alone, not at every system call: the
    torch scaling run cost 115 s under strace without it on this 2-core machine."""
    if shutil.which("strace") is None:
        return "strace is not installed (Linux only; .ci/run installs it)"
    problem = ""
    for command in (["strace", "-f", "--seccomp-bpf"], ["strace", "-f"]):
        probe = subprocess.run([*command, "-qq", "-o", "/dev/null", "true"],
                               capture_output=True, text=True)
        if probe.returncode == 0:
            return command
        problem = probe.stderr.strip()[:200]
    return f"strace cannot trace here ({problem})"     # a container that forbids ptrace


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("framework", ENGINES)
def test_a_local_run_sends_nothing_beyond_loopback(framework, workload, tmp_path):
    if isinstance(strace := _strace(), str):
        pytest.skip(strace)
    log = tmp_path / "trace"
    # The short timing protocol: what is checked is where the ranks connect, not their numbers.
    out = subprocess.run(
        [*strace, "-qq", "-e", "trace=connect,sendto,sendmsg,sendmmsg", "-o", str(log),
         sys.executable, "-m", "siliconbench.core.cli", "run", workload, "--framework",
         framework, "--processes", "2", "--quick", *WORKLOADS[workload]],
        capture_output=True, text=True, timeout=600,
        env=_env({**os.environ, SETTINGS_ENV: SHORT_PROTOCOL}))
    assert out.returncode == 0, out.stderr
    seen = traced_addresses(log.read_text())
    # The ranks talk over loopback: a trace without it saw nothing of them.
    assert any(_loopback(a) for a, _ in seen), "the trace saw no connection of the ranks"
    assert [line for a, line in seen if not _loopback(a)] == []


def test_the_trace_reader_sees_a_dns_query():
    """What strace wrote when torch's store asked the resolver (seen before the fix)."""
    line = ('22889 connect(13, {sa_family=AF_INET, sin_port=htons(53), '
            'sin_addr=inet_addr("10.255.255.53")}, 16) = 0\n'
            '22889 connect(12, {sa_family=AF_INET6, sin6_port=htons(25237), '
            'inet_pton(AF_INET6, "::ffff:127.0.0.1", &sin6_addr)}, 28) = -1 EINPROGRESS')
    seen = traced_addresses(line)
    assert [a for a, _ in seen] == ["10.255.255.53", "::ffff:127.0.0.1"]
    assert [_loopback(a) for a, _ in seen] == [False, True]
