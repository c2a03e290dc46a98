"""One run in a child process (`python -m siliconbench.core.worker`): the spec checked before it
starts, the process (or a distributed run's launcher and ranks) started, followed and ended,
and its event stream turned into a run record. Enforces a time limit, cancels (SIGTERM, then
SIGKILL), and keeps a crash, an out-of-memory or a time-out as a failed run with its reason and
the rows that already arrived. siliconbench.core.runner keeps the record in the store."""

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
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from siliconbench.core import params as params_mod
from siliconbench.core.catalogue import workload
from siliconbench.core.frameworks import framework, runs_on
from siliconbench.core.kit.rows import nothing_measured
from siliconbench.core.logs import log
from siliconbench.core.measure import settings_for
from siliconbench.core.plan import RunPlan
from siliconbench.core.results import Row, RunRecord, now_iso
from siliconbench.core.telemetry import TelemetrySampler

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
    # The bounds measured before on this machine (siliconbench.core.kit.ceilings.stored_bounds)
    # that the workload's numbers are held against: read by the command or the app from the
    # store it opened (runner.execute), so that the run's own process never opens the store.
    ceilings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def prepare(spec: RunSpec) -> RunSpec:
    """Check everything that can be checked without the framework; fill in defaults: the
    spec as its plan_run has it."""
    return spec_of(plan_run(spec))


def spec_of(plan: RunPlan) -> RunSpec:
    """The spec a plan was made from, its parameters as the plan resolved them."""
    return RunSpec(plan.workload, plan.framework, plan.device, plan.thawed_params(),
                   plan.label, plan.quick, plan.time_limit_s, dict(plan.ceilings))


def plan_run(spec: RunSpec) -> RunPlan:
    """The run's plan (siliconbench.core.plan.RunPlan), made once where the run starts:
    everything that can be checked without the framework is checked (UsageError, one
    sentence), the parameters resolved, and the workload's own inputs worked out
    (Workload.plans: the llm's model file read once, its precision decided)."""
    try:
        w = workload(spec.workload)
        fw = framework(spec.framework)
        if fw.name not in runs_on(w):
            raise UsageError(f"The {w.name} workload does not run on {fw.title} yet; it runs on "
                             f"{', '.join(runs_on(w))}.")
        if not fw.installed():
            raise UsageError(fw.missing_reason())
        resolved = params_mod.resolve(w.params, spec.params)
        models = fw.train_models
        if models and w.name in ("train", "memory") and resolved.get("model") not in models:
            raise UsageError(f"{resolved.get('model')} is not available on {fw.title}; "
                             f"choose {' or '.join(models)}.")
        resolved, precision, model = w.plan(resolved, fw.name)    # its checks too
        if (w.distributed or w.starts_runs) and "backend" in resolved:
            from siliconbench.core.launch import backend_refused
            if problem := backend_refused(fw.name, resolved, spec.device):
                raise UsageError(problem)
        settings_for(spec.quick)    # SETTINGS_ENV, if set, must be readable
    except ValueError as e:
        raise UsageError(str(e)) from None
    if spec.time_limit_s is not None and spec.time_limit_s <= 0:
        raise UsageError("The time limit must be a positive number of seconds.")
    return RunPlan(spec.workload, spec.framework, spec.device, resolved, spec.label,
                   spec.quick, spec.time_limit_s, precision, model, spec.ceilings)


def child_env() -> dict:
    """The environment of a worker child."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env[PARENT_PID_ENV] = str(os.getpid())  # the worker ends itself if we vanish
    # The child must find this copy of siliconbench/core/ even when run from elsewhere (tests,
    # bundles).
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def worker_command(*args: str) -> list[str]:
    """The command line of a worker child. In the Mac app, sys.executable is the bundle's
    Contents/MacOS/python, which cannot start on its own (py2app issues #501, #561), so the
    bundle's main executable runs the worker instead (siliconbench/gui/bundle_main.py reads the
    flag)."""
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
        self.plan = plan_run(spec)
        self.spec = spec_of(self.plan)
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
                                                   json.dumps(self.plan.to_dict())),
                                    {LAUNCHED_ENV: "1"})
            except LaunchError as e:
                raise UsageError(str(e)) from None

    def start(self) -> ChildRun:
        from siliconbench.core.machine import probe
        from siliconbench.core.machine_names import name_for
        env = child_env()
        if self._launch is not None:
            from siliconbench.core.launch import LAUNCHED_ENV
            env[LAUNCHED_ENV] = "1"
            # The launcher's and its local ranks' temporary files go in a folder of this run's
            # (siliconbench.core.launch.plan made it), removed when it ends: mlx.launch leaves a
            # pid file and a hostfile per rank in the temporary folder, and torchrun a
            # torchelastic_* folder, at every run.
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
        if self._launch is not None:
            self._launch.watch(self._proc.pid)
        if self._launch is None:
            # The spec first: the child waits for it before importing its framework (seconds),
            # so the machine probe below overlaps that import instead of delaying it.
            self._proc.stdin.write(json.dumps(self.plan.to_dict()))
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
        # A sustained run (--duration) reads a Mac's clocks too, beside IOReport's power.
        self.telemetry = TelemetrySampler(self.spec.device,
                                          clocks=bool(self.spec.params.get("duration"))).start()
        threading.Thread(target=self._read_events, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        return self

    def close(self) -> None:
        """Whatever happened, nothing of the run outlives it: its processes, its ranks, its
        ports and its folder. wait() does this at a run's end; execute() calls it on every
        other way out (an exception past wait, a second signal)."""
        if self._proc is not None and self._proc.poll() is None:
            self.stop()
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

    @property
    def started(self) -> bool:
        """Whether start() got as far as starting its process."""
        return self._proc is not None

    def stop(self) -> None:
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
                self.stop()
            elif deadline is not None and time.monotonic() > deadline:
                ended_by = "timeout"
                self.stop()
            elif self._launch is not None and ended_by is None and self._launch.intruded:
                ended_by = "intruded"       # the group cannot form: failure() says why
                self.stop()
            elif self._launch is not None and time.monotonic() - heard > SILENT_RANKS_S:
                ended_by, error = "silent", {"kind": "error", "message": self._silence()}
                self.stop()
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
                    self.stop()
                continue
            if kind == "started":
                rec.device_name = event.get("device_name")
                if isinstance(event.get("framework"), str) and event["framework"].strip():
                    # what the run measured where it is no framework of ours: a server
                    # given by --url names itself
                    rec.framework = event["framework"].strip()[:200]
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
            if self._launch is not None:
                self._launch.observe(event)
            self.telemetry.observe(event)
            self.on_event(event)
        code = self._proc.wait()
        self.telemetry.stop_into(rec)
        self._stderr_reader.join(timeout=2)
        if self._launch is not None:
            self._end_ranks()
            self._launch.close()
            if not finished and ended_by in (None, "intruded"):
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
