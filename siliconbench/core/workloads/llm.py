"""LLM inference: prefill and decode tokens/s, time to first token and peak memory of real
architectures' shapes with random weights (nothing is downloaded), on MLX (mlx-lm's own model
classes), PyTorch (transformers' models) and llama.cpp (GGUF files of the shape, measured as
llama-bench measures), each decode held against the memory roofline.

The protocol lives here: one run drives every framework's engine (LLMEngine, in
siliconbench.core.kit.llm_protocol), the class Engine(ctx, shape, params) of
siliconbench.core.frameworks.<framework>.llm, through the same sweep and rows. A shape
(ModelShape) and its arithmetic are siliconbench.core.kit.llm_shapes, which the engines use too
(a framework package may import the kit, never a workload); the presets, the shapes of the
published models the workload offers, are siliconbench.core.kit.llm_presets; the fixed cost of
a decode step is fit by siliconbench.core.kit.llm_fit."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from siliconbench.core.catalogue import Workload
from siliconbench.core.kit.ceilings import (
    MEASURED_TRIAD,  # noqa: F401  (the bound's source, as tests and callers read it)
    PUBLISHED,
    Ceiling,
    against_ceiling,
    stored_ceiling,
)
from siliconbench.core.kit.headroom import fits
from siliconbench.core.kit.llm_fit import FitPoint, fixed_cost_row, no_fit
from siliconbench.core.kit.llm_plan import (  # noqa: F401  (the workload's names, as before)
    CUSTOM,
    model_label,
    own_model,
    own_model_of,
    plan_model,
    shape_for,
    shape_of,
)
from siliconbench.core.kit.llm_presets import PRESETS, PUBLISHED_PARAMETERS  # noqa: F401
from siliconbench.core.kit.llm_protocol import DecodeCall, LLMEngine  # noqa: F401
from siliconbench.core.kit.llm_shapes import (
    ModelShape,
    activation_dtype,
    kv_refusal,
    moe_note,
    prefill_flops,
)
from siliconbench.core.numbers import scaled_units
from siliconbench.core.params import Param, ParamError
from siliconbench.core.plan import PlannedModel
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize
from siliconbench.core.workloads.bandwidth import own_bound  # the bound measured now
from siliconbench.core.workloads.train import DURATION_PARAM

if TYPE_CHECKING:
    from siliconbench.core.measure import Measurement


DTYPES = ("bfloat16", "float16", "float32", "q4", "q8",
          "q8_0", "q4_0", "q4_k_m")       # llama.cpp's own quantisations (GGUF types)
DEFAULT_PROMPTS = [128, 512, 2048]
DEFAULT_DEPTHS = [0, 512, 2048]
LOOPS = ("auto", "eager", "compiled", "fast")
SWEEP_FROM = 512      # a context sweep's first prompt and depth (after an empty context)


WORKLOAD = Workload(
    name="llm",
    title="LLM inference (tokens/s)",
    summary="Prefill and decode tokens/s, time to first token and peak memory of real LLM "
            "shapes with random weights, against the device's memory roofline.",
    order=70,
    metric="decode_tokens_per_s",
    plans="planned",       # the model read once, its precision decided, then checked
    held_against=("bandwidth", "gemm"),   # the decode's roofline, the prefill's rate
    x="depth",
    module=__name__,
    terminal_tables="llama_bench_table",
    params=(
        Param("preset", "choice", "llama-3.2-1b", "The architecture, from the model's "
              "published config.json (tiny: for tests).", choices=tuple(PRESETS)),
        Param("model_path", "str", None, "Your own model instead of a preset: a GGUF file "
              "for llama.cpp (the first of a split set), or a folder with config.json and "
              "*.safetensors for MLX (mlx-community's format, quantised or not) or PyTorch "
              "(a Hugging Face folder). Read, never written; nothing downloaded; token ids "
              "random. siliconbench models lists the ones on this machine.", path=True,
              auto="a preset", title="Model file"),
        Param("dtype", "choice", "bfloat16", "Weights and activations: float16, bfloat16, "
              "float32; MLX also q4 and q8 (weights quantised in groups of 64, as mlx-lm's "
              "converter does, bfloat16 activations); llama.cpp also q8_0, q4_0 and q4_k_m "
              "(its GGUF types, made by its own quantiser).", choices=DTYPES,
              title="Precision"),
        Param("prompts", "int_list", None, "Prompt lengths for prefill and time to first "
              "token.", min=1, max=1_000_000, auto="128, 512 and 2048, those that fit",
              title="Prompt lengths"),
        Param("depths", "int_list", None, "Context depths decode starts from (llama-bench's "
              "-d).", min=0, max=1_000_000, auto="0, 512 and 2048, those that fit",
              title="Context depths"),
        Param("context_sweep", "int", None, "Sweep the context: prompts and depths doubling "
              "from 512 up to N tokens (at most the model's context length), in place of "
              "the prompt lengths and context depths.", min=SWEEP_FROM, max=1_000_000,
              auto="no sweep", title="Context sweep"),
        Param("gen_tokens", "int", 128, "Tokens generated per decode measurement.", min=1,
              max=100_000, title="Generated tokens"),
        Param("batch", "int", 1, "Sequences decoded (and prefilled) together.", min=1,
              max=4096),
        Param("decode_loop", "choice", "auto", "The decode loop: eager, or compiled "
              "(torch.compile of the one-token forward with a static cache, CUDA graphs on "
              "CUDA); auto runs what the framework's own generate runs on the device "
              "(transformers compiles on CUDA, not on a CPU or MPS; mlx-lm never); fast "
              "(PyTorch: gpt-fast's method, one compiled step choosing the next token, no "
              "host read until the end) shows what the device can do.",
              choices=LOOPS, title="Decode loop"),
        Param("gpu_layers", "int", None, "llama.cpp: layers offloaded to the GPU "
              "(llama-bench's -ngl); the CPU device runs none.", min=0, max=1000,
              auto="all of them", title="GPU layers"),
        Param("fit_layers", "int_list", None, "Also decode the shape with these layer "
              "counts, each fewer than its own, at depth 0, so that the fixed cost of a "
              "decode step (decode_fixed_ms) is fit across models whose weights span the "
              "bytes; without them it is given only where one model's depths span 20% of "
              "the bytes a step reads.", min=1, max=1000, auto="none",
              title="Fit layer counts"),
        Param("layers", "int", None, "Override the preset's number of layers.", min=1,
              max=1000, auto="the preset's"),
        Param("hidden", "int", None, "Override the preset's hidden size.", min=8,
              max=1_000_000, auto="the preset's"),
        Param("heads", "int", None, "Override the preset's attention heads.", min=1,
              max=4096, auto="the preset's"),
        Param("kv_heads", "int", None, "Override the preset's key/value heads.", min=1,
              max=4096, auto="the preset's", title="KV heads"),
        Param("vocab", "int", None, "Override the preset's vocabulary size.", min=2,
              max=10_000_000, auto="the preset's", title="Vocabulary"),
        DURATION_PARAM,   # sustained mode: each decode point runs that long
    ),
)


def planned(params: dict) -> tuple[dict, str, PlannedModel]:
    """The run's inputs, worked out once where it starts (siliconbench.core.child.plan_run):
    the model (the preset, or the user's file read once and checked: ParamError in one
    sentence), the precision it takes (a file that stores its weights quantised decides it),
    and the parameters the record keeps (a file leaves no preset: it named the preset's
    default). Then what the parameters alone rule out: --fit-layers with a file or past the
    shape's layers, a context sweep beside --prompts or --depths, or past the model's
    positions."""
    params, model = plan_model(params)
    check_fit_layers(params, model)
    top = params.get("context_sweep")
    if top:
        given = [f"--{k}" for k in ("prompts", "depths") if params.get(k)]
        if given:
            raise ParamError(f"--context-sweep sets the prompt lengths and context depths "
                             f"itself; leave out {' and '.join(given)}.")
        positions = model.shape["max_positions"]
        if top > positions:
            raise ParamError(f"--context-sweep goes up to {top} but {model.name} "
                             f"takes {positions} positions.")
    return params, params["dtype"], model


def check_fit_layers(params: dict, model: PlannedModel) -> None:
    """--fit-layers: other layer counts of a preset's shape, each fewer than its own (their
    models then never pass its memory, nor its peak)."""
    fit = params.get("fit_layers")
    if not fit:
        return
    if model.file is not None:
        raise ParamError("--fit-layers decodes the shape with other layer counts; a model "
                         "file has its own layers: leave it out.")
    layers = model.shape["layers"]
    wrong = [n for n in fit if n >= layers]
    if wrong:
        raise ParamError(f"--fit-layers {wrong[0]} is not fewer than the model's {layers} "
                         "layers.")
    if len(set(fit)) != len(fit):
        raise ParamError("--fit-layers names a layer count twice.")


def context_points(params: dict, shape: ModelShape) -> tuple[list[int] | None,
                                                              list[int] | None]:
    """The prompt lengths and context depths asked for (None: the defaults, those that fit):
    --prompts and --depths, or --context-sweep N's lengths doubling from SWEEP_FROM up to N
    (N itself the last), depths the same after an empty context, the deepest held to the
    model's positions less the tokens generated after it."""
    top = params.get("context_sweep")
    if not top:
        return params["prompts"], params["depths"]
    lengths = [SWEEP_FROM << i for i in range((top // SWEEP_FROM).bit_length())]
    lengths += [top] if lengths[-1] != top else []
    room = max(0, shape.max_positions - params["gen_tokens"])
    return lengths, sorted({min(d, room) for d in [0, *lengths]})


def prefill_points(params: dict, at_depths: bool, prompts: list[int], depths: list[int],
                   shape: ModelShape) -> list[tuple[int, int]]:
    """(prompt, depth) of each prefill: every prompt from an empty cache, and where the
    engine prefills at depth too (llama-bench's -p x -d) each prompt at each depth that
    leaves it room; a context sweep's prefill at depth is its first prompt's alone (pp512 @
    d4096 ...), not every length at every depth."""
    points = [(p, 0) for p in prompts]
    if at_depths:
        firsts = prompts[:1] if params.get("context_sweep") else prompts
        points += [(p, d) for p in firsts for d in depths
                   if d and p + d <= shape.max_positions]
    return points


# ---------------------------------------------------------------- the run

def base_point(params: dict, model: PlannedModel | None = None) -> dict:
    """What every row's point holds: the model, its precision and the batch. A prefill row
    adds its `prompt`, a decode row its `depth` and `gen_tokens`; a published reference
    (siliconbench/resources/reference) is comparable where its rows name the same points."""
    # A custom shape is part of the point: it is not the preset's model any more.
    return {"preset": model_label(params, model), "dtype": params["dtype"],
            "batch": params["batch"],
            **{k: params[k] for k in CUSTOM if params.get(k) is not None}}


def check_loop(params: dict, framework: str, loops) -> str:
    """The --decode-loop asked for ("auto" when none), when this engine has it."""
    loop = params.get("decode_loop") or "auto"
    if loop != "auto" and loop not in loops:
        raise ParamError(f"--decode-loop {loop} does not run on {framework}; choose one "
                         f"of auto, {', '.join(loops)}.")
    return loop


def check_positions(params: dict, shape: ModelShape, name: str) -> None:
    """The longest prompt, and the deepest context plus the tokens generated, fit the
    positions of the model (`name`)."""
    gen = params["gen_tokens"]
    prompts, depths = context_points(params, shape)
    longest = max(prompts or [0])
    if longest > shape.max_positions:
        raise ParamError(f"--prompts goes up to {longest} but {name} takes "
                         f"{shape.max_positions} positions.")
    deepest = max(depths or [0])
    if deepest + gen > shape.max_positions:
        raise ParamError(f"--depths goes up to {deepest}, and {gen} generated tokens beyond "
                         f"it pass the {shape.max_positions} positions {name} "
                         "takes.")


def check(ctx, engine: LLMEngine, params: dict, shape: ModelShape,
          model: PlannedModel) -> str:
    """Refuses (ParamError) what the engine cannot run, before anything is built; the decode
    loop asked for ("auto" when none)."""
    dtype, file = params["dtype"], model.file
    if file is not None and ctx.framework not in file["engines"]:
        raise ParamError(f"{Path(file['path']).name} is a {file['format']} model, which "
                         f"runs on {' and '.join(file['engines'])}, not on "
                         f"{ctx.framework}.")
    # The plan took a file's own precision (model.stored_dtype) in place of --dtype.
    if dtype not in engine.DTYPES and not model.stored_dtype:
        raise ParamError(f"--dtype {dtype} does not run on {ctx.framework}"
                         f"{engine.DTYPE_HINTS.get(dtype, '')}; choose one of "
                         f"{', '.join(engine.DTYPES)}.")
    loop = check_loop(params, ctx.framework, engine.LOOPS)
    check_positions(params, shape, model.name)
    engine.check()
    # A precision the device cannot multiply in is refused before anything is built.
    products = engine.products_dtype()
    if products is not None:
        from siliconbench.core.frameworks.ops import for_run
        from siliconbench.core.workloads.gemm import unsupported_reason
        reason = unsupported_reason(for_run(ctx), products)
        if reason is not None:
            raise ParamError(f"--dtype {dtype} does not run here: {reason}.")
    return loop


def run(ctx, params: dict) -> None:
    from siliconbench.core.frameworks import implementation
    from siliconbench.core.kit.rows import memory_row
    if getattr(ctx, "plan", None) is None:     # called without a plan (tests): made here
        params, model = plan_model(params)
    else:
        model = ctx.plan.model                 # the model as the run's plan read it
    shape = shape_of(model)
    engine: LLMEngine = implementation(ctx.framework, "llm").Engine(ctx, shape, params)
    loop = check(ctx, engine, params, shape, model)
    dtype, batch, gen = params["dtype"], params["batch"], params["gen_tokens"]
    free = ctx.adapter.free_memory(ctx.device)

    def room(tokens: int) -> bool:
        return fits(engine.memory_needed(batch, tokens), free)

    if not room(1):
        raise MemoryError(f"out of memory: {model.name} in {dtype} needs about "
                          f"{engine.memory_needed(batch, 1) / 1e9:.1f} GB and "
                          f"{ctx.device_id} has {free / 1e9:.1f} GB free")
    prompts, depths = context_points(params, shape)
    prompts = prompts or [p for p in DEFAULT_PROMPTS if room(p)]
    depths = depths or [d for d in DEFAULT_DEPTHS if room(d + gen)]
    base = base_point(params, model)
    gemm_dtype = engine.gemm_dtype()
    flop_ceiling = measured_ceiling(ctx, "gemm", gemm_dtype) if gemm_dtype else None
    bandwidth = measured_ceiling(ctx, "bandwidth", dtype)
    ctx.record_settings(**engine.settings(), **bound_setting(bandwidth))
    # Decode measurements whose rows wait for the run's own triad (see below).
    waiting: list[tuple[dict, Decoded]] = []
    prefills = prefill_points(params, engine.PREFILL_DEPTHS, prompts, depths, shape)
    others = params.get("fit_layers") or []
    total = len(prefills) + len(depths) + engine.LOAD_STEPS + (bandwidth is None) + \
        len(others) * (engine.LOAD_STEPS + 1)
    ctx.adapter.reset_peak_memory(ctx.device)
    engine.load(lambda step, text: ctx.progress(step, total, text))
    try:
        if loop == "auto":
            loop = engine.default_loop()
        ctx.record_settings(**engine.settings(), decode_loop=loop)
        mismatch = engine.mismatch()
        if mismatch:
            ctx.warn(mismatch)
        wrong = engine.cache_check(CACHE_TOLERANCE[activation_dtype(dtype)])
        flags = [] if wrong is None else ["wrong_result"]
        if wrong is not None:
            ctx.warn(wrong)
        done = engine.LOAD_STEPS
        for prompt, depth in prefills:
            ctx.progress(done, total, engine.prefill_label(prompt) +
                         (f" @ d{depth}" if depth else ""))
            # A prefill past an empty cache names its depth; one from empty, as ever, none.
            point = {**base, "prompt": prompt, **({"depth": depth} if depth else {})}
            if not room(prompt + depth):
                ctx.row(too_big_row("prefill_tokens_per_s", "tok/s", point, prompt + depth))
            else:
                for row in _prefill_rows(ctx, engine, shape, point, flags, flop_ceiling):
                    ctx.row(row)
            done += 1
        fit: list[FitPoint] = []       # each decode's bytes and seconds per step
        for depth in depths:
            ctx.progress(done, total, engine.decode_label(depth, gen))
            point = {**base, "depth": depth, "gen_tokens": gen}
            if not room(depth + gen):
                ctx.row(too_big_row("decode_tokens_per_s", "tok/s", point, depth + gen))
            else:
                decoded = _decode(ctx, engine, point, loop)
                fit.append(fit_point(engine, shape.layers, depth, batch, gen, decoded))
                if bandwidth is None:
                    waiting.append((point, decoded))
                else:
                    for row in _decode_rows(engine, shape, point, flags, bandwidth,
                                            decoded):
                        ctx.row(row)
            done += 1
        ctx.row(memory_row(ctx, base, flags))
    finally:
        engine.release()
    for layers in others:       # a failure costs the fit that point, not the run its rows
        try:
            fit.append(_other_model(ctx, params, replace(shape, layers=layers), loop,
                                    lambda step, text: ctx.progress(done + step, total, text)))
        except Exception as e:
            ctx.warn(f"The {layers}-layer model of the fixed-cost fit failed ({e}).")
        done += engine.LOAD_STEPS + 1
    fixed = None if kv_refusal(shape) else \
        fixed_cost_row({**base, "gen_tokens": gen}, fit, engine.decode_note(loop))
    if fixed is not None:
        ctx.row(fixed)
    elif others:              # asked for, and not given: the run says why
        ctx.warn(f"No fixed cost of a decode step: {kv_refusal(shape) or no_fit(fit)}.")
    rows_after_own_bound(ctx, waiting, total, lambda point, decoded, bandwidth:
                         _decode_rows(engine, shape, point, flags, bandwidth, decoded))
    ctx.progress(total, total, "done")


def fit_point(engine: LLMEngine, layers: int, depth: int, batch: int, gen: int,
              decoded: Decoded) -> FitPoint:
    """A decode's bytes per step and seconds per step in each timed block, for the fit."""
    return FitPoint(layers, depth, engine.step_bytes(batch, depth, gen),
                    [batch / r for r in decoded.m.rates(batch * gen)])


def _other_model(ctx, params: dict, shape: ModelShape, loop: str, say) -> FitPoint:
    """The shape with another layer count (--fit-layers), decoded at depth 0 by the same loop
    for the fixed-cost fit alone (no rows of its own), then freed."""
    from siliconbench.core.frameworks import implementation
    batch, gen = params["batch"], params["gen_tokens"]
    engine: LLMEngine = implementation(ctx.framework, "llm").Engine(ctx, shape, params)
    try:
        engine.load(say)
        say(engine.LOAD_STEPS, f"{shape.layers} layers: " + engine.decode_label(0, gen))
        decoded = _decode(ctx, engine, {"batch": batch, "depth": 0, "gen_tokens": gen}, loop)
        return fit_point(engine, shape.layers, 0, batch, gen, decoded)
    finally:
        engine.release()


def rows_after_own_bound(ctx, waiting: list, total: int, rows_for) -> None:
    """The decode rows that waited for a bound: with none of this device stored and none
    published (a Linux CPU, an unknown GPU) the run measures one itself (own_bound), then gives
    rows_for(point, measurement, bandwidth) of each (point, measurement) in `waiting`; after
    the model is gone, so its arrays have the whole memory and stay out of the peak."""
    if not waiting:
        return
    ctx.progress(total - 1, total, "the memory bandwidth (triad; on a CPU a read beside it) "
                 "for the roofline")
    bandwidth = None
    try:
        bandwidth = own_bound(ctx)
    except Exception as e:   # the decode rows are measured: they are given all the same
        ctx.warn(f"No memory bound for decode: the triad failed ({e}).")
    ctx.record_settings(**bound_setting(bandwidth))
    for point, measured in waiting:
        for row in rows_for(point, measured, bandwidth):
            ctx.row(row)


def bound_setting(bandwidth: Ceiling | None) -> dict:
    """Which bandwidth the decode roofline divides (the chart labels its bound with it); a
    dict, so that Compare does not count another source as another setting of the run."""
    return {} if bandwidth is None else {"memory_bound": {
        "gb_per_s": bandwidth.value, "source": bandwidth.source, "detail": bandwidth.text}}


# Largest relative difference of last-token logits, cached decode against a whole-sequence
# run, that still counts as the same model: reductions run in other orders on the two paths.
CACHE_TOLERANCE = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 5e-2}


def too_big_row(metric: str, unit: str, point: dict, tokens: int) -> Row:
    return Row(metric, None, unit, point, flags=["unsupported"],
               note=f"the model with {tokens} positions of context does not fit in the "
                    "device's free memory")


def _prefill_rows(ctx, engine: LLMEngine, shape, point: dict, flags: list[str],
                  ceiling) -> list[Row]:
    batch, prompt = point["batch"], point["prompt"]
    m = ctx.measure(engine.prefill(batch, prompt, point.get("depth", 0)), sustained=False)
    flags = (["noisy"] if m.noisy else []) + flags
    rates = m.rates(batch * prompt)
    stats = summarize(rates)
    tflops = summarize(m.rates(prefill_flops(shape, batch, prompt) / 1e12)).median
    pct, row_flags, note = against_ceiling(ceiling, tflops, "TFLOPS", flags)
    ms = [t * 1e3 for t in m.per_call_s]
    return [Row("prefill_tokens_per_s", stats.median, "tok/s", point, stats, row_flags,
                _joined(note, engine.placement()), pct, rates),
            Row("ttft_ms", summarize(ms).median, "ms", point, summarize(ms), list(flags),
                _joined(engine.TTFT_NOTE, engine.placement()), None, ms)]


def _joined(*notes: str | None) -> str | None:
    """A row's note of the parts that say something."""
    return "; ".join(n for n in notes if n) or None


class Decoded(NamedTuple):
    """A decode measurement, before its rows."""
    m: Measurement
    loop: str
    compile_s: float | None


def _decode(ctx, engine: LLMEngine, point: dict, loop: str) -> Decoded:
    batch, depth, gen = point["batch"], point["depth"], point["gen_tokens"]
    decoder = engine.decoder(batch, depth, gen, loop)
    if getattr(decoder, "graphs_skipped", 0):
        ctx.warn(f"The compiled decode at depth {depth} ran without CUDA graphs "
                 f"({decoder.graphs_skipped} skipped; the run's log says why).")
    if getattr(decoder, "fullgraph", True) is False:
        ctx.warn(f"The fast decode at depth {depth} was compiled in pieces: the model's "
                 "forward breaks the graph, so it is not gpt-fast's one graph a step.")
    m = ctx.measure(decoder)
    if decoder.recompiled():
        ctx.warn(f"The compiled decode at depth {depth} was compiled again while it was "
                 "timed: its tokens/s include compilation.")
    return Decoded(m, loop, decoder.compile_s)


def _decode_rows(engine: LLMEngine, shape: ModelShape, point: dict, flags: list[str],
                 ceiling, decoded: Decoded) -> list[Row]:
    """Decode tokens/s across the batch, its roofline (the weights once and each sequence's
    cache per step), and for a compiled loop the seconds its first call took, compilation
    included, which the decode timing leaves out."""
    batch, depth, gen = point["batch"], point["depth"], point["gen_tokens"]
    m, loop = decoded.m, decoded.loop
    flags = (["noisy"] if m.noisy else []) + flags
    rates = m.rates(batch * gen)
    stats = summarize(rates)
    step_bytes = engine.step_bytes(batch, depth, gen)
    refused = kv_refusal(shape)
    if refused is not None:
        ceiling = None
    bound = None if ceiling is None else batch * ceiling[0] * 1e9 / step_bytes
    roof = None if ceiling is None else (bound, ceiling[1])
    pct, row_flags, note = against_ceiling(roof, stats.median, "tok/s", flags)
    if refused is not None:
        note = f"no memory bound: {refused}"
    said = _joined(engine.decode_note(loop), engine.placement())
    rows = [Row("decode_tokens_per_s", stats.median, "tok/s", point, stats, row_flags,
                f"{said}; {note}" if note else said, pct, rates)]
    if bound is not None:
        rows.append(Row("decode_roofline", bound, "tok/s", point, None, [],
                        f"{ceiling[1]} over {step_bytes / 1e6:.1f} MB read per step "
                        f"({engine.bound_note(loop)}{moe_note(shape, batch)})"))
    if decoded.compile_s is not None:
        rows.append(Row("decode_compile_s", decoded.compile_s, "s", point, None, [],
                        f"the {loop} loop's first call of {gen} tokens: compilation, warm-up "
                        "and graph capture, left out of the decode timing"))
    return rows


def measured_ceiling(ctx, workload: str, dtype: str) -> Ceiling | None:
    """The device's bandwidth (GB/s) or matrix-multiply rate in `dtype` (TFLOPS): the newest
    run of that workload on this device in the store, as the run's spec carries it
    (ctx.ceilings; on a CPU its read kernel, the bound of a decode that only reads; arrays
    past the caches), else the published peak, else None."""
    from siliconbench.core.kit.ceilings import cuda_l2_bytes
    measured = stored_ceiling(ctx.ceilings, ctx.device_name, workload, dtype, read=ctx.on_cpu,
                              cache_bytes=None if ctx.on_cpu else cuda_l2_bytes() or 0)
    if measured is not None:
        return measured
    if ctx.peak is None:
        return None
    if workload == "bandwidth":
        return Ceiling(ctx.peak.bandwidth_gbs,
                       f"the published peak {ctx.peak.bandwidth_gbs:.0f} GB/s", PUBLISHED)
    value = ctx.peak.tflops_for(dtype)
    return None if value is None else Ceiling(
        value, f"the published {dtype} peak {value:.4g} TFLOPS", PUBLISHED)


# ---------------------------------------------------------------- the terminal

def llama_bench_table(rec) -> list[tuple[str, list[str], list[list[str]]]]:
    """The run as llama-bench prints it: one line per test, pp<prompt> and tg<tokens> (with
    @ d<depth> past an empty context), tokens/s as mean ± standard deviation of the blocks.
    The engine names its model, backend and own columns (LLMEngine.bench_columns): llama.cpp
    llama-bench's (ngl, threads, no-repack), the others their batch."""
    import statistics
    s = rec.settings
    engine = engine_class(rec.framework)
    columns = ["model", "size", "params", "backend", *engine.bench_columns(s), "test", "t/s"]
    lines = []
    for row in rec.rows:
        if row.metric not in ("prefill_tokens_per_s", "decode_tokens_per_s") or not row.samples:
            continue
        p = row.params
        test = f"pp{p['prompt']}" if row.metric == "prefill_tokens_per_s" else \
            f"tg{p['gen_tokens']}"
        if p.get("depth"):
            test += f" @ d{p['depth']}"
        sd = statistics.stdev(row.samples) if len(row.samples) > 1 else 0.0
        size, params = s.get("weight_bytes"), s.get("parameters")
        cells = {"size": scaled_units(size, 1024, ("B", "KiB", "MiB", "GiB")) if size else "",
                 "params": scaled_units(params, 1000, ("", "K", "M", "B")) if params else "",
                 "test": test, "t/s": f"{statistics.fmean(row.samples):.2f} ± {sd:.2f}",
                 **engine.bench_cells(rec, p)}
        lines.append([cells[c] for c in columns])
    if not lines:
        return []
    return [("llama-bench style", columns, lines)]


def engine_class(framework: str) -> type:
    """The framework's LLMEngine class (its module imports no framework); for a framework
    unknown here (a record's, an estimate's), one with no llm part or whose part cannot be
    imported, the one of the engines that build the shape. The estimate reads it too."""
    from siliconbench.core.frameworks import implementation
    try:
        return implementation(framework, "llm").Engine
    except (ValueError, ImportError):   # unknown, no llm part, or not importable here
        from siliconbench.core.kit.llm_engine import BuiltEngine
        return BuiltEngine
