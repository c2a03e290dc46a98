"""The child process a run happens in: `python -m siliconbench.core.worker run` reads a run spec (JSON) on
stdin and streams events as JSON lines on stdout; `python -m siliconbench.core.worker devices FRAMEWORK`
prints that framework's devices as JSON. Frameworks are imported here, never in the parent."""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable

from siliconbench.core.text import first_line, is_out_of_memory


def _event_stream() -> Callable[[dict], None]:
    """Own stdout for events; send anything else that writes to fd 1 (library prints, C code)
    to stderr, so the protocol never breaks."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def emit(event: dict) -> None:
        out.write(json.dumps(event, allow_nan=False) + "\n")
        out.flush()
    return emit


def error_kind(exc: BaseException) -> tuple[str, str]:
    """(kind, one sentence) for an exception raised by a workload."""
    from siliconbench.core.kit.errors import ChildRunFailed
    from siliconbench.core.params import ParamError
    text = first_line(exc)
    if isinstance(exc, ParamError):
        return "usage", str(exc)
    if is_out_of_memory(exc):
        # A workload that already says "out of memory at batch size B" keeps its words.
        return "oom", text if text.lower().startswith("out of memory") else \
            f"out of memory: {text}"
    if isinstance(exc, ChildRunFailed):
        return "error", text
    if isinstance(exc, NotImplementedError):
        return "unsupported", f"an operation is not supported on this device: {text}"
    return "error", f"{type(exc).__name__}: {text}"


def run(spec: dict, emit: Callable[[dict], None]) -> int:
    from siliconbench.core.catalogue import workload
    from siliconbench.core.frameworks import UnknownDevice, framework, isolate
    from siliconbench.core.measure import settings_for
    from siliconbench.core.plan import RunPlan
    w = workload(spec["workload"])
    plan = RunPlan.from_dict(spec)   # the run's inputs, worked out where it started
    isolate(spec["framework"])  # TensorFlow and PyTorch never share a process
    quick = bool(spec.get("quick"))
    try:
        settings = settings_for(quick)
    except ValueError as e:
        emit({"event": "error", "kind": "usage", "message": str(e)})
        return 2
    if w.starts_runs:
        return _start_runs(w, plan, settings, quick, emit)
    adapter = framework(spec["framework"]).load()
    try:
        dev = adapter.resolve(spec["device"])
    except UnknownDevice as e:
        emit({"event": "error", "kind": "usage", "message": str(e)})
        return 2
    name = adapter.device_name(dev)
    from siliconbench.core.context import RunContext
    ctx = RunContext(framework=spec["framework"], device_id=spec["device"], adapter=adapter,
                     device=dev, device_name=name, emit=emit, settings=settings,
                     peak=_peak(adapter, dev, name), quick=quick, plan=plan)
    ctx.duration_min = spec["params"].get("duration")   # sustained mode, where it has --duration
    emit({"event": "started", "device_name": name, "software": adapter.software(),
          "settings": {"measure": settings.to_dict(),
                       "peak": ctx.peak.name if ctx.peak else None}})
    if w.multiplies and (words := adapter.caveat(dev)):   # the framework's word on its BLAS
        ctx.warn(words)
    return _run_workload(w, ctx, plan.thawed_params(), emit)


def _start_runs(w, plan, settings, quick: bool, emit: Callable[[dict], None]) -> int:
    """A workload that only starts runs of its own: no framework here. Its first run's
    "started" event (device name, software, settings) is the record's, and an unknown device
    is that run's usage error."""
    from siliconbench.core.context import RunContext
    ctx = RunContext(framework=plan.framework, device_id=plan.device, adapter=None,
                     device=None, device_name="", emit=emit, settings=settings, quick=quick,
                     plan=plan)
    return _run_workload(w, ctx, plan.thawed_params(), emit)


def _run_workload(w, ctx, params: dict, emit: Callable[[dict], None]) -> int:
    try:
        w.run(ctx, params)
    except Exception as e:  # the parent turns this into a failed run with the rows so far
        traceback.print_exc()
        kind, message = error_kind(e)
        emit({"event": "error", "kind": kind, "message": message})
        return 2 if kind == "usage" else 1
    emit({"event": "finished"})
    return 0


def _peak(adapter, dev, name: str):
    from siliconbench.core.peaks import find_peak
    if getattr(dev, "type", "cpu") == "cpu":
        return None  # CPU peaks depend on clocks and vector units we do not tabulate
    from siliconbench.core.machine import probe
    m = probe()
    return find_peak(name, chip=m.chip, gpu_cores=m.gpu_cores)


def devices(framework_name: str) -> list[dict]:
    from siliconbench.core.frameworks import framework, isolate
    isolate(framework_name)
    return [d.to_dict() for d in framework(framework_name).load().devices()]


def end_with_parent() -> None:
    """Die with the parent: a killed `siliconbench run` must not leave its run computing in
    the background (the worker has its own session, so no terminal signal reaches it).
    Linux: the kernel sends SIGKILL when the parent goes (PR_SET_PDEATHSIG; it follows the
    thread that started us, which waits for us). Elsewhere (macOS has no such call): a
    thread that watches for the parent to change. A rank's parent is its launcher: it also
    watches the `siliconbench run` that started the launcher, and ends with it."""
    parent = os.environ.get("SILICONBENCH_PARENT_PID")
    if not parent:
        return  # started by hand
    parent_pid = siliconbench = int(parent)
    if _launched_rank() is not None:
        # Bound now: parent_pid changes below, and a lambda reads its variable when called.
        _watch(lambda: _alive(siliconbench), launcher=os.getppid())
        parent_pid = os.getppid()
    if sys.platform.startswith("linux"):
        import ctypes
        import signal
        PR_SET_PDEATHSIG = 1
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
            if os.getppid() != parent_pid:  # it died before the call took effect
                _end_group()
            return
    _watch(lambda: os.getppid() == parent_pid)


def _watch(still_there: Callable[[], bool], launcher: int | None = None) -> None:
    """A thread that ends this process's group once still_there() is False. A rank's
    watch (`launcher`: its launcher's pid) first ends the launcher, so it starts nothing
    more, and removes the run's folder (its TMPDIR, which siliconbench made and can no longer
    remove)."""
    import threading
    import time

    def watch() -> None:
        while still_there():
            time.sleep(0.5)
        if launcher is not None:
            _end_launcher(launcher)
        _end_group()
    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def _end_launcher(pid: int) -> None:
    """The folder first: on Linux this rank dies with its launcher (PR_SET_PDEATHSIG)."""
    import shutil
    import signal
    folder = os.environ.get("TMPDIR", "")
    if os.path.basename(folder.rstrip(os.sep)).startswith("siliconbench-run-"):
        shutil.rmtree(folder, ignore_errors=True)
    if os.getppid() == pid:        # still ours: not a process that took its pid since
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _launched_rank() -> int | None:
    """This process's rank when a framework's launcher started it (torchrun sets RANK,
    mlx.launch MLX_RANK), else None."""
    from siliconbench.core.launch import LAUNCHED_ENV
    if not os.environ.get(LAUNCHED_ENV):
        return None
    return int(os.environ.get("RANK") or os.environ.get("MLX_RANK") or 0)


def _rank_stream(emit: Callable[[dict], None]) -> Callable[[dict], None]:
    """A launched rank announces itself; then only rank 0 streams the run's events (the
    launcher merges every rank's stdout into the one the parent reads)."""
    rank = _launched_rank()
    if rank is None:
        return emit
    import socket

    from siliconbench import __version__
    from siliconbench.core.machine import probe
    # What this host is and runs (versions included): the parent keeps each host's and ends
    # the run when they differ (siliconbench.core.launch.Launch.mismatch).
    emit({"event": "rank", "rank": rank, "pid": os.getpid(), "host": socket.gethostname(),
          "machine": probe().to_dict(), "siliconbench": __version__})
    if rank == 0:
        return emit

    from siliconbench.core.launch import rank_error_line

    def quiet(event: dict) -> None:
        if event.get("event") == "error":
            print(rank_error_line(rank, event["message"]), file=sys.stderr)
    return quiet


def _end_group() -> None:
    """This process and its helpers (data loaders, compilers): our session's group."""
    import signal
    try:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    finally:
        os._exit(1)


def main(argv: list[str]) -> int:
    end_with_parent()
    emit = _event_stream()
    if argv[:1] == ["devices"] and len(argv) == 2:
        emit({"event": "devices", "devices": devices(argv[1])})
        return 0
    if argv[:1] == ["run"]:
        # A launcher's ranks get the spec as an argument: mlx.launch never closes their stdin.
        text = argv[2] if argv[1:2] == ["--spec"] and len(argv) == 3 else sys.stdin.read()
        return run(json.loads(text), _rank_stream(emit))
    print("usage: python -m siliconbench.core.worker run [--spec JSON] (or the spec on stdin) | devices "
          "FRAMEWORK", file=sys.stderr)
    return 2


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # Every event is out (each is flushed). Skip the interpreter's teardown: unloading torch
    # or TensorFlow takes a second or more that the parent would wait for after the result.
    sys.stderr.flush()
    os._exit(code)
