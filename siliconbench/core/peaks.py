"""The physical-peak table (siliconbench/resources/peaks.json) and the trust check that flags a measurement
above what the hardware can physically do, which almost always means a timing bug."""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from siliconbench import resources

DTYPES = ("float32", "float16", "bfloat16", "float64")

# Published peaks are rounded (and Apple rounds bandwidth down, e.g. 400 for 409.6 GB/s), so a
# value only counts as above peak when it beats the peak by more than that rounding.
ABOVE_PEAK_TOLERANCE = 1.03

_VENDORS = ("apple", "nvidia")
_DTYPE_ALIASES = {
    "fp32": "float32",
    "float": "float32",
    "f32": "float32",
    "fp16": "float16",
    "half": "float16",
    "f16": "float16",
    "bf16": "bfloat16",
    "fp64": "float64",
    "double": "float64",
    "f64": "float64",
}
# A MIG slice has only part of the GPU, so the full-GPU peak would be wrong for it.
_NVIDIA_NEVER = re.compile(r"\bMIG\b", re.IGNORECASE)


@dataclass(frozen=True)
class Peak:
    """Physical peaks of one device: published (NVIDIA) or derived from cores x clock (Apple)."""

    id: str
    name: str
    vendor: str
    tflops: dict[str, float]
    tflops_tf32: float | None
    bandwidth_gbs: float | None
    sources: dict[str, str]
    tflops_non_tensor: dict[str, float] = field(default_factory=dict)

    def tflops_for(self, dtype: str, tf32: bool = False) -> float | None:
        """Peak TFLOPS for a matmul in `dtype` ("float32", "torch.float16", "bf16", ...); None if
        unknown. With tf32=True a float32 matmul may use the TF32 tensor cores, so its ceiling is
        the TF32 peak where the device has one."""
        name = normalize_dtype(dtype)
        if name == "float32" and tf32 and self.tflops_tf32 is not None:
            return self.tflops_tf32
        return self.tflops.get(name) if name else None


@dataclass(frozen=True)
class _Matcher:
    """How one table entry recognises its device; kept out of Peak, which callers only read."""

    chip: str | None = None
    gpu_cores: int | None = None
    patterns: tuple[re.Pattern[str], ...] = ()
    excludes: tuple[re.Pattern[str], ...] = ()


def normalize_dtype(dtype: str) -> str | None:
    """The table's dtype key for a dtype name ("torch.float16" -> "float16"); None if unknown."""
    name = str(dtype).strip().lower().removeprefix("torch.").removeprefix("mlx.core.")
    name = _DTYPE_ALIASES.get(name, name)
    return name if name in DTYPES else None


def load_peaks() -> list[Peak]:
    """Every entry of siliconbench/resources/peaks.json, in file order (read once per process)."""
    return [peak for peak, _ in _table()]


def find_peak(
    device_name: str | None = None, *, chip: str | None = None, gpu_cores: int | None = None
) -> Peak | None:
    """The peak entry for a device, or None when it is not in the table (CPUs never are).

    Apple GPUs match by chip ("Apple M1 Max", as macOS reports it; a device_name naming an Apple
    chip is taken as the chip) and GPU core count; without a core count a chip matches only if
    it has a single variant, because variants differ in peak. NVIDIA GPUs match by their CUDA
    device name ("NVIDIA H100 80GB HBM3"); the most specific pattern wins.
    """
    if chip is None and device_name and _looks_like_apple_chip(device_name):
        chip = device_name
    if chip is not None:
        return _find_apple(chip, gpu_cores)
    if device_name:
        return _find_nvidia(device_name)
    return None


def assess(value: float, peak_value: float | None) -> tuple[float | None, bool]:
    """(percent of peak, above-peak flag) for a measured value and its peak in the same unit.

    Percent is None when the peak is unknown; the flag is set only when the value beats the peak
    by more than ABOVE_PEAK_TOLERANCE, since that cannot happen without a measurement error.
    """
    if peak_value is None or peak_value <= 0 or not math.isfinite(value):
        return None, False
    return value / peak_value * 100.0, value > peak_value * ABOVE_PEAK_TOLERANCE


def held_to_peak(value: float, peak_value: float | None, unit: str, flags: list[str],
                 note: str | None) -> tuple[float | None, list[str], str | None]:
    """A measured number held against the device's physical peak, the one rule a GEMM,
    bandwidth or training row follows: (percent of the peak, the row's flags with above_peak
    where it passes the peak, its note led by why: only a measurement error explains it)."""
    pct, above = assess(value, peak_value)
    if not above:
        return pct, list(flags), note
    from siliconbench.core.numbers import quantity
    said = f"{quantity(value, unit)} is above the device's physical peak: the measurement is wrong"
    return pct, [*flags, "above_peak"], f"{said}; {note}" if note else said


def _normalize_chip(chip: str) -> str:
    name = " ".join(str(chip).split()).casefold()
    return name if name.startswith("apple ") else f"apple {name}"


def _looks_like_apple_chip(name: str) -> bool:
    return re.match(r"^\s*(apple\s+)?m\d+\b", name, re.IGNORECASE) is not None


def _find_apple(chip: str, gpu_cores: int | None) -> Peak | None:
    wanted = _normalize_chip(chip)
    variants = [
        (peak, matcher)
        for peak, matcher in _table()
        if peak.vendor == "apple" and matcher.chip == wanted
    ]
    if gpu_cores is None:
        return variants[0][0] if len(variants) == 1 else None
    for peak, matcher in variants:
        if matcher.gpu_cores == gpu_cores:
            return peak
    return None


def _find_nvidia(device_name: str) -> Peak | None:
    if _NVIDIA_NEVER.search(device_name):
        return None
    best: Peak | None = None
    best_specificity = -1
    for peak, matcher in _table():
        if peak.vendor != "nvidia" or any(x.search(device_name) for x in matcher.excludes):
            continue
        for pattern in matcher.patterns:
            # A longer pattern says more about the part, so it beats a shorter one that also
            # matches (first entry wins a tie, keeping the result independent of set order).
            if pattern.search(device_name) and len(pattern.pattern) > best_specificity:
                best, best_specificity = peak, len(pattern.pattern)
    return best


@functools.cache
def _table() -> tuple[tuple[Peak, _Matcher], ...]:
    text = resources.read_text("peaks.json")
    data = json.loads(text)
    entries = data.get("peaks") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ValueError("siliconbench/resources/peaks.json: expected an object with a 'peaks' list")
    seen: set[str] = set()
    table = []
    for index, entry in enumerate(entries):
        peak, matcher = _parse_entry(entry, index)
        if peak.id in seen:
            raise ValueError(f"siliconbench/resources/peaks.json: duplicate id {peak.id!r}")
        seen.add(peak.id)
        table.append((peak, matcher))
    return tuple(table)


def _parse_entry(entry: Any, index: int) -> tuple[Peak, _Matcher]:
    # The table ships with the app, so a malformed entry is a bug to report loudly, not skip.
    where = f"siliconbench/resources/peaks.json entry {index}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: not an object")
    where = f"siliconbench/resources/peaks.json entry {entry.get('id', index)!r}"
    vendor = entry.get("vendor")
    if vendor not in _VENDORS:
        raise ValueError(f"{where}: vendor must be one of {_VENDORS}")
    peak = Peak(
        id=str(entry["id"]),
        name=str(entry["name"]),
        vendor=vendor,
        tflops=_rates(entry.get("tflops") or {}, where),
        tflops_tf32=_optional_number(entry.get("tflops_tf32"), where),
        bandwidth_gbs=_optional_number(entry.get("bandwidth_gbs"), where),
        sources={str(k): str(v) for k, v in (entry.get("sources") or {}).items()},
        tflops_non_tensor=_rates(entry.get("tflops_non_tensor") or {}, where),
    )
    match = entry.get("match")
    if vendor == "apple":
        if not isinstance(match, dict) or not match.get("chip"):
            raise ValueError(f"{where}: an Apple entry needs match.chip")
        cores = match.get("gpu_cores")
        matcher = _Matcher(
            chip=_normalize_chip(match["chip"]), gpu_cores=int(cores) if cores else None
        )
    else:
        if not isinstance(match, list) or not match:
            raise ValueError(f"{where}: an NVIDIA entry needs a list of match patterns")
        matcher = _Matcher(
            patterns=tuple(re.compile(p, re.IGNORECASE) for p in match),
            excludes=tuple(re.compile(p, re.IGNORECASE) for p in entry.get("exclude") or ()),
        )
    return peak, matcher


def _rates(values: Any, where: str) -> dict[str, float]:
    if not isinstance(values, dict):
        raise ValueError(f"{where}: rates must be an object of dtype -> TFLOPS")
    unknown = set(values) - set(DTYPES)
    if unknown:
        raise ValueError(f"{where}: unknown dtype keys {sorted(unknown)}; use {DTYPES}")
    return {dtype: _number(rate, where) for dtype, rate in values.items()}


def _optional_number(value: Any, where: str) -> float | None:
    return None if value is None else _number(value, where)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{where}: {value!r} is not a positive number")
    return float(value)
