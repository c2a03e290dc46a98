"""LLM inference: prefill and decode tokens/s, time to first token and peak memory of real
architectures' shapes with random weights (nothing is downloaded), on MLX (mlx-lm's own model
classes) and PyTorch (transformers' models), each decode held against the memory roofline.

The protocol lives here; the framework part is siliconbench.core.frameworks.<framework>.llm, which offers:
  DTYPES                           the precisions it runs
  build(ctx, shape, dtype) -> lm   the model on ctx.device with random weights, where
    lm.parameters                  its parameter count (counted on the built model)
    lm.stored_bytes                bytes of its weights as stored (quantisation scales included)
    lm.prefill(batch, prompt)      a call: an empty cache, the prompt, the first token sampled
                                   and fetched (time to first token)
    lm.default_loop()              the decode loop the framework's own generator runs here
    lm.decoder(batch, depth, n, loop)
                                   a call: `n` greedy tokens after a context of `depth`, each
                                   the argmax of the last step's logits and fetched to the host
                                   as a generator does; the cache is filled to `depth` once and
                                   rewound before every call. `loop` is one of LOOPS; the call
                                   has .compile_s (seconds of its first call, compilation
                                   included, for a compiled loop; else None) and .recompiled()
  LOOPS                            the decode loops it runs ("eager", "compiled")
    lm.cache_gap(tokens)           largest relative difference between the last logits of the
                                   whole sequence run at once and of a prefill of all but the
                                   last token followed by one decode step (the cache is real);
                                   prefilled=False prefills other tokens (tests: it must fail)
    lm.release()

An engine with its own model files and test loop (llama.cpp) offers instead
  run(ctx, params, protocol)       the whole run, given this module as `protocol`, of which it
                                   uses only the public names: the shapes and their arithmetic
                                   (shape_for, memory_needed, weight_bytes, kv_bytes,
                                   prefill_flops), the checks (check_loop, check_positions),
                                   base_point, DEFAULT_PROMPTS and DEFAULT_DEPTHS, and the
                                   bounds and rows: measured_ceiling, rows_after_own_triad,
                                   bound_setting, against_ceiling, describe_shape, too_big_row.
                                   A framework package may not import a workload.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, NamedTuple

from siliconbench.core.params import Param, ParamError
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize
from siliconbench.core.catalogue import Workload

if TYPE_CHECKING:
    from siliconbench.core.measure import Measurement


@dataclass(frozen=True)
class ModelShape:
    """What the benchmark needs of a published config.json."""
    family: str                  # llama | qwen3: the model class both frameworks build
    layers: int                  # num_hidden_layers
    hidden: int                  # hidden_size
    heads: int                   # num_attention_heads
    kv_heads: int                # num_key_value_heads
    head_dim: int
    ffn: int                     # intermediate_size
    vocab: int                   # vocab_size
    tied: bool                   # tie_word_embeddings
    rope_theta: float
    rms_eps: float
    max_positions: int           # max_position_embeddings
    rope_scaling: dict | None = None

    @property
    def qk_norm(self) -> bool:
        return self.family == "qwen3"   # Qwen3 RMS-normalises queries and keys per head

    def matrices(self) -> list[tuple[int, int]]:
        """(out, in) of every weight matrix a token passes through, once per layer, then the
        output head (which is the embedding table when tied)."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        layer = [(q, self.hidden), (kv, self.hidden), (kv, self.hidden), (self.hidden, q),
                 (self.ffn, self.hidden), (self.ffn, self.hidden), (self.hidden, self.ffn)]
        return layer * self.layers + [(self.vocab, self.hidden)]

    def norm_weights(self) -> int:
        per_layer = 2 * self.hidden + (2 * self.head_dim if self.qk_norm else 0)
        return self.layers * per_layer + self.hidden

    @property
    def parameters(self) -> int:
        embedding = self.vocab * self.hidden
        matrices = sum(o * i for o, i in self.matrices())
        return matrices + (0 if self.tied else embedding) + self.norm_weights()

    @property
    def matmul_parameters(self) -> int:
        """Weights of the per-layer matrix products (no embedding, no head)."""
        return sum(o * i for o, i in self.matrices()[:-1])


# Each preset's numbers are those of the model's config.json on the Hugging Face hub.
PRESETS: dict[str, ModelShape] = {
    # For tests: seconds on a 2-core CPU; every matrix's input a multiple of the quantisation
    # group (64) so q4/q8 apply to all of them.
    "tiny": ModelShape("llama", layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, ffn=128,
                       vocab=256, tied=True, rope_theta=10000.0, rms_eps=1e-5,
                       max_positions=4096),
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
    # meta-llama/Llama-2-7b-hf config.json: the model of llama.cpp's Apple Silicon table
    # (discussion #4167), whose rows siliconbench/resources/reference/llamacpp-apple-silicon.json holds.
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
    # meta-llama/Llama-2-7b-hf on the Hugging Face hub: "6.74B params" (safetensors).
    "llama-2-7b": (6.74e9, 0.01e9),
}

DTYPES = ("bfloat16", "float16", "float32", "q4", "q8",
          "q8_0", "q4_0", "q4_k_m")       # llama.cpp's own quantisations (GGUF types)
QUANT_BITS = {"q4": 4, "q8": 8,
              # llama.cpp's: a float16 scale per 32 weights is the same 0.5 bit a weight as
              # MLX's two bfloat16 per 64, so the estimates hold (Q4_K_M: about 4.5 too).
              "q8_0": 8, "q4_0": 4, "q4_k_m": 4}
GROUP_SIZE = 64              # mlx-lm's converter's default quantisation group
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}
DEFAULT_PROMPTS = [128, 512, 2048]
CUSTOM = ("layers", "hidden", "heads", "kv_heads", "vocab")    # parameters that change a shape
DEFAULT_DEPTHS = [0, 512, 2048]
LOOPS = ("auto", "eager", "compiled")

WORKLOAD = Workload(
    name="llm",
    title="LLM inference (tokens/s)",
    summary="Prefill and decode tokens/s, time to first token and peak memory of real LLM "
            "shapes with random weights, against the device's memory roofline.",
    order=70,
    metric="decode_tokens_per_s",
    x="depth",
    module=__name__,
    terminal_tables="llama_bench_table",
    params=(
        Param("preset", "choice", "llama-3.2-1b", "The architecture, from the model's "
              "published config.json (tiny: for tests).", choices=tuple(PRESETS)),
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
        Param("gen_tokens", "int", 128, "Tokens generated per decode measurement.", min=1,
              max=100_000, title="Generated tokens"),
        Param("batch", "int", 1, "Sequences decoded (and prefilled) together.", min=1,
              max=4096),
        Param("decode_loop", "choice", "auto", "The decode loop: eager, or compiled "
              "(torch.compile of the one-token forward with a static cache, CUDA graphs on "
              "CUDA); auto runs what the framework's own generate runs on the device "
              "(transformers compiles on CUDA, not on a CPU or MPS; mlx-lm never).",
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
    ),
)


def shape_for(params: dict) -> ModelShape:
    """The preset with the custom shape parameters applied; ParamError for a shape no model
    can have."""
    shape = PRESETS[params["preset"]]
    custom = {k: params[k] for k in CUSTOM if params.get(k) is not None}
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


# ---------------------------------------------------------------- sizes

def weight_bytes(shape: ModelShape, dtype: str) -> int:
    """Bytes of the weights as stored: the layers' matrices, the embedding table, the head
    when untied, the norms."""
    tables = [(shape.vocab, shape.hidden)] * (1 if shape.tied else 2)
    return _bytes(shape.matrices()[:-1] + tables, shape, dtype)


def _bytes(matrices: list[tuple[int, int]], shape: ModelShape, dtype: str) -> int:
    """Quantised: every matrix in `bits` per weight plus a bfloat16 scale and bias per group
    of 64 inputs (mlx-lm leaves a matrix whose inputs do not divide into groups as it is);
    norms stay in the activations' dtype."""
    item = ITEMSIZE[activation_dtype(dtype)]
    total = item * shape.norm_weights()
    for out, inp in matrices:
        if dtype in QUANT_BITS and inp % GROUP_SIZE == 0:
            total += out * inp * QUANT_BITS[dtype] // 8 + out * (inp // GROUP_SIZE) * 2 * item
        else:
            total += out * inp * item
    return total


def activation_dtype(dtype: str) -> str:
    return "bfloat16" if dtype in QUANT_BITS else dtype


def kv_bytes(shape: ModelShape, dtype: str, tokens: float) -> float:
    """Bytes of keys and values of `tokens` positions of one sequence."""
    return 2 * shape.layers * shape.kv_heads * shape.head_dim * tokens \
        * ITEMSIZE[activation_dtype(dtype)]


def bytes_per_decode_step(shape: ModelShape, dtype: str, batch: int, depth: int,
                          steps: int) -> float:
    """Bytes read from memory per decode step, averaged over `steps` steps from `depth`:
    every matrix a token passes through and the norms once (of the embedding table only the
    token's row, left out), and each sequence's keys and values, which grow by one position
    per step."""
    return _bytes(shape.matrices(), shape, dtype) \
        + batch * kv_bytes(shape, dtype, depth + (steps + 1) / 2)


def prefill_flops(shape: ModelShape, batch: int, prompt: int) -> float:
    """2 x matrix weights x tokens, attention's scores and weighted sum as PaLM counts them
    (4 x layers x heads x head_dim x prompt^2, no causal halving), and the head on the last
    token, which is all a generator computes it for."""
    attention = 4 * shape.layers * shape.heads * shape.head_dim * prompt ** 2
    return batch * (2.0 * shape.matmul_parameters * prompt + attention
                    + 2.0 * shape.vocab * shape.hidden)


def memory_needed(shape: ModelShape, dtype: str, batch: int, tokens: int) -> float:
    """Weights, the cache of `tokens` positions, and a prefill's largest activations (the
    feed-forward's, and attention scores where no fused kernel avoids them)."""
    act = ITEMSIZE[activation_dtype(dtype)]
    activations = batch * tokens * (3 * shape.ffn + 4 * shape.hidden) * act \
        + batch * shape.heads * tokens * tokens * 4
    return weight_bytes(shape, dtype) + batch * kv_bytes(shape, dtype, tokens) + activations


def fits(shape, dtype, batch, tokens, free: int | None) -> bool:
    return free is None or memory_needed(shape, dtype, batch, tokens) <= 0.8 * free


# ---------------------------------------------------------------- the run

def base_point(params: dict) -> dict:
    """What every row's point holds: the model, its precision and the batch. A prefill row
    adds its `prompt`, a decode row its `depth` and `gen_tokens`; a published reference
    (siliconbench/resources/reference) is comparable where its rows name the same points."""
    # A custom shape is part of the point: it is not the preset's model any more.
    return {"preset": params["preset"], "dtype": params["dtype"], "batch": params["batch"],
            **{k: params[k] for k in CUSTOM if params.get(k) is not None}}


def check_loop(params: dict, framework: str, loops) -> str:
    """The --decode-loop asked for ("auto" when none), when this engine has it."""
    loop = params.get("decode_loop") or "auto"
    if loop != "auto" and loop not in loops:
        raise ParamError(f"--decode-loop {loop} does not run on {framework}; choose one "
                         f"of auto, {', '.join(loops)}.")
    return loop


def check_positions(params: dict, shape: "ModelShape") -> None:
    """The longest prompt, and the deepest context plus the tokens generated, fit the
    model's positions."""
    gen = params["gen_tokens"]
    longest = max(params["prompts"] or [0])
    if longest > shape.max_positions:
        raise ParamError(f"--prompts goes up to {longest} but {params['preset']} takes "
                         f"{shape.max_positions} positions.")
    deepest = max(params["depths"] or [0])
    if deepest + gen > shape.max_positions:
        raise ParamError(f"--depths goes up to {deepest}, and {gen} generated tokens beyond "
                         f"it pass the {shape.max_positions} positions {params['preset']} "
                         "takes.")


def run(ctx, params: dict) -> None:
    from siliconbench.core.frameworks import implementation
    impl = implementation(ctx.framework, "llm")
    if hasattr(impl, "run"):
        # An engine with its own model files and test loop (llama.cpp): it takes this
        # module's shapes, bounds and row arithmetic as its protocol.
        import sys
        return impl.run(ctx, params, sys.modules[__name__])
    dtype, batch, gen = params["dtype"], params["batch"], params["gen_tokens"]
    if dtype not in impl.DTYPES:
        raise ParamError(f"--dtype {dtype} does not run on {ctx.framework}; choose one of "
                         f"{', '.join(impl.DTYPES)}.")
    loop = check_loop(params, ctx.framework, impl.LOOPS)
    # A precision the device cannot multiply in is refused before anything is built.
    from siliconbench.core.frameworks.ops import for_run
    from siliconbench.core.workloads.gemm import unsupported_reason
    reason = unsupported_reason(for_run(ctx), activation_dtype(dtype))
    if reason is not None:
        raise ParamError(f"--dtype {dtype} does not run here: {reason}.")
    shape = shape_for(params)
    check_positions(params, shape)
    free = ctx.adapter.free_memory(ctx.device)
    if not fits(shape, dtype, batch, 1, free):
        raise MemoryError(f"out of memory: {params['preset']} in {dtype} needs about "
                          f"{memory_needed(shape, dtype, batch, 1) / 1e9:.1f} GB and "
                          f"{ctx.device_id} has {free / 1e9:.1f} GB free")
    prompts = params["prompts"] or [p for p in DEFAULT_PROMPTS if fits(shape, dtype, batch, p,
                                                                         free)]
    depths = params["depths"] or [d for d in DEFAULT_DEPTHS if fits(shape, dtype, batch,
                                                                       d + gen, free)]
    base = base_point(params)
    flop_ceiling = measured_ceiling(ctx, "gemm", activation_dtype(dtype))
    bandwidth = measured_ceiling(ctx, "bandwidth", dtype)
    ctx.record_settings(model=describe_shape(shape), parameters=shape.parameters,
                        weight_bytes=weight_bytes(shape, dtype), **bound_setting(bandwidth))
    # Decode measurements whose rows wait for the run's own triad (see below).
    waiting: list[tuple[dict, Decoded]] = []
    total = len(prompts) + len(depths) + 1 + (bandwidth is None)
    ctx.progress(0, total, "building the model")
    ctx.adapter.reset_peak_memory(ctx.device)
    lm = impl.build(ctx, shape, dtype)
    try:
        if loop == "auto":
            loop = lm.default_loop()
        ctx.record_settings(decode_loop=loop)
        # The roofline counts bytes from the shape: the built model must be that shape.
        if (lm.parameters, lm.stored_bytes) != (shape.parameters, weight_bytes(shape, dtype)):
            ctx.warn(f"The {ctx.framework} model has {lm.parameters:,} parameters in "
                     f"{lm.stored_bytes:,} bytes where the shape has {shape.parameters:,} in "
                     f"{weight_bytes(shape, dtype):,}.")
        gap = lm.cache_gap(min(16, shape.max_positions))
        flags = [] if gap <= CACHE_TOLERANCE[activation_dtype(dtype)] else ["wrong_result"]
        if flags:
            ctx.warn(f"Decoding with the cache differs from running the whole sequence by "
                     f"{gap:.2e} in the logits: the results are wrong.")
        done = 1
        for prompt in prompts:
            ctx.progress(done, total, f"prefill {prompt} tokens")
            point = {**base, "prompt": prompt}
            if not fits(shape, dtype, batch, prompt, free):
                ctx.row(too_big_row("prefill_tokens_per_s", "tok/s", point, prompt))
            else:
                for row in _prefill_rows(ctx, lm, shape, point, flags, flop_ceiling):
                    ctx.row(row)
            done += 1
        for depth in depths:
            ctx.progress(done, total, f"decode {gen} tokens at depth {depth}")
            point = {**base, "depth": depth, "gen_tokens": gen}
            if not fits(shape, dtype, batch, depth + gen, free):
                ctx.row(too_big_row("decode_tokens_per_s", "tok/s", point, depth + gen))
            else:
                decoded = _decode(ctx, lm, point, loop)
                if bandwidth is None:
                    waiting.append((point, decoded))
                else:
                    for row in _decode_rows(shape, point, flags, bandwidth, decoded):
                        ctx.row(row)
            done += 1
        from siliconbench.core.kit.rows import memory_row
        ctx.row(memory_row(ctx, base, flags))
    finally:
        lm.release()
    rows_after_own_triad(ctx, waiting, total, lambda point, decoded, bandwidth:
                         _decode_rows(shape, point, flags, bandwidth, decoded))
    ctx.progress(total, total, "done")


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


def bound_setting(bandwidth: "Ceiling | None") -> dict:
    """Which bandwidth the decode roofline divides (the chart labels its bound with it); a
    dict, so that Compare does not count another source as another setting of the run."""
    return {} if bandwidth is None else {"memory_bound": {
        "gb_per_s": bandwidth.value, "source": bandwidth.source, "detail": bandwidth.text}}


# Largest relative difference of last-token logits, cached decode against a whole-sequence
# run, that still counts as the same model: reductions run in other orders on the two paths.
CACHE_TOLERANCE = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 5e-2}


def describe_shape(shape: ModelShape) -> str:
    return (f"{shape.family}: {shape.layers} layers, hidden {shape.hidden}, {shape.heads} "
            f"heads ({shape.kv_heads} KV) of {shape.head_dim}, feed-forward {shape.ffn}, "
            f"vocabulary {shape.vocab}{', tied embeddings' if shape.tied else ''}")


def too_big_row(metric: str, unit: str, point: dict, tokens: int) -> Row:
    return Row(metric, None, unit, point, flags=["unsupported"],
               note=f"the model with {tokens} positions of context does not fit in the "
                    "device's free memory")


def _prefill_rows(ctx, lm, shape, point: dict, flags: list[str], ceiling) -> list[Row]:
    batch, prompt = point["batch"], point["prompt"]
    m = ctx.measure(lm.prefill(batch, prompt))
    flags = (["noisy"] if m.noisy else []) + flags
    rates = m.rates(batch * prompt)
    stats = summarize(rates)
    tflops = summarize(m.rates(prefill_flops(shape, batch, prompt) / 1e12)).median
    pct, row_flags, note = against_ceiling(ceiling, tflops, "TFLOPS", flags)
    ms = [t * 1e3 for t in m.per_call_s]
    return [Row("prefill_tokens_per_s", stats.median, "tok/s", point, stats, row_flags,
                note, pct, rates),
            Row("ttft_ms", summarize(ms).median, "ms", point, summarize(ms), list(flags), None,
                None, ms)]


class Decoded(NamedTuple):
    """A decode measurement, before its rows."""
    m: "Measurement"
    loop: str
    compile_s: float | None


def _decode(ctx, lm, point: dict, loop: str) -> Decoded:
    batch, depth, gen = point["batch"], point["depth"], point["gen_tokens"]
    decoder = lm.decoder(batch, depth, gen, loop)
    if getattr(decoder, "graphs_skipped", 0):
        ctx.warn(f"The compiled decode at depth {depth} ran without CUDA graphs "
                 f"({decoder.graphs_skipped} skipped; the run's log says why).")
    m = ctx.measure(decoder)
    if decoder.recompiled():
        ctx.warn(f"The compiled decode at depth {depth} was compiled again while it was "
                 "timed: its tokens/s include compilation.")
    return Decoded(m, loop, decoder.compile_s)


def _decode_rows(shape, point: dict, flags: list[str], ceiling, decoded: Decoded) -> list[Row]:
    """Decode tokens/s across the batch, its roofline (the weights once and each sequence's
    cache per step), and for a compiled loop the seconds its first call took, compilation
    included, which the decode timing leaves out."""
    batch, depth, gen = point["batch"], point["depth"], point["gen_tokens"]
    m, loop = decoded.m, decoded.loop
    flags = (["noisy"] if m.noisy else []) + flags
    rates = m.rates(batch * gen)
    stats = summarize(rates)
    step_bytes = bytes_per_decode_step(shape, point["dtype"], batch, depth, gen)
    bound = None if ceiling is None else batch * ceiling[0] * 1e9 / step_bytes
    roof = None if ceiling is None else (bound, ceiling[1])
    pct, row_flags, note = against_ceiling(roof, stats.median, "tok/s", flags)
    said = f"{loop} decode loop"
    rows = [Row("decode_tokens_per_s", stats.median, "tok/s", point, stats, row_flags,
                f"{said}; {note}" if note else said, pct, rates)]
    if bound is not None:
        rows.append(Row("decode_roofline", bound, "tok/s", point, None, [],
                        f"{ceiling[1]} over {step_bytes / 1e6:.1f} MB read per step "
                        f"({said})"))
    if decoded.compile_s is not None:
        rows.append(Row("decode_compile_s", decoded.compile_s, "s", point, None, [],
                        f"the {loop} loop's first call of {gen} tokens: compilation, warm-up "
                        "and graph capture, left out of the decode timing"))
    return rows


def against_ceiling(ceiling, value: float, unit: str, flags: list[str]):
    """(% of the ceiling, flags, note): above_peak where a number passes what the device can
    do, which only a measurement error explains."""
    if ceiling is None:
        return None, list(flags), None
    from siliconbench.core.peaks import assess
    pct, above = assess(value, ceiling[0])
    if above:
        return pct, [*flags, "above_peak"], (f"{value:.4g} {unit} is above the bound "
                                             f"({ceiling[0]:.4g} {unit}, {ceiling[1]}): "
                                             "the measurement is wrong")
    return pct, list(flags), f"% of {ceiling[0]:.4g} {unit} ({ceiling[1]})"


PUBLISHED, MEASURED_TRIAD, MEASURED_GEMM = "published peak", "measured triad", "measured GEMM"
# Array sizes (MB each) the run's own triad tries, the largest that fits: past this machine's
# 32 MB L3 and an M-series chip's 96 MB SLC.
OWN_TRIAD_MB = (256, 64)
# The run's own triad is short: at most a second of warm-up and two of timing.
OWN_TRIAD_SECONDS = {"max_warmup_s": 1.0, "max_time_s": 2.0}


class Ceiling(NamedTuple):
    value: float        # GB/s or TFLOPS
    text: str           # where it comes from, in a sentence's words
    source: str         # in a label's: "measured triad", "measured GEMM" or "published peak"


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
    """The triad (d = a * b + c, siliconbench.core.workloads.bandwidth's) measured now on the run's device,
    briefly; None where it cannot run (the run then warns: its decode has no bound)."""
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
    arrays = [ops.random((count,), bw.DTYPE) for _ in range(3)]
    try:
        settings = changed(ctx.settings, **{k: min(v, getattr(ctx.settings, k))
                                            for k, v in OWN_TRIAD_SECONDS.items()})
        m = measure(*ops.timed(ops.triad(*arrays)), settings)
        gb_s = summarize(m.rates(bw.MOVED["triad"] * count * ops.itemsize(bw.DTYPE))).median \
            / 1e9
    finally:
        del arrays
        ops.release()
    return Ceiling(gb_s, f"the triad {gb_s:.4g} GB/s measured by this run ({ctx.framework}, "
                         f"{size} MB arrays)", MEASURED_TRIAD)


def stored_ceiling(device_name: str, workload: str, dtype: str) -> Ceiling | None:
    """From the newest run of `workload` of each framework measured on this machine's device
    (by its name; siliconbench.core.estimate reads it too): the triad at its largest array (past the
    caches), or the best GEMM rate in `dtype`; the highest of the frameworks'. A device's
    ceiling is what its best kernel reached: MLX's CPU triad (1.0 GB/s here) is no bound on
    torch's decode beside torch's (6.7 GB/s)."""
    from siliconbench.core.store import Store, StoreError, default_path
    if not default_path().exists():
        return None
    from siliconbench.core.machine import probe
    here = probe().to_dict()
    same = ("chip", "cpu_model", "model_identifier", "memory_bytes")
    try:
        store = Store()
    except StoreError:
        return None
    newest: dict[str, Ceiling] = {}
    try:
        for rec in store.runs(workload=workload, status="ok"):
            if rec.source != "measured" or rec.device_name != device_name \
                    or rec.framework in newest \
                    or any(rec.machine.get(k) != here.get(k) for k in same):
                continue
            if workload == "bandwidth":
                rows = [r for r in rec.rows if r.value is not None and r.params.get("op") ==
                        "triad" and "above_peak" not in r.flags]
                if rows:
                    row = max(rows, key=lambda r: r.params.get("size_mb", 0))
                    newest[rec.framework] = Ceiling(
                        row.value, f"the triad {row.value:.4g} GB/s measured here by run "
                                   f"{rec.id[:8]} ({rec.framework})", MEASURED_TRIAD)
            else:
                rows = [r for r in rec.rows if r.value is not None and r.metric == "tflops"
                        and r.params.get("dtype") == dtype and "above_peak" not in r.flags]
                if rows:
                    row = max(rows, key=lambda r: r.value)
                    newest[rec.framework] = Ceiling(
                        row.value, f"the {dtype} GEMM {row.value:.4g} TFLOPS measured here "
                                   f"by run {rec.id[:8]} ({rec.framework})", MEASURED_GEMM)
    finally:
        store.close()
    return max(newest.values(), key=lambda c: c.value, default=None)


# ---------------------------------------------------------------- the terminal

def llama_bench_table(rec) -> list[tuple[str, list[str], list[list[str]]]]:
    """The run as llama-bench prints it: one line per test, pp<prompt> and tg<tokens> (with
    @ d<depth> past an empty context), tokens/s as mean ± standard deviation of the blocks.
    A llama.cpp run has llama-bench's own columns (its model name, backend, ngl, threads, and
    rpk 0 where its weights were not repacked); the other engines' say their batch instead."""
    import statistics
    s = rec.settings
    llamacpp = rec.framework == "llamacpp"
    repack = s.get("repack", True)         # records before it was said repacked by default
    lines = []
    for row in rec.rows:
        if row.metric not in ("prefill_tokens_per_s", "decode_tokens_per_s") or not row.samples:
            continue
        p = row.params
        if row.metric == "prefill_tokens_per_s":
            test = f"pp{p['prompt']}"
        else:
            test = f"tg{p['gen_tokens']}" + (f" @ d{p['depth']}" if p["depth"] else "")
        sd = statistics.stdev(row.samples) if len(row.samples) > 1 else 0.0
        size, params = s.get("weight_bytes"), s.get("parameters")
        engine = ([str(s.get("backend", rec.device)), str(s.get("n_gpu_layers", "")),
                   str(s.get("threads", ""))] + ([] if repack else ["0"]) if llamacpp
                  else [f"{rec.framework} {rec.device}", str(p["batch"])])
        lines.append([(s.get("model") if llamacpp else None) or f"{p['preset']} {p['dtype']}",
                      _scaled(size, 1024, ("B", "KiB", "MiB", "GiB")) if size else "",
                      _scaled(params, 1000, ("", "K", "M", "B")) if params else "",
                      *engine, test, f"{statistics.fmean(row.samples):.2f} ± {sd:.2f}"])
    if not lines:
        return []
    # llama-bench adds its rpk column where weights were not repacked (--repack 0): a build
    # whose AMX kernels crash runs so (siliconbench/core/frameworks/llamacpp/llm.py, CRASHING_BUFFERS).
    columns = (["ngl", "threads"] + ([] if repack else ["rpk"])) if llamacpp else ["batch"]
    return [("llama-bench style", ["model", "size", "params", "backend", *columns, "test",
                                   "t/s"], lines)]


def _scaled(value: float, step: int, units: tuple[str, ...]) -> str:
    """'1.23 B', '51.33 KiB': llama-bench's way of showing sizes, with the unit that fits."""
    for unit in units[:-1]:
        if value < step:
            return f"{value:.2f} {unit}".rstrip()
        value /= step
    return f"{value:.2f} {units[-1]}"
