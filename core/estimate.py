"""A rough estimate of a run's time and peak memory before it starts, so a huge run (GEMM at
N=32768 in float64 on a laptop CPU) is questioned instead of accepted silently. Only where the
work is known from the parameters (GEMM and bandwidth with sizes named); the rates are the
device's published peak where SiliconBench has one, else a deliberately rough CPU figure."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from core.measure import QUICK, MeasureSettings
from core.numbers import duration, size

LONG_RUN_S = 5 * 60          # warn beyond this
MEMORY_SHARE = 0.8           # the workloads' own headroom rule (gemm.fits, bandwidth.fits)
# Rough sustained rates of one CPU core, in GFLOPS per dtype (AVX2/NEON FMA; half precision
# without hardware support is emulated and far slower), and of a CPU's memory, in GB/s.
CPU_CORE_GFLOPS = {"float32": 30.0, "float64": 15.0, "float16": 0.5, "bfloat16": 0.5}
CPU_MEMORY_GBS = 10.0
GPU_SHARE_OF_PEAK = 0.7      # a large product reaches about this share of the peak
ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2}


@dataclass
class Estimate:
    """How long a run will take and how much memory it needs, as far as earlier runs tell."""
    seconds: float | None = None        # None: not known
    peak_bytes: int | None = None
    basis: str = ""                      # where the rate came from, for the message
    too_big: list[str] = field(default_factory=list)   # points that will not fit

    def warnings(self, device_name: str, memory_bytes: int | None) -> list[str]:
        """One sentence per reason to think twice (more memory than the device has, or a run
        of more than LONG_RUN_S)."""
        out = []
        if self.too_big and memory_bytes:
            out.append(f"{', '.join(self.too_big)} need more than {device_name}'s "
                       f"{size(memory_bytes)} of memory: those points will be skipped.")
        if self.seconds is not None and self.seconds > LONG_RUN_S:
            out.append(f"This run may take about {duration(self.seconds)} on "
                       f"{device_name} ({self.basis}).")
        return out


def point_seconds(call_s: float, settings: MeasureSettings) -> float:
    """Time the measurement protocol spends on one point whose call takes `call_s`: discarded
    calls, warm-up, then blocks until enough (or at least floor_blocks past the time cap)."""
    calls = settings.discard_calls + 1
    if call_s * settings.min_blocks <= settings.max_time_s:
        return calls * call_s + min(settings.max_warmup_s, 3 * max(call_s, settings.min_block_s)) \
            + max(settings.min_time_s, settings.min_blocks * max(call_s, settings.min_block_s))
    return (calls + settings.floor_blocks) * call_s


def _gflops(device, dtype: str, tf32: bool) -> tuple[float | None, str]:
    if device.kind == "cpu":
        cores = os.cpu_count() or 1
        return CPU_CORE_GFLOPS.get(dtype, 30.0) * cores, f"a rough {cores}-core CPU figure"
    from core.peaks import find_peak
    peak = find_peak(device.name)
    tflops = peak.tflops_for(dtype, tf32) if peak else None
    if not tflops:
        return None, ""
    return tflops * 1000 * GPU_SHARE_OF_PEAK, f"from its published {dtype} peak"


def estimate(workload: str, params: dict, device, quick: bool = False) -> Estimate:
    """The estimate for one run; params as given by the user (missing: the default)."""
    settings = QUICK if quick else MeasureSettings()
    memory = device.memory_bytes
    fits = (lambda b: memory is None or b <= MEMORY_SHARE * memory)
    est = Estimate()
    if workload == "gemm" and params.get("sizes"):
        dtypes = params.get("dtypes") or ["float32", "float16", "bfloat16", "float64"]
        total = 0.0
        for dtype in dtypes:
            rate, est.basis = _gflops(device, dtype, bool(params.get("tf32")))
            for n in params["sizes"]:
                need = 3 * n * n * ITEMSIZE.get(dtype, 4)
                if not fits(need):
                    est.too_big.append(f"N={n} in {dtype} ({size(need)})")
                    continue
                est.peak_bytes = max(est.peak_bytes or 0, need)
                if rate is None:
                    total = float("nan")
                    continue
                total += point_seconds(2 * n ** 3 / (rate * 1e9), settings)
        est.seconds = None if total != total else total
    elif workload == "bandwidth" and params.get("sizes_mb"):
        arrays = {"copy": 2, "triad": 4}
        ops = params.get("ops") or list(arrays)
        rate = CPU_MEMORY_GBS if device.kind == "cpu" else None
        est.basis = "a rough CPU memory figure"
        total = 0.0
        for op in ops:
            for mb in params["sizes_mb"]:
                need = arrays[op] * mb * 2**20
                if not fits(need):
                    est.too_big.append(f"{op} of {mb} MB arrays ({size(need)})")
                    continue
                est.peak_bytes = max(est.peak_bytes or 0, need)
                if rate is not None:
                    total += point_seconds(need / (rate * 1e9), settings)
        est.seconds = total if rate is not None else None
    return est
