"""Matrix-multiply TFLOPS sweep: square N x N products over sizes and dtypes, the device's
arithmetic ceiling (the classic `tflops_sweep` experiment), the same on torch, TensorFlow, MLX.

The sweep, the correctness check and the rows are here. A framework supports gemm with its
array operations, siliconbench.core.frameworks.<name>.ops.Ops, a siliconbench.core.frameworks.ops.TensorOps (whose
docstrings are the interface): random, to_numpy, itemsize, matmul, gemm_step, timed,
run_once, seconds_once, failure, release; tf32_capable and set_tf32 where TF32 exists."""

from __future__ import annotations

from siliconbench.core.catalogue import Workload
from siliconbench.core.kit.headroom import MEMORY_SHARE
from siliconbench.core.numbers import duration, number
from siliconbench.core.params import Param
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize
from siliconbench.core.workloads.train import DURATION_PARAM

DTYPES = ("float32", "float16", "bfloat16", "float64")
GPU_SIZES = [2**k for k in range(7, 14)]        # 128 .. 8192
CPU_SIZES = [2**k for k in range(7, 13)]        # 128 .. 4096: 8192 takes minutes per point

# Largest relative error against a float64 reference that still counts as right, per dtype.
# fp16/bf16 accumulate in fp32 but round inputs and output; TF32 rounds inputs to 10 bits.
TOLERANCE = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 3e-2, "float64": 1e-10}
TF32_TOLERANCE = 3e-3
CHECK_SIZE = 256
# The automatic sweep skips sizes whose one product would take longer than this (float16 on
# a CPU without half-precision units runs ~1000x slower than float32): the protocol needs a
# dozen blocks, so such a point would hold the sweep for minutes. Sizes the user names run.
AUTO_MAX_PRODUCT_S = 1.0

WORKLOAD = Workload(
    name="gemm",
    title="Matrix multiply (TFLOPS)",
    summary="Square matrix products over sizes and dtypes: the device's arithmetic ceiling.",
    order=10,
    metric="tflops",
    x="size",
    module=__name__,
    checks="check_params",
    params=(
        Param("sizes", "int_list", None, "Matrix sizes N (N x N times N x N).", min=1,
              max=65536, auto="powers of two from 128 to 8192 (4096 on a CPU) that fit in "
                              "the device's memory"),
        Param("dtypes", "choice_list", list(DTYPES), "Element types to sweep.", choices=DTYPES,
              title="Data types"),
        Param("tf32", "bool", False, "CUDA: let float32 products use TF32 tensor cores "
                                     "(faster, 10-bit mantissa inputs).", title="TF32"),
        Param("grow", "bool", False, "Double the size from the first of --sizes until TFLOPS "
              "stops rising by 3%, the memory or the time budget is reached (the quick "
              "suite's way to find the device's best size)."),
        Param("budget_s", "float", None, "Seconds the sweep may take: each dtype gets its "
              "share, and a size whose predicted time does not fit is skipped.", min=1,
              max=86400, auto="no limit", title="Time budget (s)"),
        DURATION_PARAM,
    ),
)
# Sustained mode (--duration) measures one point unless --sizes and --dtypes name more: float32
# at a size whose product takes a good fraction of a block on each kind of device.
SUSTAINED_SIZE = {"cpu": 1024, "gpu": 8192}
# --grow stops once a doubled size gains less than this over the best size before it.
GROW_GAIN = 1.03


def default_sizes(kind: str, free_bytes: int | None) -> list[int]:
    sizes = CPU_SIZES if kind == "cpu" else GPU_SIZES
    return [n for n in sizes if fits(n, 8, free_bytes)]


def fits(n: int, itemsize: int, free_bytes: int | None) -> bool:
    # Three operands, and headroom for the library's workspace.
    return free_bytes is None or 3 * n * n * itemsize <= MEMORY_SHARE * free_bytes


def run(ctx, params: dict) -> None:
    from siliconbench.core.frameworks.ops import for_run

    ops = for_run(ctx)
    dev = ctx.device
    tf32 = bool(params["tf32"]) and ops.tf32_capable
    if params["tf32"] and not ops.tf32_capable:
        ctx.warn("--tf32 applies to CUDA devices only; ignored.")
    if ops.tf32_capable:
        ops.set_tf32(tf32)
    ctx.record_settings(tf32=tf32, gemm_call=ops.gemm_call)

    free = ctx.adapter.free_memory(dev)
    kind = "cpu" if dev.type == "cpu" else "gpu"
    auto = params["sizes"] is None
    grow, budget = bool(params.get("grow")), params.get("budget_s")
    sizes = params["sizes"] or default_sizes(kind, free)
    dtypes = params["dtypes"]
    if params.get("duration"):
        sizes, dtypes, auto = sustained_point(params, kind, free)
    if grow:
        sizes = grown_sizes(sizes[0], free)
    total = len(sizes) * len(dtypes)
    done = 0
    for dtype in dtypes:
        spend = Spend(budget / len(dtypes) if budget else None)
        best, best_at = 0.0, None
        reason = unsupported_reason(ops, dtype)
        if reason is None:
            error = _relative_error(ops, dtype)
            limit = TF32_TOLERANCE if (tf32 and dtype == "float32") else TOLERANCE[dtype]
            wrong = error > limit
            if wrong:
                ctx.warn(f"{dtype} products differ from a float64 reference by "
                         f"{number(error)} (tolerance {number(limit)}): the results are wrong.")
            check_s = _seconds_per_product(ops, dtype) if (auto or budget) else 0.0
        for n in sizes:
            ctx.progress(done, total, f"{dtype} N={n}")
            done += 1
            point = {"size": n, "dtype": dtype}
            if reason is not None:
                ctx.row(Row("tflops", None, "TFLOPS", point, flags=["unsupported"], note=reason))
            elif not fits(n, ops.itemsize(dtype), free):
                ctx.row(Row("tflops", None, "TFLOPS", point, flags=["unsupported"],
                            note=f"three {n}x{n} {dtype} matrices do not fit in the "
                                 "device's free memory"))
            elif auto and (estimate := check_s * (n / CHECK_SIZE) ** 3) > AUTO_MAX_PRODUCT_S:
                ctx.row(Row("tflops", None, "TFLOPS", point, flags=["skipped"],
                            note=f"one {n}x{n} {dtype} product would take about "
                                 f"{duration(estimate)} here; name the size with --sizes to "
                                 "measure it anyway"))
            elif not spend.allows(predicted := _point_s(ctx, product_s(n, check_s, best_at))):
                ctx.row(Row("tflops", None, "TFLOPS", point, flags=["skipped"],
                            note=f"N={n} would take about {duration(predicted)} here, past "
                                 f"the {duration(spend.left)} left of the time budget"))
                if grow:
                    break
            else:
                with spend.timing():
                    row = _measure_point(ctx, ops, n, point, tf32, wrong)
                ctx.row(row)
                if grow and row.value is not None:
                    # A noisy point (a loaded machine) does not end the growth: the budget does.
                    if row.value < best * GROW_GAIN and "noisy" not in row.flags:
                        ctx.record_settings(**{f"grow_{dtype}": (
                            f"sizes doubled up to {n}: it gained less than "
                            f"{round((GROW_GAIN - 1) * 100)}% over the best before it")})
                        break
                    best = max(best, row.value)
                if row.value is not None:
                    best_at = (n, row.value)
        else:
            if grow and reason is None:
                ctx.record_settings(**{f"grow_{dtype}": f"sizes doubled up to {sizes[-1]}, "
                                                       "the largest that fits in memory"})
    ctx.progress(total, total, "done")


def check_params(params: dict, framework: str | None = None) -> None:
    """Before the run: --duration holds each point for minutes, which --grow's and
    --budget-s's sweeps cannot share (ParamError in one sentence)."""
    from siliconbench.core.params import ParamError
    if params.get("duration"):
        given = [f"--{k.replace('_', '-')}" for k in ("grow", "budget_s") if params.get(k)]
        if given:
            verb = "sweeps" if len(given) == 1 else "sweep"
            raise ParamError(f"--duration measures each point for minutes; {' and '.join(given)} "
                             f"{verb} sizes against time: use one or the other.")


def sustained_point(params: dict, kind: str, free: int | None
                    ) -> tuple[list[int], list[str], bool]:
    """(sizes, dtypes, auto) of a sustained run: the sizes and dtypes named, else one point
    (SUSTAINED_SIZE, halved until it fits; float32), which the automatic skip leaves alone."""
    sizes = params["sizes"]
    if not sizes:
        n = SUSTAINED_SIZE[kind]
        while n > 128 and not fits(n, 4, free):
            n //= 2
        sizes = [n]
    dtypes = params["dtypes"] if list(params["dtypes"]) != list(DTYPES) else ["float32"]
    return sizes, dtypes, False


def grown_sizes(start: int, free_bytes: int | None, largest: int = 65536) -> list[int]:
    """--grow's candidates: start, 2 x start, ... while three float32 operands fit."""
    sizes = [start]
    while sizes[-1] * 2 <= largest and fits(sizes[-1] * 2, 4, free_bytes):
        sizes.append(sizes[-1] * 2)
    return sizes


class Spend:
    """A time budget: what is left, whether a predicted stretch fits, and timing one."""

    def __init__(self, seconds: float | None) -> None:
        import time
        self.clock = time.monotonic
        self.left = seconds if seconds is not None else float("inf")

    def allows(self, seconds: float) -> bool:
        return seconds <= self.left

    def timing(self):
        from contextlib import contextmanager

        @contextmanager
        def timed():
            t0 = self.clock()
            try:
                yield
            finally:
                self.left -= self.clock() - t0
        return timed()


def product_s(n: int, check_s: float, measured: tuple[int, float] | None) -> float:
    """Predicted seconds of one N x N product: from the last size measured (N', TFLOPS) scaled
    by (N/N')^3, else from the CHECK_SIZE product timed once."""
    if measured is not None:
        m, tflops = measured
        return 2.0 * m**3 / (tflops * 1e12) * (n / m) ** 3
    return check_s * (n / CHECK_SIZE) ** 3


def _point_s(ctx, product_s: float) -> float:
    """The protocol's time for a point whose product takes `product_s`."""
    from siliconbench.core.measure import point_seconds
    return point_seconds(product_s, ctx.settings)


def unsupported_reason(ops, dtype: str) -> str | None:
    """Try a tiny product the way the sweep times it; a dtype the device cannot multiply in
    (float64 on MPS and MLX's GPU; on TensorFlow's Metal GPU the classic sweep found float16
    and float64 placed on the CPU, which soft placement off turns into an error) gives the
    framework's reason."""
    def attempt() -> None:
        a = ops.random((8, 8), dtype)
        ops.run_once(ops.matmul(a, a))
    why = ops.failure(attempt)
    return None if why is None else f"{dtype} matmul is not supported on {ops.label}: {why}"


def _relative_error(ops, dtype: str) -> float:
    """‖a@b − ref‖/‖ref‖ on fresh random inputs, ref computed in float64 on the host."""
    import numpy as np
    a = ops.random((CHECK_SIZE, CHECK_SIZE), dtype)
    b = ops.random((CHECK_SIZE, CHECK_SIZE), dtype)
    out = ops.to_numpy(ops.matmul(a, b)())  # fetching the values waits for them
    ref = ops.to_numpy(a) @ ops.to_numpy(b)
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))


def _seconds_per_product(ops, dtype: str) -> float:
    """One warmed, synchronised CHECK_SIZE product: a rough rate for predicting larger ones."""
    a = ops.random((CHECK_SIZE, CHECK_SIZE), dtype)
    return ops.seconds_once(ops.matmul(a, a))


def _measure_point(ctx, ops, n: int, point: dict, tf32: bool, wrong: bool) -> Row:
    a = ops.random((n, n), point["dtype"])
    b = ops.random((n, n), point["dtype"])
    step = None
    try:
        step, products = ops.gemm_step(a, b)
        m = ctx.measure(*ops.timed(step))
        flags = ["noisy"] if m.noisy else []
        if wrong:
            flags.append("wrong_result")
        flop = 2.0 * n**3 * products
        samples = [r / 1e12 for r in m.rates(flop)]
        stats = summarize(samples)
        from siliconbench.core.peaks import held_to_peak
        pct, flags, note = held_to_peak(
            stats.median, ctx.peak.tflops_for(point["dtype"], tf32) if ctx.peak is not None
            else None, "TFLOPS", flags, None)
        return Row("tflops", stats.median, "TFLOPS", point, stats, flags, note, pct, samples)
    finally:
        del a, b, step
        ops.release()
