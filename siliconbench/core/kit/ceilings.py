"""The ceilings a workload's numbers are held against, as measured before on this machine's
device (the newest bandwidth (triad) and GEMM runs of each framework in the results store),
and what a number reads against one. The llm workload divides its decode roofline and holds
its prefill by them; siliconbench.core.estimate reads the same triad for its time estimates."""

from __future__ import annotations

from typing import NamedTuple

PUBLISHED, MEASURED_TRIAD, MEASURED_GEMM = "published peak", "measured triad", "measured GEMM"

# STREAM's kernels (McCalpin's stream.c), as the bandwidth workload runs them: what each
# computes and the arrays it reads plus writes per element, the count its GB/s is of.
STREAM_KERNELS = {"copy": ("c = a", 2), "scale": ("b = s*c", 2), "add": ("c = a + b", 3),
                  "triad": ("a = b + s*c", 3)}


def triad_name(settings: dict) -> str:
    """What a bandwidth record's triad was, by its settings: STREAM's where the run said it
    ran STREAM's kernels; before that, d = a*b + c over 4 arrays (its GB/s counted 4)."""
    if "stream_kernels" in settings:
        return f"STREAM's triad ({STREAM_KERNELS['triad'][0]})"
    return "the triad d = a*b + c (4 arrays, SiliconBench's before STREAM's)"


class Ceiling(NamedTuple):
    value: float        # GB/s or TFLOPS
    text: str           # where it comes from, in a sentence's words
    source: str         # in a label's: "measured triad", "measured GEMM" or "published peak"


def against_ceiling(ceiling, value: float, unit: str, flags: list[str]):
    """(% of the ceiling, flags, note): above_peak where a number passes what the device can
    do, which only a measurement error explains."""
    if ceiling is None:
        return None, list(flags), None
    from siliconbench.core.peaks import assess
    pct, above = assess(value, ceiling[0])
    if above:
        return pct, [*flags, "above_peak"], (f"{value:.4g} {unit} is above the bound "
                                             f"({ceiling[0]:.4g} {unit}, {ceiling[1]}): "
                                             "the measurement is wrong")
    return pct, list(flags), f"% of {ceiling[0]:.4g} {unit} ({ceiling[1]})"


def stored_ceiling(device_name: str, workload: str, dtype: str) -> Ceiling | None:
    """From the newest run of `workload` of each framework measured on this machine's device
    (by its name; siliconbench.core.estimate reads it too): the triad at its largest array
    (past the caches), or the best GEMM rate in `dtype`; the highest of the frameworks'. A
    device's ceiling is what its best kernel reached: MLX's CPU triad (1.0 GB/s here) is no
    bound on torch's decode beside torch's (6.7 GB/s)."""
    from siliconbench.core.store import Store, StoreError, default_path
    if not default_path().exists():
        return None
    from siliconbench.core.machine import probe
    here = probe().to_dict()
    same = ("chip", "cpu_model", "model_identifier", "memory_bytes")
    try:
        store = Store()
    except StoreError:
        return None
    newest: dict[str, Ceiling] = {}
    try:
        for rec in store.runs(workload=workload, status="ok"):
            if rec.source != "measured" or rec.device_name != device_name \
                    or rec.framework in newest \
                    or any(rec.machine.get(k) != here.get(k) for k in same):
                continue
            if workload == "bandwidth":
                rows = [r for r in rec.rows if r.value is not None and r.params.get("op") ==
                        "triad" and "above_peak" not in r.flags]
                if rows:
                    row = max(rows, key=lambda r: r.params.get("size_mb", 0))
                    newest[rec.framework] = Ceiling(
                        row.value, f"{triad_name(rec.settings)} {row.value:.4g} GB/s "
                                   f"measured here by run {rec.id[:8]} ({rec.framework})",
                        MEASURED_TRIAD)
            else:
                rows = [r for r in rec.rows if r.value is not None and r.metric == "tflops"
                        and r.params.get("dtype") == dtype and "above_peak" not in r.flags]
                if rows:
                    row = max(rows, key=lambda r: r.value)
                    newest[rec.framework] = Ceiling(
                        row.value, f"the {dtype} GEMM {row.value:.4g} TFLOPS measured here "
                                   f"by run {rec.id[:8]} ({rec.framework})", MEASURED_GEMM)
    finally:
        store.close()
    return max(newest.values(), key=lambda c: c.value, default=None)
