"""MLX's part of the llm workload, its Engine (siliconbench.core.workloads.llm.LLMEngine): mlx-lm's
own Llama and Qwen3 classes built from their ModelArgs with random weights, its KV cache, and
the generate loop of mlx_lm.generate, so the numbers are what mlx-lm users get."""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Callable

from siliconbench.core.kit.llm_engine import BuiltEngine, plain_decoder
from siliconbench.core.kit.llm_shapes import (  # GROUP_SIZE: mlx-lm's converter's default
    GROUP_SIZE,
    config_of,
)

DTYPES = ("bfloat16", "float16", "float32", "q4", "q8")
LOOPS = ("eager",)           # mlx_lm.generate's loop; it compiles nothing
# mlx_lm.generate.stream_generate's prompt chunk (generate_step's prefill_step_size, and
# mlx_lm.benchmark's --prefill-step-size default).
PREFILL_STEP = 2048
# mlx-lm's generation_stream is thread-local from 0.31.3 (ml-explore/mlx-lm#1090, which asks
# for MLX 0.31.2's mx.new_thread_local_stream), a plain new stream before.
THREAD_LOCAL_FROM = (0, 31, 3)


def generation_stream(mx):
    """A stream of the kind mlx_lm.generate.generation_stream is in the installed mlx-lm, told
    by its version (importing mlx_lm.generate would import transformers, hence torch)."""
    import re
    from importlib.metadata import PackageNotFoundError, version
    try:
        installed = tuple(int(n) for n in re.findall(r"\d+", version("mlx-lm"))[:3])
    except PackageNotFoundError:
        installed = ()
    local = installed >= THREAD_LOCAL_FROM and hasattr(mx, "new_thread_local_stream")
    return (mx.new_thread_local_stream if local else mx.new_stream)(mx.default_device())


def _mlx_lm(module: str):
    """mlx_lm.models.<module>, without running mlx_lm's package __init__: that loads the
    tokenizer helpers, hence transformers, which imports torch wherever torch is installed,
    and a run's process is MLX's alone (siliconbench.core.frameworks.isolate). The model
    modules need nothing of it. A process that imported all of mlx_lm
    (benchmarks/llm_fidelity.py) keeps it."""
    if "mlx_lm" not in sys.modules:
        spec = importlib.util.find_spec("mlx_lm")
        if spec is None:
            raise ImportError("mlx-lm is not installed; add it with "
                              "pip install 'siliconbench[mlx]'.")
        package = types.ModuleType("mlx_lm")
        package.__spec__, package.__path__ = spec, list(spec.submodule_search_locations)
        sys.modules["mlx_lm"] = package
    return importlib.import_module(f"mlx_lm.models.{module}")


def model_args(shape) -> dict:
    """The config.json a preset's shape stands for (kit.llm_shapes.config_of), as mlx-lm's
    ModelArgs read it."""
    return {"rope_scaling": None, **config_of(shape)}


def from_files(path: str, dtype: str, config: dict | None = None):
    """An mlx-lm folder's model as mlx_lm.utils.load_model builds it (its model class from
    config.json's model_type, the safetensors weights sanitised, the layers its file
    quantised quantised alike), without mlx_lm.utils itself (it imports transformers) and
    never a model_file of the folder's own code; an unquantised one cast to `dtype`.
    `config`: its config.json as the run's plan read it (read here when None)."""
    import json
    from pathlib import Path

    import mlx.core as mx
    import mlx.nn as nn

    from siliconbench.core.files import read_small
    folder = Path(path)
    config = dict(config) if config is not None else \
        json.loads(read_small(folder / "config.json", 1 << 20, "config.json"))
    # transformers 5 saves rope_theta inside rope_parameters and a Qwen3-MoE's expert count
    # as num_local_experts; the mlx-lm model classes read the names before it
    rope = config.get("rope_parameters") or {}
    config.setdefault("rope_theta", rope.get("rope_theta", 10000.0))
    if rope.get("rope_type", "default") != "default":
        config.setdefault("rope_scaling", {k: v for k, v in rope.items() if k != "rope_theta"})
    if "num_local_experts" in config:
        config.setdefault("num_experts", config["num_local_experts"])
    family = _mlx_lm(config["model_type"])
    model = family.Model(family.ModelArgs.from_dict(config))
    weights = {}
    for f in sorted(folder.glob("*.safetensors")):
        weights.update(mx.load(str(f)))
    if hasattr(model, "sanitize"):
        weights = model.sanitize(weights)
    quant = config.get("quantization")   # checked against the weights before the run
    if isinstance(quant, dict):          # (kit/model_checks.quant_mismatch), 64 its default
        nn.quantize(model, group_size=quant.get("group_size", 64), bits=quant["bits"],
                    mode=quant.get("mode", "affine"),
                    class_predicate=lambda p, m: hasattr(m, "to_quantized")
                    and f"{p}.scales" in weights)
    model.load_weights(list(weights.items()), strict=True)
    if not isinstance(quant, dict):
        model.set_dtype(getattr(mx, dtype))
    mx.eval(model.parameters())
    return model


def builds(family: str) -> bool:
    """Whether mlx-lm has a model module of this model_type (looked for as a file: finding
    the module would import mlx_lm's package, hence transformers)."""
    from pathlib import Path
    spec = importlib.util.find_spec("mlx_lm")
    return spec is not None and any((Path(p) / "models" / f"{family}.py").is_file()
                                    for p in spec.submodule_search_locations)


class MlxLM:
    def __init__(self, shape, dtype: str, path: str | None = None,
                 config: dict | None = None) -> None:
        import mlx.core as mx
        import mlx.nn as nn
        from mlx.utils import tree_flatten

        self.mx, self.shape = mx, shape
        self.wired_before: int | None = None
        # generate_step runs on a stream of its own, mlx_lm.generate.generation_stream
        self.stream = generation_stream(mx)
        self.make_cache = _mlx_lm("cache").make_prompt_cache
        mx.random.seed(0)
        if path is not None:
            self.model = from_files(path, dtype, config)
            self.parameters = None
            self.stored_bytes = sum(self.tensor_bytes().values())
            return
        family = _mlx_lm(shape.family)
        model = family.Model(family.ModelArgs.from_dict(model_args(shape)))
        self.parameters = sum(v.size for _, v in tree_flatten(model.parameters()))
        bits = {"q4": 4, "q8": 8}.get(dtype)
        model.set_dtype(getattr(mx, "bfloat16" if bits else dtype))
        if bits:
            # mlx-lm's converter quantises every layer that can be, whose inputs divide
            # into groups.
            nn.quantize(model, group_size=GROUP_SIZE, bits=bits,
                        class_predicate=lambda _, m: hasattr(m, "to_quantized")
                        and m.weight.shape[-1] % GROUP_SIZE == 0)
        mx.eval(model.parameters())
        self.model = model
        self.stored_bytes = sum(v.nbytes for _, v in tree_flatten(model.parameters()))

    def tensor_bytes(self) -> dict[str, int]:
        from mlx.utils import tree_flatten
        return {n: v.nbytes for n, v in tree_flatten(self.model.parameters())}

    def _tokens(self, batch: int, length: int):
        tokens = self.mx.random.randint(0, self.shape.vocab, (batch, length))
        self.mx.eval(tokens)
        return tokens

    def _sampled(self, logits):
        """generate_step's _step after the model: log-probabilities, then mlx_lm's greedy
        sampler (their argmax); (tokens, log-probabilities)."""
        mx = self.mx
        logprobs = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
        return mx.argmax(logprobs, axis=-1), logprobs

    def _next(self, logits):
        """The greedy token of each sequence, shaped as the next step's input."""
        return self._sampled(logits)[0][:, None]

    def prefill(self, batch: int, prompt: int):
        """A call that is mlx_lm's time to first token: what stream_generate times from its
        tic to its first token, generate_step's calls in its order, on its own stream. A
        new prompt cache; the first prompt - 1 tokens in chunks of PREFILL_STEP, each
        chunk's cache evaluated and MLX's buffer cache cleared after it; the last token as
        a step of its own, its greedy token and log-probabilities queued (mx.async_eval),
        then the token evaluated and brought to the host. stream_generate's prompt tokens/s
        is the prompt's length over this time.

        One thing generate_step does in that time is left out: before it waits for the
        first token it builds and queues its second step (the first decode step), so that
        the device goes on with it while the host takes the token. stream_generate's clock
        stops before the device has computed that step (mlx-lm waits for it only when the
        generation ends); here every call is followed by the measurement's synchronisation
        or another call on the same stream, which would wait for it and count a decode
        step's device time in the prefill. Leaving it out drops only the host's time to
        build that step beyond the first token's computation: nothing where a one-token
        step takes longer to compute than to build, a few milliseconds where it does not
        (a small model on a CPU: at 128 tokens mlx_lm's time reads a few percent longer)."""
        mx = self.mx
        tokens = self._tokens(batch, prompt)

        def call() -> None:
            cache = self.make_cache(self.model)
            rest = tokens
            with mx.stream(self.stream):
                while rest.shape[1] > 1:
                    n = min(PREFILL_STEP, rest.shape[1] - 1)
                    self.model(rest[:, :n], cache=cache)
                    mx.eval([c.state for c in cache])
                    rest = rest[:, n:]
                    mx.clear_cache()
                first, logprobs = self._sampled(self.model(rest, cache=cache)[:, -1, :])
                mx.async_eval(first, logprobs)
                mx.eval(first)
                first.tolist()       # on the host, as the generator yields it
        return call

    def default_loop(self) -> str:
        return "eager"

    def decoder(self, batch: int, depth: int, steps: int, loop: str = "eager"):
        mx = self.mx
        cache = self.make_cache(self.model)
        if depth:
            self.model.model(self._tokens(batch, depth), cache=cache)
            mx.eval([c.state for c in cache])
        start = self._tokens(batch, 1)

        def step(y):
            with mx.stream(self.stream):
                return self._next(self.model(y, cache=cache)[:, -1, :])

        def call() -> None:
            for c in cache:
                c.trim(c.offset - depth)
            # mlx_lm.generate's loop: queue step i+1 (mx.async_eval) before fetching token
            # i, so building a step's graph overlaps the device computing the last one; every
            # step is evaluated and its token brought to the host.
            y = step(start)
            mx.async_eval(y)
            for i in range(steps):
                following = None
                if i + 1 < steps:
                    following = step(y)
                    mx.async_eval(following)
                y.tolist()
                y = following
        return plain_decoder(call)

    def cache_gap(self, length: int, prefilled: bool = True) -> float:
        mx = self.mx
        tokens = self._tokens(1, length)
        whole = self.model(tokens)[:, -1, :].astype(mx.float32)
        cache = self.make_cache(self.model)
        # prefilled False, for the tests: a cache that holds another context must differ
        self.model(tokens[:, :-1] * int(prefilled), cache=cache)
        stepped = self.model(tokens[:, -1:], cache=cache)[:, -1, :].astype(mx.float32)
        gap = mx.max(mx.abs(whole - stepped)) / mx.max(mx.abs(whole))
        return float(gap.item())

    def wire(self) -> dict:
        """The wired limit as mlx_lm's generate sets it while it generates
        (mlx_lm.generate.wired_limit): the device's recommended working set where it reports
        one (Metal), else left alone; what was done, for the record. release() puts the
        previous limit back."""
        size = self.mx.device_info().get("max_recommended_working_set_size")
        if size is None:
            return {"bytes": None, "detail": "not set: the device reports no recommended "
                                             "working set (no Metal), and mlx_lm sets none"}
        self.wired_before = self.mx.set_wired_limit(size)
        return {"bytes": size, "detail": f"{size:,} bytes, the device's recommended working "
                                         "set, as mlx_lm's generate sets it"}

    def release(self) -> None:
        self.model = None
        if self.wired_before is not None:
            # as wired_limit leaves: once the device is done, the previous limit back
            self.mx.synchronize()
            self.mx.set_wired_limit(self.wired_before)
            self.wired_before = None
        self.mx.clear_cache()


class Engine(BuiltEngine):
    """The llm workload's engine on MLX: the shape built by mlx-lm's classes (MlxLM)."""
    DTYPES, LOOPS = DTYPES, LOOPS

    def build(self) -> MlxLM:
        return MlxLM(self.shape, self.dtype, self.own.file.path if self.own else None,
                     self.own.config if self.own else None)   # as the run's plan read it

    def builds(self, family: str) -> bool:
        return builds(family)

    @staticmethod
    def attention_bytes(shape, dtype: str, device: str, batch: int,
                        tokens: int) -> float | None:
        """mlx-lm's attention is mx.fast.scaled_dot_product_attention with the mask
        "causal" (no array). On a Metal GPU its full kernel runs a prompt (more than 8
        queries) of head_dim 64, 80 or 128 and holds no scores (use_fallback in MLX's
        backend/metal/scaled_dot_product_attention.cpp; not measured here, on Linux);
        elsewhere (the CPU, other head sizes) it falls back to a matrix product and a
        softmax, whose scores are counted (MLX 0.32.4's CPU: 16 heads of 4096 causal
        positions raised its peak memory 1.05 GiB, the scores' 1 GiB), as they are on MLX's
        CUDA GPU (not established).
        MLX's gpu is Metal on macOS, CUDA on Linux."""
        fused = device == "gpu" and sys.platform == "darwin" and shape.head_dim in (64, 80, 128)
        return 0 if fused else None

    def load(self, say: Callable[[int, str], None]) -> None:
        super().load(say)
        wired = self.lm.wire()
        self.ctx.record_settings(wired_limit=wired)
        if wired["bytes"] is not None and self.lm.stored_bytes > 0.9 * wired["bytes"]:
            # mlx_lm's own warning
            self.ctx.warn(f"The model's {self.lm.stored_bytes / 2**20:,.0f} MB come close to "
                          f"the recommended working set ({wired['bytes'] / 2**20:,.0f} MB): "
                          "generation can be slow, as mlx-lm warns.")
