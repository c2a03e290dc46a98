"""The ceilings a workload's numbers are held against, as measured before on this machine's
device (the newest bandwidth (triad) and GEMM runs of each framework in the results store),
and what a number reads against one. The command or the app reads them from the store it
opened (stored_bounds) before a run starts; the run's plan carries them to the benchmark's
process, which never opens the store. The llm workload divides its decode roofline and holds
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


def bandwidth_entry(rec) -> dict | None:
    """What a bandwidth run offers as a bound, in plain JSON: each array size with a triad
    row, its triad and its read kernel's rate (None without one); None where it has no triad
    (a row flagged above_peak never serves)."""
    sizes: dict[float, dict[str, float]] = {}
    for r in rec.rows:
        op = r.params.get("op")
        if r.value is not None and "above_peak" not in r.flags and op in ("triad", "read"):
            sizes.setdefault(r.params.get("size_mb", 0), {})[op] = r.value
    rows = sorted([size, ops["triad"], ops.get("read")] for size, ops in sizes.items()
                  if "triad" in ops)
    if not rows:
        return None
    return {"device_name": rec.device_name, "framework": rec.framework, "run": rec.id[:8],
            "triad_name": triad_name(rec.settings), "sizes": rows}


def bandwidth_ceiling(entry: dict, least: float, read: bool) -> Ceiling | None:
    """A bandwidth run's bound (bandwidth_entry) at its largest array of at least `least` MB:
    its triad, or with `read` the higher of its read kernel and its triad at one size
    (decode_bound); None where the run has no such rows."""
    rows = [row for row in entry["sizes"] if row[0] >= least and (row[2] is not None or
                                                                  not read)]
    if not rows:
        return None
    size, triad, rate = max(rows)
    where = f"measured here by run {entry['run']} ({entry['framework']}, {size} MB arrays)"
    if read:
        return decode_bound(rate, triad, entry["triad_name"], where)
    return Ceiling(triad, f"{entry['triad_name']} {triad:.4g} GB/s {where}", MEASURED_TRIAD)


def stored_bounds(store, workloads=("bandwidth", "gemm")) -> dict:
    """What the runs of `workloads` measured on this machine (same chip, CPU, model and
    memory) that can bound another run's numbers, read from `store` (the one the command or
    the app opened; this opens none): {workload: [entry, ...]}, newest run first, plain
    JSON. The run's plan carries it to the benchmark's own process, which never opens the
    store: stored_ceiling picks the bound there, where its device's name and caches are known.

    A bandwidth entry is one run's sizes with their triad and read rates (bandwidth_entry); a
    GEMM entry one run's best rate in each dtype. Entries that can never be picked (an older
    run of the framework on the device whose largest triad, and largest size with both a
    triad and a read, are no larger than a newer run's) are left out, so a store of thousands
    of runs gives a few entries. A lab's shared store is read in this machine's own file,
    where its runs are kept first and stay (store.local): only this machine's runs can bound
    it, and the lab's need not cross the network before a run."""
    from siliconbench.core.machine import probe
    store = getattr(store, "local", None) or store
    here = probe().to_dict()
    same = ("chip", "cpu_model", "model_identifier", "memory_bytes")
    out: dict[str, list[dict]] = {}
    for workload in workloads:
        entries = out.setdefault(workload, [])
        largest: dict[tuple, object] = {}   # what the newer runs offer, by device and kind
        for rec in store.runs(workload=workload, status="ok"):
            if rec.source != "measured" or not rec.device_name \
                    or any(rec.machine.get(k) != here.get(k) for k in same):
                continue
            if workload == "bandwidth":
                entry = bandwidth_entry(rec)
                if entry is None:
                    continue
                key = (rec.device_name, rec.framework)
                top = (entry["sizes"][-1][0],
                       max((row[0] for row in entry["sizes"] if row[2] is not None),
                           default=-1))
                seen = largest.get(key, (-1, -1))
                if top[0] <= seen[0] and top[1] <= seen[1]:
                    continue        # a newer run serves wherever this one would
                largest[key] = (max(top[0], seen[0]), max(top[1], seen[1]))
                entries.append(entry)
            else:
                best: dict[str, float] = {}
                for r in rec.rows:
                    dtype = r.params.get("dtype")
                    if r.value is not None and r.metric == "tflops" and \
                            "above_peak" not in r.flags and isinstance(dtype, str):
                        best[dtype] = max(best.get(dtype, r.value), r.value)
                for dtype, value in best.items():
                    key = (rec.device_name, rec.framework, dtype)
                    if key in largest:
                        continue        # the newest run with this dtype is the one
                    largest[key] = value
                    entries.append({"device_name": rec.device_name,
                                    "framework": rec.framework, "run": rec.id[:8],
                                    "dtype": dtype, "value": value,
                                    "text": f"the {dtype} GEMM {value:.4g} TFLOPS measured "
                                            f"here by run {rec.id[:8]} ({rec.framework})"})
    return out


def stored_ceiling(bounds: dict | None, device_name: str, workload: str, dtype: str, *,
                   read: bool = False, cache_bytes: int | None = None) -> Ceiling | None:
    """From `bounds` (stored_bounds: the runs measured before on this machine, which the
    command or the app read from its store and the run's plan carries), the newest run of
    `workload` of each framework on the device `device_name` (siliconbench.core.estimate
    reads it too): the triad at its largest array, or the best GEMM rate in `dtype`; the
    highest of the frameworks'. A device's ceiling is what its best kernel reached: MLX's CPU
    triad (1.0 GB/s here) is no bound on torch's decode beside torch's (6.7 GB/s).

    A bandwidth row serves only with arrays of at least bound_min_mb(cache_bytes) (the CPU's
    last-level cache where none is given). With `read` (a CPU's decode bound: a decode only
    reads, see siliconbench.core.workloads.bandwidth) a run serves with its read kernel's row
    and its triad's at one array size, the higher of the two (decode_bound); a run without
    both does not serve."""
    if not bounds:
        return None
    newest: dict[str, Ceiling] = {}
    least = bound_min_mb(cache_bytes if cache_bytes is not None else last_level_cache())
    for entry in bounds.get(workload) or []:
        if entry["device_name"] != device_name or entry["framework"] in newest:
            continue
        if workload == "bandwidth":
            ceiling = bandwidth_ceiling(entry, least, read)
        elif entry["dtype"] == dtype:
            ceiling = Ceiling(entry["value"], entry["text"], MEASURED_GEMM)
        else:
            ceiling = None
        if ceiling is not None:
            newest[entry["framework"]] = ceiling
    return max(newest.values(), key=lambda c: c.value, default=None)
