"""PyTorch's part of the llm workload, its Engine (siliconbench.core.workloads.llm.LLMEngine):
transformers' LlamaForCausalLM and Qwen3ForCausalLM built from a config with random weights,
and its static KV cache, as model.generate(cache_implementation="static") uses them.

Decode runs one of two loops, as generate does: "eager" (the model's forward) or "compiled"
(the forward that generate compiles, `model.get_compiled_call`: torch.compile with
transformers' CompileConfig, inductor in mode reduce-overhead, i.e. CUDA graphs on CUDA).
Generate compiles only where transformers' own test says so (`_valid_auto_compile_criteria`:
a compileable cache on CUDA, XPU, TPU or Neuron), so a static-cache generate runs eager on a
CPU and on MPS, and `default_loop` asks that same test: the default is what a transformers
user gets on the device, which is what the run's figure is held to. Asked for, "compiled"
runs there too with the same config (CUDA graphs apply to CUDA only, so it is inductor's
kernels: C++ on a CPU, tested here; Metal on MPS, not yet run on a Mac).

A third loop, "fast", is what the GPU can do in PyTorch rather than what generate does: the
method of pytorch-labs/gpt-fast's generate.py, one compiled `decode_one_token` (the forward and
the greedy choice of the next token inside one graph, fullgraph=True where the forward allows
it, mode reduce-overhead, i.e. CUDA graphs on CUDA), each token kept on the device and none
read by the host until the end of the block; with gpt-fast's inductor settings
(coordinate-descent tuning, unique kernel names, the FX graph cache: FAST_INDUCTOR) and its
math-only SDPA inside the compiled step, which inductor then generates attention's code for
("actually better for Inductor to codegen attention here", generate.py)."""

from __future__ import annotations

import time

from siliconbench.core.kit.llm_engine import BuiltEngine
from siliconbench.core.kit.llm_shapes import ITEMSIZE, activation_dtype, config_of

DTYPES = ("bfloat16", "float16", "float32")
LOOPS = ("eager", "compiled", "fast")
NOTES = {
    "eager": "eager decode loop (generate's: the forward, argmax, each token read by the host)",
    "compiled": "compiled decode loop (generate's: its compiled forward, argmax outside it, "
                "each token read by the host)",
    "fast": "fast decode loop (gpt-fast's: one compiled step with the argmax inside, "
            "math-only SDPA and inductor's coordinate-descent tuning, the tokens read by the "
            "host once at the end)",
}
# gpt-fast's generate.py sets these inductor options for its compiled decode_one_token.
FAST_INDUCTOR = {"coordinate_descent_tuning": True, "triton.unique_kernel_names": True,
                 "fx_graph_cache": True}


def fast_options(device_type: str) -> dict:
    """torch.compile's options for the fast loop: FAST_INDUCTOR, and on CUDA what mode
    reduce-overhead sets (CUDA graphs; torch.compile takes a mode or options, not both)."""
    return {**FAST_INDUCTOR, **({"triton.cudagraphs": True} if device_type == "cuda" else {})}


def math_sdpa():
    """The context gpt-fast decodes in: SDPA's math backend alone."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel([SDPBackend.MATH])


def config(shape):
    """The transformers config of a preset's shape."""
    from transformers import LlamaConfig, Qwen3Config, Qwen3MoeConfig
    cls = {"llama": LlamaConfig, "qwen3": Qwen3Config,
           "qwen3_moe": Qwen3MoeConfig}[shape.family]
    # the shape's config.json (a fresh dict: transformers writes rope_theta into the one it
    # is given), its model_type the class's own
    config = config_of(shape)
    del config["model_type"]
    return cls(**config)


def model_class(shape):
    from transformers import LlamaForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM
    return {"llama": LlamaForCausalLM, "qwen3": Qwen3ForCausalLM,
            "qwen3_moe": Qwen3MoeForCausalLM}[shape.family]


def from_files(path: str, dtype, device):
    """A Hugging Face folder's model as transformers loads it, from the folder alone:
    safetensors only (a pickle runs code when loaded), no code from the model's repository,
    nothing fetched."""
    from transformers import AutoModelForCausalLM
    return AutoModelForCausalLM.from_pretrained(
        path, local_files_only=True, use_safetensors=True, trust_remote_code=False,
        dtype=dtype).to(device).eval()


def builds(family: str) -> bool:
    """Whether transformers has a causal LM class of this model_type."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    return family in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES


def cache_keyword(model_cls) -> str:
    """The name the model's forward takes its cache by: `cache` from transformers 5.24 (which
    still takes `past_key_values` with a deprecation warning), `past_key_values` before it. A
    cache passed by a name the forward does not know vanishes into its **kwargs: every step
    then runs without its context (transformers 5.17 on an H100: the cache check read 1.36
    and decode ran eager, because generate's compile rule found no cache either)."""
    import inspect
    return "cache" if "cache" in inspect.signature(model_cls.forward).parameters \
        else "past_key_values"


def _graphs() -> int:
    """Graphs torch.compile has made in this process so far (recompilations included)."""
    from torch._dynamo.utils import counters
    return counters["stats"]["unique_graphs"]


def _cudagraph_skips() -> int:
    """Times inductor ran a compiled graph without CUDA graphs (mutated inputs, CPU
    tensors...) where its mode asked for them."""
    from torch._dynamo.utils import counters
    return counters["inductor"]["cudagraph_skips"]


class Decoder:
    """One decode measurement's call (it returns the tokens it fetched, step by step), the
    loop it runs, the prompt it continues (`prompt`: the context, then the first token fed),
    and for the compiled loop the seconds its first call took (compilation, warm-up and
    CUDA-graph capture: never timed as decode)."""

    def __init__(self, call, loop: str, prompt, cache, compile_s: float | None = None,
                 skipped: int = 0) -> None:
        self.call, self.loop, self.prompt, self.compile_s = call, loop, prompt, compile_s
        self.cache = cache
        self.graphs_skipped = skipped     # CUDA graphs inductor skipped in the first call
        self.graphs = _graphs()

    def __call__(self) -> list:
        return self.call()

    def recompiled(self) -> bool:
        """Whether torch.compile made another graph since the first call: the timed calls
        then included compilation."""
        return _graphs() != self.graphs


class TorchLM:
    def __init__(self, shape, dtype: str, device, path: str | None = None) -> None:
        import torch
        self.torch, self.shape, self.device = torch, shape, device
        self.dtype = getattr(torch, dtype)
        torch.manual_seed(0)
        if path is not None:
            self.model = from_files(path, self.dtype, device)
            self.config = self.model.config
        else:
            self.config = config(shape)
            with torch.device(device):
                self.model = model_class(shape)._from_config(self.config,
                                                             dtype=self.dtype).eval()
        self.cache_kw = cache_keyword(type(self.model))
        self.parameters = sum(p.numel() for p in self.model.parameters())
        self.stored_bytes = sum(p.numel() * p.element_size() for p in self.model.parameters())

    def tensor_bytes(self) -> dict[str, int]:
        return {n: p.numel() * p.element_size() for n, p in self.model.named_parameters()}

    def default_loop(self) -> str:
        """The loop model.generate(cache_implementation="static") decodes with here, by
        transformers' own test."""
        decides = getattr(self.model, "_valid_auto_compile_criteria", None)
        if decides is None:      # an older transformers: the rule of 5.24's, on CUDA and XPU
            return "compiled" if self.device.type in ("cuda", "xpu") else "eager"
        # Under both names: the rule reads the one its transformers knows (cache_keyword).
        cache = self._cache(1, 2)
        compiles = decides({"cache": cache, "past_key_values": cache},
                           self.model.generation_config)
        return "compiled" if compiles else "eager"

    def _tokens(self, batch: int, length: int):
        return self.torch.randint(0, self.shape.vocab, (batch, length), device=self.device)

    def _cache(self, batch: int, length: int):
        """A static cache of `length` positions, allocated now, outside any compiled code, as
        generate's eager prefill does: its keys, values and length are then marked as static
        addresses (torch._dynamo.mark_static_address), so the compiled step may update them
        in place and keep its CUDA graph ("mutated inputs" otherwise)."""
        from transformers import StaticCache
        cache = StaticCache(config=self.config, max_cache_len=length)
        cache.early_initialization(batch, self.shape.kv_heads, self.shape.head_dim,
                                   self.dtype, self.device)
        return cache

    def _step(self, forward, tokens, position, cache):
        """The one forward every loop runs (prefill, eager and compiled decode, gpt-fast's
        step): the last position's logits of `tokens` at `position` in `cache`, through
        `forward` (the model, or its compiled call); the head runs on the last position only,
        as generate does."""
        return forward(input_ids=tokens, position_ids=position, use_cache=True,
                       logits_to_keep=1, **{self.cache_kw: cache}).logits[:, -1, :]

    @staticmethod
    def _rewind(cache, depth: int) -> None:
        """The static cache back to `depth` positions: its length is a tensor that each
        update advances in place."""
        for layer in cache.layers:
            layer.cumulative_length.fill_(depth)

    def _forward(self, tokens, cache, start: int):
        """The last position's logits of `tokens` placed at `start` in the cache."""
        torch = self.torch
        position = torch.arange(start, start + tokens.shape[1], device=self.device)[None]
        return self._step(self.model, tokens, position, cache)

    def prefill(self, batch: int, prompt: int):
        tokens = self._tokens(batch, prompt)

        def call() -> None:
            with self.torch.no_grad():
                first = self._forward(tokens, self._cache(batch, prompt), 0).argmax(-1)
                first.tolist()   # on the host, as a generator needs it
        return call

    def decoder(self, batch: int, depth: int, steps: int, loop: str = "eager") -> Decoder:
        torch = self.torch
        cache = self._cache(batch, depth + steps)
        with torch.no_grad():
            context = self._tokens(batch, depth)
            if depth:
                self._forward(context, cache, 0)
            start = self._tokens(batch, 1)
            # The position of every step is a tensor input of the forward (a new value, the
            # same graph), beside the cache's own length, a tensor updated in place.
            positions = [torch.full((batch, 1), depth + i, device=self.device)
                         for i in range(steps)]
        if loop == "fast":
            return self._fast(cache, context, start, positions, depth)
        if loop == "compiled":
            # Each decoder compiles afresh for its cache's length, as a fresh generate does.
            torch._dynamo.reset()
            forward = self.model.get_compiled_call(None)
        else:
            forward = self.model.__call__
        # generate's stopping check reads a flag on the host every step, a synchronisation;
        # on MPS it reads it one step late (transformers' DeferredStopCheck), so the host
        # queues step i+1 before it waits for step i.
        late = self.device.type == "mps"

        def call() -> list:
            # The cache rewound to `depth`; each token is fetched to the host.
            fetched = []
            with torch.no_grad():
                self._rewind(cache, depth)
                y, waiting = start, None
                for position in positions:
                    y = self._step(forward, y, position, cache).argmax(-1, keepdim=True)
                    if late:
                        if waiting is not None:
                            fetched.append(waiting.tolist())
                        waiting = y
                    else:
                        fetched.append(y.tolist())
                if waiting is not None:
                    fetched.append(waiting.tolist())
            return fetched

        prompt = torch.cat([context, start], dim=1)
        if loop != "compiled":
            return Decoder(call, loop, prompt, cache)
        return self._first_call(call, loop, prompt, cache)

    def _first_call(self, call, loop: str, prompt, cache) -> Decoder:
        """The Decoder of a compiled loop after its first call: it compiles; CUDA graph trees
        run a graph once to warm up, record it on its second run and replay it from the third
        (the timing protocol discards two calls more)."""
        skips = _cudagraph_skips()
        t0 = time.perf_counter()
        call()
        seconds = time.perf_counter() - t0
        skipped = _cudagraph_skips() - skips if self.device.type == "cuda" else 0
        return Decoder(call, loop, prompt, cache, seconds, skipped)

    def _fast(self, cache, context, start, positions, depth: int) -> Decoder:
        """gpt-fast's loop: decode_one_token (forward and argmax) compiled as one graph, with
        fullgraph=True, or without it where the forward breaks the graph (the Decoder says
        which: `fullgraph`); each token cloned (a CUDA graph's output is overwritten by its
        next replay), fed back and kept on the device; the host reads the block once at the
        end."""
        torch = self.torch

        def decode_one_token(y, position):
            with math_sdpa():
                logits = self._step(self.model, y, position, cache)
            return logits.argmax(-1, keepdim=True)
        self.fast_step = decode_one_token      # for the tests: the step before compiling

        def loop_with(step):
            def call() -> list:
                with torch.no_grad():
                    self._rewind(cache, depth)
                    y, kept = start, []
                    for position in positions:
                        # A CUDA graph's output is overwritten by its next replay: the
                        # token is cloned before it is fed back, as gpt-fast's cur_token.
                        y = step(y, position).clone()
                        kept.append(y)
                    # one read of the whole block: steps x batch x [token], as the others
                    return torch.cat(kept, dim=1).T.unsqueeze(-1).tolist()
            return call

        options = fast_options(self.device.type)
        prompt = torch.cat([context, start], dim=1)
        for fullgraph in (True, False):
            torch._dynamo.reset()
            call = loop_with(torch.compile(decode_one_token, options=options,
                                           fullgraph=fullgraph))
            try:
                decoder = self._first_call(call, "fast", prompt, cache)
            except torch._dynamo.exc.Unsupported:
                if not fullgraph:
                    raise
                continue          # a graph break in the forward: compiled in pieces instead
            decoder.fullgraph = fullgraph
            return decoder
        raise AssertionError("unreachable")

    def cache_gap(self, length: int, prefilled: bool = True) -> float:
        torch = self.torch
        tokens = self._tokens(1, length)
        with torch.no_grad():
            whole = self.model(input_ids=tokens).logits[:, -1, :].float()
            cache = self._cache(1, length)
            # prefilled False, for the tests: a cache that holds another context must differ
            self._forward(tokens[:, :-1] * int(prefilled), cache, 0)
            stepped = self._forward(tokens[:, -1:], cache, length - 1).float()
        return float((whole - stepped).abs().max() / whole.abs().max())

    def release(self) -> None:
        self.model = None
        if self.device.type == "cuda":
            self.torch.cuda.empty_cache()


class Engine(BuiltEngine):
    """The llm workload's engine on PyTorch: the shape built by transformers (TorchLM)."""
    DTYPES, LOOPS = DTYPES, LOOPS

    def decode_note(self, loop: str) -> str:
        return NOTES[loop]

    def build(self) -> TorchLM:
        return TorchLM(self.shape, self.dtype, self.ctx.device,
                       self.own.file.path if self.own else None)

    def builds(self, family: str) -> bool:
        return builds(family)

    @staticmethod
    def attention_bytes(shape, dtype: str, device: str, batch: int,
                        tokens: int) -> float | None:
        """transformers runs these families' attention in PyTorch's SDPA, causal: on CUDA its
        flash and memory-efficient kernels (head_dim up to 256) hold no scores, and on a CPU
        its flash kernel holds none (measured with torch 2.14: a one-layer prefill of 8192
        positions raised the peak resident memory 0.16 GiB in SDPA, 4.4 GiB in eager
        attention, whose float32 scores are 2 GiB). Counted: a boolean mask of every query
        and key that the static cache may make transformers build (5.24 builds none for a
        prefill from an empty cache) and the float copy SDPA makes of it. On MPS, and for
        other families (sliding windows, soft-capping: other attentions), not
        established: the scores are counted."""
        if device not in ("cuda", "cpu") or shape.head_dim > 256 \
                or shape.family not in ("llama", "qwen3", "qwen3_moe"):
            return None
        return batch * tokens * tokens * (1 + ITEMSIZE[activation_dtype(dtype)])
