"""The one timing protocol every workload uses (DESIGN.md, "How a number is measured").

Discard the first calls, warm up until three blocks agree, then time blocks of calls, each
closed by one device synchronisation, until the spread is small or the time cap is reached.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Protocol

from siliconbench.core.stats import Stats, rel_iqr, summarize


class Meter(Protocol):
    """What reads the device around a point's timed blocks (siliconbench.core.telemetry.PointMeter):
    begin() just before the first timed block, end() just after the last, which returns what
    it read (seconds, the energy counter's joules, throttle state) for Measurement.energy."""

    def begin(self) -> None: ...

    def end(self) -> dict: ...

    def tick(self) -> None:
        """Between blocks: lets a counter that wraps be read often enough."""


@dataclass(frozen=True)
class MeasureSettings:
    """The timing protocol's settings: warm-up, block length, how many blocks and how long."""
    discard_calls: int = 2        # compilation, graph building, autotuning
    min_block_s: float = 0.020    # a block lasts at least this long
    warmup_agree: float = 0.05    # three consecutive warm-up blocks within 5% of each other
    max_warmup_s: float = 5.0
    min_blocks: int = 10
    min_time_s: float = 0.25      # measured time, warm-up excluded
    max_time_s: float = 10.0      # time cap of the measured phase
    max_rel_iqr: float = 0.10     # IQR / median under which the spread counts as small
    floor_blocks: int = 3         # never stop with fewer blocks than this, even at the cap

    def to_dict(self) -> dict:
        return asdict(self)


QUICK = MeasureSettings(min_blocks=5, min_time_s=0.1, max_time_s=2.0, max_warmup_s=1.0)
# JSON that overrides fields of the settings, e.g. {"max_time_s": 0.3}: the tests that check
# how a run is launched, ended and stored (not its numbers) shorten the protocol with it. Every
# process of a run reads it alike, and the record keeps the settings it was measured with.
SETTINGS_ENV = "SILICONBENCH_MEASURE"


def settings_for(quick: bool) -> MeasureSettings:
    """The protocol's settings for a run: QUICK or the full ones, with SETTINGS_ENV's
    overrides."""
    settings = QUICK if quick else MeasureSettings()
    text = os.environ.get(SETTINGS_ENV)
    if not text:
        return settings
    names = {f.name for f in fields(MeasureSettings)}
    try:
        overrides = json.loads(text)
        if not isinstance(overrides, dict) or not set(overrides) <= names:
            raise ValueError
        return replace(settings, **{k: type(getattr(settings, k))(v)
                                    for k, v in overrides.items()})
    except (ValueError, TypeError):
        raise ValueError(f"{SETTINGS_ENV} must be a JSON object of the timing settings "
                         f"({', '.join(sorted(names))}); it is {text!r}.") from None


@dataclass
class Measurement:
    """Seconds per call, one sample per timed block."""
    per_call_s: list[float]
    calls_per_block: int
    warmup_blocks: int
    warmed_up: bool               # three blocks agreed before the warm-up cap
    converged: bool               # spread small before the time cap
    elapsed_s: float
    # Sustained mode (measure_for): when each block ended, in s since timing began.
    block_end_s: list[float] = field(default_factory=list)
    # The meter's reading over the timed blocks (warm-up excluded); None without a meter.
    energy: dict[str, Any] | None = None
    stats: Stats = field(init=False)

    def __post_init__(self) -> None:
        self.stats = summarize(self.per_call_s)

    @property
    def noisy(self) -> bool:
        return not (self.warmed_up and self.converged)

    def rates(self, work_per_call: float) -> list[float]:
        """Work per second for each block (e.g. FLOP per call -> FLOP/s)."""
        return [work_per_call / t for t in self.per_call_s]


def _spread(xs: list[float]) -> float:
    m = sorted(xs)[len(xs) // 2]
    return (max(xs) - min(xs)) / m if m > 0 else math.inf


def _same(x: float) -> float:
    return x


def _warm_up(call: Callable[[], object], sync: Callable[[], None],
             settings: MeasureSettings, agree: Callable[[float], float] = _same
             ) -> tuple[Callable[[], float], int, int, bool]:
    """Discard the first calls, size a block, warm up: (block, calls per block, warm-up
    blocks, whether three blocks agreed). block() times one block and returns s per call.
    Every decision is taken on agree(time): the ranks of a collective decide alike."""
    clock = time.perf_counter

    sync()
    for _ in range(settings.discard_calls):
        call()
        sync()

    # Size a block so it lasts at least min_block_s: the one sync per block then costs little.
    calls = 1
    while True:
        t0 = clock()
        for _ in range(calls):
            call()
        sync()
        dt = agree(clock() - t0)
        if dt >= settings.min_block_s:
            break
        calls = max(calls * 2, math.ceil(calls * settings.min_block_s / max(dt, 1e-9)))

    def block() -> float:
        t0 = clock()
        for _ in range(calls):
            call()
        sync()
        dt = agree(clock() - t0)  # after the clock: the agreement is not timed
        return dt / calls

    warm: list[float] = [dt / calls]
    start = clock()
    warmed_up = False
    while agree(clock() - start) < settings.max_warmup_s:
        warm.append(block())
        if len(warm) >= 3 and _spread(warm[-3:]) <= settings.warmup_agree:
            warmed_up = True
            break
    return block, calls, len(warm), warmed_up


def measure(call: Callable[[], object], sync: Callable[[], None],
            settings: MeasureSettings = MeasureSettings(),
            agree: Callable[[float], float] = _same, meter: Meter | None = None
            ) -> Measurement:
    """Time `call` by the protocol. `sync` must wait until all work queued on the device is
    done (for a CPU framework that runs eagerly it may do nothing). A run is cancelled by
    ending its process, so nothing here polls for that. A collective's ranks pass `agree`
    (the largest value over the ranks): they then take every decision alike and make the
    same number of calls, and a block lasts until its slowest rank is done. A `meter` reads
    the device right before the first timed block and right after the last."""
    clock = time.perf_counter
    block, calls, warm_blocks, warmed_up = _warm_up(call, sync, settings, agree)

    samples: list[float] = []
    if meter is not None:
        meter.begin()
    start = clock()
    converged = False
    while True:
        samples.append(block())
        if meter is not None:
            meter.tick()
        elapsed = agree(clock() - start)
        enough = len(samples) >= settings.min_blocks and elapsed >= settings.min_time_s
        if enough and rel_iqr(samples) <= settings.max_rel_iqr:
            converged = True
            break
        if elapsed >= settings.max_time_s and len(samples) >= settings.floor_blocks:
            break
    elapsed = clock() - start
    energy = meter.end() if meter is not None else None
    return Measurement(samples, calls, warm_blocks, warmed_up, converged, elapsed,
                       energy=energy)


def measure_for(call: Callable[[], object], sync: Callable[[], None], duration_s: float,
                settings: MeasureSettings = MeasureSettings(),
                on_block: Callable[[float], None] | None = None,
                meter: Meter | None = None) -> Measurement:
    """Sustained mode: after the same warm-up, time blocks back to back for `duration_s`,
    whatever the spread (a machine that throttles is the finding, not noise). Each block's
    end time is kept in `block_end_s` for throughput over time; `on_block(elapsed_s)` after
    each block lets the caller report progress."""
    clock = time.perf_counter
    block, calls, warm_blocks, warmed_up = _warm_up(call, sync, settings)

    samples: list[float] = []
    ends: list[float] = []
    if meter is not None:
        meter.begin()
    start = clock()
    while True:
        samples.append(block())
        ends.append(clock() - start)
        if meter is not None:
            meter.tick()
        if on_block is not None:
            on_block(ends[-1])
        if ends[-1] >= duration_s and len(samples) >= settings.floor_blocks:
            break
    elapsed = clock() - start
    energy = meter.end() if meter is not None else None
    return Measurement(samples, calls, warm_blocks, warmed_up, True, elapsed, ends, energy)


def point_seconds(call_s: float, settings: MeasureSettings) -> float:
    """Time the measurement protocol spends on one point whose call takes `call_s`: discarded
    calls, warm-up, then blocks until enough (or at least floor_blocks past the time cap)."""
    calls = settings.discard_calls + 1
    if call_s * settings.min_blocks <= settings.max_time_s:
        return calls * call_s + min(settings.max_warmup_s, 3 * max(call_s, settings.min_block_s)) \
            + max(settings.min_time_s, settings.min_blocks * max(call_s, settings.min_block_s))
    return (calls + settings.floor_blocks) * call_s
