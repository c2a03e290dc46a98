"""An estimate of a run's time and peak memory before it starts, so a run that cannot fit is
refused and a long one is questioned instead of accepted silently (the CLI's warning, the app's
question before Run, Run It Here and the quick suite). Where the work is known from the
parameters: GEMM and bandwidth (sizes named or the defaults), the all-reduce (its buffers on
every local rank), the LLM (weights + KV cache + a prefill's activations; prefill FLOPs and
the bytes decode reads), the inference and training sweeps' --grow budget. The rates are the
device's published peak where SiliconBench has one, else deliberately rough CPU figures.
It sits above the workloads (pyproject's layers) to read their own size arithmetic."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from siliconbench.core.kit.headroom import MEMORY_SHARE  # the workloads' own headroom rule
from siliconbench.core.measure import QUICK, MeasureSettings, point_seconds
from siliconbench.core.numbers import duration, size

LONG_RUN_S = 5 * 60          # warn beyond this
# Rough sustained rates of one CPU core, in GFLOPS per dtype (AVX2/NEON FMA; half precision
# without hardware support is emulated and far slower), and of a CPU's memory, in GB/s.
CPU_CORE_GFLOPS = {"float32": 30.0, "float64": 15.0, "float16": 0.5, "bfloat16": 0.5}
CPU_MEMORY_GBS = 10.0
GPU_SHARE_OF_PEAK = 0.7      # a large product reaches about this share of the peak
# A decode streams its weights at about this share of a measured triad (an H100's Llama-3.1-8B
# 2.06 of its 3.08 TB/s, 0.67; llama.cpp's 7B Q4_0 on this project's CPU 28.7 of 30.1 GB/s).
SHARE_OF_TRIAD = 0.7
ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2}


@dataclass
class Estimate:
    """How long a run will take and how much memory it needs, as far as earlier runs tell."""
    seconds: float | None = None        # None: not known
    peak_bytes: int | None = None
    basis: str = ""                      # where the rate came from, for the message
    too_big: list[str] = field(default_factory=list)   # points that will not fit
    points: int = 0                      # points that fit

    def refusal(self, device_name: str, memory_bytes: int | None) -> str | None:
        """One sentence when no point of the run fits in the device's memory: the run would
        start only to end with nothing measured."""
        if not self.too_big or self.points or not memory_bytes:
            return None
        return (f"Nothing of this run fits in {device_name}'s {size(memory_bytes)} of memory: "
                f"{', '.join(self.too_big)}.")

    def warnings(self, device_name: str, memory_bytes: int | None) -> list[str]:
        """One sentence per reason to think twice (more memory than the device has, or a run
        of more than LONG_RUN_S)."""
        out = []
        if self.too_big and memory_bytes and self.points:
            out.append(f"{', '.join(self.too_big)} need more than {device_name}'s "
                       f"{size(memory_bytes)} of memory: those points will be skipped.")
        if self.seconds is not None and self.seconds > LONG_RUN_S:
            out.append(f"This run may take about {duration(self.seconds)} on "
                       f"{device_name} ({self.basis}).")
        return out


def _gflops(device, dtype: str, tf32: bool) -> tuple[float | None, str]:
    if device.kind == "cpu":
        cores = os.cpu_count() or 1
        return CPU_CORE_GFLOPS.get(dtype, 30.0) * cores, f"a rough {cores}-core CPU figure"
    peak = _peak(device)
    tflops = peak.tflops_for(dtype, tf32) if peak else None
    if not tflops:
        return None, ""
    return tflops * 1000 * GPU_SHARE_OF_PEAK, f"from its published {dtype} peak"


def _peak(device):
    """The device's peak entry; an Apple GPU's is derived from the chip and its GPU cores,
    which the machine probe gives (as the worker finds it)."""
    from siliconbench.core.peaks import find_peak
    peak = find_peak(device.name)
    if peak is None and device.name.startswith("Apple"):
        try:
            from siliconbench.core.machine import probe
            m = probe()
            peak = find_peak(device.name, chip=m.chip, gpu_cores=m.gpu_cores)
        except Exception:  # no probe here: no peak, no time estimate
            peak = None
    return peak


def _memory_gbs(device) -> tuple[float | None, str]:
    stored = _stored_triad(device)
    if stored is not None:
        return stored * SHARE_OF_TRIAD, "the triad measured here"
    if device.kind == "cpu":
        return CPU_MEMORY_GBS, "a rough CPU memory figure"
    peak = _peak(device)
    if peak is None or not peak.bandwidth_gbs:
        return None, ""
    return peak.bandwidth_gbs * GPU_SHARE_OF_PEAK, "from its published memory bandwidth"


def _stored_triad(device) -> float | None:
    """The newest triad (GB/s) any framework measured on this machine's device, as the llm
    workload reads it for its bound: a 16-core Xeon's 115 GB/s where the rough CPU figure says
    10, which had the quick suite give it the tiny LLM."""
    from siliconbench.core.kit.ceilings import stored_ceiling
    try:
        found = stored_ceiling(device.name, "bandwidth", "float32")
    except Exception:  # an unreadable store: the rough figures
        return None
    return None if found is None else found.value


def estimate(workload: str, params: dict, device, quick: bool = False) -> Estimate:
    """The estimate for one run; params as given by the user (missing: the default)."""
    from siliconbench.core.catalogue import workload as declared
    try:
        from siliconbench.core.params import resolve
        params = resolve(declared(workload).params, params)
    except Exception:  # an unknown workload or a wrong parameter: the run says so itself
        return Estimate()
    settings = QUICK if quick else MeasureSettings()
    memory = device.memory_bytes
    est = Estimate()

    def fits(need: float, share: float = MEMORY_SHARE) -> bool:
        return memory is None or need <= share * memory

    work = ESTIMATORS.get(workload)
    if work is not None:
        work(est, params, device, settings, fits)
    if params.get("budget_s") and (est.seconds is not None or params.get("grow")):
        # --grow stops at its budget; a named sweep skips the points past it
        est.seconds = min(est.seconds or math.inf, float(params["budget_s"]))
        est.basis = est.basis or "its time budget"
    return est


def _gemm(est: Estimate, params: dict, device, settings, fits) -> None:
    from siliconbench.core.workloads import gemm
    sizes = params["sizes"] or gemm.default_sizes(device.kind, device.memory_bytes)
    if params.get("grow"):
        sizes = gemm.grown_sizes(sizes[0], device.memory_bytes)
    total = 0.0
    for dtype in params["dtypes"]:
        rate, est.basis = _gflops(device, dtype, bool(params.get("tf32")))
        for n in sizes:
            need = 3 * n * n * ITEMSIZE.get(dtype, 4)
            if not fits(need):
                est.too_big.append(f"N={n} in {dtype} ({size(need)})")
                continue
            est.points += 1
            est.peak_bytes = max(est.peak_bytes or 0, need)
            if rate is None:
                total = float("nan")
                continue
            product_s = 2 * n ** 3 / (rate * 1e9)
            if params["sizes"] is None and product_s > gemm.AUTO_MAX_PRODUCT_S:
                continue      # the automatic sweep skips it
            total += point_seconds(product_s, settings)
    est.seconds = None if total != total else total


def _bandwidth(est: Estimate, params: dict, device, settings, fits) -> None:
    from siliconbench.core.workloads import bandwidth
    arrays = bandwidth.ARRAYS
    rate, est.basis = _memory_gbs(device)
    total = 0.0
    for op in params.get("ops") or list(arrays):
        for mb in params["sizes_mb"] or bandwidth.DEFAULT_SIZES_MB:
            need = arrays[op] * mb * 2**20
            if not fits(need):
                est.too_big.append(f"{op} of {mb} MB arrays ({size(need)})")
                continue
            est.points += 1
            est.peak_bytes = max(est.peak_bytes or 0, need)
            if rate is not None:
                total += point_seconds(need / (rate * 1e9), settings)
    est.seconds = total if rate is not None else None


# An all-reduce between local ranks moves through shared memory or loopback TCP at about this
# (gloo on a 2-core VM: ~1 GB/s of bus bandwidth); the timing protocol's per-block agreement
# adds a small all-reduce per block, ALLREDUCE_BLOCK_S. A loopback collective rarely settles
# within 10% on a shared machine, so each point runs to the protocol's time cap: the default
# sweep (34 points) took 8 minutes on two CPU ranks, 14 s a point.
ALLREDUCE_GBS = 1.0
ALLREDUCE_BLOCK_S = 0.05


def _allreduce(est: Estimate, params: dict, device, settings, fits) -> None:
    from siliconbench.core.workloads import allreduce
    ranks = params["processes"]       # on this machine: every host runs this many
    sizes = params["sizes"] or allreduce.default_sizes(device.memory_bytes, ranks)
    est.basis = "a rough figure for ranks on one machine"
    total = 0.0
    for dtype in params["dtypes"]:
        for s in sizes:
            need = 3 * s * ranks        # input, output, the engine's staging, on every rank
            if not fits(need):
                est.too_big.append(f"an all-reduce of {size(s)} {dtype} messages on {ranks} "
                                   f"rank{'s' * (ranks != 1)} ({size(need)})")
                continue
            est.points += 1
            est.peak_bytes = max(est.peak_bytes or 0, need)
            call_s = s * allreduce.bus_factor(max(ranks, 2)) / (ALLREDUCE_GBS * 1e9)
            blocks = settings.min_blocks + 3 + settings.discard_calls
            total += max(point_seconds(call_s, settings), settings.max_time_s) \
                + blocks * ALLREDUCE_BLOCK_S
    est.seconds = total


def _llm(est: Estimate, params: dict, device, settings, fits) -> None:
    from siliconbench.core.kit import llm_shapes as shapes
    from siliconbench.core.workloads import llm
    try:
        shape = llm.shape_for(params)
    except Exception:  # a custom shape no model has: the run refuses it in its own words
        return
    dtype, batch, gen = params["dtype"], params["batch"], params["gen_tokens"]
    compute = shapes.activation_dtype(dtype)
    # A quantized model's products on a CPU run in the engine's own SIMD kernels (llama.cpp's
    # q4_0/q8_0 dot products) at about the float32 rate, not at a framework's emulated
    # bfloat16 rate: taking bfloat16's made a llama-2-7b Q4_0 run here read "about 11.4 h".
    flops, est.basis = _gflops(device, "float32" if device.kind == "cpu" and
                               dtype in shapes.QUANT_BITS else compute, False)
    gbs, memory = _memory_gbs(device)
    name = params["preset"]
    prompts = params["prompts"] or list(llm.DEFAULT_PROMPTS)
    depths = params["depths"] or list(llm.DEFAULT_DEPTHS)
    total = 0.0
    runs: dict[str, list[int]] = {"prefill": [], "decode": []}
    for kind, tokens, at, what in [("prefill", p, p, f"a {p}-token prompt") for p in prompts] + \
            [("decode", d + gen, d, f"decode from depth {d}") for d in depths]:
        need = shapes.memory_needed(shape, dtype, batch, tokens)
        if not fits(need):
            est.too_big.append(f"{name} in {dtype} with {what} ({size(need)})")
            continue
        est.points += 1
        est.peak_bytes = max(est.peak_bytes or 0, int(need))
        runs[kind].append(at)
    if flops is None or gbs is None:
        est.seconds = None
        return
    for p in runs["prefill"]:
        total += point_seconds(shapes.prefill_flops(shape, batch, p) / (flops * 1e9), settings)
    for d in runs["decode"]:
        step = shapes.bytes_per_decode_step(shape, dtype, batch, d, gen) / (gbs * 1e9)
        total += point_seconds(gen * step, settings)
    est.seconds = total
    est.basis = f"{est.basis} and {memory}"


ESTIMATORS = {"gemm": _gemm, "bandwidth": _bandwidth, "allreduce": _allreduce, "llm": _llm}


def spec_warnings(specs: list, devices: list) -> list[str]:
    """What the app asks about before it queues runs (Run, Run It Here, the quick suite): for
    each run, the device it runs on (siliconbench.core.frameworks.DeviceInfo, matched on framework and id)
    and its estimate's refusal and warnings, one sentence each."""
    out: list[str] = []
    for spec in specs:
        device = next((d for d in devices if (d.framework, d.id) == (spec.framework, spec.device)),
                      None)
        if device is None:
            continue
        est = estimate(spec.workload, spec.params, device, spec.quick)
        refusal = est.refusal(device.name, device.memory_bytes)
        out += ([refusal] if refusal else []) + est.warnings(device.name, device.memory_bytes)
    return list(dict.fromkeys(out))
