"""Runs a workload in a child process (`python -m siliconbench.core.worker`) and turns its event stream into
a run record. Enforces a time limit, cancels (SIGTERM, then SIGKILL), and keeps a crash, an
out-of-memory or a time-out as a failed run with its reason and the rows that already arrived."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from siliconbench.core import params as params_mod
from siliconbench.core.frameworks import FRAMEWORKS, DeviceInfo, framework, runs_on
from siliconbench.core.logs import log
from siliconbench.core.measure import settings_for
from siliconbench.core.results import RunRecord, Row, now_iso
from siliconbench.core.telemetry import TelemetrySampler
from siliconbench.core.kit.rows import nothing_measured
from siliconbench.core.catalogue import workload

KILL_GRACE_S = 5.0
# A distributed run whose ranks say nothing this long has a rank or a link that hangs (a
# collective waits on every rank): longer than any one point of the sweeps takes.
SILENT_RANKS_S = 600.0
PARENT_PID_ENV = "SILICONBENCH_PARENT_PID"
STDERR_LINES = 200


class UsageError(ValueError):
    """The run cannot start as asked (bad workload, framework, device or parameter). The
    message is one sentence for the user; nothing was run or stored."""


@dataclass
class RunSpec:
    """What to run: a workload, on a framework's device, with its parameters."""
    workload: str
    framework: str = "torch"
    device: str = "cpu"
    params: dict[str, Any] = field(default_factory=dict)
    label: str | None = None
    quick: bool = False                  # shorter measurement settings (quick suite, tests)
    time_limit_s: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def prepare(spec: RunSpec) -> RunSpec:
    """Check everything that can be checked without the framework; fill in defaults."""
    try:
        w = workload(spec.workload)
        fw = framework(spec.framework)
        if fw.name not in runs_on(w):
            raise UsageError(f"The {w.name} workload does not run on {fw.title} yet; it runs on "
                             f"{', '.join(runs_on(w))}.")
        if not fw.installed():
            raise UsageError(fw.missing_reason())
        resolved = params_mod.resolve(w.params, spec.params)
        w.check(resolved)
        settings_for(spec.quick)    # SETTINGS_ENV, if set, must be readable
    except ValueError as e:
        raise UsageError(str(e)) from None
    if spec.time_limit_s is not None and spec.time_limit_s <= 0:
        raise UsageError("The time limit must be a positive number of seconds.")
    return RunSpec(spec.workload, spec.framework, spec.device, resolved, spec.label,
                   spec.quick, spec.time_limit_s)


def _child_env() -> dict:
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env[PARENT_PID_ENV] = str(os.getpid())  # the worker ends itself if we vanish
    # The child must find this copy of siliconbench/core/ even when run from elsewhere (tests, bundles).
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def worker_command(*args: str) -> list[str]:
    """The command line of a worker child. In the Mac app, sys.executable is the bundle's
    Contents/MacOS/python, which cannot start on its own (py2app issues #501, #561), so the
    bundle's main executable runs the worker instead (siliconbench/gui/bundle_main.py reads the flag)."""
    from siliconbench.core.bundle import WORKER_FLAG, bundle_executable, in_app_bundle
    if in_app_bundle():
        return [bundle_executable(), WORKER_FLAG, *args]
    return [sys.executable, "-m", "siliconbench.core.worker", *args]


def _describe_exit(code: int, inside: dict | None = None) -> str:
    """Why a run's process ended without finishing; `inside` is its last "inside" event (the
    native code it had entered), named with where to report a crash there."""
    if code == -signal.SIGKILL:
        return ("the run's process was killed (SIGKILL), most likely by the system for "
                "running out of memory")
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        if inside:
            return (f"the run's process crashed ({name}) in {inside.get('what')}; "
                    f"{inside.get('report')}")
        return f"the run's process crashed ({name})"
    return f"the run's process exited with code {code}"


def _process(pid: int):
    """The process behind a pid, pinned to its start time (a reused pid is not it)."""
    import psutil
    try:
        return psutil.Process(pid)
    except psutil.Error:  # already gone: nothing to end
        return None


class ChildRun:
    """One run in a child process. start(), then wait(); cancel() from any thread."""

    def __init__(self, spec: RunSpec, on_event: Callable[[dict], None] | None = None) -> None:
        self.spec = prepare(spec)
        self.on_event = on_event or (lambda e: None)
        self._cancelled = threading.Event()
        self._cancel_reason = "cancelled by the user"
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._launch = None
        self._ranks: dict = {}  # rank -> psutil.Process, as each rank announced itself
        if workload(self.spec.workload).distributed:
            from siliconbench.core.launch import LAUNCHED_ENV, LaunchError, plan
            try:
                self._launch = plan(self.spec.framework, self.spec.params,
                                    worker_command("run", "--spec",
                                                   json.dumps(self.spec.to_dict())),
                                    {LAUNCHED_ENV: "1"})
            except LaunchError as e:
                raise UsageError(str(e)) from None

    def start(self) -> "ChildRun":
        from siliconbench.core.machine import probe
        from siliconbench.core.machine_names import name_for
        env = _child_env()
        if self._launch is not None:
            from siliconbench.core.launch import LAUNCHED_ENV
            env[LAUNCHED_ENV] = "1"
            # The launcher's and its local ranks' temporary files go in a folder of this run's
            # (siliconbench.core.launch.plan made it), removed when it ends: mlx.launch leaves a pid file
            # and a hostfile per rank in the temporary folder, and torchrun a torchelastic_*
            # folder, at every run.
            env["TMPDIR"] = self._launch.folder
            env.update(self._launch.env)
        try:
            self._proc = subprocess.Popen(
                self._launch.command if self._launch else worker_command("run"),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, env=env,
                start_new_session=True)  # our own process group: a terminal's Ctrl-C is ours
        except BaseException:
            if self._launch is not None:
                self._launch.close()
            raise
        if self._launch is None:
            # The spec first: the child waits for it before importing its framework (seconds),
            # so the machine probe below overlaps that import instead of delaying it.
            self._proc.stdin.write(json.dumps(self.spec.to_dict()))
            self._proc.stdin.close()
        # A launcher's stdin stays open and empty: mlx.launch forwards it to the ranks, and
        # spins on one that has ended.
        machine = probe().to_dict()
        # The name given to this machine (Name Machine) labels its new runs too.
        self.record = RunRecord(workload=self.spec.workload, framework=self.spec.framework,
                                device=self.spec.device, params=self.spec.params,
                                label=self.spec.label or name_for(machine), machine=machine)
        self.record.software = dict(self.record.machine.get("frameworks") or {})
        # Power, temperature and load, sampled here so the child's workload pays nothing;
        # `telemetry.snapshot()` gives the series so far, for a live plot.
        self.telemetry = TelemetrySampler(self.spec.device).start()
        threading.Thread(target=self._read_events, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        return self

    def close(self) -> None:
        """Whatever happened, nothing of the run outlives it: its processes, its ranks, its
        ports and its folder. wait() does this at a run's end; execute() calls it on every
        other way out (an exception past wait, a second signal)."""
        if self._proc is not None and self._proc.poll() is None:
            self._stop()
        if self._launch is not None:
            self._end_ranks()
            self._launch.close()

    def _read_events(self) -> None:
        for line in self._proc.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)  # the child closed stdout: it has ended

    def _read_stderr(self) -> None:
        for line in self._proc.stderr:
            self._stderr.append(line.rstrip("\n"))

    def cancel(self, reason: str = "cancelled by the user") -> None:
        self._cancel_reason = reason
        self._cancelled.set()

    def _stop(self) -> None:
        """SIGTERM, then SIGKILL after a grace period."""
        p = self._proc
        if p.poll() is None:
            # The whole process group: data-loader workers and compilers go too.
            self._signal_group(signal.SIGTERM)
            try:
                p.wait(KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                p.wait()

    def _signal_group(self, sig: int) -> None:
        import psutil
        groups = {self._proc.pid}
        # torchrun starts each rank in a session of its own: their groups go too.
        for p in self._ranks.values():
            with contextlib.suppress(ProcessLookupError, psutil.Error):
                if p.is_running():  # not a new process under a reused pid
                    groups.add(os.getpgid(p.pid))
        groups.discard(os.getpgrp())
        for group in groups:
            try:
                os.killpg(group, sig)
            except ProcessLookupError:
                pass  # it ended meanwhile

    def _end_ranks(self) -> None:
        """After a distributed run: no rank may outlive its launcher."""
        import psutil
        left = [p for p in self._ranks.values() if p.is_running()]
        for p in left:
            with contextlib.suppress(psutil.Error):
                p.kill()  # psutil refuses a pid that another process reuses by now
        psutil.wait_procs(left, timeout=KILL_GRACE_S)

    def _on_rank(self, event: dict) -> str | None:
        """A rank announced itself: keep its process (to end it) and its host's fingerprint;
        one sentence when its host runs other versions than the first rank's."""
        # A pid means this process only on its own host: another Mac's rank 1234 is not ours
        # to end (its launcher ends it there).
        if event["host"] == socket.gethostname() and \
                (process := _process(event["pid"])) is not None:
            self._ranks[event["rank"]] = process
        self.record.settings.setdefault("hosts", {})[str(event["rank"])] = event["host"]
        if "machine" in event:
            self.record.settings.setdefault("machines", {})[event["host"]] = \
                event["machine"] | {"siliconbench": event.get("siliconbench")}
        return self._launch.mismatch(event)

    def _silence(self) -> str:
        """Why the ranks fell silent, as far as this machine can tell."""
        import psutil

        from siliconbench.core.numbers import duration
        stopped = []
        for rank, p in sorted(self._ranks.items()):
            with contextlib.suppress(psutil.Error):
                if p.status() in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP):
                    stopped.append(rank)
        world = self._launch.world
        if stopped:
            who = ", ".join(f"rank {r} (on {self._launch.host_of(r)})" for r in stopped)
            return (f"No rank reported for {duration(SILENT_RANKS_S)}: {who} of {world} is "
                    "stopped; every rank was ended.")
        return (f"No rank reported for {duration(SILENT_RANKS_S)}: a rank or the link between "
                f"hosts hangs; all {world} ranks were ended.")

    def wait(self) -> RunRecord:
        """Follow the child until it ends; the record says how it ended. UsageError when
        the child found the run impossible (an unknown device, say)."""
        rec = self.record
        deadline = time.monotonic() + self.spec.time_limit_s if self.spec.time_limit_s else None
        error: dict | None = None
        inside: dict | None = None
        finished = False
        ended_by: str | None = None
        heard = time.monotonic()
        while True:
            if self._cancelled.is_set():
                ended_by = "cancelled"
                self._stop()
            elif deadline is not None and time.monotonic() > deadline:
                ended_by = "timeout"
                self._stop()
            elif self._launch is not None and time.monotonic() - heard > SILENT_RANKS_S:
                ended_by, error = "silent", {"kind": "error", "message": self._silence()}
                self._stop()
            try:
                line = self._lines.get(timeout=0.1)
            except queue.Empty:
                continue
            heard = time.monotonic()
            if line is None:
                break
            event = self._parse(line)
            if event is None:
                continue
            kind = event.get("event")
            if kind == "rank":
                why = self._on_rank(event)
                if ended_by is None and why:
                    ended_by, error = "mismatch", {"kind": "usage", "message": why}
                    self._stop()
                continue
            if kind == "started":
                rec.device_name = event.get("device_name")
                rec.software.update(event.get("software") or {})
                rec.settings.update(event.get("settings") or {})
            elif kind == "settings":
                rec.settings.update(event["settings"])
            elif kind == "row":
                rec.rows.append(Row.from_dict(event["row"]))
            elif kind == "warning":
                rec.warnings.append(event["message"])
            elif kind == "error":
                error = event
            elif kind == "inside":
                inside = event
            elif kind == "finished":
                finished = True
            self.telemetry.observe(event)
            self.on_event(event)
        code = self._proc.wait()
        self.telemetry.stop_into(rec)
        self._stderr_reader.join(timeout=2)
        if self._launch is not None:
            self._end_ranks()
            self._launch.close()
            if not finished and ended_by is None:
                why = self._launch.failure("\n".join(self._stderr),
                                           error["message"] if error else None)
                if why is not None:
                    error = {"kind": "error", "message": why}
        rec.finished_at = now_iso()
        rec.stderr_tail = "\n".join(self._stderr)
        if error is not None and error.get("kind") == "usage":
            raise UsageError(error["message"])
        if ended_by == "cancelled":
            rec.status, rec.reason = "cancelled", self._cancel_reason
        elif ended_by == "timeout":
            rec.status = "failed"
            rec.reason = f"stopped at the time limit of {self.spec.time_limit_s:g} s"
        elif error is not None:
            rec.status, rec.reason = "failed", error["message"]
        elif not finished or code != 0:
            rec.status, rec.reason = "failed", _describe_exit(code, inside)
        elif (why := nothing_measured(rec.rows)) is not None:   # not a green "Done · 0 points"
            rec.status, rec.reason = "failed", why
        if rec.status == "failed":  # the record keeps the tail too; the log outlives deletes
            log.warning("run %s (%s on %s:%s) failed: %s\nchild stderr:\n%s", rec.id,
                        rec.workload, rec.framework, rec.device, rec.reason, rec.stderr_tail)
        return rec

    def _parse(self, line: str) -> dict | None:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            self._stderr.append(line)  # not ours; keep it for the failure report
            return None
        return event if isinstance(event, dict) else None


class RunNotStored(Exception):
    """The run ended but the store could not keep it; `path` is the result file it went to
    instead (None if none could be written). The message is one sentence for the user."""

    def __init__(self, record: RunRecord, why: str, path) -> None:
        self.record, self.why, self.path = record, why, path
        where = (f"The run was written to {path} instead; add it to the store with: "
                 f"siliconbench import {path}") if path else \
            "No file could be written either; export the run while it is on screen."
        super().__init__(f"{why} {where}")


class _Keeper:
    """Keeps a run in the store from its start: a kill at any moment loses nothing measured.
    Progress saves that fail (a lock held elsewhere, a full disk) wait for the next row;
    only the final save decides."""

    def __init__(self, store, rec: RunRecord) -> None:
        self.store, self.rec = store, rec
        self._save(store.begin_run)

    def _save(self, write) -> str | None:
        from siliconbench.core.store import StoreError
        try:
            write(self.rec)
            return None
        except StoreError as e:
            return str(e)

    def on_event(self, event: dict) -> None:
        if event.get("event") in ("started", "row", "warning"):
            self._save(self.store.update_run)

    def forget(self) -> None:
        self._save(lambda rec: self.store.delete([rec.id]))

    def finish(self) -> None:
        from siliconbench.core.store import keep_elsewhere
        why = self._save(self.store.save)
        if why is not None:
            path = keep_elsewhere(self.rec, self.store.path.parent)
            log.error("run %s could not be stored (%s); kept in %s", self.rec.id, why, path)
            raise RunNotStored(self.rec, why, path)


def execute(spec: RunSpec, store=None, on_event: Callable[[dict], None] | None = None,
            started: Callable[[ChildRun], None] | None = None) -> RunRecord:
    """Run to the end and keep the record in `store` (when given), whatever the outcome:
    written when the run starts, again as each row arrives, and at the end. RunNotStored when
    the final save fails (the record is then in a result file). A KeyboardInterrupt (Ctrl-C,
    or SIGTERM/SIGHUP turned into one by the command line) cancels the run, keeps it, and is
    raised again once the record is safe."""
    user_on_event = on_event or (lambda e: None)
    keeper: _Keeper | None = None

    def follow(event: dict) -> None:
        if keeper is not None:
            keeper.on_event(event)
        user_on_event(event)
    child = ChildRun(spec, follow)
    interrupted: KeyboardInterrupt | None = None
    try:
        child.start()
        if store is not None:
            keeper = _Keeper(store, child.record)
        if started is not None:
            started(child)
        rec = child.wait()
    except UsageError:
        if keeper is not None:
            keeper.forget()  # nothing was run: the run was impossible as asked
        raise
    except KeyboardInterrupt as e:
        if child._proc is None:
            raise  # nothing started, nothing to keep
        interrupted = e
        with _signals_held():  # a second Ctrl-C must not lose the record being saved
            child.cancel(getattr(e, "reason", None) or "cancelled by the user (Ctrl-C)")
            child._stop()
            rec = child.wait()
            if keeper is not None:
                keeper.finish()
    finally:
        child.close()
    if interrupted is not None:
        interrupted.record = rec  # what was kept, for the sentence that ends the command
        raise interrupted
    if keeper is not None:
        keeper.finish()
    return rec


def execute_kept(spec: RunSpec, store_path=None, on_event: Callable[[dict], None] | None = None,
                 started: Callable[[ChildRun], None] | None = None
                 ) -> tuple[RunRecord, RunNotStored | None]:
    """execute() with a store connection of its own (the default store when no path): the
    caller's thread may be any. A store that cannot be opened (a full disk, a damaged file)
    or cannot keep the run does not cost the run: it goes to a result file, and the second
    value says where."""
    from siliconbench.core.store import Store, StoreError, home, keep_elsewhere
    try:
        store = Store(store_path)
    except StoreError as e:
        rec = execute(spec, None, on_event, started)
        folder = Path(store_path).parent if store_path else home()
        return rec, RunNotStored(rec, str(e), keep_elsewhere(rec, folder))
    try:
        return execute(spec, store, on_event, started), None
    except RunNotStored as e:
        return e.record, e
    finally:
        store.close()


@contextlib.contextmanager
def _signals_held():
    """Ctrl-C, SIGTERM and SIGHUP do nothing until the block is done: the run is being
    cancelled and kept already, and a second Ctrl-C cancels like the first. Their handlers
    are swapped for one that ignores them, since Python runs every signal handler in the main
    thread whichever thread the signal reached: blocking them in the main thread only (as
    before) let the kernel hand a second Ctrl-C to a reader thread, and it interrupted the
    save. Outside the main thread, where handlers cannot be set, the block runs as it is."""
    held = [s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) if s is not None]
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {}
    try:
        for sig in held:
            before[sig] = signal.signal(sig, lambda *_: None)
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


DEVICE_CACHE = "devices.json"


def _installation_key() -> str:
    """What the devices a framework sees depend on: the installed packages (versions of every
    ML framework and plug-in), this interpreter, the visible GPUs and the hardware."""
    import hashlib

    from siliconbench.core.machine import framework_versions, probe
    parts = [sys.executable, probe().key(), json.dumps(framework_versions(), sort_keys=True)]
    parts += [f"{k}={v}" for k, v in sorted(os.environ.items())
              if k.endswith("_VISIBLE_DEVICES") or k.startswith(("PYTORCH_", "MLX_", "TF_"))]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


DEVICE_CACHE_LIMIT = 1 << 20   # a few devices per framework take a few KB
DEVICE_FIELDS = set(DeviceInfo.__dataclass_fields__)


def _cached_device(entry: object, framework_name: str) -> DeviceInfo | None:
    """The DeviceInfo a devices.json entry holds, or None when it holds something else."""
    if not isinstance(entry, dict) or not set(entry) <= DEVICE_FIELDS:
        return None
    try:
        d = DeviceInfo(**entry)
    except TypeError:                     # a required field missing
        return None
    texts = (d.framework, d.id, d.name, d.kind)
    if d.framework != framework_name or not all(isinstance(t, str) and t for t in texts) or \
            not isinstance(d.usable, bool) or \
            not (d.memory_bytes is None or type(d.memory_bytes) is int and d.memory_bytes >= 0) or \
            not all(t is None or isinstance(t, str) for t in (d.reason, d.note)):
        return None
    return d


def _read_device_cache(path: Path, key: str) -> dict | None:
    """devices.json's answers when it holds answers for this installation (`key`), in its
    shape; None otherwise (missing, another installation's, not a regular file, too large,
    damaged: every such cache is asked again and rewritten)."""
    from siliconbench.core.files import read_small
    try:
        cached = json.loads(read_small(path, DEVICE_CACHE_LIMIT, "device list"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(cached, dict) or cached.get("key") != key or \
            not isinstance(cached.get("frameworks"), dict):
        return None
    for name, entries in cached["frameworks"].items():
        if not isinstance(entries, list) or \
                any(_cached_device(e, name) is None for e in entries):
            return None
    return {"key": key, "frameworks": cached["frameworks"]}


def discover_devices(names: list[str] | None = None,
                     on_found: Callable[[list[DeviceInfo]], None] | None = None,
                     fresh: bool = True) -> list[DeviceInfo]:
    """Every framework's devices, each framework asked in its own child process, in parallel
    (they import heavy libraries, and TensorFlow and PyTorch never share a process).
    `on_found(devices so far)` is called as each framework answers (TensorFlow takes seconds
    to import; the others need not wait for it). fresh=False reuses an answer kept in the
    store's folder while nothing it depends on (_installation_key) has changed."""
    from siliconbench.core.files import write_atomic
    from siliconbench.core.store import home
    names = names or list(FRAMEWORKS)
    cache_path = home() / DEVICE_CACHE
    key = _installation_key()
    cached = _read_device_cache(cache_path, key) if not fresh else None
    if cached is None:
        cached = {"key": key, "frameworks": {}}

    def ask(name: str) -> list[DeviceInfo]:
        fw = framework(name)
        if not fw.installed():
            return [DeviceInfo(name, "-", fw.title, "-", usable=False,
                               reason=fw.missing_reason())]
        if name in cached["frameworks"]:
            return [DeviceInfo(**d) for d in cached["frameworks"][name]]
        found = _ask_child(name, fw)
        if all(d.id != "-" for d in found):  # a failure to load is not worth keeping
            cached["frameworks"][name] = [d.to_dict() for d in found]
        return found
    answers: dict[str, list[DeviceInfo]] = {}
    lock = threading.Lock()

    def ask_and_report(name: str) -> None:
        found = ask(name)
        with lock:
            answers[name] = found
            if on_found is not None:
                on_found([d for n in names if n in answers for d in answers[n]])

    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        list(pool.map(ask_and_report, names))
    try:
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(cache_path, json.dumps(cached))  # two discoveries at once: one wins whole
    except OSError:
        pass  # a read-only data dir only costs the next call its speed
    return [d for n in names for d in answers[n]]

def _ask_child(name: str, fw) -> list[DeviceInfo]:
    """One framework's devices from a child process that imports it."""
    try:
        out = subprocess.run(worker_command("devices", name),
                             capture_output=True, text=True, env=_child_env(), timeout=120)
    except subprocess.TimeoutExpired:
        return [DeviceInfo(name, "-", fw.title, "-", usable=False,
                           reason=f"{fw.title} did not list its devices within 120 s.")]
    for line in out.stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("event") == "devices":
            return [DeviceInfo(**d) for d in event["devices"]]
    last = (out.stderr.strip().splitlines() or ["no output"])[-1]
    return [DeviceInfo(name, "-", fw.title, "-", usable=False,
                       reason=f"{fw.title} failed to load: {last}")]

