"""Memory bandwidth: a device copy and a*b+c (STREAM's copy and triad) over arrays too large for
the caches, in GB/s of bytes read plus written: the device's memory ceiling, beside GEMM's.

The sweep and the rows are here. A framework supports bandwidth with the array operations
gemm uses (siliconbench.core.frameworks.<name>.ops.Ops, a siliconbench.core.frameworks.ops.TensorOps): random,
itemsize, copy, triad, use_plain_copy, timed, run_once, failure, release, and the labels
copy_kernel and triad_kernel for the record."""

from __future__ import annotations

from siliconbench.core.catalogue import Workload
from siliconbench.core.kit.headroom import MEMORY_SHARE
from siliconbench.core.numbers import quantity
from siliconbench.core.params import Param
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize

OPS = ("copy", "triad")
DTYPE = "float32"
DEFAULT_SIZES_MB = [64, 256, 1024]   # per array: past the largest caches (M-series SLC: 96 MB)
MB = 2**20
# Arrays each op keeps on the device, and how many of them it reads and writes per call.
ARRAYS = {"copy": 2, "triad": 4}
MOVED = {"copy": 2, "triad": 4}      # copy: read 1, write 1; triad: read a, b, c, write 1

WORKLOAD = Workload(
    name="bandwidth",
    title="Memory bandwidth (GB/s)",
    summary="Device copy and a*b+c over arrays past the caches: the device's memory ceiling.",
    order=20,
    metric="gb_per_s",
    x="size_mb",
    module=__name__,
    multiplies=False,
    params=(
        Param("sizes_mb", "int_list", None, "Size of each array in MB (2^20 bytes).", min=1,
              max=65536, auto="64, 256 and 1024 MB, those that fit in the device's memory"),
        Param("ops", "choice_list", list(OPS), "copy (b = a) and triad (d = a * b + c).",
              choices=OPS),
    ),
)


def fits(size_mb: int, op: str, free_bytes: int | None) -> bool:
    return free_bytes is None or ARRAYS[op] * size_mb * MB <= MEMORY_SHARE * free_bytes


def default_sizes(free_bytes: int | None) -> list[int]:
    return [s for s in DEFAULT_SIZES_MB if fits(s, "triad", free_bytes)] or DEFAULT_SIZES_MB[:1]


def run(ctx, params: dict) -> None:
    from siliconbench.core.frameworks.ops import for_run

    ops = for_run(ctx)
    free = ctx.adapter.free_memory(ctx.device)
    sizes = params["sizes_mb"] or default_sizes(free)
    names = params["ops"]
    reasons = {op: _unsupported_reason(ops, op) for op in names}
    # What each op ran as on this framework, which the GB/s of a triad depends on.
    kernels = {"copy": ops.copy_kernel, "triad": ops.triad_kernel}
    ctx.record_settings(**{f"{op}_kernel": kernels[op] for op in names})
    total = len(sizes) * len(names)
    done = 0
    for op in names:
        for size_mb in sizes:
            ctx.progress(done, total, f"{op} {size_mb} MB")
            point = {"op": op, "size_mb": size_mb, "dtype": DTYPE}
            if reasons[op] is not None:
                ctx.row(Row("gb_per_s", None, "GB/s", point, flags=["unsupported"],
                            note=reasons[op]))
            elif not fits(size_mb, op, free):
                ctx.row(Row("gb_per_s", None, "GB/s", point, flags=["unsupported"],
                            note=f"{ARRAYS[op]} arrays of {size_mb} MB do not fit in the "
                                 "device's free memory"))
            else:
                ctx.row(_measure_point(ctx, ops, op, size_mb, point))
            done += 1
    ctx.progress(done, total, "done")


def _step(ops, op: str, arrays: list):
    return ops.copy(arrays[0]) if op == "copy" else ops.triad(*arrays[:3])


def _unsupported_reason(ops, op: str) -> str | None:
    """Run the op once on tiny arrays; the framework's reason if the device cannot."""
    def attempt() -> None:
        ops.run_once(_step(ops, op, [ops.random((64,), DTYPE) for _ in range(3)]))
    why = ops.failure(attempt)
    if why is not None and op == "copy" and ops.use_plain_copy():
        why = ops.failure(attempt)
    return None if why is None else f"{op} is not supported on {ops.label}: {why}"


def _measure_point(ctx, ops, op: str, size_mb: int, point: dict) -> Row:
    count = size_mb * MB // ops.itemsize(DTYPE)
    arrays = [ops.random((count,), DTYPE) for _ in range(1 if op == "copy" else 3)]
    try:
        m = ctx.measure(*ops.timed(_step(ops, op, arrays)))
        moved = MOVED[op] * count * ops.itemsize(DTYPE)
        samples = [r / 1e9 for r in m.rates(moved)]
        stats = summarize(samples)
        flags = ["noisy"] if m.noisy else []
        note = pct = None
        if ctx.peak is not None:
            from siliconbench.core.peaks import assess
            pct, above = assess(stats.median, ctx.peak.bandwidth_gbs)
            if above:
                flags.append("above_peak")
                note = (f"{quantity(stats.median, 'GB/s')} is above the device's physical peak: the "
                        "measurement is wrong")
        return Row("gb_per_s", stats.median, "GB/s", point, stats, flags, note, pct, samples)
    finally:
        del arrays
        ops.release()
