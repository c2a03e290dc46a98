"""The timing protocol on calls of known duration: warm-up discards slow starts, blocks are
closed by one sync, spread decides convergence, the cap stops a noisy measurement."""

import itertools
import time

import pytest

from core.measure import MeasureSettings, measure
from core.stats import median_ci, summarize

FAST = MeasureSettings(min_block_s=0.005, min_blocks=5, min_time_s=0.02, max_time_s=1.0,
                       max_warmup_s=1.0)


def busy(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_steady_call_is_measured_and_synced_once_per_block():
    syncs = []
    m = measure(lambda: busy(0.002), lambda: syncs.append(1), FAST)
    assert m.converged and m.warmed_up and not m.noisy
    assert m.stats.median == pytest.approx(0.002, rel=0.25)
    assert len(m.per_call_s) >= FAST.min_blocks
    # one sync per block (plus the discarded calls, the calibration and the warm-up blocks)
    assert m.calls_per_block >= 2
    assert len(syncs) < (len(m.per_call_s) + m.warmup_blocks) * 2 + FAST.discard_calls + 10


def test_slow_first_calls_are_discarded():
    durations = itertools.chain([0.05, 0.05], itertools.repeat(0.001))
    m = measure(lambda: busy(next(durations)), lambda: None, FAST)
    assert m.stats.median == pytest.approx(0.001, rel=0.3)


def test_unsynchronised_work_is_counted_at_the_sync():
    # The "device" queues work and only runs it at sync: time must still be counted.
    queued = []
    m = measure(lambda: queued.append(0.002), lambda: [busy(queued.pop()) for _ in list(queued)],
                FAST)
    assert m.stats.median == pytest.approx(0.002, rel=0.25)


def test_wild_spread_is_flagged_noisy_at_the_cap():
    settings = MeasureSettings(min_block_s=0.001, min_blocks=5, min_time_s=0.01,
                               max_time_s=0.3, max_warmup_s=0.1)
    durations = itertools.cycle([0.001, 0.008, 0.002, 0.016])
    m = measure(lambda: busy(next(durations)), lambda: None, settings)
    assert m.noisy and not m.converged
    assert len(m.per_call_s) >= settings.floor_blocks


def test_rates_are_work_over_time():
    m = measure(lambda: busy(0.002), lambda: None, FAST)
    rates = m.rates(10.0)
    assert summarize(rates).median == pytest.approx(10.0 / 0.002, rel=0.25)


def test_summary_statistics_known_answers():
    s = summarize([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    assert (s.median, s.p25, s.p75, s.n) == (6, 3.5, 8.5, 11)
    # The 95% sign-test interval for n=11 is [x(2), x(10)] in 1-based order statistics.
    assert (s.ci_low, s.ci_high) == (2, 10)
    assert s.rel_iqr == pytest.approx(5 / 6)
    assert median_ci([1.0, 2.0, 3.0]) == (1.0, 3.0)  # too few for 95%: the range
    with pytest.raises(ValueError):
        summarize([])
