"""The rows every framework's model workloads make from a measurement, without the framework
(so TensorFlow and MLX runs, where torch may not be imported, make torch's rows): throughput
and TFLOPS, peak memory, and sustained mode's measurement and rows over time."""

from __future__ import annotations

import resource
import sys
from collections.abc import Callable

from siliconbench.core.measure import Measurement
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize


def peak_memory(ctx) -> tuple[int | None, str]:
    """Peak bytes, and what they are: the device's allocator where it keeps count, else the
    process's peak resident memory (a CPU has no separate device memory)."""
    value = ctx.adapter.peak_memory(ctx.device)
    if value is not None:
        kind = "allocated now" if ctx.device.type == "mps" else "peak allocated"
        return int(value), f"{ctx.device.type} {kind}"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024), "process peak resident memory"


def memory_row(ctx, point: dict, flags: list[str]) -> Row:
    value, what = peak_memory(ctx)
    return Row("peak_memory", value, "bytes", point, None, list(flags), what)


def throughput_rows(ctx, m: Measurement, batch_size: int, unit: str, point: dict,
                    flops_per_call: float | None, dtype: str, flags: list[str],
                    note: str | None, time_metric: str = "step_time") -> list[Row]:
    """samples/s, time per call and TFLOPS (with % of peak for `dtype`, the name the peak
    table knows: float32, float16, bfloat16) from one measurement."""
    flags = (["noisy"] if m.noisy else []) + flags
    rates = m.rates(batch_size)
    rows = [Row("samples_per_s", summarize(rates).median, unit, point, summarize(rates),
                list(flags), note, None, rates)]
    ms = [t * 1e3 for t in m.per_call_s]
    rows.append(Row(time_metric, summarize(ms).median, "ms", point, summarize(ms), list(flags),
                    note, None, ms))
    if flops_per_call:
        tflops = m.rates(flops_per_call / 1e12)
        stats = summarize(tflops)
        from siliconbench.core.peaks import held_to_peak
        pct, tf_flags, tf_note = held_to_peak(
            stats.median, ctx.peak.tflops_for(dtype) if ctx.peak is not None else None,
            "TFLOPS", flags, note)
        rows.append(Row("tflops", stats.median, "TFLOPS", point, stats, tf_flags, tf_note, pct,
                        tflops))
    return rows


# ---------------------------------------------------------------- sustained mode

def measure_run(ctx, call: Callable[[], object], duration_min: float | None,
                label: str = "") -> Measurement:
    """The normal protocol, or with `duration_min` (--duration) sustained mode
    (RunContext.measure_sustained, the loop every workload's --duration runs)."""
    if duration_min is None:
        return ctx.measure(call, sustained=False)
    return ctx.measure_sustained(call, duration_min, label)


def sustained_rows(m: Measurement, batch_size: int, unit: str, point: dict) -> list[Row]:
    """Throughput per minute and the last/first-minute ratio of a sustained measurement;
    none for the normal protocol."""
    if not m.block_end_s:
        return []
    from siliconbench.core.telemetry import sustained_rows as rows_over_time
    return rows_over_time(m.block_end_s, m.rates(batch_size), unit, point)


# ---------------------------------------------------------------- a run with nothing in it

# Rows the parent adds from its telemetry, which say nothing about whether the workload ran.
TELEMETRY_METRICS = ("power", "joules_per_sample", "samples_per_watt", "tflops_per_watt",
                     "max_temperature", "max_thermal_pressure")


def nothing_measured(rows: list[Row]) -> str | None:
    """Why a run that finished has nothing to show, in one sentence, when every point it made
    was unsupported or skipped (an all-reduce of 64 GB messages on a 23.5 GB machine); None
    when it measured something (or made no rows at all: its own error says why)."""
    measured = [r for r in rows if r.value is not None and r.metric not in TELEMETRY_METRICS]
    refused = [r for r in rows if {"unsupported", "skipped"} & set(r.flags)]
    if measured or not refused:
        return None
    kinds = sorted({f for r in refused for f in r.flags if f in ("unsupported", "skipped")})
    notes = list(dict.fromkeys(r.note.splitlines()[0] for r in refused if r.note))
    n = len(refused)
    why = f"nothing was measured: {'the' if n == 1 else f'all {n}'} point{'s' * (n != 1)} " \
          f"{'were' if n != 1 else 'was'} {' or '.join(kinds)}"
    return why + (f" ({notes[0]}{'; ' + notes[1] if len(notes) > 1 else ''})" if notes else "")
