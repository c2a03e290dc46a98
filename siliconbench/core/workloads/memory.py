"""The largest batch that trains: batch sizes doubled, then bisected, each probe a `train` run in
its own child process, so an out-of-memory (or the system's OOM killer) ends only the probe.
It needs no framework part of its own: a framework that runs train runs memory, and its own
process never loads one (the first probe's device, software and settings are the record's)."""

from __future__ import annotations

import math
import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Self

from siliconbench.core.catalogue import Workload
from siliconbench.core.numbers import size
from siliconbench.core.params import Param, ParamError
from siliconbench.core.results import Row
from siliconbench.core.workloads.train import MODEL_PARAMS, TRANSFORMER_MODELS

# Apple GPUs share the host's memory: past this the system pages to disk instead of failing.
HEAVY_SWAP_BYTES = 1 << 30
LOW_MEMORY_FRACTION = 0.03          # stop a probe before the system's OOM killer picks a victim
WATCH_INTERVAL_S = 0.25
KEPT_METRICS = ("samples_per_s", "peak_memory")

WORKLOAD = Workload(
    name="memory",
    title="Largest batch that trains",
    summary="The largest training batch that fits in the device's memory, with peak memory and "
            "throughput at every batch tried.",
    order=60,
    metric="max_batch_size",
    module=__name__,
    params=MODEL_PARAMS + (
        Param("max_batch", "int", 4096, "Largest batch size to try.", min=1, max=100_000),
        Param("start_batch", "int", 2, "First batch size; doubled until one does not fit "
              "(batch norm needs at least two samples).", min=1, max=100_000),
        Param("bisect_steps", "int", 3, "Probes between the last batch that fits and the "
                                        "first that does not.", min=0, max=20),
        Param("probe_time_limit", "float", 900, "Seconds one probe may take; a slower one "
                                                "ends the search.", min=5, max=86_400),
    ),
    starts_runs=True,
)


@dataclass
class Probe:
    """One batch size tried, and what it showed."""
    batch_size: int
    fits: bool
    reason: str | None = None              # why it did not train
    out_of_memory: bool = False            # it failed for lack of memory, not otherwise
    rows: list[Row] = field(default_factory=list)


class HostMemoryWatch:
    """Cancels a probe when the host runs low on memory or swaps heavily. On Apple unified
    memory that is where a bigger batch stops fitting, long before an allocation fails."""

    def __init__(self, child) -> None:
        import psutil
        self.psutil, self.child, self.reason = psutil, child, None
        self.swapped_in_at_start = psutil.swap_memory().sin
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._done.wait(WATCH_INTERVAL_S):
            vm = self.psutil.virtual_memory()
            swapped = self.psutil.swap_memory().sin - self.swapped_in_at_start
            if vm.available < LOW_MEMORY_FRACTION * vm.total:
                self.reason = f"the system ran low on memory ({size(vm.available)} left)"
            elif swapped > HEAVY_SWAP_BYTES:
                self.reason = f"the system swapped heavily ({size(swapped)} swapped in)"
            if self.reason:
                self.child.cancel()
                return


def run(ctx, params: dict) -> None:
    import signal  # here, not at the top: the catalogue loads this module for the app's window
    start, limit = params["start_batch"], params["max_batch"]
    if start > limit:
        raise ParamError(f"--start-batch ({start}) must be at most --max-batch ({limit}).")
    probe_params = {p.name: params[p.name] for p in MODEL_PARAMS}
    point = {"model": params["model"], "precision": params["precision"]}
    expected = math.ceil(math.log2(limit / start)) + 1 + params["bisect_steps"]
    unit = "seq/s" if params["model"] in TRANSFORMER_MODELS else "img/s"
    tried: list[Probe] = []
    current: list = []                      # the probe running now, for a cancel to stop
    said: set = set()                       # what the probes said that this run passed on
    terminated = threading.Event()

    def on_terminate(signum, frame) -> None:
        # Cancelling makes the probe's wait stop its process; then this run ends too.
        terminated.set()
        for child in current:
            child.cancel()

    def probe(batch_size: int) -> Probe:
        ctx.progress(min(len(tried), expected - 1), expected, f"batch {batch_size}")
        p = run_probe(ctx, {**probe_params, "batch_size": batch_size}, params, current, said)
        if terminated.is_set():
            raise SystemExit(128 + signal.SIGTERM)
        p.rows = p.rows or [Row("samples_per_s", None, unit,
                                {**point, "batch_size": batch_size}, None, [], p.reason)]
        for row in p.rows:
            row.params["probe"] = len(tried) + 1
            ctx.row(row)
        tried.append(p)
        return p

    previous = signal.signal(signal.SIGTERM, on_terminate)
    try:
        fits, fails = search(probe, start, limit, params["bisect_steps"])
    finally:
        signal.signal(signal.SIGTERM, previous)
    if fits is None:
        first = tried[0]
        if first.out_of_memory:
            said = first.reason.startswith("out of memory at batch size")
            raise MemoryError(first.reason if said else
                              f"out of memory at batch size {start} ({first.reason})")
        raise RuntimeError(f"the probe at batch size {start} failed: {first.reason}")
    if fails is None:
        note = f"every batch size tried up to --max-batch {limit} trains"
    else:
        why = next(p.reason for p in tried if p.batch_size == fails)
        note = f"the largest batch size that trains; {fails} does not: {why}"
        last = tried[-1]
        if not last.fits and not last.out_of_memory:
            ctx.warn(f"The search stopped at batch size {last.batch_size}, which failed for "
                     f"another reason than memory: {last.reason}.")
    ctx.row(Row("max_batch_size", fits, "samples", point, None, [], note))
    ctx.progress(expected, expected, "done")


def search(probe, start: int, limit: int, bisect_steps: int) -> tuple[int | None, int | None]:
    """Double from `start` until a batch fails (or `limit` fits), then bisect between the last
    that fit and the first that failed. (largest that fits, smallest that failed)."""
    fits, fails = None, None
    batch = start
    while True:
        p = probe(batch)
        if not p.fits:
            fails = batch
            break
        fits = batch
        if batch >= limit:
            return fits, None
        batch = min(batch * 2, limit)
    if fits is None or not p.out_of_memory:
        return fits, fails                 # a failure other than memory: bisecting won't help
    for _ in range(bisect_steps):
        if fails - fits <= 1:
            break
        middle = (fits + fails) // 2
        p = probe(middle)
        if p.fits:
            fits = middle
        elif p.out_of_memory:
            fails = middle
        else:
            break
    return fits, fails


def run_probe(ctx, train_params: dict, params: dict, current: list, said: set) -> Probe:
    """One `train` run at one batch size, in a child process with the quick measurement, on
    the run's framework and device. A probe the framework refuses as a usage error (a CNN on
    MLX, say) ends the search with that sentence."""
    import platform

    from siliconbench.core.child import ChildRun, RunSpec, UsageError
    batch_size = train_params["batch_size"]
    spec = RunSpec("train", ctx.framework, ctx.device_id, train_params, quick=True,
                   time_limit_s=params["probe_time_limit"])
    child = ChildRun(spec, lambda event: ctx.pass_on(event, said)).start()
    current[:] = [child]
    # Every GPU of a Mac (MPS, TensorFlow's Metal, MLX) allocates from the host's memory.
    host_memory = ctx.on_cpu or platform.system() == "Darwin"
    watch = HostMemoryWatch(child)
    try:
        with watch if host_memory else nullcontext():
            rec = child.wait()
    except UsageError as e:
        raise ParamError(str(e)) from None
    current.clear()
    return outcome(batch_size, rec, watch.reason)


def outcome(batch_size: int, rec, memory_pressure: str | None) -> Probe:
    """What a probe's run record says: it trains, it ran out of memory (an allocation failed,
    the system killed it, or the host ran short), or it failed otherwise."""
    if rec.status == "ok":
        return Probe(batch_size, True, rows=[r for r in rec.rows if r.metric in KEPT_METRICS])
    reason = memory_pressure or rec.reason or rec.status
    memory = bool(memory_pressure) or reason.startswith("out of memory") or "SIGKILL" in reason
    return Probe(batch_size, False, reason, memory)
