"""Memory bandwidth: STREAM's four kernels (copy c = a, scale b = s*c, add c = a + b, triad
a = b + s*c) over arrays too large for the caches, in GB/s of the bytes STREAM counts (2, 2, 3
and 3 arrays read plus written): the device's memory ceiling, beside GEMM's. Each row's value
is the median of its timed blocks, and its note gives STREAM's own headline beside it, the
"best rate" (the fastest block). A fifth kernel, read (a sum over one array, 1 array counted),
is what a decode does: it only reads, where STREAM's kernels also write, and a core that
allocates on write (x86) moves a fourth array STREAM does not count, so on a CPU the triad can
sit ~25% under what a read streams. Where one read stream per core keeps fewer lines in flight
than the triad's three (this project's 2-core VM), the read can sit under the triad instead, so
the LLM's decode bound on a CPU is the higher of the two, said on the record
(siliconbench.core.kit.ceilings.decode_bound).

Records made before the STREAM kernels have a "triad" that was d = a*b + c over 4 arrays (its
GB/s counted 4): they keep that meaning, and read so (siliconbench.core.kit.ceilings.
triad_name, by the record's settings).

The sweep and the rows are here. A framework supports bandwidth with the array operations
gemm uses (siliconbench.core.frameworks.<name>.ops.Ops, a siliconbench.core.frameworks.ops.TensorOps): random,
itemsize, copy, scale, add, triad, read, use_plain_copy, timed, run_once, failure, release,
and the labels <op>_kernel for the record."""

from __future__ import annotations

from siliconbench.core.catalogue import Workload
from siliconbench.core.kit.ceilings import (
    MEASURED_TRIAD,
    READ_KERNEL,
    STREAM_KERNELS,
    Ceiling,
    decode_bound,
    triad_name,
)
from siliconbench.core.kit.headroom import MEMORY_SHARE
from siliconbench.core.numbers import quantity
from siliconbench.core.params import Param
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize
from siliconbench.core.workloads.train import DURATION_PARAM

OPS = tuple(STREAM_KERNELS)          # copy, scale, add, triad
ALL_OPS = (*OPS, "read")             # and the read kernel beside them
DTYPE = "float32"
DEFAULT_SIZES_MB = [64, 256, 1024]   # per array: past the largest caches (M-series SLC: 96 MB)
MB = 2**20
SCALAR = 3.0                         # STREAM's scalar
# Arrays each op keeps on the device, and how many of them it reads and writes per call:
# STREAM's counts (copy, scale: read 1, write 1; add, triad: read 2, write 1).
ARRAYS = {op: n for op, (_, n) in {**STREAM_KERNELS, "read": READ_KERNEL}.items()}
MOVED = dict(ARRAYS)
INPUTS = {op: n - 1 for op, n in ARRAYS.items()} | {"read": 1}     # read writes nothing

WORKLOAD = Workload(
    name="bandwidth",
    title="Memory bandwidth (GB/s)",
    summary="STREAM's copy, scale, add and triad, and a read, over arrays past the caches: "
            "the device's memory ceiling.",
    order=20,
    metric="gb_per_s",
    x="size_mb",
    module=__name__,
    multiplies=False,
    params=(
        Param("sizes_mb", "int_list", None, "Size of each array in MB (2^20 bytes).", min=1,
              max=65536, auto="64, 256 and 1024 MB, those that fit in the device's memory"),
        Param("ops", "choice_list", list(ALL_OPS), "STREAM's kernels: " + ", ".join(
            f"{op} ({formula})" for op, (formula, _) in STREAM_KERNELS.items()) +
              f"; and read ({READ_KERNEL[0]}, one array read: what a decode does).",
              choices=ALL_OPS),
        DURATION_PARAM,
    ),
)
SUSTAINED_MB = 256     # sustained mode's array size unless --sizes-mb names others (triad)


def fits(size_mb: int, op: str, free_bytes: int | None) -> bool:
    return free_bytes is None or ARRAYS[op] * size_mb * MB <= MEMORY_SHARE * free_bytes


def sustained_ops(names) -> list[str]:
    """Sustained mode's kernels: the ones named, or the triad alone where --ops was left at
    a default list (the run and its estimate alike)."""
    names = list(names or ALL_OPS)
    return names if names not in (list(OPS), list(ALL_OPS)) else ["triad"]


def default_sizes(free_bytes: int | None) -> list[int]:
    return [s for s in DEFAULT_SIZES_MB if fits(s, "triad", free_bytes)] or DEFAULT_SIZES_MB[:1]


def run(ctx, params: dict) -> None:
    from siliconbench.core.frameworks.ops import for_run

    ops = for_run(ctx)
    free = ctx.adapter.free_memory(ctx.device)
    sizes = params["sizes_mb"] or default_sizes(free)
    names = params["ops"]
    if params.get("duration"):   # one point unless named: triad at SUSTAINED_MB (or less)
        sizes = params["sizes_mb"] or [max([s for s in default_sizes(free)
                                            if s <= SUSTAINED_MB] or [DEFAULT_SIZES_MB[0]])]
        names = sustained_ops(names)
    reasons = {op: _unsupported_reason(ops, op) for op in names}
    # What each op ran as on this framework, which its GB/s depends on; and that the ops are
    # STREAM's (a record without it has the 4-array triad of before).
    ctx.record_settings(**{f"{op}_kernel": getattr(ops, f"{op}_kernel") for op in names},
                        stream_kernels={op: STREAM_KERNELS[op][0] for op in names
                                        if op in STREAM_KERNELS})
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
    """STREAM's kernel `op` over its input arrays (its output is the op's own)."""
    if op == "copy":
        return ops.copy(arrays[0])
    if op == "scale":
        return ops.scale(arrays[0], SCALAR)
    if op == "add":
        return ops.add(arrays[0], arrays[1])
    if op == "read":
        return ops.read(arrays[0])
    return ops.triad(arrays[0], arrays[1], SCALAR)


def _unsupported_reason(ops, op: str) -> str | None:
    """Run the op once on tiny arrays; the framework's reason if the device cannot."""
    def attempt() -> None:
        ops.run_once(_step(ops, op, [ops.random((64,), DTYPE) for _ in range(2)]))
    why = ops.failure(attempt)
    if why is not None and op == "copy" and ops.use_plain_copy():
        why = ops.failure(attempt)
    return None if why is None else f"{op} is not supported on {ops.label}: {why}"


def _measure_point(ctx, ops, op: str, size_mb: int, point: dict) -> Row:
    count = size_mb * MB // ops.itemsize(DTYPE)
    arrays = [ops.random((count,), DTYPE) for _ in range(INPUTS[op])]
    try:
        m = ctx.measure(*ops.timed(_step(ops, op, arrays)))
        moved = MOVED[op] * count * ops.itemsize(DTYPE)
        samples = [r / 1e9 for r in m.rates(moved)]
        stats = summarize(samples)
        flags = ["noisy"] if m.noisy else []
        from siliconbench.core.peaks import held_to_peak
        pct, flags, note = held_to_peak(
            stats.median, ctx.peak.bandwidth_gbs if ctx.peak is not None else None, "GB/s",
            flags, best_rate_note(samples))
        return Row("gb_per_s", stats.median, "GB/s", point, stats, flags, note, pct, samples)
    finally:
        del arrays
        ops.release()


BEST_RATE = "best rate"      # what stream.c calls its headline


def best_rate_note(samples: list[float]) -> str:
    """STREAM's headline beside the row's median: its "Best Rate", the fastest timed block
    (stream.c's is its fastest single pass)."""
    return (f"{BEST_RATE} {quantity(max(samples), 'GB/s')} (STREAM's headline: the fastest "
            "timed block; the value is their median)")


def best_rate(row: Row) -> float | None:
    """A bandwidth row's best rate, from its samples (a row made before the note has them
    too)."""
    return max(row.samples) if row.samples else None


# Array sizes (MB each) the llm workload's own bound tries, the largest that fits: past this
# machine's 32 MB L3 and an M-series chip's 96 MB SLC.
OWN_BOUND_MB = (256, 64)
# The own bound is short: at most a second of warm-up and two of timing.
OWN_BOUND_SECONDS = {"max_warmup_s": 1.0, "max_time_s": 2.0}


def own_bound(ctx) -> Ceiling | None:
    """The llm workload's decode bound measured now on the run's device, briefly, where none
    is stored or published: STREAM's triad, and on a CPU the read kernel beside it, the bound
    then the higher of the two (a decode only reads: see the module's doc; decode_bound);
    None where neither can run (the run then warns: its decode has no bound)."""
    from dataclasses import replace as changed

    from siliconbench.core.frameworks.ops import for_run
    from siliconbench.core.measure import measure
    ops = for_run(ctx)
    op = "read" if ctx.on_cpu else "triad"
    free = ctx.adapter.free_memory(ctx.device)
    size = next((mb for mb in OWN_BOUND_MB if fits(mb, "triad", free)), None)
    why = "its arrays do not fit in the free memory" if size is None else \
        _unsupported_reason(ops, op)
    if why is not None:
        ctx.warn(f"No memory bound for decode: no {op} of this device is stored, none is "
                 f"published, and one cannot run now ({why}).")
        return None
    count = size * MB // ops.itemsize(DTYPE)
    settings = changed(ctx.settings, **{k: min(v, getattr(ctx.settings, k))
                                        for k, v in OWN_BOUND_SECONDS.items()})
    rates = {}
    for kernel in dict.fromkeys(("triad", op)):
        arrays = [ops.random((count,), DTYPE) for _ in range(INPUTS[kernel])]
        try:
            m = measure(*ops.timed(_step(ops, kernel, arrays)), settings)
            rates[kernel] = summarize(
                m.rates(MOVED[kernel] * count * ops.itemsize(DTYPE))).median / 1e9
        finally:
            del arrays
            ops.release()
    triad = triad_name({"stream_kernels": True})
    where = f"measured by this run ({ctx.framework}, {size} MB arrays)"
    if op == "triad":
        return Ceiling(rates["triad"], f"{triad} {rates['triad']:.4g} GB/s {where}",
                       MEASURED_TRIAD)
    return decode_bound(rates["read"], rates["triad"], triad, where)
