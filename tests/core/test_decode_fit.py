"""The fixed cost of a decode step (decode_fixed_ms) from a fit that can hold it. Simulated
through the workload's own fixed_cost_row: a step costs 0.66 ms whatever it reads (the H100
note's figure) plus its bytes at 3,000 GB/s, each timed block 0.3% noisy. One model's depths
0, 512 and 2048 span 2-3% of the bytes: the old line through them read the 1B's fixed cost
anywhere in 0.25-1.09 ms and the 8B's in 0.12-3.57 ms; it gives no row now. Two models at
depth 0 span the weights: the row's interval holds the truth, and the row says what it
assumes."""

import random
from dataclasses import replace

import pytest

from siliconbench.core.kit import llm_shapes as shapes
from siliconbench.core.kit.llm_fit import (
    ASSUMPTION,
    FitPoint,
    chosen_points,
    fixed_cost_row,
    no_fit,
)
from siliconbench.core.kit.llm_presets import PRESETS

FIXED_S, GB_S, NOISE, BLOCKS = 0.66e-3, 3000.0, 0.003, 10


def simulated(preset: str, depth: int, rng: random.Random, kv_cost: float = 1.0,
              layers: int | None = None) -> FitPoint:
    """A decode's timed blocks: the fixed cost plus the weights' bytes and (kv_cost times)
    the cache's at GB_S, each block off by NOISE (relative, normal)."""
    shape = PRESETS[preset] if layers is None else replace(PRESETS[preset], layers=layers)
    total = shapes.bytes_per_decode_step(shape, "bfloat16", 1, depth, 128)
    weights = shapes.bytes_per_decode_step(shape, "bfloat16", 1, 0, 0) - \
        shapes.kv_bytes(shape, "bfloat16", 0.5)
    seconds = FIXED_S + (weights + kv_cost * (total - weights)) / (GB_S * 1e9)
    return FitPoint(shape.layers, depth, total,
                    [seconds * (1 + rng.gauss(0, NOISE)) for _ in range(BLOCKS)])


@pytest.mark.parametrize("preset", ["llama-3.2-1b", "llama-3.1-8b"])
def test_one_model_s_default_depths_give_no_fixed_cost(preset):
    rng = random.Random(1)
    points = [simulated(preset, d, rng) for d in (0, 512, 2048)]
    span = max(p.step_bytes for p in points) / min(p.step_bytes for p in points) - 1
    assert span < 0.05
    assert fixed_cost_row({"gen_tokens": 128}, points, "eager") is None
    why = chosen_points(points)
    assert isinstance(why, str) and "less than the 20% an intercept needs" in why


def test_two_models_at_depth_0_give_the_fixed_cost_with_its_interval():
    held = 0
    for seed in range(20):
        rng = random.Random(seed)
        points = [simulated("llama-3.1-8b", d, rng) for d in (0, 512, 2048)] + \
            [simulated("llama-3.2-1b", 0, rng)]
        # The 1B has 16 layers and the 8B 32: they are two models of the fit.
        row = fixed_cost_row({"gen_tokens": 128}, points, "eager decode loop")
        assert row is not None and row.metric == "decode_fixed_ms" and row.unit == "ms"
        assert row.stats.ci_low < row.value < row.stats.ci_high
        held += row.stats.ci_low <= FIXED_S * 1e3 <= row.stats.ci_high
        assert row.value == pytest.approx(FIXED_S * 1e3, abs=0.1)
        assert "2 models of 16, 32 layers at depth 0" in row.note
        assert f"assumes {ASSUMPTION}, and counts a layer's own overheads (launches, " \
            "Python) with its bytes (eager decode loop)" in row.note
        assert "95% interval" in row.note
        assert row.stats.n == 2 * BLOCKS
    assert held >= 17          # a 95% interval, 20 draws


def test_a_kv_byte_dearer_than_a_weight_byte_does_not_move_the_cross_model_fit():
    """Only the models' depth-0 points enter the line: what a cache byte costs is out of it."""
    for kv_cost in (0.7, 1.3):
        rng = random.Random(7)
        points = [simulated("llama-3.1-8b", d, rng, kv_cost) for d in (0, 512, 2048)] + \
            [simulated("llama-3.1-8b", 0, rng, kv_cost, layers=8)]
        row = fixed_cost_row({}, points, "eager")
        assert row.stats.ci_low <= FIXED_S * 1e3 <= row.stats.ci_high


def test_one_model_may_fit_where_its_bytes_span_a_fifth():
    rng = random.Random(3)
    points = [simulated("llama-3.2-1b", d, rng) for d in (0, 32768)]     # 2.5 GB, 3.6 GB
    row = fixed_cost_row({}, points, "eager")
    assert row is not None and "one model's 2 depths" in row.note
    assert row.stats.ci_low <= FIXED_S * 1e3 <= row.stats.ci_high


def test_step_times_that_do_not_rise_with_their_bytes_give_no_row():
    points = [FitPoint(2, 0, 1e6, [0.004] * 3), FitPoint(1, 0, 3e6, [0.002] * 3)]
    assert fixed_cost_row({}, points, "eager") is None
    # A line that crosses zero before the data: no fixed cost either.
    points = [FitPoint(2, 0, 1e6, [0.001] * 3), FitPoint(1, 0, 3e6, [0.004] * 3)]
    assert fixed_cost_row({}, points, "eager") is None


def test_why_there_is_no_fit_is_said_with_its_points():
    assert no_fit([simulated("llama-3.1-8b", 0, random.Random(1)),
                   simulated("llama-3.1-8b", 0, random.Random(2), layers=8)]) is None
    falling = [FitPoint(2, 0, 1e6, [0.004] * 3), FitPoint(1, 0, 3e6, [0.002] * 3)]
    assert no_fit(falling) == (
        "2 models of 1, 2 layers at depth 0: the step times do not rise with the bytes "
        "(1 layers at depth 0: 3 MB in 2 ms; 2 layers at depth 0: 1 MB in 4 ms)")
    below = [FitPoint(2, 0, 1e6, [0.001] * 3), FitPoint(1, 0, 3e6, [0.004] * 3)]
    assert "the line meets zero bytes below zero seconds (-0.5 ms)" in no_fit(below)
