"""A real run's fixed cost of a decode step, fit across two layer counts of one shape at depth
0 (--fit-layers), on torch's CPU: the row has its interval and says what it assumes; and what
--fit-layers cannot take is one sentence and exit 2."""

import pytest

from siliconbench.core.kit.llm_fit import ASSUMPTION
from siliconbench.core.measure import settings_for
from siliconbench.core.workloads import bandwidth, llm
from tests.helpers.cli_processes import sb
from tests.helpers.torch_cpu import context

# The tiny shape made wide, so each layer is 12 MB of float32 and the step times follow the
# bytes: 4 layers read ~47 MB a step, 1 layer ~12 MB.
WIDE = {"preset": "tiny", "hidden": 1024, "heads": 16, "kv_heads": 4, "layers": 4,
        "dtype": "float32", "prompts": [4], "depths": [0], "gen_tokens": 4}


@pytest.mark.usefixtures("short_protocol")
def test_two_layer_counts_give_the_fixed_cost_with_its_interval(monkeypatch):
    """Both models are decoded and their points reach the fit. Whether a real run's line can
    hold an intercept depends on this machine at that moment (a loaded 2-core VM can make a
    layer's own overheads outweigh the fixed part, and the line then meets zero bytes below
    zero seconds): so the run gives either the row, with its interval and assumption, or no
    row and a warning saying why with each model's bytes and time. The row's arithmetic on
    fixed data is tests/core/test_decode_fit.py's."""
    monkeypatch.setattr(bandwidth, "OWN_BOUND_MB", (4,))   # the bound is not what is tested
    events = []
    params = {p.name: p.default for p in llm.WORKLOAD.params} | WIDE | {"fit_layers": [1]}
    llm.run(context(events, settings=settings_for(True)), params)
    rows = [e["row"] for e in events if e["event"] == "row"]
    fixed = [r for r in rows if r["metric"] == "decode_fixed_ms"]
    warned = [e["message"] for e in events if e["event"] == "warning"
              and e["message"].startswith("No fixed cost of a decode step")]
    assert len(fixed) + len(warned) == 1, (fixed, warned)
    if fixed:
        [fixed] = fixed
        assert fixed["unit"] == "ms" and fixed["value"] > 0
        assert fixed["params"] == {"preset": "tiny", "dtype": "float32", "batch": 1,
                                   "layers": 4, "hidden": 1024, "heads": 16, "kv_heads": 4,
                                   "gen_tokens": 4}
        stats = fixed["stats"]
        assert stats["ci_low"] <= fixed["value"] <= stats["ci_high"]
        assert stats["confidence"] == 0.95
        assert "a line through 2 models of 1, 4 layers at depth 0" in fixed["note"]
        assert f"assumes {ASSUMPTION}" in fixed["note"] and "eager decode loop" in fixed["note"]
    else:
        [why] = warned
        assert "2 models of 1, 4 layers at depth 0: " in why
        assert "1 layers at depth 0: " in why and "4 layers at depth 0: " in why
    # The 1-layer model gives no rows of its own: one decode row, the main model's.
    assert [r["params"]["depth"] for r in rows if r["metric"] == "decode_tokens_per_s"] == [0]
    progress = [e for e in events if e["event"] == "progress"]
    assert progress[-1]["done"] == progress[-1]["total"]
    assert any(e["message"].startswith("1 layers: ") for e in progress)


@pytest.mark.usefixtures("short_protocol")
def test_without_other_layer_counts_one_depth_gives_no_fixed_cost(monkeypatch):
    monkeypatch.setattr(bandwidth, "OWN_BOUND_MB", (4,))
    events = []
    params = {p.name: p.default for p in llm.WORKLOAD.params} | WIDE | {"layers": 1}
    llm.run(context(events, settings=settings_for(True)), params)
    assert not [e for e in events if e["event"] == "row"
                and e["row"]["metric"] == "decode_fixed_ms"]


@pytest.mark.parametrize("given, says", [
    (["--fit-layers", "2"], "--fit-layers 2 is not fewer than the model's 2 layers."),
    (["--fit-layers", "1,1"], "--fit-layers names a layer count twice."),
])
def test_what_fit_layers_cannot_take_is_one_sentence_and_exit_2(tmp_path, given, says):
    r = sb("run", "llm", "--preset", "tiny", "--device", "cpu", *given, home=tmp_path)
    assert r.returncode == 2 and says in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.usefixtures("short_protocol")
def test_a_fit_asked_for_and_not_given_is_warned_with_why(monkeypatch):
    """A noisy machine can make the smaller model's steps as slow as the larger's: the run
    then gives no row, and says why with each model's bytes and time a step."""
    from siliconbench.core.kit.llm_fit import FitPoint
    monkeypatch.setattr(bandwidth, "OWN_BOUND_MB", (4,))
    monkeypatch.setattr(llm, "_other_model", lambda ctx, params, shape, loop, say:
                        FitPoint(shape.layers, 0, 1e6, [10.0] * 3))     # 10 s a step
    events = []
    params = {p.name: p.default for p in llm.WORKLOAD.params} | WIDE | {"fit_layers": [1]}
    llm.run(context(events, settings=settings_for(True)), params)
    assert not [e for e in events if e["event"] == "row"
                and e["row"]["metric"] == "decode_fixed_ms"]
    [warning] = [e["message"] for e in events if e["event"] == "warning"]
    assert warning.startswith("No fixed cost of a decode step: 2 models of 1, 4 layers at "
                              "depth 0: the step times do not rise with the bytes (1 layers "
                              "at depth 0: 1 MB in 1e+04 ms; 4 layers at depth 0: ")


@pytest.mark.usefixtures("short_protocol")
def test_a_fit_model_that_fails_costs_the_fit_not_the_run(monkeypatch):
    monkeypatch.setattr(bandwidth, "OWN_BOUND_MB", (4,))

    def fails(ctx, params, shape, loop, say):
        raise MemoryError("out of memory")
    monkeypatch.setattr(llm, "_other_model", fails)
    events = []
    params = {p.name: p.default for p in llm.WORKLOAD.params} | WIDE | {"fit_layers": [1]}
    llm.run(context(events, settings=settings_for(True)), params)
    metrics = [e["row"]["metric"] for e in events if e["event"] == "row"]
    assert "decode_tokens_per_s" in metrics and "decode_fixed_ms" not in metrics
    assert [e["message"] for e in events if e["event"] == "warning"] == [
        "The 1-layer model of the fixed-cost fit failed (out of memory).",
        "No fixed cost of a decode step: one model's 1 depths: fewer than two byte counts to "
        "fit a line through."]
