"""The timing protocol on calls of known duration, on a simulated clock so the answers are
exact whatever else the machine is doing: warm-up discards slow starts, each block is closed
by one sync, the spread decides convergence, the cap stops a noisy measurement."""

import itertools
import time

import pytest

from siliconbench.core import measure as measure_mod
from siliconbench.core.measure import MeasureSettings, measure, measure_for
from siliconbench.core.stats import median_ci, summarize

FAST = MeasureSettings(min_block_s=0.005, min_blocks=5, min_time_s=0.02, max_time_s=1.0,
                       max_warmup_s=1.0)


class FakeDevice:
    """A clock that only moves when work runs; work may be queued until sync (like a GPU)."""

    def __init__(self, monkeypatch, durations, lazy=False):
        self.now, self.queued, self.syncs, self.lazy = 0.0, 0.0, 0, lazy
        self.durations = iter(durations)
        monkeypatch.setattr(measure_mod, "time", self)

    def perf_counter(self):
        return self.now

    def call(self):
        d = next(self.durations)
        if self.lazy:
            self.queued += d
        else:
            self.now += d

    def sync(self):
        self.syncs += 1
        self.now += self.queued
        self.queued = 0.0


def test_steady_call_is_measured_and_synced_once_per_block(monkeypatch):
    dev = FakeDevice(monkeypatch, itertools.repeat(0.002))
    m = measure(dev.call, dev.sync, FAST)
    assert m.converged and m.warmed_up and not m.noisy
    assert m.stats.median == pytest.approx(0.002)
    assert len(m.per_call_s) == FAST.min_blocks  # 5 blocks x 3 calls x 2 ms >= min_time_s
    assert m.calls_per_block == 3                # 3 x 2 ms is the first block >= 5 ms
    calibration = 2  # a block of 1 call (2 ms < 5 ms), then one of 3 calls
    assert dev.syncs == 1 + FAST.discard_calls + calibration + (m.warmup_blocks - 1) \
        + len(m.per_call_s)


def test_slow_first_calls_are_discarded(monkeypatch):
    dev = FakeDevice(monkeypatch, itertools.chain([0.5, 0.2], itertools.repeat(0.001)))
    m = measure(dev.call, dev.sync, FAST)
    assert m.stats.median == pytest.approx(0.001) and not m.noisy


def test_warm_up_waits_for_three_agreeing_blocks(monkeypatch):
    # A device that speeds up over its first 60 calls (clocks ramping, caches filling).
    ramp = [0.004 - 0.00005 * i for i in range(60)]
    dev = FakeDevice(monkeypatch, itertools.chain(ramp, itertools.repeat(0.001)))
    m = measure(dev.call, dev.sync, FAST)
    assert m.warmed_up and m.warmup_blocks > 3
    assert m.stats.median == pytest.approx(0.001)


def test_queued_work_is_counted_at_the_sync(monkeypatch):
    dev = FakeDevice(monkeypatch, itertools.repeat(0.002), lazy=True)
    m = measure(dev.call, dev.sync, FAST)
    assert m.stats.median == pytest.approx(0.002)


def test_no_sync_would_measure_nothing(monkeypatch):
    # The same lazy device with a sync that does nothing: the protocol cannot see the work.
    # This is why every workload must pass a real sync; the check documents the failure mode.
    dev = FakeDevice(monkeypatch, itertools.repeat(0.002), lazy=True)
    dev.now = 0.0
    ticks = itertools.count()
    monkeypatch.setattr(dev, "perf_counter", lambda: next(ticks) * 1e-6)
    m = measure(dev.call, lambda: None, MeasureSettings(min_block_s=1e-6, min_blocks=3,
                                                        min_time_s=0, max_time_s=1e-3))
    assert m.stats.median < 1e-5  # far below the real 2 ms: "above peak" would catch it


def test_wild_spread_is_flagged_noisy_at_the_cap(monkeypatch):
    settings = MeasureSettings(min_block_s=0.001, min_blocks=5, min_time_s=0.01,
                               max_time_s=0.3, max_warmup_s=0.1)
    dev = FakeDevice(monkeypatch, itertools.cycle([0.001, 0.008, 0.002, 0.016, 0.001]))
    m = measure(dev.call, dev.sync, settings)
    assert m.noisy and not m.converged and not m.warmed_up
    assert len(m.per_call_s) >= settings.floor_blocks
    assert m.elapsed_s >= settings.max_time_s


def test_sustained_mode_runs_for_its_duration_and_keeps_block_times(monkeypatch):
    dev = FakeDevice(monkeypatch, itertools.repeat(0.002))
    seen = []
    m = measure_for(dev.call, dev.sync, 0.1, FAST, on_block=seen.append)
    assert m.block_end_s == seen and m.block_end_s[-1] >= 0.1
    assert m.block_end_s == sorted(m.block_end_s)


def test_rates_are_work_over_time(monkeypatch):
    dev = FakeDevice(monkeypatch, itertools.repeat(0.002))
    m = measure(dev.call, dev.sync, FAST)
    assert summarize(m.rates(10.0)).median == pytest.approx(5000.0)


def test_real_clock_smoke():
    # One run on the real clock, with loose bounds: the protocol works outside simulation.
    m = measure(lambda: time.sleep(0.002), lambda: None, FAST)
    assert 0.0015 < m.stats.median < 0.05


def test_summary_statistics_known_answers():
    s = summarize([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    assert (s.median, s.p25, s.p75, s.n) == (6, 3.5, 8.5, 11)
    # The 95% sign-test interval for n=11 is [x(2), x(10)] in 1-based order statistics.
    assert (s.ci_low, s.ci_high) == (2, 10)
    assert s.rel_iqr == pytest.approx(5 / 6)
    assert median_ci([1.0, 2.0, 3.0]) == (1.0, 3.0)  # too few for 95%: the range
    with pytest.raises(ValueError):
        summarize([])


def test_median_interval_matches_the_exact_binomial_and_scales(monkeypatch):
    from math import comb

    from siliconbench.core.stats import _sign_test_index
    for n in range(1, 80):
        exact = -1
        for j in range(n // 2):
            if sum(comb(n, i) for i in range(j + 1)) / 2**n <= 0.025:
                exact = j
        assert _sign_test_index(n, 0.05) == exact, n
    # Thousands of fast blocks must not stall a run: the sum stays linear in n (counted in
    # terms, not timed) and still matches the exact binomial there.
    from math import lgamma

    from scipy.stats import binom

    from siliconbench.core import stats
    terms = []
    n = 5000
    with monkeypatch.context() as m:
        m.setattr(stats.math, "lgamma", lambda x: terms.append(x) or lgamma(x))
        j = _sign_test_index(n, 0.05)
    assert len(terms) <= n + 1
    assert binom.cdf(j, n, 0.5) <= 0.025 < binom.cdf(j + 1, n, 0.5)
    s = summarize(list(range(n)))
    assert s.ci_low < s.median < s.ci_high


def test_the_settings_env_shortens_the_protocol_and_a_bad_value_is_one_sentence(monkeypatch):
    from siliconbench.core.measure import QUICK, SETTINGS_ENV, MeasureSettings, settings_for
    monkeypatch.delenv(SETTINGS_ENV, raising=False)
    assert (settings_for(True), settings_for(False)) == (QUICK, MeasureSettings())
    monkeypatch.setenv(SETTINGS_ENV, '{"max_time_s": 0.3, "min_blocks": 3}')
    short = settings_for(True)
    assert (short.max_time_s, short.min_blocks, short.max_warmup_s) == (0.3, 3, 1.0)
    assert type(short.min_blocks) is int and settings_for(False).max_warmup_s == 5.0
    for bad in ('{"max_time": 1}', "[1]", "0.3", "{", '{"min_blocks": "many"}'):
        monkeypatch.setenv(SETTINGS_ENV, bad)
        with pytest.raises(ValueError, match=f"^{SETTINGS_ENV} must be a JSON object"):
            settings_for(True)
