"""PyTorch's part of the llm workload (the interface is in core.workloads.llm's docstring):
transformers' LlamaForCausalLM and Qwen3ForCausalLM built from a config with random weights,
and its static KV cache, as model.generate(cache_implementation="static") uses them."""

from __future__ import annotations

DTYPES = ("bfloat16", "float16", "float32")


def config(shape):
    """The transformers config of a preset's shape."""
    from transformers import LlamaConfig, Qwen3Config
    cls = {"llama": LlamaConfig, "qwen3": Qwen3Config}[shape.family]
    extra = {"rope_scaling": shape.rope_scaling} if shape.rope_scaling else {}
    return cls(hidden_size=shape.hidden, num_hidden_layers=shape.layers,
               intermediate_size=shape.ffn, num_attention_heads=shape.heads,
               num_key_value_heads=shape.kv_heads, head_dim=shape.head_dim,
               vocab_size=shape.vocab, tie_word_embeddings=shape.tied,
               rope_theta=shape.rope_theta, rms_norm_eps=shape.rms_eps,
               max_position_embeddings=shape.max_positions, **extra)


def model_class(shape):
    from transformers import LlamaForCausalLM, Qwen3ForCausalLM
    return {"llama": LlamaForCausalLM, "qwen3": Qwen3ForCausalLM}[shape.family]


def build(ctx, shape, dtype: str) -> "TorchLM":
    return TorchLM(shape, dtype, ctx.device)


class TorchLM:
    def __init__(self, shape, dtype: str, device) -> None:
        import torch
        self.torch, self.shape, self.device = torch, shape, device
        self.config = config(shape)
        torch.manual_seed(0)
        with torch.device(device):
            self.model = model_class(shape)._from_config(self.config,
                                                         dtype=getattr(torch, dtype)).eval()
        self.parameters = sum(p.numel() for p in self.model.parameters())
        self.stored_bytes = sum(p.numel() * p.element_size() for p in self.model.parameters())

    def _tokens(self, batch: int, length: int):
        return self.torch.randint(0, self.shape.vocab, (batch, length), device=self.device)

    def _cache(self, length: int):
        from transformers import StaticCache
        return StaticCache(config=self.config, max_cache_len=length)

    def _forward(self, tokens, cache, start: int):
        """The last position's logits of `tokens` placed at `start` in the cache (the head
        runs on the last position only, as generate does)."""
        torch = self.torch
        position = torch.arange(start, start + tokens.shape[1], device=self.device)
        return self.model(input_ids=tokens, past_key_values=cache, cache_position=position,
                          use_cache=True, logits_to_keep=1).logits[:, -1, :]

    def prefill(self, batch: int, prompt: int):
        tokens = self._tokens(batch, prompt)

        def call() -> None:
            with self.torch.inference_mode():
                first = self._forward(tokens, self._cache(prompt), 0).argmax(-1)
                first.tolist()   # on the host, as a generator needs it
        return call

    def decoder(self, batch: int, depth: int, steps: int):
        torch = self.torch
        cache = self._cache(depth + steps)
        with torch.inference_mode():
            if depth:
                self._forward(self._tokens(batch, depth), cache, 0)
            start = self._tokens(batch, 1)
            positions = [torch.tensor([depth + i], device=self.device) for i in range(steps)]

        def call() -> None:
            # Rewind the cache to `depth` (the static cache's length is a tensor that each
            # update advances in place). Each token is fetched to the host (a device
            # synchronisation), as generate's stopping check does every step.
            with torch.inference_mode():
                for layer in cache.layers:
                    if layer.is_initialized:
                        layer.cumulative_length.fill_(depth)
                y = start
                for position in positions:
                    logits = self.model(input_ids=y, past_key_values=cache,
                                        cache_position=position, use_cache=True).logits
                    y = logits[:, -1, :].argmax(-1, keepdim=True)
                    y.tolist()
        return call

    def cache_gap(self, length: int, prefilled: bool = True) -> float:
        torch = self.torch
        tokens = self._tokens(1, length)
        with torch.inference_mode():
            whole = self.model(input_ids=tokens).logits[:, -1, :].float()
            cache = self._cache(length)
            # prefilled False, for the tests: a cache that holds another context must differ
            self._forward(tokens[:, :-1] * int(prefilled), cache, 0)
            stepped = self._forward(tokens[:, -1:], cache, length - 1).float()
        return float((whole - stepped).abs().max() / whole.abs().max())

    def release(self) -> None:
        self.model = None
        if self.device.type == "cuda":
            self.torch.cuda.empty_cache()
