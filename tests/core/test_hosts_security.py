"""Hosts are data (issue: distributed runs let no one in). No host string or hostfile makes
anything run but SiliconBench's own ranks, a local run listens on loopback only, and every
bad host list is one sentence, exit 2, before anything starts.

Nothing here reaches another machine: `ssh` is a stand-in first on PATH (tests/helpers/fake_ssh.py)
that records its arguments, reads them as OpenSSH does (options up to the first word that
is not one, or `--`), runs a ProxyCommand found among the options as OpenSSH would (that is
the attack), and answers as each test asks. No name is ever resolved."""

import json
import os
import random
import re
import socket
import sys
import time
from pathlib import Path

import psutil
import pytest

from siliconbench.core import hosts as hosts_mod
from siliconbench.core.hosts import HostsError
from siliconbench.core.runner import ChildRun, RunSpec, UsageError
from siliconbench.core.store import Store
from tests.helpers import intruded
from tests.helpers.cli_processes import run_cli, shared, wait_until_gone

ENGINES = ["mlx", "torch"]
FAKE_SSH = Path(__file__).parent.parent / "helpers" / "fake_ssh.py"


@pytest.fixture(autouse=True)
def no_process_left_behind(siliconbench_home):
    yield
    assert wait_until_gone(siliconbench_home) == []


@pytest.fixture
def ssh(tmp_path, monkeypatch):
    """The stand-in ssh first on PATH; `ssh.calls()` is every command line it was given,
    `ssh.answer(host, how)` makes it answer a host "ok", "fail" or "slow" (fail by default)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    exe = folder / "ssh"
    exe.write_text(f"#!{sys.executable}\n" + FAKE_SSH.read_text())
    exe.chmod(0o755)
    log, answers = tmp_path / "ssh-calls.jsonl", tmp_path / "ssh-answers.json"
    answers.write_text("{}")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SSH_LOG", str(log))
    monkeypatch.setenv("FAKE_SSH_ANSWERS", str(answers))

    class Ssh:
        path = exe

        @staticmethod
        def calls() -> list[list[str]]:
            return [json.loads(line) for line in log.read_text().splitlines()] \
                if log.exists() else []

        @staticmethod
        def answer(host: str, how: str) -> None:
            known = json.loads(answers.read_text())
            answers.write_text(json.dumps(known | {host: how}))
    return Ssh


def parse(text):
    return hosts_mod.parse(text)


def spec(framework, **params):
    return RunSpec("allreduce", framework, "cpu",
                   {"sizes": [64], "dtypes": ["float32"], "processes": 1, **params},
                   quick=True, time_limit_s=120)


def refused(framework: str, hosts: str) -> str:
    """The sentence that refuses these hosts, from planning the run (nothing starts)."""
    with pytest.raises(UsageError) as e:
        ChildRun(spec(framework, hosts=hosts))
    message = str(e.value)
    assert "\n" not in message and message.endswith("."), message
    return message


def hostfile(folder: Path, data) -> str:
    path = folder / "hosts.json"
    path.write_text(json.dumps(data))
    return str(path)


def one_sentence_and_nothing_stored(out) -> str:
    assert out.returncode == 2, (out.stdout, out.stderr)
    [line] = out.stderr.splitlines()
    assert line.startswith("siliconbench: ") and "Traceback" not in line
    assert Store().runs() == []
    return line


# --- a host that is an ssh option ------------------------------------------------------

@pytest.mark.parametrize("framework", ENGINES)
@pytest.mark.parametrize("form", ["alone", "after loopback", "hostfile ssh"])
def test_a_host_that_is_an_ssh_option_runs_nothing(framework, form, ssh, tmp_path):
    marker = tmp_path / "PWNED"
    payload = f"-oProxyCommand=touch {marker}"
    hosts = {"alone": payload, "after loopback": f"127.0.0.1,{payload}",
             "hostfile ssh": hostfile(tmp_path, [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]},
                                                 {"ssh": payload, "ips": ["10.0.0.2"]}])}[form]
    out = run_cli("run", "allreduce", "--framework", framework, "--processes", "1",
                  "--sizes", "4096", "--quick", f"--hosts={hosts}")
    line = one_sentence_and_nothing_stored(out)
    assert "is not a host" in line, line
    assert not marker.exists()
    assert ssh.calls() == []        # refused before any ssh was started


def test_help_is_not_a_host(ssh):
    out = run_cli("run", "allreduce", "--framework", "mlx", "--hosts=--help", "--sizes", "64")
    assert one_sentence_and_nothing_stored(out) == \
        "siliconbench: --help is not a host name or an IP address."
    assert ssh.calls() == []


def test_every_ssh_command_line_ends_its_options_before_the_host(ssh):
    from siliconbench.core.launch import unreachable
    ssh.answer("admin@10.0.0.2", "ok")
    ssh.answer("10.0.0.3", "ok")
    assert unreachable(["admin@10.0.0.2", "10.0.0.3"]) is None
    calls = ssh.calls()
    assert len(calls) == 2
    for call in calls:
        i = call.index("--")
        assert call[i + 1] in ("admin@10.0.0.2", "10.0.0.3")
        assert all(a.startswith("-") or call[k - 1] == "-o" for k, a in enumerate(call[:i]))


# --- parsing: a fuzz of host strings -----------------------------------------------------

BAD = ["-oProxyCommand=touch x", "--help", "-l", "a b", "a;b", "a|b", "$(touch x)",
       "`touch x`", "a'b", 'a"b', "a&b", "a>b", "a\tb", "a\nb", "host=1", "mäc.local",
       "mac\u200b2", "user@", "@host", "-u@host", "us er@host", "ünï@host", "1.2.3", "999.1.1.1",
       "a..b", "-a.b", "a-.b", "x" * 254, "fe80::1%en 0", "fe80::1%;x", "[::1]", "10.0.0.1:22"]
GOOD = ["10.0.0.1", "mac-studio.local", "admin@10.0.0.2", "fe80::1%en0", "2001:db8::1",
        "MacBook-Pro", "a.b.c", "user_1@mac2"]


@pytest.mark.parametrize("bad", BAD)
def test_a_string_that_is_not_a_host_is_one_sentence(bad):
    for text in (bad, f"10.0.0.1,{bad}"):
        with pytest.raises(HostsError) as e:
            parse(text)
        message = str(e.value)
        assert "\n" not in message and message.endswith("."), message


def test_host_names_and_addresses_parse_as_given():
    assert [h.ssh for h in parse(",".join(GOOD)).hosts] == GOOD
    assert [h.address for h in parse("admin@10.0.0.2,mac2").hosts] == ["10.0.0.2", "mac2"]


def test_a_fuzz_of_host_strings_gives_hosts_or_one_sentence():
    """Random strings over the characters that matter: whatever parses can be neither an
    option nor more than one shell word; whatever does not is one sentence."""
    import shlex
    rng = random.Random(29)
    alphabet = "-=;$()`'\" \t|&<>@.:%,/\\*?!~#{}[]^" + "abcz019" + "äé\u200b\u202e"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24)))
        try:
            hosts = parse(text).hosts
        except HostsError as e:
            assert "\n" not in str(e) and str(e).endswith(".")
            continue
        for h in hosts:
            for part in (h.ssh, h.address):
                assert not part.startswith("-") and shlex.quote(part) == part, text


def test_a_thousand_hosts_are_one_sentence():
    hosts = ",".join(f"10.0.{i // 250}.{i % 250 + 1}" for i in range(1000))
    with pytest.raises(HostsError, match="names 1,000 hosts; SiliconBench runs across at most "
                                         "256."):
        parse(hosts)


def test_a_thousand_hosts_through_the_real_command(ssh):
    hosts = ",".join(f"10.0.{i // 250}.{i % 250 + 1}" for i in range(1000))
    out = run_cli("run", "allreduce", "--framework", "torch", "--hosts", hosts, "--sizes", "64")
    assert "names 1,000 hosts" in one_sentence_and_nothing_stored(out)
    assert ssh.calls() == []


# --- hostfiles carry hosts and nothing else ---------------------------------------------

def test_a_hostfile_that_would_change_what_runs_is_refused(tmp_path, ssh):
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "sitecustomize.py").write_text(f"open({str(tmp_path / 'PWNED')!r}, 'w')\n")
    hosts = [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}]
    envs = hostfile(tmp_path, {"envs": [f"PYTHONPATH={evil}"], "hosts": hosts})
    assert refused("mlx", envs).endswith('remove "envs" from the hostfile.')
    out = run_cli("run", "allreduce", "--framework", "mlx", "--processes", "2", "--hosts",
                  envs, "--sizes", "64", "--quick")
    assert 'sets environment variables for every rank ("envs")' in \
        one_sentence_and_nothing_stored(out)
    assert not (tmp_path / "PWNED").exists()
    mpi = hostfile(tmp_path, {"backend": "mpi", "hosts": hosts})
    assert refused("mlx", mpi) == ('The hostfile asks for the "mpi" backend; SiliconBench takes '
                                   'the backend from --backend only: remove "backend" from the '
                                   'hostfile, or pass --backend.')
    for data in ({"hosts": hosts, "python": "/tmp/evil"},
                 [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"], "cmd": "touch x"}]):
        assert "holds" in refused("mlx", hostfile(tmp_path, data))
    assert ssh.calls() == []


def test_what_mlx_distributed_config_writes_is_taken(tmp_path):
    """`"backend": "ring"` and an empty `"envs"`, as mlx.distributed_config writes them; the
    launcher gets a hostfile of SiliconBench's own, with the hosts only."""
    path = hostfile(tmp_path, {"backend": "ring", "envs": [],
                               "hosts": [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}]})
    child = ChildRun(spec("mlx", hosts=path, processes=2))
    try:
        cmd = child._launch.command
        given = cmd[cmd.index("--hostfile") + 1]
        assert given != path and Path(given).parent == Path(child._launch.folder)
        assert json.loads(Path(given).read_text()) == {
            "hosts": [{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}] * 2}
    finally:
        child._launch.close()
    assert not Path(child._launch.folder).exists()


# --- host lists that are not host lists --------------------------------------------------

def test_thirty_hosts_are_a_list_not_a_file_name(ssh):
    hosts = ",".join(f"10.0.0.{i}" for i in range(1, 31))
    assert len(hosts) > 255
    out = run_cli("run", "allreduce", "--framework", "mlx", "--processes", "1", "--hosts",
                  hosts, "--sizes", "64")
    line = one_sentence_and_nothing_stored(out)
    assert line.startswith("siliconbench: Host 10.0.0.") and "does not answer over SSH" in line


@pytest.mark.parametrize("framework", ENGINES)
def test_an_empty_host_list_is_refused(framework, tmp_path):
    assert refused(framework, ",,,") == ("The host list names no host; give addresses "
                                        "separated by commas, or leave it empty for this "
                                        "machine.")
    assert "names no host" in refused(framework, hostfile(tmp_path, []))
    assert "names no host" in refused(framework, hostfile(tmp_path, {"hosts": []}))
    assert refused(framework, "10.0.0.1,,10.0.0.2").endswith("has an empty entry between "
                                                            "its commas.")


def test_an_empty_host_list_through_the_real_command():
    out = run_cli("run", "allreduce", "--framework", "torch", "--hosts", ",,,", "--sizes", "64")
    assert "names no host" in one_sentence_and_nothing_stored(out)


def test_a_hostfile_that_is_not_a_regular_file_is_refused_as_such(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    folder = tmp_path / "folder.json"
    folder.mkdir()
    for path in (fifo, zero, folder):
        assert refused("mlx", str(path)) == (f"{path} is not a regular file, so SiliconBench "
                                            "does not read it as a hostfile.")
    assert refused("mlx", str(tmp_path / "missing.json")) == \
        f"There is no hostfile at {tmp_path / 'missing.json'}."


def test_what_mlx_launch_would_refuse_is_refused_first(tmp_path):
    for hosts in ("localhost", "::1", "127.0.0.1,localhost"):
        assert refused("mlx", hosts).startswith("mlx.launch starts ranks on this machine only "
                                                "when it is named 127.0.0.1")
    no_ips = hostfile(tmp_path, [{"ssh": "mac1", "ips": ["10.0.0.1"]}, {"ssh": "mac2"}])
    assert refused("mlx", no_ips) == ("MLX's ring backend connects over IP addresses, and "
                                      'mac2 is a name: give its address, or a hostfile whose '
                                      '"ips" list it.')
    assert "connects over IP addresses" in refused("mlx", "mac1,mac2")
    assert "cannot be one of several hosts" in refused("mlx", "127.0.0.1,10.0.0.2")
    assert "cannot be one of several hosts" in refused("torch", "127.0.0.1,10.0.0.2")


def test_unreachable_hosts_are_refused_at_the_first_failure(ssh):
    """200 hosts that never answer but one that fails at once: refused as soon as that one
    fails, every other question ended (the old check asked 16 at a time, 5 s each)."""
    from siliconbench.core.launch import unreachable
    names = [f"10.1.{i // 200}.{i % 200 + 1}" for i in range(200)]
    for name in names:
        ssh.answer(name, "slow")
    ssh.answer(names[150], "fail")
    began = time.monotonic()
    said = unreachable(names)
    took = time.monotonic() - began
    assert said == (f"Host {names[150]} does not answer over SSH (ssh: connect to host "
                    f"{names[150]} port 22: Connection refused).")
    # Before any slow one would have answered (they sleep 60 s): the bound is that, not a
    # speed target, since starting 200 stand-in ssh processes takes seconds on a busy CPU.
    assert took < 45, took
    left = [p for p in psutil.process_iter(["cmdline"])
            if str(ssh.path) in " ".join(p.info["cmdline"] or [])]
    assert left == []


# --- nothing listens beyond the ranks ----------------------------------------------------

def _listening_sockets(root: psutil.Process) -> set:
    found = set()
    try:
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return found
    for p in tree:
        try:
            found |= {(c.laddr.ip, c.laddr.port) for c in p.net_connections("inet")
                      if c.status == psutil.CONN_LISTEN}
        except psutil.Error:
            pass
    return found


@pytest.mark.parametrize("framework", ENGINES)
def test_a_local_run_listens_on_loopback_only(framework, short_protocol):
    """Two ranks on this machine. Rank 1 is stopped (SIGSTOP) as soon as it announces itself,
    before it joins the group, so rank 0 waits with its sockets open (MLX's ring listens only
    until it forms); every listening socket of the run's processes is read meanwhile, and
    through the run."""
    import ipaddress
    import threading
    child = ChildRun(spec(framework, processes=2, sizes=[64, 1 << 20])).start()
    done = []
    waiting = threading.Thread(target=lambda: done.append(child.wait()))
    waiting.start()
    seen: set = set()
    try:
        root = psutil.Process(child._proc.pid)
        deadline = time.monotonic() + 120
        while 1 not in child._ranks and time.monotonic() < deadline:
            seen |= _listening_sockets(root)
            time.sleep(0.005)
        rank1 = child._ranks[1]
        rank1.suspend()
        try:
            waited = time.monotonic() + 30
            while time.monotonic() < waited and not seen:
                seen |= _listening_sockets(root)
                time.sleep(0.05)
            seen |= _listening_sockets(root)
        finally:
            rank1.resume()
    finally:
        waiting.join(timeout=300)
    [rec] = done
    assert rec.status == "ok", rec.reason
    assert seen, "no listening socket was seen: the check saw nothing"
    beyond = [(ip, port) for ip, port in seen
              if not ipaddress.ip_address(ip.removeprefix("::ffff:")).is_loopback]
    assert beyond == []


def test_a_port_in_use_on_another_address_does_not_stop_a_local_run(short_protocol):
    """The ranks bind loopback only, so a listener on this machine's network address at the
    same port is no conflict (torchrun's store used to bind every interface and fail)."""
    ours = sorted(a.address for addrs in psutil.net_if_addrs().values() for a in addrs
                  if a.family == socket.AF_INET and not a.address.startswith("127."))
    if not ours:
        pytest.skip("this machine has no IPv4 address but loopback")
    with socket.socket() as other:
        other.bind((ours[0], 0))
        other.listen()
        port = other.getsockname()[1]
        out = run_cli("run", "allreduce", "--framework", "torch", "--processes", "2",
                      "--port", str(port), "--sizes", "64", "--quick", timeout=300)
    assert out.returncode == 0, out.stderr


@pytest.fixture(scope="module")
def intruded_runs(tmp_path_factory) -> dict:
    """Both intruded runs ("stays", "left"), made once a session (tests.helpers.intruded)."""
    home, runs = shared(tmp_path_factory, intruded.NAME, intruded.make)
    return {name: {**run, "home": home / name} for name, run in runs.items()}


def test_a_foreign_connection_to_a_ranks_port_is_named(intruded_runs):
    """A process of this machine that connects to MLX rank 0's port first is taken for rank 1
    and the ring never forms (MLX then says only "[ring] Couldn't connect (error: 111)");
    the run's sentence names the process."""
    run = intruded_runs["stays"]
    assert (f"The run failed: Another program ({run['name']}, pid {run['pid']}) connected to "
            f"port {run['port']}, where the ranks were forming their group, and was taken for "
            "a rank; end it, or choose other ports with --port. 0 result rows were kept.") \
        in run["said"]
    assert run["left_behind"] == []


def test_a_foreign_connection_ends_the_run_before_mlx_gives_up(intruded_runs):
    """The group cannot form once a stranger is taken for a rank, and MLX's ring gives up
    only after about 32 s of retries (a run that waited for it took 33.6 s here). The run
    ends as soon as the watch of its ports sees the stranger (every WATCH_S), while it is
    still connected (one that has left looks like a rank that was killed: see below)."""
    assert intruded_runs["stays"]["took_s"] < 30, intruded_runs["stays"]


def test_a_foreign_connection_that_left_at_once_is_named(intruded_runs):
    """One that connects and leaves at once was gone by the end, and the run failed after
    32 s with MLX's words alone; the launch watches the ports while the group forms, and the
    rank's half-closed end of the connection names its port."""
    run = intruded_runs["left"]
    port, came_from, said = run["port"], run["came_from"], run["said"]
    why = re.search(r"The run failed: (A program of this machine connected to port "
                    rf"{port} \(from port {came_from}\) while the ranks were forming their group, was "
                    "taken for a rank and left, so the group never formed; run again, or "
                    r"choose other ports with --port\.) 0 result rows were kept\.", said)
    assert why, said
    [rec] = Store(run["home"] / "results.sqlite3").runs()
    assert rec.reason == why.group(1)
    assert run["left_behind"] == []


def test_a_rank_killed_before_its_socket_was_seen_is_not_a_stranger():
    """A rank killed just after it connected leaves the same half-closed end on rank 0's
    port as a stranger that left (a CI run of test_a_killed_rank_is_named_and_every_other_
    rank_ends read "A program of this machine connected to port ..."): where the launcher
    says a rank was killed by a signal, that is the cause."""
    from siliconbench.core.launch import Launch
    with socket.socket() as s:      # a port of nobody's: no live connection to it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    launch = Launch("mlx", [], ["127.0.0.1"], 2, [port],
                    strangers=[(None, None, port, 54321)])
    assert launch.failure("Node with rank 1 exited with code -9\n", None) == \
        "Rank 1 of 2 (on 127.0.0.1) was killed (SIGKILL); every other rank was ended."
    assert not launch.intruded
    # A rank that failed on its own (MLX's "Couldn't connect": exit 1) and the launcher's
    # SIGTERM of the others leave the stranger the cause.
    for said in ("Node with rank 1 exited with code 1\n",
                 "Node with rank 0 exited with code -15\n"):
        assert launch.failure(said, None).startswith(
            f"A program of this machine connected to port {port} (from port 54321)"), said


def test_a_fuzz_of_host_strings_through_the_real_command(ssh, tmp_path):
    """Hostile strings through `siliconbench run`: each is one sentence and exit 2, nothing
    is stored, no marker appears, and whatever reached ssh (the stand-in) came after `--`."""
    rng = random.Random(30)
    marker = tmp_path / "PWNED"
    pieces = ["-oProxyCommand=touch " + str(marker), "$(touch " + str(marker) + ")",
              "`touch " + str(marker) + "`", ";touch " + str(marker), "a b", "--", "-", "=",
              "mac2", "10.0.0.7", "user@", "@", "'", '"', "\u202e", "é", ",", "|", "&&"]
    for _ in range(8):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 4)))
        out = run_cli("run", "allreduce", "--framework", rng.choice(ENGINES), "--processes",
                      "1", "--sizes", "64", f"--hosts={text}")
        assert out.returncode == 2, (text, out.stdout, out.stderr)
        [line] = out.stderr.splitlines()
        assert line.startswith("siliconbench: ") and "Traceback" not in line, text
    assert Store().runs() == []
    assert not marker.exists()
    for call in ssh.calls():
        destination = call[call.index("--") + 1]
        assert not destination.startswith("-") and parse(destination).hosts


@pytest.mark.parametrize("framework", ENGINES)
def test_a_local_runs_collectives_are_put_on_the_loopback_interface(framework, monkeypatch):
    """gloo's pairs and NCCL's bootstrap bind the interface of the machine's host name unless
    told otherwise: on a CUDA machine (backend nccl, torch's auto there) a local run would
    listen beyond loopback, which this CPU's socket test cannot see. The launch names the
    interface that holds 127.0.0.1 (here a made-up one) for both; across hosts, neither."""
    import types
    addr = types.SimpleNamespace
    monkeypatch.setattr(psutil, "net_if_addrs", lambda: {
        "eth7": [addr(family=socket.AF_INET, address="10.1.2.3")],
        "lo9": [addr(family=socket.AF_INET, address="127.0.0.1")]})
    import dataclasses
    child = ChildRun(dataclasses.replace(spec(framework, processes=2, backend="auto"),
                                         device="gpu" if framework == "mlx" else "cpu"))
    try:
        env = child._launch.env
        assert {k: env[k] for k in ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME")} == \
            {"GLOO_SOCKET_IFNAME": "lo9", "NCCL_SOCKET_IFNAME": "lo9"}
    finally:
        child._launch.close()
    from siliconbench.core.hosts import loopback_env
    assert loopback_env(parse("10.0.0.1,10.0.0.2").hosts) == {}
