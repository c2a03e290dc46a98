"""The llm workload: the presets' sizes against their publishers' counts, the tiny preset
built by both frameworks (the same parameters and bytes as the formula, a cache that gives the
logits of the whole sequence), torch's compiled decode (generate's tokens, one graph, its
compile time apart), real runs through the CLI on the CPU (rows, units, flags, the roofline
from a bandwidth run or the run's own triad, the loop on every decode row, the llama-bench
table) and bad parameters refused. MLX loads only in child processes."""

import importlib.util
import json
import subprocess
import sys
from dataclasses import replace
from types import SimpleNamespace

import pytest
import torch

from siliconbench.core.context import RunContext
from siliconbench.core.frameworks import FRAMEWORKS, runs_on
from siliconbench.core.frameworks.torch import adapter as torch_adapter
from siliconbench.core.kit import llm_shapes as shapes
from siliconbench.core.measure import QUICK
from siliconbench.core.params import ParamError
from siliconbench.core.store import Store
from siliconbench.core.workloads import bandwidth, llm
from tests.helpers.bounds import assert_cpu_decode_bound
from tests.helpers.cli_processes import ROOT, sb
from tests.helpers.framework_runs import cpu_read, store_a_triad  # noqa: F401  (a fixture)
from tests.helpers.torch_cpu import short_context as context

TINY = llm.PRESETS["tiny"]
# The tiny preset in both families, tied and not: every layout the presets use.
SHAPES = {f"{family} {'tied' if tied else 'untied'}": replace(TINY, family=family, tied=tied)
          for family in ("llama", "qwen3") for tied in (True, False)}
TINY_RUN = ["--preset", "tiny", "--prompts", "8", "--depths", "0,8", "--gen-tokens", "4",
            "--dtype", "float32", "--quick", "--device", "cpu"]
mlx_installed = importlib.util.find_spec("mlx_lm") is not None


@pytest.mark.parametrize("preset", sorted(llm.PUBLISHED_PARAMETERS))
def test_preset_parameter_counts_are_the_published_ones(preset):
    published, digit = llm.PUBLISHED_PARAMETERS[preset]
    assert abs(llm.PRESETS[preset].parameters - published) <= digit / 2 + 0.005e9


def test_qwen3_4b_is_3_6_billion_parameters_without_its_embedding():
    shape = llm.PRESETS["qwen3-4b"]   # its model card: "Non-Embedding: 3.6B"
    assert round((shape.parameters - shape.vocab * shape.hidden) / 1e9, 1) == 3.6


def test_quantised_weights_count_scales_and_biases():
    shape = llm.PRESETS["llama-3.1-8b"]
    bf16, q4, q8 = (shapes.weight_bytes(shape, d) for d in ("bfloat16", "q4", "q8"))
    assert bf16 == 2 * shape.parameters
    # 4 bits a weight plus a bfloat16 scale and bias per 64: 4.5 bits; 8.5 for q8.
    assert q4 == pytest.approx(bf16 * 4.5 / 16, rel=1e-3)
    assert q8 == pytest.approx(bf16 * 8.5 / 16, rel=1e-3)


def test_decode_bytes_grow_with_the_cache():
    shape = llm.PRESETS["llama-3.2-1b"]
    at0 = shapes.bytes_per_decode_step(shape, "bfloat16", 1, 0, 128)
    at2048 = shapes.bytes_per_decode_step(shape, "bfloat16", 1, 2048, 128)
    # 16 layers x 8 KV heads x 64 x 2 (K and V) x 2 bytes = 32 KiB a position.
    assert at2048 - at0 == 2048 * 32 * 1024
    assert shapes.bytes_per_decode_step(shape, "bfloat16", 4, 0, 128) - at0 == \
        3 * shapes.kv_bytes(shape, "bfloat16", 64.5)


def protocol_members(protocol) -> list[str]:
    """What a typing.Protocol asks for: its annotated attributes and its methods."""
    return sorted(set(protocol.__annotations__) | {
        name for name in vars(protocol) if not name.startswith("_")})


@pytest.mark.parametrize("framework", runs_on(llm.WORKLOAD))
def test_every_framework_s_engine_is_the_one_llm_engine(framework):
    """The run drives each framework's Engine through llm.LLMEngine alone: every member the
    Protocol names is there, each method taking the Protocol's arguments, made before anything
    is loaded, with precisions the workload offers and loops it knows."""
    import inspect

    from siliconbench.core.frameworks import implementation
    cls = implementation(framework, "llm").Engine
    ctx = SimpleNamespace(device=SimpleNamespace(type="cpu"), device_id="cpu",
                          framework=framework)
    params = {p.name: p.default for p in llm.WORKLOAD.params} | {"preset": "tiny"}
    engine = cls(ctx, TINY, params)
    assert isinstance(engine, llm.LLMEngine)
    members = protocol_members(llm.LLMEngine)
    assert {"load", "prefill", "decoder", "cache_check", "memory_needed", "step_bytes",
            "release", "settings", "bench_columns"} <= set(members)
    for name in members:
        assert hasattr(cls, name), f"{framework}'s Engine has no {name}"
        wanted = getattr(llm.LLMEngine, name, None)
        if callable(wanted):
            assert list(inspect.signature(getattr(cls, name)).parameters) == \
                list(inspect.signature(wanted).parameters), f"{framework}: {name}"
    assert engine.DTYPES and set(engine.DTYPES) <= set(llm.DTYPES)
    assert engine.LOOPS and set(engine.LOOPS) <= set(llm.LOOPS) - {"auto"}
    assert engine.LOAD_STEPS >= 1 and set(engine.DTYPE_HINTS) <= set(llm.DTYPES)
    # Sizing a file needs the framework's own writer (llama.cpp: gguf-py, its extra's), which
    # `make test` does not install; `make test-llamacpp` sizes real files.
    if FRAMEWORKS[framework].installed():
        assert engine.memory_needed(1, 16) > 0


@pytest.mark.parametrize("name", SHAPES)
def test_torch_builds_the_shape_and_its_cache_is_real(name):
    from siliconbench.core.frameworks.torch import llm as torch_llm
    shape = SHAPES[name]
    for dtype in ("float32", "bfloat16"):
        lm = torch_llm.TorchLM(shape, dtype, torch.device("cpu"))
        assert lm.parameters == shape.parameters
        assert lm.stored_bytes == shapes.weight_bytes(shape, dtype)
        assert lm.cache_gap(12) <= llm.CACHE_TOLERANCE[dtype]
        if dtype == "float32":   # the check can fail: a cache of another context does
            assert lm.cache_gap(12, prefilled=False) > 10 * llm.CACHE_TOLERANCE[dtype]


@pytest.mark.parametrize("device, loop", [("cpu", "eager"), ("mps", "eager"),
                                          ("cuda", "compiled")])
def test_the_default_decode_loop_is_the_one_generate_runs_on_the_device(monkeypatch, device,
                                                                        loop):
    """transformers' generate compiles the static-cache forward on CUDA only (of these): its
    own test (_valid_auto_compile_criteria) reads the model's device, which is faked here."""
    from siliconbench.core.frameworks.torch import llm as torch_llm
    lm = torch_llm.TorchLM(TINY, "float32", torch.device("cpu"))
    monkeypatch.setattr(type(lm.model), "device", property(lambda _: torch.device(device)))
    assert lm.default_loop() == loop


def test_a_transformers_that_takes_the_cache_as_past_key_values_gets_it(monkeypatch):
    """Before 5.24 transformers' forward took the cache as `past_key_values`; a `cache=`
    landed in its **kwargs and was dropped, so every step ran without its context
    (transformers 5.17 on an H100: the cache check read 1.36, decode ran eager). A stand-in
    with that older signature must get the cache, and generate's compile rule must see it."""
    import inspect

    from siliconbench.core.frameworks.torch import llm as torch_llm
    new_class = torch_llm.model_class(TINY)
    name = "cache" if "cache" in inspect.signature(new_class.forward).parameters \
        else "past_key_values"     # what the installed transformers takes

    class OlderForward(new_class):
        def forward(self, input_ids=None, position_ids=None, past_key_values=None,
                    use_cache=None, logits_to_keep=0, **kwargs):
            kwargs.pop("cache", None)     # unknown to it: lost, as in transformers 5.17
            return super().forward(input_ids=input_ids, position_ids=position_ids,
                                   use_cache=use_cache, logits_to_keep=logits_to_keep,
                                   **({} if past_key_values is None
                                      else {name: past_key_values}))

    monkeypatch.setattr(torch_llm, "model_class", lambda shape: OlderForward)
    lm = torch_llm.TorchLM(TINY, "float32", torch.device("cpu"))
    assert lm.cache_gap(12) <= llm.CACHE_TOLERANCE["float32"]
    monkeypatch.setattr(OlderForward, "device", property(lambda _: torch.device("cuda")))
    assert lm.default_loop() == "compiled"


def test_compiled_decode_gives_generate_s_tokens_in_one_graph_compiled_before_timing(
        spread_model):
    """torch.compile with inductor: tens of seconds on this CPU, once in this test."""
    from torch._dynamo.utils import counters
    lm, batch, depth, steps = spread_model, 2, 8, 6
    # The cache is allocated, its tensors marked static, before any forward runs (even with
    # no context to prefill, at depth 0), as after generate's eager prefill: a compiled step
    # may then update them in place and keep its CUDA graph ("mutated inputs" otherwise).
    cache = lm.decoder(batch, 0, steps, "eager").cache
    assert all(hasattr(t, "_dynamo_static_input_type") for layer in cache.layers
               for t in (layer.keys, layer.values, layer.cumulative_length))
    torch.manual_seed(3)
    eager = lm.decoder(batch, depth, steps, "eager")
    tokens = eager()
    assert eager.compile_s is None
    assert len({t for step in tokens for [t] in step}) > steps      # the tokens vary
    expected = lm.model.generate(eager.prompt, attention_mask=torch.ones_like(eager.prompt),
                                 max_new_tokens=steps, do_sample=False,
                                 cache_implementation="static", pad_token_id=0)
    assert [[[t] for t in step] for step in expected[:, depth + 1:].T.tolist()] == tokens
    torch.manual_seed(3)
    before = counters["stats"]["unique_graphs"]
    compiled = lm.decoder(batch, depth, steps, "compiled")
    assert torch.equal(compiled.prompt, eager.prompt)
    # Its first call, in the decoder, before any timing, compiled, and was counted apart.
    graphs = counters["stats"]["unique_graphs"]
    assert graphs > before and compiled.compile_s > 0
    # The same tokens as eager (and generate), batch of 2, round after round, with the one
    # graph: the position is an input and the cache's length a tensor, not Python state.
    for _ in range(3):
        assert compiled() == tokens
    context([]).measure(compiled)
    assert counters["stats"]["unique_graphs"] == graphs and not compiled.recompiled()


def test_a_compiled_run_names_its_loop_and_its_compile_time_on_its_rows(monkeypatch):
    monkeypatch.setattr(bandwidth, "OWN_BOUND_MB", (4,))
    events = []
    params = {p.name: p.default for p in llm.WORKLOAD.params} | {
        "preset": "tiny", "prompts": [4], "depths": [8], "gen_tokens": 6, "batch": 2,
        "dtype": "float32", "decode_loop": "compiled"}
    llm.run(context(events), params)
    rows = {r["metric"]: r for e in events if e["event"] == "row" for r in [e["row"]]}
    assert not [e for e in events if e["event"] == "warning"]    # no recompilation
    settings = {}
    for e in events:
        settings |= e.get("settings") or {}
    assert settings["decode_loop"] == "compiled"
    decode, bound = rows["decode_tokens_per_s"], rows["decode_roofline"]
    assert decode["note"].startswith("compiled decode loop (generate's: ")
    assert "; % of " in decode["note"]
    assert "compiled decode loop" in bound["note"]
    # Tokens/s across the batch, against a bound that reads each sequence's cache.
    step = shapes.bytes_per_decode_step(TINY, "float32", 2, 8, 6)
    assert bound["value"] == pytest.approx(2 * settings["memory_bound"]["gb_per_s"] * 1e9 / step)
    assert rows["decode_compile_s"]["unit"] == "s" and rows["decode_compile_s"]["value"] > 0
    assert rows["decode_compile_s"]["params"] == decode["params"]


@pytest.mark.skipif(not mlx_installed, reason="mlx-lm is not installed")
def test_mlx_builds_the_shape_and_its_cache_is_real():
    code = f"""
import json
from dataclasses import replace
from types import SimpleNamespace
from siliconbench.core.frameworks import isolate
isolate("mlx")
from siliconbench.core.frameworks.mlx import llm as mlx_llm
from siliconbench.core.kit import llm_shapes as shapes
from siliconbench.core.workloads import llm
out = {{}}
for name in {list(SHAPES)!r}:
    shape = replace(llm.PRESETS["tiny"], family=name.split()[0], tied=name.endswith(" tied"))
    for dtype in ("float32", "bfloat16", "q4", "q8"):
        lm = mlx_llm.MlxLM(shape, dtype)
        out[name + " " + dtype] = [lm.parameters, shape.parameters, lm.stored_bytes,
                                   shapes.weight_bytes(shape, dtype), lm.cache_gap(12),
                                   lm.cache_gap(12, prefilled=False)]
print(json.dumps(out))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       timeout=240)
    assert r.returncode == 0, r.stderr
    found = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(found) == 16
    for key, (built, formula, stored, expected, gap, wrong_gap) in found.items():
        tolerance = llm.CACHE_TOLERANCE[shapes.activation_dtype(key.split()[-1])]
        assert (built, stored) == (formula, expected), key
        assert gap <= tolerance, key
        if key.endswith("float32"):   # the check can fail: a cache of another context does
            assert wrong_gap > 10 * tolerance, key


@pytest.mark.parametrize("given, says", [
    ({"dtype": "q4"}, "--dtype q4 does not run on torch; choose one of bfloat16, float16, "
                      "float32."),
    ({"hidden": 66}, "--hidden (66) must be a multiple of --heads (4)."),
    ({"hidden": 100}, "--hidden (100) over --heads (4) makes heads of 25; rotary embeddings "
                      "need an even size."),
    ({"kv_heads": 3}, "--heads (4) must be a multiple of --kv-heads (3)."),
    ({"prompts": [5000]}, "--prompts goes up to 5000 but tiny takes 4096 positions."),
    ({"depths": [4000]}, "--depths goes up to 4000, and 128 generated tokens beyond it pass "
                         "the 4096 positions tiny takes."),
])
def test_bad_parameters_are_refused_before_anything_is_built(given, says):
    events = []
    params = {p.name: p.default for p in llm.WORKLOAD.params} | {"preset": "tiny"} | given
    with pytest.raises(ParamError) as e:
        llm.run(context(events), params)
    assert str(e.value) == says
    assert not [e for e in events if e["event"] == "row"]


@pytest.mark.parametrize("dtype, kernel", [("float16", "Half"), ("bfloat16", "BFloat16")])
def test_a_precision_the_device_cannot_multiply_in_is_one_sentence_before_building(
        monkeypatch, dtype, kernel):
    """A torch CPU build without half-precision kernels refuses the product with this error
    (torch before 2.1 for float16); an MPS device before macOS 14 refuses bfloat16 alike."""
    from siliconbench.core.frameworks.torch import llm as torch_llm
    from siliconbench.core.frameworks.torch.ops import TorchOps
    real = TorchOps.matmul

    def refuse(self, a, b):
        if a.dtype == getattr(torch, dtype):
            raise RuntimeError(f'"addmm_impl_cpu_" not implemented for \'{kernel}\'\nmore')
        return real(self, a, b)
    monkeypatch.setattr(TorchOps, "matmul", refuse)
    built = []
    monkeypatch.setattr(torch_llm.Engine, "build", lambda self: built.append(self))
    events = []
    params = {p.name: p.default for p in llm.WORKLOAD.params} | {"preset": "tiny",
                                                                 "dtype": dtype}
    with pytest.raises(ParamError) as e:
        llm.run(context(events), params)
    assert str(e.value) == (f"--dtype {dtype} does not run here: {dtype} matmul is not "
                            f"supported on cpu: \"addmm_impl_cpu_\" not implemented for "
                            f"'{kernel}'.")
    assert not built and not [e for e in events if e["event"] == "row"]


def test_a_custom_shape_is_part_of_every_point(monkeypatch):
    monkeypatch.setattr(bandwidth, "OWN_BOUND_MB", (4,))    # the bound's arithmetic, not its value
    events = []
    params = {p.name: p.default for p in llm.WORKLOAD.params} | {
        "preset": "tiny", "layers": 1, "prompts": [4], "depths": [0], "gen_tokens": 2,
        "dtype": "float32"}
    llm.run(context(events), params)
    rows = [e["row"] for e in events if e["event"] == "row"]
    # No triad in the store, no published peak: the run measures one after the model is
    # gone (its arrays stay out of the peak memory), then gives decode with its bound.
    assert [r["metric"] for r in rows] == ["prefill_tokens_per_s", "ttft_ms", "peak_memory",
                                           "decode_tokens_per_s", "decode_roofline"]
    assert all(r["params"]["layers"] == 1 and r["params"]["preset"] == "tiny" for r in rows)
    settings = {}
    for e in events:
        settings |= e.get("settings") or {}
    assert settings["parameters"] == replace(TINY, layers=1).parameters < TINY.parameters
    bound, decode = rows[-1], rows[-2]
    assert settings["decode_loop"] == "eager"     # what generate runs on a CPU
    # A CPU's bound is the read kernel (a decode only reads), measured beside the triad, or
    # the triad where the read streams slower: never under the triad.
    assert_cpu_decode_bound(settings["memory_bound"])
    assert "measured by this run (torch, 4 MB arrays)" in settings["memory_bound"]["detail"]
    step = shapes.bytes_per_decode_step(replace(TINY, layers=1), "float32", 1, 0, 2)
    assert bound["value"] == pytest.approx(settings["memory_bound"]["gb_per_s"] * 1e9 / step)
    assert decode["note"].startswith("eager decode loop (generate's: ")
    assert "; % of " in decode["note"]
    assert decode["pct_of_peak"] == pytest.approx(100 * decode["value"] / bound["value"])


def test_decode_measured_before_a_triad_that_fails_is_kept_and_said(monkeypatch):
    def fails(ctx):
        raise MemoryError("out of memory")
    monkeypatch.setattr(llm, "own_bound", fails)
    events = []
    params = {p.name: p.default for p in llm.WORKLOAD.params} | {
        "preset": "tiny", "prompts": [4], "depths": [0], "gen_tokens": 2, "dtype": "float32"}
    llm.run(context(events), params)
    rows = [e["row"] for e in events if e["event"] == "row"]
    assert [r["metric"] for r in rows][-1] == "decode_tokens_per_s" and rows[-1]["value"] > 0
    assert rows[-1]["note"].startswith("eager decode loop (generate's: ")
    assert rows[-1]["pct_of_peak"] is None
    assert [e["message"] for e in events if e["event"] == "warning"] == \
        ["No memory bound for decode: the triad failed (out of memory)."]


def test_a_model_larger_than_the_free_memory_is_refused_before_it_is_built():
    events = []
    small = SimpleNamespace(synchronizer=torch_adapter.synchronizer,
                            free_memory=lambda device: 8 * 10**9)
    ctx = RunContext(framework="torch", device_id="cpu", adapter=small,
                     device=torch.device("cpu"), device_name="test cpu", emit=events.append)
    params = {p.name: p.default for p in llm.WORKLOAD.params} | {"preset": "llama-3.1-8b",
                                                                 "dtype": "float32"}
    with pytest.raises(MemoryError) as e:
        llm.run(ctx, params)
    assert str(e.value).startswith("out of memory: llama-3.1-8b in float32 needs about 32.1 GB "
                                   "and cpu has 8.0 GB free")
    assert not [e for e in events if e["event"] == "row"]


def rows_of(rec: dict) -> dict:
    return {(r["metric"], r["params"].get("prompt", r["params"].get("depth"))): r
            for r in rec["rows"]}


def check_rows(rec: dict, framework: str) -> dict:
    """Every row of a tiny run at its point, in its unit, from repeated blocks."""
    assert rec["status"] == "ok", rec.get("reason")
    rows = rows_of(rec)
    base = {"preset": "tiny", "dtype": "float32", "batch": 1}
    # Two depths of one model, whose bytes differ by 1%: no fixed cost can be fit.
    assert ("decode_fixed_ms", None) not in rows
    # Every decode row has its bound, from a stored triad or the run's own.
    assert set(rows) == {("prefill_tokens_per_s", 8), ("ttft_ms", 8),
                         ("decode_tokens_per_s", 0), ("decode_tokens_per_s", 8),
                         ("decode_roofline", 0), ("decode_roofline", 8), ("peak_memory", None)}
    assert rec["settings"]["decode_loop"] == "eager"   # generate's loop on a CPU, mlx-lm's
    for depth in (0, 8):
        assert rows[("decode_tokens_per_s", depth)]["note"].startswith("eager decode loop")
    assert rows[("prefill_tokens_per_s", 8)]["params"] == {**base, "prompt": 8}
    assert rows[("decode_tokens_per_s", 8)]["params"] == {**base, "depth": 8, "gen_tokens": 4}
    for (metric, _), row in rows.items():
        unit = {"ttft_ms": "ms", "peak_memory": "bytes"}.get(metric, "tok/s")
        assert row["unit"] == unit and row["value"] > 0
        assert set(row["flags"]) <= {"noisy"}, row["flags"]   # the cache check passed
        if metric not in ("peak_memory", "decode_roofline"):
            assert len(row["samples"]) == row["stats"]["n"] >= QUICK.floor_blocks
    # One block is prompt tokens (or 4 generated ones) over its time per call.
    ttft, prefill = rows[("ttft_ms", 8)], rows[("prefill_tokens_per_s", 8)]
    assert [8 / (ms / 1e3) for ms in ttft["samples"]] == pytest.approx(prefill["samples"])
    assert rec["settings"]["parameters"] == TINY.parameters
    assert rec["settings"]["weight_bytes"] == shapes.weight_bytes(TINY, "float32")
    assert not [w for w in rec["warnings"] if "parameters" in w or "cache" in w]
    return rows


@pytest.mark.usefixtures("short_protocol")   # the bound's arithmetic, not the numbers
def test_torch_run_against_the_bandwidth_measured_here(tmp_path, cpu_read):
    """A CPU's decode is held to the stored read kernel's rate at arrays past 4 times its
    last-level cache (tests/helpers/framework_runs.cpu_read: that bandwidth run, made once a
    session, kept in this test's store)."""
    store_a_triad(tmp_path, cpu_read)
    stored = cpu_read
    r = sb("run", "llm", "--framework", "torch", *TINY_RUN, home=tmp_path)
    assert r.returncode == 0, r.stderr
    [rec] = [x.to_dict() for x in Store(tmp_path / "results.sqlite3").runs(workload="llm")]
    rows = check_rows(rec, "torch")
    gb_s = max(row["value"] for row in stored["rows"])
    assert rec["settings"]["memory_bound"]["gb_per_s"] == gb_s
    assert_cpu_decode_bound(rec["settings"]["memory_bound"])
    for depth in (0, 8):
        decode, bound = rows[("decode_tokens_per_s", depth)], rows[("decode_roofline", depth)]
        step = shapes.bytes_per_decode_step(TINY, "float32", 1, depth, 4)
        assert bound["value"] == pytest.approx(gb_s * 1e9 / step)
        assert decode["pct_of_peak"] == pytest.approx(100 * decode["value"] / bound["value"])
        assert stored["id"][:8] in decode["note"] and stored["id"][:8] in bound["note"]
    # The terminal shows llama-bench's table beside the usual one.
    assert "llama-bench style" in r.stdout
    for test in ("pp8", "tg4", "tg4 @ d8"):
        assert f"│ {test} " in r.stdout


def test_the_bound_divides_the_best_framework_s_newest_triad_on_the_device(tmp_path,
                                                                          monkeypatch):
    """MLX's CPU triad measured 1.0 GB/s after torch's 6.7 GB/s in one quick suite here, and
    the torch decode was held against MLX's: a slow kernel must not lower the device's bound."""
    from siliconbench.core.kit import ceilings
    from siliconbench.core.workloads.llm import MEASURED_TRIAD, measured_ceiling
    monkeypatch.setattr(ceilings, "MIN_BOUND_MB", 4)    # these records' arrays: 1 and 4 MB
    monkeypatch.setattr(ceilings, "last_level_cache", lambda: 0)
    from tests.helpers.recorded import recorded
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path))
    store = Store(tmp_path / "results.sqlite3")
    from siliconbench.core.machine import probe
    runs = [recorded("bandwidth-torch"), recorded("bandwidth-mlx"),
            recorded("bandwidth-tensorflow")]
    for rec in runs:
        rec.machine = probe().to_dict()    # runs of this machine
        store.save(rec)
    from siliconbench.core.kit.ceilings import stored_bounds
    bounds = stored_bounds(store)         # as the command or the app reads them for the run
    store.close()
    triads = {rec.framework: max((r for r in rec.rows if r.params["op"] == "triad"),
                                 key=lambda r: r.params["size_mb"]).value for rec in runs}
    assert len(set(triads.values())) == 3
    # The triad's rule (a GPU's); a CPU's bound is its read kernel, which these lack.
    ctx = SimpleNamespace(device_name=runs[0].device_name, peak=None, on_cpu=False,
                          ceilings=bounds)
    ceiling = measured_ceiling(ctx, "bandwidth", "float32")
    best = max(triads, key=triads.get)
    assert (ceiling.value, ceiling.source) == (triads[best], MEASURED_TRIAD)
    assert f"({best}, 4 MB arrays)" in ceiling.text
    assert measured_ceiling(SimpleNamespace(device_name=runs[0].device_name, peak=None,
                                            on_cpu=True, ceilings=bounds),
                            "bandwidth", "float32") is None


@pytest.mark.skipif(not mlx_installed, reason="mlx-lm is not installed")
@pytest.mark.usefixtures("short_protocol")   # the bound's arithmetic, not the numbers
def test_mlx_run_without_a_stored_triad_measures_its_own_for_the_bound(tmp_path):
    r = sb("run", "llm", "--framework", "mlx", *TINY_RUN, "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    rows = check_rows(rec, "mlx")
    bound = rec["settings"]["memory_bound"]
    # on the CPU: the read kernel (mx.sum), measured beside MLX's triad, or that triad
    assert_cpu_decode_bound(bound)
    assert "by this run (mlx" in bound["detail"]
    for depth in (0, 8):
        step = shapes.bytes_per_decode_step(TINY, "float32", 1, depth, 4)
        assert rows[("decode_roofline", depth)]["value"] == \
            pytest.approx(bound["gb_per_s"] * 1e9 / step)
        assert rows[("decode_tokens_per_s", depth)]["pct_of_peak"] > 0


@pytest.mark.skipif(not mlx_installed, reason="mlx-lm is not installed")
def test_mlx_has_no_compiled_loop_one_sentence_and_exit_2(tmp_path):
    r = sb("run", "llm", "--framework", "mlx", "--device", "cpu", "--preset", "tiny",
           "--decode-loop", "compiled", home=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "--decode-loop compiled does not run on mlx; choose one of auto, eager." in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_precision_the_framework_lacks_is_one_sentence_and_exit_2(tmp_path):
    r = sb("run", "llm", "--framework", "torch", "--device", "cpu", "--preset", "tiny",
           "--dtype", "q8", home=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "--dtype q8 does not run on torch" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
