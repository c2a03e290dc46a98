"""Data-parallel training scaling: the same model and per-worker batch trained by 1, 2, 4, ...
workers at once, each a rank that the engine's own launcher started (mlx.launch, torchrun),
gradients averaged every step (MLX nn.average_gradients; torch DistributedDataParallel). What
a second or fourth machine buys: total samples/s per world size, per worker, the speedup over
one worker, the scaling efficiency throughput(N) / (N x throughput(1)), the share of a step
the gradient all-reduce alone takes, and whether the replicas still hold identical weights.

Each world size is one launch of its own (the hidden workload `scaling-world`, through
siliconbench.core.child's ChildRun, as memory runs its probes): MLX's ring backend cannot split
a group (Group.split raises "[ring] Group split not supported"), so one launch with subgroups
would work on torch (new_group) only; and a launch per world size leaves no idle rank sharing
the machine while a smaller world is timed.

Each rank of a world runs run_world; the framework part,
siliconbench.core.frameworks.<framework>.scaling, is a ScalingPart (below), whose replica() is
the Replica each rank trains.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from siliconbench.core.catalogue import Workload
from siliconbench.core.params import Param, ParamError
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize
from siliconbench.core.workloads.allreduce import WORKLOAD as ALLREDUCE
from siliconbench.core.workloads.allreduce import Group
from siliconbench.core.workloads.train import PUBLISHED_BATCH, TRAIN_MODELS, TRANSFORMER_MODELS

if TYPE_CHECKING:  # the catalogue loads this module for the app's window: no more than it needs
    from siliconbench.core.context import RunContext

MODELS = ("mlp",) + TRAIN_MODELS
MLP_WIDTHS = [3000, 1000]          # the CIFAR-10 3000-1000 network (siliconbench.core.workloads.mlp)
MLP_BATCH = 128
# The ranks' own parameters, as the allreduce workload declares them.
LAUNCH_PARAMS = tuple(p for p in ALLREDUCE.params
                      if p.name in ("processes", "hosts", "port", "backend"))

PARAMS = (
    Param("model", "choice", "mlp", "The model every worker trains: the CIFAR-10 MLP, a CNN "
          "(torch) or a BERT-style encoder.", choices=MODELS),
    Param("batch_size", "int", None, "Samples per step on each worker.", min=1, max=100_000,
          auto=f"{MLP_BATCH} for mlp; the train workload's for the others (64 for resnet50 "
               "and distilbert, 128 for mobilenet_v2, 32 for bert-large)"),
    Param("widths", "int_list", None, "mlp: the hidden layers' widths.", min=1, max=100_000,
          auto="3000,1000"),
    Param("layers", "int", None, "Transformers: number of layers.", min=1, max=48,
          auto="the model's own: 6 for distilbert, 24 for bert-large"),
    Param("seq_len", "int", 128, "Transformers: tokens per sequence.", min=1, max=512),
    Param("image_size", "int", 224, "CNNs: image height and width in pixels.", min=16,
          max=1024),
    Param("world_sizes", "int_list", None, "Numbers of workers to train with.", min=1,
          max=4096, auto="1 and every power of two up to the ranks given (processes x hosts)"),
) + LAUNCH_PARAMS

WORKLOAD = Workload(
    name="scaling",
    title="Data-parallel scaling",
    summary="Training throughput of 1, 2, 4, ... workers averaging their gradients every step "
            "(MLX distributed, torch DDP): speedup and scaling efficiency.",
    order=90,
    metric="samples_per_s",
    x="world_size",
    module=__name__,
    checks="check_ranks",
    params=PARAMS,
    starts_runs=True,
)
# One world size: every rank of one launch. Started by `scaling` only.
WORLD = Workload(
    name="scaling-world",
    title="Data-parallel scaling at one world size",
    summary="The ranks of one world size of the scaling workload.",
    order=91,
    metric="samples_per_s",
    module=__name__,
    entry="run_world",
    hidden=True,
    distributed=True,
    params=PARAMS,
)
WORKLOADS = (WORKLOAD, WORLD)


class Replica(Protocol):
    """A model replica on the rank's device, in the group of every rank, whose weights start
    equal on every rank."""
    group: Group    # the group of every rank (siliconbench.core.workloads.allreduce's)
    describe: str   # a sentence for the record: how all_reduce() is timed

    def step(self) -> object:
        """One data-parallel training step on the rank's next batch: forward, backward,
        gradients averaged over the ranks, optimizer update; done when it returns (or at the
        device's sync)."""

    def all_reduce(self) -> None:
        """The gradient averaging alone, on buffers of the gradients' size."""

    def spread(self) -> float:
        """The largest difference, over every weight, between the ranks' copies (0.0 when
        the replicas are identical; every rank gets the same value)."""


@runtime_checkable
class ScalingPart(Protocol):
    """siliconbench.core.frameworks.<name>.scaling, the module."""

    def replica(self, ctx: RunContext, params: dict) -> Replica:
        """This rank's replica; `params` are the workload's, with `widths` and `batch_size`
        resolved."""


def check_ranks(params: dict, framework: str | None = None) -> None:
    """--processes within the all-reduce's bound (allreduce.check_ranks)."""
    from siliconbench.core.workloads.allreduce import check_ranks
    check_ranks(params)


def unit(model: str) -> str:
    return "seq/s" if model in TRANSFORMER_MODELS else "img/s"


def world_sizes(params: dict) -> list[int]:
    """The world sizes to run, each one that the hosts and processes can lay out: n ranks on
    the first host (n <= processes), or `processes` ranks on each of the first n / processes
    hosts."""
    from siliconbench.core.hosts import HostsError, host_list
    try:
        hosts = len(host_list(params["hosts"]))
    except HostsError as e:
        raise ParamError(str(e)) from None
    per_host = params["processes"]
    most = per_host * hosts
    sizes = params["world_sizes"] or [2**k for k in range(most.bit_length())]
    for n in sizes:
        if n > most:
            raise ParamError(f"A world of {n} workers needs more ranks than the "
                             f"{most} given ({per_host} on each of {hosts} hosts).")
        if n > per_host and n % per_host:
            raise ParamError(f"A world of {n} workers cannot be laid out as {per_host} "
                             "processes on each host; choose a multiple of --processes.")
    if 1 not in sizes:
        raise ParamError("--world-sizes must include 1: speedup and efficiency are "
                         "measured against one worker.")
    return sorted(set(sizes))


def layout(params: dict, n: int, folder) -> dict:
    """The ranks' parameters for a world of n: processes per host and the first hosts."""
    from siliconbench.core.hosts import first_hosts
    per_host = min(n, params["processes"])
    return {**params, "processes": per_host,
            "hosts": first_hosts(params["hosts"], n // per_host, folder)}


def run(ctx, params: dict) -> None:
    """Each world size in turn, one launch each; their rows, then speedup and efficiency."""
    import shutil
    import signal  # here, not at the top: the catalogue loads this module for the app's window

    from siliconbench.core.hosts import HOSTS_FOLDER, owned_folder
    from siliconbench.core.kit.errors import ChildRunFailed
    sizes = world_sizes(params)
    ctx.record_settings(world_sizes=sizes, threads_per_rank=_share_cores(ctx, params))
    totals: dict[int, Row] = {}
    current: list = []
    terminated = []
    said: set = set()           # passed on once: the first "started", each warning

    def on_terminate(signum, frame) -> None:
        # The world's wait then ends its launcher and every rank; then this run ends too.
        terminated.append(signum)
        for child in current:
            child.cancel()

    previous = signal.signal(signal.SIGTERM, on_terminate)
    folder = owned_folder(HOSTS_FOLDER)     # removed below; by the next run if killed
    try:
        for i, n in enumerate(sizes):
            rec = _run_world(ctx, layout(params, n, folder), i, len(sizes), n, current,
                             said)
            if terminated:
                raise SystemExit(128 + signal.SIGTERM)
            for row in rec.rows:
                ctx.row(row)
                if row.metric == "samples_per_s":
                    totals[n] = row
            ctx.record_settings(backend=rec.settings.get("backend"),
                                all_reduce_timed=rec.settings.get("all_reduce_timed"),
                                **({"hosts": rec.settings["hosts"]}
                                   if "hosts" in rec.settings else {}))
            if rec.status != "ok":
                raise ChildRunFailed(rec.reason or rec.status)
    finally:
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(folder, ignore_errors=True)
    for row in speedup_rows(totals):
        ctx.row(row)
    ctx.progress(len(sizes), len(sizes), "done")


def _share_cores(ctx, params: dict) -> str | None:
    """On the CPU, every world's ranks get the same threads, the cores shared by the most
    ranks this machine runs: torchrun gives each of several ranks one thread and a lone rank
    all, and a lone rank's two OpenMP threads on a loaded machine measured 7x slower
    (589 against 4,291 img/s, the 64-wide MLP at batch 32) than one."""
    import os
    if not ctx.on_cpu:
        return None
    threads = os.environ.get("OMP_NUM_THREADS") or \
        str(max(1, (os.cpu_count() or 1) // params["processes"]))
    os.environ["OMP_NUM_THREADS"] = threads      # the launchers' ranks inherit it
    return threads


def _run_world(ctx, params: dict, index: int, count: int, n: int, current: list,
               said: set):
    from siliconbench.core.child import ChildRun, RunSpec, UsageError

    def follow(event: dict) -> None:
        if event.get("event") == "progress" and event.get("total"):
            ctx.progress(index + event["done"] / event["total"], count,
                         f"{n} workers: {event.get('message', '')}")
        else:
            ctx.pass_on(event, said)

    spec = RunSpec(WORLD.name, ctx.framework, ctx.device_id, params,
                   quick=ctx.quick)
    try:
        child = ChildRun(spec, follow)
    except UsageError as e:
        raise ParamError(str(e)) from None
    try:
        current[:] = [child.start()]
        return child.wait()
    except UsageError as e:
        raise ParamError(str(e)) from None
    finally:
        current.clear()
        child.close()       # its ranks, ports and folder, on every way out


def speedup_rows(totals: dict[int, Row]) -> list[Row]:
    """Speedup over one worker and scaling efficiency = throughput(N) / (N x throughput(1)),
    per timed block of each world size against one worker's median."""
    one = totals.get(1)
    if one is None or not one.value:
        return []
    rows = []
    for n, total in sorted(totals.items()):
        if total.value is None:
            continue
        speedup = [s / one.value for s in total.samples]
        efficiency = [100 * s / n for s in speedup]
        for metric, unit_, samples in (("speedup", "×", speedup),
                                       ("scaling_efficiency", "%", efficiency)):
            stats = summarize(samples)
            rows.append(Row(metric, stats.median, unit_, dict(total.params), stats,
                            sorted(set(total.flags) | set(one.flags)),
                            "each timed block against one worker's median", None, samples))
    return rows


def run_world(ctx, params: dict, tamper=None) -> None:
    """One world size, on every rank: the timed data-parallel steps, the all-reduce alone,
    then the replicas compared. `tamper(replica)` (tests) runs between the timing and the
    comparison."""
    from siliconbench.core.frameworks import implementation
    from siliconbench.core.kit.errors import out_of_memory_at
    from siliconbench.core.measure import measure

    model = params["model"]
    batch = params["batch_size"] or (MLP_BATCH if model == "mlp" else PUBLISHED_BATCH[model])
    params = {**params, "batch_size": batch, "widths": params["widths"] or MLP_WIDTHS}
    with out_of_memory_at(batch):
        ctx.progress(0, 3, "building the replicas")
        part: ScalingPart = implementation(ctx.framework, "scaling")
        replica = part.replica(ctx, params)
        group = replica.group
        n = group.size
        ctx.record_settings(world_size=n, backend=group.backend,
                            all_reduce_timed=replica.describe)
        ctx.progress(1, 3, "timing training steps")
        steps = measure(replica.step, ctx.sync, ctx.settings, agree=group.agree)
        ctx.progress(2, 3, "timing the gradient all-reduce alone")
        comm = measure(replica.all_reduce, ctx.sync, ctx.settings, agree=group.agree)
        if tamper is not None:
            tamper(replica)
        spread = replica.spread()
    point = {"model": model, "world_size": n, "batch_size": batch}
    if model == "mlp":
        point["widths"] = ",".join(map(str, params["widths"]))
    for row in world_rows(steps, comm, spread, point, unit(model)):
        ctx.row(row)
    ctx.progress(3, 3, "done")


def world_rows(steps, comm, spread: float, point: dict, unit_: str) -> list[Row]:
    """Total and per-worker samples/s per timed block, the all-reduce's share of a step (each
    block of the all-reduce alone against the step's median), and the replicas' spread."""
    n, batch = point["world_size"], point["batch_size"]
    wrong = ["wrong_result"] if spread != 0 else []
    note = None
    if wrong:
        note = (f"the workers' weights differ after training (by up to {spread:g}): the "
                "gradients were not averaged alike")
    step_median = steps.stats.median
    series = (("samples_per_s", unit_, [n * batch / t for t in steps.per_call_s], steps),
              ("worker_samples_per_s", unit_, [batch / t for t in steps.per_call_s], steps),
              ("comm_share", "%", [100 * t / step_median for t in comm.per_call_s], comm))
    rows = []
    for metric, u, samples, m in series:
        stats = summarize(samples)
        rows.append(Row(metric, stats.median, u, dict(point), stats,
                        (["noisy"] if m.noisy else []) + wrong, note, None, samples))
    rows.append(Row("replica_difference", spread, "", dict(point), None, list(wrong),
                    note or "the largest difference between the workers' copies of any "
                            "weight after the timed steps"))
    return rows
