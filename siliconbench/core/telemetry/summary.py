"""Run-level figures from the sampled series: each series' mean/min/max, the run's power and
energy, the highest temperature and thermal pressure, battery."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from siliconbench.core.telemetry.thermal import thermal_level_name

TEMPERATURE_SERIES = ("gpu_temperature_c", "cpu_temperature_c")


def series_values(s: dict | None) -> list[float]:
    return [v for v in (s or {}).get("v", []) if v is not None]


def summarize_series(series: dict[str, dict], power: str, power_label: str | None,
                     duration_s: float, notes: list[str]) -> dict:
    """Run-level figures: each series' mean/min/max, the run's power and energy, the highest
    temperature and thermal pressure, and whether it ran on battery."""
    summary: dict[str, Any] = {"duration_s": round(duration_s, 3), "series": {}}
    for name, s in series.items():
        vs = series_values(s)
        if vs:
            summary["series"][name] = {"unit": s["unit"], "mean": sum(vs) / len(vs),
                                       "min": min(vs), "max": max(vs), "n": len(vs)}
    watts = series_values(series.get(power))
    if watts and power_label:
        summary["power_source"] = power_label
        summary["power_series"] = power
        summary["power_w"] = sum(watts) / len(watts)
        counter = series_values(series.get("gpu_energy_j")) if power == "gpu_power_w" else []
        summary["energy_j"] = (counter[-1] - counter[0] if len(counter) > 1
                               else _integrate(series[power]))
    else:
        summary["power_source"] = None
        unavailable = [n for n in notes if n.startswith("power unavailable")]
        summary["power_unavailable"] = (unavailable[0] if unavailable else
                                        "no power sensor SiliconBench can read for this device")
    temps = [v for name in TEMPERATURE_SERIES for v in series_values(series.get(name))]
    summary["max_temperature_c"] = max(temps) if temps else None
    levels = series_values(series.get("thermal_pressure"))
    summary["max_thermal_pressure"] = thermal_level_name(max(levels)) if levels else None
    battery = series_values(series.get("on_battery"))
    summary["on_battery"] = any(battery) if battery else None
    return summary


def _integrate(s: dict) -> float:
    """Joules from a power series by the trapezoid rule (samples with no value skipped)."""
    points = [(t, v) for t, v in zip(s["t"], s["v"]) if v is not None]
    return sum((t1 - t0) * (v0 + v1) / 2 for (t0, v0), (t1, v1) in pairwise(points))
