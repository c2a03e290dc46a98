"""All-reduce bandwidth: one sum over every rank of a group that the engine's own launcher
started (mlx.launch, torchrun), over message sizes and dtypes, reported as nccl-tests define it:
algorithm bandwidth = bytes / time, bus bandwidth = algbw x 2(n-1)/n, and the time per call.

Each rank runs this module; rank 0's events reach the parent (siliconbench.core.worker keeps
the others quiet). The framework part, siliconbench.core.frameworks.<framework>.allreduce, is an
AllReducePart (below): it joins the ranks in a Group, whose checked_all_sum() makes the
CheckedAllSum that is timed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from siliconbench.core.catalogue import Workload
from siliconbench.core.kit.headroom import MEMORY_SHARE
from siliconbench.core.params import Param, ParamError
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize

if TYPE_CHECKING:  # the catalogue loads this module for the app's window: no more than it needs
    from siliconbench.core.context import RunContext

DTYPES = ("float32", "bfloat16")
ITEMSIZE = {"float32": 4, "bfloat16": 2}
BACKENDS = ("auto", "ring", "jaccl", "nccl", "gloo", "mpi")
DEFAULT_SIZES = [4096 * 2**k for k in range(17)]        # 4 KB .. 256 MB
# Ranks one machine may start: each is a process with its framework loaded (~0.5 GB of torch),
# so past a few a core they measure only the cores' time-sharing. Up to the cores a run goes
# ahead; past them it is asked about (siliconbench.core.estimate); past this it is refused.
RANKS_PER_CORE, LEAST_RANK_CAP = 4, 64
HOST_RANK_CAP = 256          # on each of the hosts given (their cores are not known here)

WORKLOAD = Workload(
    name="allreduce",
    title="All-reduce bandwidth",
    summary="Sum over every rank of a distributed group, over message sizes: bus bandwidth "
            "as nccl-tests reports it.",
    order=80,
    metric="busbw",
    x="size",
    module=__name__,
    checks="check_ranks",
    multiplies=False,
    distributed=True,
    params=(
        Param("sizes", "int_list", None, "Message sizes in bytes.", min=16, max=2**36,
              auto="powers of two from 4 KB to 256 MB that fit in memory",
              title="Message sizes"),
        Param("dtypes", "choice_list", list(DTYPES), "Element types to sweep.", choices=DTYPES,
              title="Data types"),
        Param("processes", "int", 2, "Ranks to start on each host.", min=1, max=4096),
        Param("hosts", "str", "", "Hosts: a comma-separated list of IP addresses, or the path "
                                  "of a hostfile in the engine's own format (mlx.launch's "
                                  "JSON); empty: this machine, over loopback.", path=True),
        Param("port", "int", 0, "First TCP port the ranks listen on (0: a free one).",
              min=0, max=65535),
        Param("backend", "choice", "auto", "Collective backend (auto: ring for MLX, NCCL on "
                                           "CUDA and gloo elsewhere for PyTorch).",
              choices=BACKENDS),
    ),
)


class CheckedAllSum(Protocol):
    """An all-sum over every rank of a message whose sum is known, checked as it runs."""

    def call(self) -> None:
        """One all-sum, its result at the probes compared with the expected sums without
        waiting for the device."""

    def wrong_calls(self) -> int:
        """How many calls so far differed at the probes."""

    def last_right(self) -> bool:
        """Whether the whole last result equals the expected sums, tiled."""

    def release(self) -> None:
        """Free its buffers."""


class Group(Protocol):
    """Every rank the engine's launcher started, joined."""
    rank: int
    size: int
    backend: str    # the backend chosen, "auto" resolved

    def agree(self, x: float) -> float:
        """The largest x over the ranks: every decision of the timing protocol is made on
        agreed numbers, so every rank makes the same number of calls."""

    def checked_all_sum(self, count: int, dtype: str, base: list[float],
                        expected: list[float], probes: list[int]) -> CheckedAllSum:
        """An all-sum of the rank's input `base` (4 values) tiled to `count` elements of
        `dtype`, its result checked at the indices `probes` against `expected` (4 values)."""


@runtime_checkable
class AllReducePart(Protocol):
    """siliconbench.core.frameworks.<name>.allreduce, the module."""

    def join(self, ctx: RunContext, backend: str, world_size: int) -> Group:
        """This rank's group of every rank (`world_size` of them), on `backend` ("auto": the
        framework's choice for the device); ParamError for a backend it does not have."""


def rank_cap(params: dict) -> int:
    """The most ranks a run may start on each host: on this machine RANKS_PER_CORE a logical
    core (at least LEAST_RANK_CAP), on hosts given HOST_RANK_CAP."""
    if params.get("hosts"):
        return HOST_RANK_CAP
    return max(LEAST_RANK_CAP, RANKS_PER_CORE * (os.cpu_count() or 1))


def check_ranks(params: dict, framework: str | None = None) -> None:
    """Before anything starts: --processes within rank_cap (ParamError, one sentence)."""
    n, most = params["processes"], rank_cap(params)
    if n <= most:
        return
    where = "each host" if params.get("hosts") else \
        f"this machine ({os.cpu_count() or 1} logical cores)"
    raise ParamError(f"--processes {n} would start {n} ranks on {where}, each a process "
                     f"with its framework loaded; SiliconBench starts at most {most} there.")


def pattern(rank: int) -> list[float]:
    """A rank's input, repeated along the message: small integers, exact in bfloat16 sums of up
    to 64 ranks, that differ between ranks and along the message (a sum that skipped a rank
    or shifted the data shows)."""
    return [float((rank + k) % 4 + 1) for k in range(4)]


def expected(world: int) -> list[float]:
    return [sum(pattern(r)[k] for r in range(world)) for k in range(4)]


def default_sizes(free_bytes: int | None, local_ranks: int) -> list[int]:
    # Input, output and the engine's own staging on every rank this machine runs.
    return [s for s in DEFAULT_SIZES
            if free_bytes is None or 3 * s * local_ranks <= MEMORY_SHARE * free_bytes]


def bus_factor(world: int) -> float:
    """nccl-tests' all-reduce factor: each rank sends and receives 2(n-1)/n of the message."""
    return 2 * (world - 1) / world


def run(ctx, params: dict) -> None:
    from siliconbench.core.frameworks import implementation
    from siliconbench.core.hosts import world_size
    from siliconbench.core.measure import measure

    part: AllReducePart = implementation(ctx.framework, "allreduce")
    group = part.join(ctx, params["backend"], world_size(params))
    n = group.size
    ctx.record_settings(world_size=n, backend=group.backend)
    sizes = params["sizes"] or default_sizes(ctx.adapter.free_memory(ctx.device),
                                             params["processes"])
    points = [(dtype, size) for dtype in params["dtypes"] for size in sizes]
    for done, (dtype, size) in enumerate(points):
        ctx.progress(done, len(points), f"{dtype} {size} B")
        count = max(4, size // ITEMSIZE[dtype] // 4 * 4)
        point = {"size": count * ITEMSIZE[dtype], "dtype": dtype, "ranks": n}
        probes = sorted({0, count // 3, count // 2, count - 1})
        want = expected(n)
        try:
            op = group.checked_all_sum(count, dtype, pattern(group.rank), want, probes)
            op.call()
            failed = None
        except Exception as e:  # noqa: BLE001 - a dtype the backend cannot sum: every rank agrees
            op, failed = None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        if group.agree(1.0 if failed else 0.0) > 0:
            ctx.row(Row("busbw", None, "GB/s", point, flags=["unsupported"],
                        note=failed or "another rank could not sum this dtype"))
            continue
        try:
            if group.agree(0.0 if op.last_right() and op.wrong_calls() == 0 else 1.0) > 0:
                ctx.row(Row("busbw", None, "GB/s", point, flags=["wrong_result"],
                            note=f"the all-reduce of {dtype} returned a wrong sum; not timed"))
                continue
            m = measure(op.call, ctx.sync, ctx.settings, agree=group.agree)
            wrong = int(group.agree(float(op.wrong_calls() + (0 if op.last_right() else 1))))
        finally:
            op.release()
        for row in _rows(m, point, n, wrong):
            ctx.row(row)
    ctx.progress(len(points), len(points), "done")


def _rows(m, point: dict, world: int, wrong: int) -> list[Row]:
    flags = ["noisy"] if m.noisy else []
    note = None
    if wrong:
        flags.append("wrong_result")
        note = f"{wrong} checked calls returned a wrong sum: the bandwidth is not reported"
    algbw = [point["size"] / t / 1e9 for t in m.per_call_s]
    busbw = [b * bus_factor(world) for b in algbw]
    latency = [t * 1e6 for t in m.per_call_s]
    rows = []
    for metric, unit, samples in (("busbw", "GB/s", busbw), ("algbw", "GB/s", algbw),
                                  ("latency", "us", latency)):
        stats = summarize(samples)
        rows.append(Row(metric, None if wrong else stats.median, unit, point,
                        None if wrong else stats, list(flags), note, None,
                        [] if wrong else samples))
    return rows
