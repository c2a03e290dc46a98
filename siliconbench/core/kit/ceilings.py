"""The ceilings a workload's numbers are held against, as measured before on this machine's
device (the newest bandwidth (triad) and GEMM runs of each framework in the results store),
and what a number reads against one. The llm workload divides its decode roofline and holds
its prefill by them; siliconbench.core.estimate reads the same triad for its time estimates."""

from __future__ import annotations

from typing import NamedTuple

PUBLISHED, MEASURED_TRIAD, MEASURED_GEMM = "published peak", "measured triad", "measured GEMM"
MEASURED_READ = "measured read"

# STREAM's kernels (McCalpin's stream.c), as the bandwidth workload runs them: what each
# computes and the arrays it reads plus writes per element, the count its GB/s is of.
STREAM_KERNELS = {"copy": ("c = a", 2), "scale": ("b = s*c", 2), "add": ("c = a + b", 3),
                  "triad": ("a = b + s*c", 3)}
# The bandwidth workload's read kernel beside them: a sum over one array, 1 array read.
READ_KERNEL = ("s = sum(a)", 1)

# The least array a stored bandwidth run's row may have to serve as a bound: 64 MB, and four
# times the last-level cache where it is known (STREAM's rule for its arrays), so that a run
# with small arrays (--sizes-mb 4) never makes a cache's rate the memory's.
MIN_BOUND_MB = 64
CACHE_TIMES = 4
MB = 2**20


def last_level_cache() -> int | None:
    """Bytes of the CPU's largest cache (Linux's sysfs: one instance, the largest level);
    None where it cannot be read. A GPU's L2 is asked of its framework (cuda_l2_bytes)."""
    from pathlib import Path
    sizes = []
    for level in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (level / "size").read_text().strip()
        except OSError:
            continue
        scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes.append(int(digits) * scale)
    return max(sizes, default=None)


def cuda_l2_bytes() -> int | None:
    """The L2 of the CUDA GPU torch has loaded (its first), or None: torch not imported, no
    CUDA."""
    import sys
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            return int(torch.cuda.get_device_properties(0).L2_cache_size)
    except (RuntimeError, AttributeError):
        pass
    return None


def bound_min_mb(cache_bytes: int | None) -> float:
    """The least array size (MB) a bandwidth row may have to serve as a bound."""
    return max(MIN_BOUND_MB, CACHE_TIMES * (cache_bytes or 0) / MB)


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


def decode_bound(read: float, triad: float, triad_label: str, where: str) -> Ceiling:
    """A CPU's decode bound from its read kernel and the triad measured beside it (GB/s): the
    read (a decode only reads), or the triad where the read streams slower, said in the text.
    On this project's 2-core x86 VM torch.sum read 24.1 GB/s where the triad read 29.7 (one
    read stream per core keeps fewer lines in flight than the triad's three; see
    benchmarks/read_kernel.py): a bound under the triad would call wrong a decode that the
    triad shows the memory can feed."""
    kernel = f"the read kernel ({READ_KERNEL[0]})"
    if read >= triad:
        return Ceiling(read, f"{kernel} {read:.4g} GB/s beside {triad_label} {triad:.4g} "
                             f"GB/s, {where}", MEASURED_READ)
    return Ceiling(triad, f"{triad_label} {triad:.4g} GB/s, {where}, above {kernel} "
                          f"{read:.4g} GB/s beside it (a decode only reads, but this CPU's read "
                          "kernel streams slower than the triad: the bound is the higher of "
                          "the two)", MEASURED_TRIAD)


def bandwidth_ceiling(rec, least: float, read: bool) -> Ceiling | None:
    """A bandwidth run's bound at its largest array of at least `least` MB: its triad, or
    with `read` the higher of its read kernel and its triad at one size (decode_bound); None
    where the run has no such rows (a row flagged above_peak never serves)."""
    rows = {(r.params.get("op"), r.params.get("size_mb", 0)): r for r in rec.rows
            if r.value is not None and "above_peak" not in r.flags
            and r.params.get("size_mb", 0) >= least}
    sizes = {size for op, size in rows if op == "triad"}
    if read:
        sizes &= {size for op, size in rows if op == "read"}
    if not sizes:
        return None
    size = max(sizes)
    triad = rows["triad", size].value
    where = f"measured here by run {rec.id[:8]} ({rec.framework}, {size} MB arrays)"
    if read:
        return decode_bound(rows["read", size].value, triad, triad_name(rec.settings), where)
    return Ceiling(triad, f"{triad_name(rec.settings)} {triad:.4g} GB/s {where}",
                   MEASURED_TRIAD)


def stored_ceiling(device_name: str, workload: str, dtype: str, *, read: bool = False,
                   cache_bytes: int | None = None) -> Ceiling | None:
    """From the newest run of `workload` of each framework measured on this machine's device
    (by its name; siliconbench.core.estimate reads it too): the triad at its largest array,
    or the best GEMM rate in `dtype`; the highest of the frameworks'. A device's ceiling is
    what its best kernel reached: MLX's CPU triad (1.0 GB/s here) is no bound on torch's
    decode beside torch's (6.7 GB/s).

    A bandwidth row serves only with arrays of at least bound_min_mb(cache_bytes) (the CPU's
    last-level cache where none is given). With `read` (a CPU's decode bound: a decode only
    reads, see siliconbench.core.workloads.bandwidth) a run serves with its read kernel's row
    and its triad's at one array size, the higher of the two (decode_bound); a run without
    both does not serve."""
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
    least = bound_min_mb(cache_bytes if cache_bytes is not None else last_level_cache())
    try:
        for rec in store.runs(workload=workload, status="ok"):
            if rec.source != "measured" or rec.device_name != device_name \
                    or rec.framework in newest \
                    or any(rec.machine.get(k) != here.get(k) for k in same):
                continue
            if workload == "bandwidth":
                ceiling = bandwidth_ceiling(rec, least, read)
                if ceiling is not None:
                    newest[rec.framework] = ceiling
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
