"""Matrix-multiply TFLOPS sweep: square N x N products over sizes and dtypes, the device's
arithmetic ceiling (the classic `tflops_sweep` experiment)."""

from __future__ import annotations

from core.params import Param
from core.results import Row
from core.stats import summarize
from core.workloads import Workload

DTYPES = ("float32", "float16", "bfloat16", "float64")
GPU_SIZES = [2**k for k in range(7, 14)]        # 128 .. 8192
CPU_SIZES = [2**k for k in range(7, 13)]        # 128 .. 4096: 8192 takes minutes per point

# Largest relative error against a float64 reference that still counts as right, per dtype.
# fp16/bf16 accumulate in fp32 but round inputs and output; TF32 rounds inputs to 10 bits.
TOLERANCE = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 3e-2, "float64": 1e-10}
TF32_TOLERANCE = 3e-3
CHECK_SIZE = 256

WORKLOAD = Workload(
    name="gemm",
    title="Matrix multiply (TFLOPS)",
    summary="Square matrix products over sizes and dtypes: the device's arithmetic ceiling.",
    frameworks=("torch",),
    metric="tflops",
    module=__name__,
    params=(
        Param("sizes", "int_list", None, "Matrix sizes N (N x N times N x N).", min=1,
              max=65536, auto="powers of two from 128 to 8192 (4096 on a CPU) that fit in "
                              "the device's memory"),
        Param("dtypes", "choice_list", list(DTYPES), "Element types to sweep.", choices=DTYPES),
        Param("tf32", "bool", False, "CUDA: let float32 products use TF32 tensor cores "
                                     "(faster, 10-bit mantissa inputs)."),
    ),
)


def default_sizes(kind: str, free_bytes: int | None) -> list[int]:
    sizes = CPU_SIZES if kind == "cpu" else GPU_SIZES
    return [n for n in sizes if fits(n, 8, free_bytes)]


def fits(n: int, itemsize: int, free_bytes: int | None) -> bool:
    # Three operands, and headroom for the library's workspace.
    return free_bytes is None or 3 * n * n * itemsize <= 0.8 * free_bytes


def run(ctx, params: dict) -> None:
    import torch

    dev = ctx.device
    tf32 = bool(params["tf32"]) and dev.type == "cuda"
    if params["tf32"] and dev.type != "cuda":
        ctx.warn("--tf32 applies to CUDA devices only; ignored.")
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = tf32
    ctx.record_settings(tf32=tf32)

    free = ctx.adapter.free_memory(dev)
    kind = "cpu" if dev.type == "cpu" else "gpu"
    sizes = params["sizes"] or default_sizes(kind, free)
    dtypes = params["dtypes"]
    total = len(sizes) * len(dtypes)
    done = 0
    for dtype_name in dtypes:
        dtype = getattr(torch, dtype_name)
        reason = _unsupported_reason(torch, dev, dtype)
        if reason is None:
            error = _relative_error(torch, dev, dtype)
            limit = TF32_TOLERANCE if (tf32 and dtype_name == "float32") else TOLERANCE[dtype_name]
            wrong = error > limit
            if wrong:
                ctx.warn(f"{dtype_name} products differ from a float64 reference by "
                         f"{error:.2e} (tolerance {limit:.0e}): the results are wrong.")
        for n in sizes:
            ctx.progress(done, total, f"{dtype_name} N={n}")
            itemsize = torch.empty((), dtype=dtype).element_size()
            point = {"size": n, "dtype": dtype_name}
            if reason is not None:
                ctx.row(Row("tflops", None, "TFLOPS", point, flags=["unsupported"], note=reason))
            elif not fits(n, itemsize, free):
                ctx.row(Row("tflops", None, "TFLOPS", point, flags=["unsupported"],
                            note=f"three {n}x{n} {dtype_name} matrices do not fit in the "
                                 "device's free memory"))
            else:
                ctx.row(_measure_point(ctx, torch, n, dtype, point, tf32, wrong))
            done += 1
    ctx.progress(done, total, "done")


def _unsupported_reason(torch, dev, dtype) -> str | None:
    """Try a tiny product; a dtype the device cannot do (float64 on MPS) gives the reason."""
    try:
        a = torch.randn(8, 8, device=dev, dtype=dtype)
        (a @ a).sum().item()
    except (RuntimeError, TypeError, NotImplementedError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return f"{str(dtype).removeprefix('torch.')} matmul is not supported on {dev}: {first}"
    return None


def _relative_error(torch, dev, dtype) -> float:
    """‖a@b − ref‖/‖ref‖ on fresh random inputs, ref computed in float64 on the CPU."""
    a = torch.randn(CHECK_SIZE, CHECK_SIZE, device=dev, dtype=dtype)
    b = torch.randn(CHECK_SIZE, CHECK_SIZE, device=dev, dtype=dtype)
    out = (a @ b).double().cpu()
    ref = a.double().cpu() @ b.double().cpu()
    return float(torch.linalg.norm(out - ref) / torch.linalg.norm(ref))


def _measure_point(ctx, torch, n: int, dtype, point: dict, tf32: bool, wrong: bool) -> Row:
    dev = ctx.device
    a = torch.randn(n, n, device=dev, dtype=dtype)
    b = torch.randn(n, n, device=dev, dtype=dtype)
    c = torch.empty(n, n, device=dev, dtype=dtype)
    try:
        m = ctx.measure(lambda: torch.matmul(a, b, out=c))
        flags = ["noisy"] if m.noisy else []
        if wrong:
            flags.append("wrong_result")
        flop = 2.0 * n**3
        samples = [r / 1e12 for r in m.rates(flop)]
        stats = summarize(samples)
        note = None
        pct = None
        if ctx.peak is not None:
            from core.peaks import assess
            pct, above = assess(stats.median, ctx.peak.tflops_for(point["dtype"], tf32))
            if above:
                flags.append("above_peak")
                note = (f"{stats.median:.1f} TFLOPS is above the device's physical peak: "
                        "the measurement is wrong")
        return Row("tflops", stats.median, "TFLOPS", point, stats, flags, note, pct, samples)
    finally:
        del a, b, c
        ctx.adapter.empty_cache(dev)
