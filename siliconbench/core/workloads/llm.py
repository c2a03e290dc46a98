"""LLM inference: prefill and decode tokens/s, time to first token and peak memory of real
architectures' shapes with random weights (nothing is downloaded), on MLX (mlx-lm's own model
classes), PyTorch (transformers' models) and llama.cpp (GGUF files of the shape, measured as
llama-bench measures), each decode held against the memory roofline.

The protocol lives here: one run drives every framework's engine (LLMEngine, below), the class
Engine(ctx, shape, params) of siliconbench.core.frameworks.<framework>.llm, through the same
sweep and rows. A shape (ModelShape) and its arithmetic are siliconbench.core.kit.llm_shapes,
which the engines use too (a framework package may import the kit, never a workload); the
presets here are the shapes of the published models the workload offers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

from siliconbench.core.catalogue import Workload
from siliconbench.core.kit.ceilings import (
    MEASURED_TRIAD,
    PUBLISHED,
    Ceiling,
    against_ceiling,
    stored_ceiling,
    triad_name,
)
from siliconbench.core.kit.headroom import fits
from siliconbench.core.kit.llm_shapes import (
    ModelShape,
    activation_dtype,
    moe_note,
    prefill_flops,
)
from siliconbench.core.kit.model_files import OwnModel, read_model
from siliconbench.core.params import Param, ParamError
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize
from siliconbench.core.workloads.train import DURATION_PARAM

if TYPE_CHECKING:
    from siliconbench.core.measure import Measurement


# Each preset's numbers are those of the model's config.json on the Hugging Face hub.
PRESETS: dict[str, ModelShape] = {
    # For tests: seconds on a 2-core CPU; every matrix's input a multiple of the quantisation
    # group (64) so q4/q8 apply to all of them.
    "tiny": ModelShape("llama", layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, ffn=128,
                       vocab=256, tied=True, rope_theta=10000.0, rms_eps=1e-5,
                       max_positions=4096),
    # For tests: the tiny shape as a mixture of 8 experts, 2 a token.
    "tiny-moe": ModelShape("qwen3_moe", layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16,
                           ffn=128, vocab=256, tied=False, rope_theta=1000000.0,
                           rms_eps=1e-6, max_positions=4096, experts=8, active_experts=2,
                           expert_ffn=64),
    # meta-llama/Llama-3.2-1B config.json (transformers 4.45.0.dev0).
    "llama-3.2-1b": ModelShape(
        "llama", layers=16, hidden=2048, heads=32, kv_heads=8, head_dim=64, ffn=8192,
        vocab=128256, tied=True, rope_theta=500000.0, rms_eps=1e-5, max_positions=131072,
        rope_scaling={"rope_type": "llama3", "factor": 32.0, "high_freq_factor": 4.0,
                      "low_freq_factor": 1.0, "original_max_position_embeddings": 8192}),
    # Qwen/Qwen3-4B-Instruct-2507 config.json: the model of mlx-lm's BENCHMARKS.md rows.
    "qwen3-4b": ModelShape(
        "qwen3", layers=36, hidden=2560, heads=32, kv_heads=8, head_dim=128, ffn=9728,
        vocab=151936, tied=True, rope_theta=5000000.0, rms_eps=1e-6, max_positions=262144),
    # meta-llama/Llama-3.1-8B config.json (transformers 4.43.0.dev0).
    "llama-3.1-8b": ModelShape(
        "llama", layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336,
        vocab=128256, tied=False, rope_theta=500000.0, rms_eps=1e-5, max_positions=131072,
        rope_scaling={"rope_type": "llama3", "factor": 8.0, "high_freq_factor": 4.0,
                      "low_freq_factor": 1.0, "original_max_position_embeddings": 8192}),
    # Qwen/Qwen3-30B-A3B config.json: a mixture of 128 experts, 8 a token, in all 48
    # layers (decoder_sparse_step 1, no mlp_only_layers); intermediate_size (6144) is the
    # dense width no layer uses.
    "qwen3-30b-a3b": ModelShape(
        "qwen3_moe", layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128, ffn=6144,
        vocab=151936, tied=False, rope_theta=1000000.0, rms_eps=1e-6, max_positions=40960,
        experts=128, active_experts=8, expert_ffn=768),
    # meta-llama/Llama-2-7b-hf config.json: the model of llama.cpp's Apple Silicon table
    # (discussion #4167), whose rows
    # siliconbench/resources/reference/llamacpp-apple-silicon.json holds.
    "llama-2-7b": ModelShape(
        "llama", layers=32, hidden=4096, heads=32, kv_heads=32, head_dim=128, ffn=11008,
        vocab=32000, tied=False, rope_theta=10000.0, rms_eps=1e-5, max_positions=4096),
}

# The parameter counts the models' publishers give, (count, the digits they round it to) and
# where: tests hold each preset's formula to them.
PUBLISHED_PARAMETERS = {
    # meta-llama/llama-models models/llama3_2/MODEL_CARD.md: "1B (1.23B)".
    "llama-3.2-1b": (1.23e9, 0.01e9),
    # Qwen/Qwen3-4B-Instruct-2507 model card: "Number of Parameters: 4.0B".
    "qwen3-4b": (4.0e9, 0.1e9),
    # meta-llama/Llama-3.1-8B on the Hugging Face hub: "8.03B params" (safetensors).
    "llama-3.1-8b": (8.03e9, 0.01e9),
    # Qwen/Qwen3-30B-A3B model card: "Number of Parameters: 30.5B in total and 3.3B
    # activated".
    "qwen3-30b-a3b": (30.5e9, 0.1e9),
    # meta-llama/Llama-2-7b-hf on the Hugging Face hub: "6.74B params" (safetensors).
    "llama-2-7b": (6.74e9, 0.01e9),
}

DTYPES = ("bfloat16", "float16", "float32", "q4", "q8",
          "q8_0", "q4_0", "q4_k_m")       # llama.cpp's own quantisations (GGUF types)
DEFAULT_PROMPTS = [128, 512, 2048]
CUSTOM = ("layers", "hidden", "heads", "kv_heads", "vocab")    # parameters that change a shape
DEFAULT_DEPTHS = [0, 512, 2048]
LOOPS = ("auto", "eager", "compiled", "fast")
SWEEP_FROM = 512      # a context sweep's first prompt and depth (after an empty context)


class DecodeCall(Protocol):
    """One decode measurement's call (LLMEngine.decoder): greedy tokens after a context, each
    fetched to the host as a generator does, from a cache filled to the depth once and rewound
    before every call. A compiled loop on CUDA may say `graphs_skipped` (CUDA graphs inductor
    did not use)."""
    compile_s: float | None     # seconds of a compiled loop's first call, else None

    def __call__(self) -> object: ...

    def recompiled(self) -> bool:
        """Whether the loop was compiled again since its first call (timed calls then
        included compilation)."""


@runtime_checkable
class LLMEngine(Protocol):
    """A framework's engine for the llm workload: Engine(ctx, shape, params) in
    siliconbench.core.frameworks.<framework>.llm, made before anything is loaded (it imports
    no framework). torch and MLX build the shape themselves (kit.llm_engine.BuiltEngine: its
    sizes are the shape's); llama.cpp writes it as a GGUF file and loads that, as llama-bench
    would. The run checks, sizes, loads, then times each prompt and depth through it."""
    DTYPES: tuple[str, ...]          # the precisions it runs
    LOOPS: tuple[str, ...]           # the decode loops it runs ("eager", "compiled")
    DTYPE_HINTS: Mapping[str, str]   # what another engine's precision is called here
    LOAD_STEPS: int                  # progress steps load() takes
    TTFT_NOTE: str | None            # the time-to-first-token rows' note
    PREFILL_DEPTHS: bool             # prefill at every depth as well (llama-bench's -d)

    def check(self) -> None:
        """Refuses (ParamError) what only this engine cannot run, before anything is built."""

    def products_dtype(self) -> str | None:
        """The precision its matrix products run in, which the device is asked for before
        anything is built (a tiny product); None where it multiplies in kernels of its own
        (llama.cpp's), which no framework's product speaks for."""

    def gemm_dtype(self) -> str | None:
        """The precision of the GEMM runs prefill's TFLOPS are held against; None: none."""

    def memory_needed(self, batch: int, tokens: int) -> float:
        """Bytes of the model with `tokens` positions of context for each of `batch`."""

    def settings(self) -> dict:
        """What the record says of the model as far as known: asked before load and after."""

    def load(self, say: Callable[[int, str], None]) -> None:
        """Makes the model on ctx.device; say(step, text) for each of its LOAD_STEPS."""

    def mismatch(self) -> str | None:
        """A warning where the loaded model is not the shape its bytes are counted from."""

    def default_loop(self) -> str:
        """The decode loop the framework's own generator runs on the device."""

    def cache_check(self, tolerance: float) -> str | None:
        """The last logits of a whole sequence against a prefill of all but its last token
        and one decode step (the cache is real); a warning where they disagree: beyond
        `tolerance` (relative), or on the next token where the engine compares that."""

    def prefill(self, batch: int, prompt: int, depth: int) -> Callable[[], object]:
        """A call: a cache holding `depth` positions (0 but where PREFILL_DEPTHS), the prompt,
        the first token (or its logits) on the host (one call is the time to first token)."""

    def placement(self) -> str | None:
        """What every row says of where the model ran (llama.cpp: its layers offloaded and
        whether its operations may be), or None."""

    def decoder(self, batch: int, depth: int, steps: int, loop: str) -> DecodeCall:
        """A call of `steps` greedy tokens after a context of `depth`, run by `loop`."""

    def step_bytes(self, batch: int, depth: int, steps: int) -> float:
        """Bytes one decode step reads, averaged over `steps` steps from `depth`."""

    def prefill_label(self, prompt: int) -> str:
        """The progress line of a prefill point."""

    def decode_label(self, depth: int, steps: int) -> str:
        """The progress line of a decode point."""

    def decode_note(self, loop: str) -> str:
        """What the decode rows say they timed."""

    def bound_note(self, loop: str) -> str:
        """What the roofline row says each step reads."""

    def release(self) -> None:
        """Frees the model and its caches."""

    @staticmethod
    def bench_columns(settings: dict) -> list[str]:
        """The llama-bench table's columns of its records between backend and test."""

    @staticmethod
    def bench_cells(rec, point: dict) -> dict[str, str]:
        """A line's model, backend and bench_columns cells, of one of its records."""


WORKLOAD = Workload(
    name="llm",
    title="LLM inference (tokens/s)",
    summary="Prefill and decode tokens/s, time to first token and peak memory of real LLM "
            "shapes with random weights, against the device's memory roofline.",
    order=70,
    metric="decode_tokens_per_s",
    checks="check_params",
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


def own_model(params: dict) -> OwnModel | None:
    """The user's model file (--model-path), read and checked; None for a preset."""
    path = params.get("model_path")
    if not path:
        return None
    try:
        return read_model(path)
    except ValueError as e:
        raise ParamError(str(e)) from None


def model_label(params: dict) -> str:
    """The model as rows and sentences name it: the preset, or the file's name."""
    own = own_model(params)
    return own.file.name if own else params["preset"]


def check_params(params: dict) -> None:
    """Before the run starts: the model file is one an engine here reads (ParamError in one
    sentence otherwise), a file that stores its weights quantised sets the precision, and a
    file leaves no preset in the record (it named the preset's default); a
    context sweep goes with neither --prompts nor --depths, nor past the model's positions."""
    own = own_model(params)
    if own is not None and own.stored_dtype:
        params["dtype"] = own.stored_dtype
    if own is not None:   # the file is the model: no preset's default is left in the record
        params["preset"] = None
    top = params.get("context_sweep")
    if top:
        given = [f"--{k}" for k in ("prompts", "depths") if params.get(k)]
        if given:
            raise ParamError(f"--context-sweep sets the prompt lengths and context depths "
                             f"itself; leave out {' and '.join(given)}.")
        positions = shape_for(params).max_positions
        if top > positions:
            raise ParamError(f"--context-sweep goes up to {top} but {model_label(params)} "
                             f"takes {positions} positions.")


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


def shape_for(params: dict) -> ModelShape:
    """The preset with the custom shape parameters applied, or the shape the model file
    gives; ParamError for a shape no model can have."""
    custom = {k: params[k] for k in CUSTOM if params.get(k) is not None}
    own = own_model(params)
    if own is not None:
        if custom:
            raise ParamError(f"--{next(iter(custom)).replace('_', '-')} changes a preset's "
                             "shape; a model file has its own: leave it out.")
        return own.shape
    shape = PRESETS[params["preset"]]
    if not custom:
        return shape
    shape = replace(shape, **custom)
    if "hidden" in custom or "heads" in custom:
        if shape.hidden % shape.heads:
            raise ParamError(f"--hidden ({shape.hidden}) must be a multiple of --heads "
                             f"({shape.heads}).")
        shape = replace(shape, head_dim=shape.hidden // shape.heads)
        if shape.head_dim % 2:
            raise ParamError(f"--hidden ({shape.hidden}) over --heads ({shape.heads}) makes "
                             f"heads of {shape.head_dim}; rotary embeddings need an even "
                             "size.")
    if shape.heads % shape.kv_heads:
        raise ParamError(f"--heads ({shape.heads}) must be a multiple of --kv-heads "
                         f"({shape.kv_heads}).")
    return shape


# ---------------------------------------------------------------- the run

def base_point(params: dict) -> dict:
    """What every row's point holds: the model, its precision and the batch. A prefill row
    adds its `prompt`, a decode row its `depth` and `gen_tokens`; a published reference
    (siliconbench/resources/reference) is comparable where its rows name the same points."""
    # A custom shape is part of the point: it is not the preset's model any more.
    return {"preset": model_label(params), "dtype": params["dtype"], "batch": params["batch"],
            **{k: params[k] for k in CUSTOM if params.get(k) is not None}}


def check_loop(params: dict, framework: str, loops) -> str:
    """The --decode-loop asked for ("auto" when none), when this engine has it."""
    loop = params.get("decode_loop") or "auto"
    if loop != "auto" and loop not in loops:
        raise ParamError(f"--decode-loop {loop} does not run on {framework}; choose one "
                         f"of auto, {', '.join(loops)}.")
    return loop


def check_positions(params: dict, shape: ModelShape) -> None:
    """The longest prompt, and the deepest context plus the tokens generated, fit the
    model's positions."""
    gen = params["gen_tokens"]
    prompts, depths = context_points(params, shape)
    longest = max(prompts or [0])
    if longest > shape.max_positions:
        raise ParamError(f"--prompts goes up to {longest} but {model_label(params)} takes "
                         f"{shape.max_positions} positions.")
    deepest = max(depths or [0])
    if deepest + gen > shape.max_positions:
        raise ParamError(f"--depths goes up to {deepest}, and {gen} generated tokens beyond "
                         f"it pass the {shape.max_positions} positions {model_label(params)} "
                         "takes.")


def check(ctx, engine: LLMEngine, params: dict, shape: ModelShape) -> str:
    """Refuses (ParamError) what the engine cannot run, before anything is built; the decode
    loop asked for ("auto" when none)."""
    dtype, own = params["dtype"], own_model(params)
    if own is not None and ctx.framework not in own.file.engines:
        raise ParamError(f"{Path(own.file.path).name} is a {own.file.format} model, which "
                         f"runs on {' and '.join(own.file.engines)}, not on "
                         f"{ctx.framework}.")
    if dtype not in engine.DTYPES and not (own and own.stored_dtype):
        raise ParamError(f"--dtype {dtype} does not run on {ctx.framework}"
                         f"{engine.DTYPE_HINTS.get(dtype, '')}; choose one of "
                         f"{', '.join(engine.DTYPES)}.")
    loop = check_loop(params, ctx.framework, engine.LOOPS)
    check_positions(params, shape)
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
    shape = shape_for(params)
    engine: LLMEngine = implementation(ctx.framework, "llm").Engine(ctx, shape, params)
    loop = check(ctx, engine, params, shape)
    dtype, batch, gen = params["dtype"], params["batch"], params["gen_tokens"]
    free = ctx.adapter.free_memory(ctx.device)

    def room(tokens: int) -> bool:
        return fits(engine.memory_needed(batch, tokens), free)

    if not room(1):
        raise MemoryError(f"out of memory: {model_label(params)} in {dtype} needs about "
                          f"{engine.memory_needed(batch, 1) / 1e9:.1f} GB and "
                          f"{ctx.device_id} has {free / 1e9:.1f} GB free")
    prompts, depths = context_points(params, shape)
    prompts = prompts or [p for p in DEFAULT_PROMPTS if room(p)]
    depths = depths or [d for d in DEFAULT_DEPTHS if room(d + gen)]
    base = base_point(params)
    gemm_dtype = engine.gemm_dtype()
    flop_ceiling = measured_ceiling(ctx, "gemm", gemm_dtype) if gemm_dtype else None
    bandwidth = measured_ceiling(ctx, "bandwidth", dtype)
    ctx.record_settings(**engine.settings(), **bound_setting(bandwidth))
    # Decode measurements whose rows wait for the run's own triad (see below).
    waiting: list[tuple[dict, Decoded]] = []
    prefills = prefill_points(params, engine.PREFILL_DEPTHS, prompts, depths, shape)
    total = len(prefills) + len(depths) + engine.LOAD_STEPS + (bandwidth is None)
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
        steps: list[tuple[float, float]] = []     # (bytes, seconds) of each decode step
        for depth in depths:
            ctx.progress(done, total, engine.decode_label(depth, gen))
            point = {**base, "depth": depth, "gen_tokens": gen}
            if not room(depth + gen):
                ctx.row(too_big_row("decode_tokens_per_s", "tok/s", point, depth + gen))
            else:
                decoded = _decode(ctx, engine, point, loop)
                steps.append((engine.step_bytes(batch, depth, gen),
                              batch / summarize(decoded.m.rates(batch * gen)).median))
                if bandwidth is None:
                    waiting.append((point, decoded))
                else:
                    for row in _decode_rows(engine, shape, point, flags, bandwidth,
                                            decoded):
                        ctx.row(row)
            done += 1
        if len({b for b, _ in steps}) > 1:
            ctx.row(fixed_cost_row({**base, "gen_tokens": gen}, steps,
                                   engine.decode_note(loop)))
        ctx.row(memory_row(ctx, base, flags))
    finally:
        engine.release()
    rows_after_own_triad(ctx, waiting, total, lambda point, decoded, bandwidth:
                         _decode_rows(engine, shape, point, flags, bandwidth, decoded))
    ctx.progress(total, total, "done")


def fixed_cost_row(point: dict, steps: list[tuple[float, float]], loop_note: str) -> Row:
    """The fixed cost of a decode step, apart from the bytes it streams: the least-squares
    line through each depth's (bytes read, seconds) per step, whose intercept is what a step
    costs whatever it reads (launches, host reads, Python) and whose slope is the rate it
    streams at. A decode whose fixed cost is a large share of its step time is bound by
    overhead, not by memory. None where the step times do not rise with the bytes (the
    depths too close for the noise)."""
    n = len(steps)
    mean_b = sum(b for b, _ in steps) / n
    mean_t = sum(t for _, t in steps) / n
    slope = sum((b - mean_b) * (t - mean_t) for b, t in steps) / \
        sum((b - mean_b) ** 2 for b, _ in steps)
    fixed = mean_t - slope * mean_b
    depths = f"{n} depths"
    if slope <= 0 or fixed < 0:
        return Row("decode_fixed_ms", None, "ms", point, flags=["unsupported"],
                   note=f"the {depths}' step times do not rise with the bytes they read: "
                        f"no fixed cost can be told apart ({loop_note})")
    share = fixed / mean_t
    return Row("decode_fixed_ms", fixed * 1e3, "ms", point, None, [],
               f"a line through the {depths}' seconds per step against the bytes each reads: "
               f"{fixed * 1e3:.3g} ms a step whatever it reads ({share:.0%} of the mean "
               f"step), beside {1 / slope / 1e9:.4g} GB/s streamed ({loop_note})")


def rows_after_own_triad(ctx, waiting: list, total: int, rows_for) -> None:
    """The decode rows that waited for a bound: with no triad of this device in the store and
    no published peak (a Linux CPU, an unknown GPU) the run measures a short one itself, so
    that no decode row goes without its bound, then gives rows_for(point, measurement,
    bandwidth) of each (point, measurement) in `waiting`. Called after the model is gone: its
    arrays must not count in the run's peak memory (a CPU's peak resident memory cannot be
    reset) and the triad has the whole memory."""
    if not waiting:
        return
    ctx.progress(total - 1, total, "the memory bandwidth (triad) for the roofline")
    bandwidth = None
    try:
        bandwidth = own_triad(ctx)
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
    bound = None if ceiling is None else batch * ceiling[0] * 1e9 / step_bytes
    roof = None if ceiling is None else (bound, ceiling[1])
    pct, row_flags, note = against_ceiling(roof, stats.median, "tok/s", flags)
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


# Array sizes (MB each) the run's own triad tries, the largest that fits: past this machine's
# 32 MB L3 and an M-series chip's 96 MB SLC.
OWN_TRIAD_MB = (256, 64)
# The run's own triad is short: at most a second of warm-up and two of timing.
OWN_TRIAD_SECONDS = {"max_warmup_s": 1.0, "max_time_s": 2.0}


def measured_ceiling(ctx, workload: str, dtype: str) -> Ceiling | None:
    """The device's bandwidth (GB/s) or matrix-multiply rate in `dtype` (TFLOPS): the newest
    run of that workload on this device in the store, else the published peak, else None."""
    measured = stored_ceiling(ctx.device_name, workload, dtype)
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


def own_triad(ctx) -> Ceiling | None:
    """STREAM's triad (a = b + s*c, siliconbench.core.workloads.bandwidth's) measured now on
    the run's device, briefly; None where it cannot run (the run then warns: its decode has
    no bound)."""
    from dataclasses import replace as changed

    from siliconbench.core.frameworks.ops import for_run
    from siliconbench.core.measure import measure
    from siliconbench.core.workloads import bandwidth as bw
    ops = for_run(ctx)
    free = ctx.adapter.free_memory(ctx.device)
    size = next((mb for mb in OWN_TRIAD_MB if bw.fits(mb, "triad", free)), None)
    why = "its arrays do not fit in the free memory" if size is None else \
        bw._unsupported_reason(ops, "triad")
    if why is not None:
        ctx.warn(f"No memory bound for decode: no triad of this device is stored, none is "
                 f"published, and one cannot run now ({why}).")
        return None
    count = size * bw.MB // ops.itemsize(bw.DTYPE)
    arrays = [ops.random((count,), bw.DTYPE) for _ in range(bw.INPUTS["triad"])]
    try:
        settings = changed(ctx.settings, **{k: min(v, getattr(ctx.settings, k))
                                            for k, v in OWN_TRIAD_SECONDS.items()})
        m = measure(*ops.timed(ops.triad(*arrays, bw.SCALAR)), settings)
        gb_s = summarize(m.rates(bw.MOVED["triad"] * count * ops.itemsize(bw.DTYPE))).median \
            / 1e9
    finally:
        del arrays
        ops.release()
    return Ceiling(gb_s, f"{triad_name({'stream_kernels': True})} {gb_s:.4g} GB/s measured "
                         f"by this run ({ctx.framework}, {size} MB arrays)", MEASURED_TRIAD)


# ---------------------------------------------------------------- the terminal

def llama_bench_table(rec) -> list[tuple[str, list[str], list[list[str]]]]:
    """The run as llama-bench prints it: one line per test, pp<prompt> and tg<tokens> (with
    @ d<depth> past an empty context), tokens/s as mean ± standard deviation of the blocks.
    The engine names its model, backend and own columns (LLMEngine.bench_columns): llama.cpp
    llama-bench's (ngl, threads, rpk where not repacked), the others their batch."""
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
        cells = {"size": _scaled(size, 1024, ("B", "KiB", "MiB", "GiB")) if size else "",
                 "params": _scaled(params, 1000, ("", "K", "M", "B")) if params else "",
                 "test": test, "t/s": f"{statistics.fmean(row.samples):.2f} ± {sd:.2f}",
                 **engine.bench_cells(rec, p)}
        lines.append([cells[c] for c in columns])
    if not lines:
        return []
    return [("llama-bench style", columns, lines)]


def engine_class(framework: str) -> type:
    """The framework's LLMEngine class; for a record of a framework unknown here, the one of
    the engines that build the shape."""
    from siliconbench.core.frameworks import implementation
    try:
        return implementation(framework, "llm").Engine
    except ValueError:    # an unknown framework, or one with no llm part
        from siliconbench.core.kit.llm_engine import BuiltEngine
        return BuiltEngine


def _scaled(value: float, step: int, units: tuple[str, ...]) -> str:
    """'1.23 B', '51.33 KiB': llama-bench's way of showing sizes, with the unit that fits."""
    for unit in units[:-1]:
        if value < step:
            return f"{value:.2f} {unit}".rstrip()
        value /= step
    return f"{value:.2f} {units[-1]}"
