"""An LLM's shape and its arithmetic, which the llm workload (whose presets are such shapes)
and every engine that runs it (siliconbench.core.frameworks.<framework>.llm) share: a model's
shape as its published config.json gives it, its parameters, the bytes of its weights as
stored (quantised or not) and of its KV cache, the bytes a decode step reads, a prefill's FLOPs
and the memory a run needs. Pure arithmetic on the shape: no framework, no protocol."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ModelShape:
    """What the benchmark needs of a published config.json."""
    family: str                  # llama | qwen3: the model class the frameworks build
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
    # A mixture of experts (Qwen3-MoE's config.json: num_experts, num_experts_per_tok,
    # moe_intermediate_size): every layer's feed-forward is `experts` gated MLPs of width
    # `expert_ffn` and a router choosing `active_experts` of them per token; 0 for dense.
    experts: int = 0
    active_experts: int = 0
    expert_ffn: int = 0
    # Multi-head latent attention (DeepSeek-V2/V3's config.json: kv_lora_rank): keys and
    # values made from a latent of this width, cached as each framework chooses; 0: none.
    kv_latent: int = 0

    @property
    def qk_norm(self) -> bool:
        return self.family in ("qwen3", "qwen3_moe")   # queries and keys RMS-normalised per head

    @property
    def moe(self) -> bool:
        return self.experts > 0

    def matrices(self, experts: float | None = None) -> list[tuple[int, int, int]]:
        """(out, in, how many) of every weight matrix a token passes through: each of a
        layer's, `layers` times, then the output head (which is the embedding table when
        tied) once; counted, never repeated, so a layer count costs nothing to hold. For a
        mixture of experts: the router and the `experts` a token reads (the active ones
        unless told; all of them for what is stored) — fractional when a batch's tokens
        share some."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        layer = [(q, self.hidden), (kv, self.hidden), (kv, self.hidden), (self.hidden, q)]
        if self.moe:
            n = self.active_experts if experts is None else experts
            width = self.expert_ffn
            # n experts' gate and up stacked along their outputs, their down projections
            # likewise (inputs kept, so quantisation groups stay whole)
            layer += [(self.experts, self.hidden)] + [(round(n * width), self.hidden)] * 2 \
                + [(round(n * self.hidden), width)]
        else:
            layer += [(self.ffn, self.hidden), (self.ffn, self.hidden), (self.hidden, self.ffn)]
        return [(o, i, self.layers) for o, i in layer] + [(self.vocab, self.hidden, 1)]

    def experts_read(self, batch: int) -> float:
        """How many distinct experts a layer reads for one decode step of `batch` sequences,
        on average, when the router picks `active_experts` of `experts` uniformly and
        independently per sequence: E x (1 - (1 - k/E)^batch). A trained router is not
        uniform, so this is the bound's assumption, said on the row."""
        if not self.moe:
            return 0.0
        e, k = self.experts, self.active_experts
        return e * (1 - (1 - k / e) ** batch)

    def norm_weights(self) -> int:
        per_layer = 2 * self.hidden + (2 * self.head_dim if self.qk_norm else 0)
        return self.layers * per_layer + self.hidden

    def stored_matrices(self) -> list[tuple[int, int, int]]:
        """Every matrix stored: all the experts of a mixture."""
        return self.matrices(self.experts if self.moe else None)

    @property
    def parameters(self) -> int:
        embedding = self.vocab * self.hidden
        matrices = sum(o * i * n for o, i, n in self.stored_matrices())
        return matrices + (0 if self.tied else embedding) + self.norm_weights()

    @property
    def active_parameters(self) -> int:
        """The weights one token computes with (a mixture's active experts only)."""
        return self.parameters - sum(o * i * n for o, i, n in self.stored_matrices()) \
            + sum(o * i * n for o, i, n in self.matrices())

    @property
    def matmul_parameters(self) -> int:
        """Weights of the per-layer matrix products one token computes with (no embedding,
        no head)."""
        return sum(o * i * n for o, i, n in self.matrices()[:-1])


QUANT_BITS = {"q4": 4, "q8": 8,
              # llama.cpp's: a float16 scale per 32 weights is the same 0.5 bit a weight as
              # MLX's two bfloat16 per 64, so the estimates hold (Q4_K_M: about 4.5 too).
              "q8_0": 8, "q4_0": 4, "q4_k_m": 4}
GROUP_SIZE = 64              # mlx-lm's converter's default quantisation group
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}


def weight_bytes(shape: ModelShape, dtype: str) -> int:
    """Bytes of the weights as stored: the layers' matrices, the embedding table, the head
    when untied, the norms."""
    tables = [(shape.vocab, shape.hidden, 1 if shape.tied else 2)]
    return _bytes(shape.stored_matrices()[:-1] + tables, shape, dtype)


def _bytes(matrices: list[tuple[int, int, int]], shape: ModelShape, dtype: str) -> int:
    """Quantised: every matrix in `bits` per weight plus a bfloat16 scale and bias per group
    of 64 inputs (mlx-lm leaves a matrix whose inputs do not divide into groups as it is);
    norms stay in the activations' dtype."""
    item = ITEMSIZE[activation_dtype(dtype)]
    total = item * shape.norm_weights()
    for out, inp, n in matrices:
        if dtype in QUANT_BITS and inp % GROUP_SIZE == 0:
            total += n * (out * inp * QUANT_BITS[dtype] // 8
                          + out * (inp // GROUP_SIZE) * 2 * item)
        else:
            total += n * out * inp * item
    return total


def activation_dtype(dtype: str) -> str:
    """The precision activations and the KV cache are in: a quantised model's (any type a
    GGUF or MLX file stores) bfloat16."""
    return dtype if dtype in ITEMSIZE else "bfloat16"


def kv_bytes(shape: ModelShape, dtype: str, tokens: float) -> float:
    """Bytes of keys and values of `tokens` positions of one sequence."""
    return 2 * shape.layers * shape.kv_heads * shape.head_dim * tokens \
        * ITEMSIZE[activation_dtype(dtype)]


def bytes_per_decode_step(shape: ModelShape, dtype: str, batch: int, depth: int,
                          steps: int) -> float:
    """Bytes read from memory per decode step, averaged over `steps` steps from `depth`:
    every matrix a token passes through and the norms once (of the embedding table only the
    token's row, left out), and each sequence's keys and values, which grow by one position
    per step. A mixture of experts reads its router and the experts its batch's tokens
    chose (experts_read), not the ones no token chose."""
    read = shape.matrices(shape.experts_read(batch)) if shape.moe else shape.matrices()
    return _bytes(read, shape, dtype) \
        + batch * kv_bytes(shape, dtype, depth + (steps + 1) / 2)


def prefill_flops(shape: ModelShape, batch: int, prompt: int) -> float:
    """2 x matrix weights x tokens, attention's scores and weighted sum as PaLM counts them
    (4 x layers x heads x head_dim x prompt^2, no causal halving), and the head on the last
    token, which is all a generator computes it for."""
    attention = 4 * shape.layers * shape.heads * shape.head_dim * prompt ** 2
    return batch * (2.0 * shape.matmul_parameters * prompt + attention
                    + 2.0 * shape.vocab * shape.hidden)


def memory_needed(shape: ModelShape, dtype: str, batch: int, tokens: int,
                  attention: float | None = None) -> float:
    """Weights, the cache of `tokens` positions, and a prefill's largest activations: the
    feed-forward's and what its attention holds at once beyond its inputs and output,
    `attention` bytes as the engine says (its attention_bytes), or where it cannot say, the
    float32 scores of every head for all `tokens` positions (score_bytes), which an
    attention that no fused kernel runs holds."""
    act = ITEMSIZE[activation_dtype(dtype)]
    ffn = shape.active_experts * shape.expert_ffn if shape.moe else shape.ffn
    if attention is None:
        attention = score_bytes(shape, batch, tokens, tokens)
    activations = batch * tokens * (3 * ffn + 4 * shape.hidden) * act + attention
    return weight_bytes(shape, dtype) + batch * kv_bytes(shape, dtype, tokens) + activations


def score_bytes(shape: ModelShape, batch: int, queries: int, keys: int) -> int:
    """Bytes of one layer's attention scores, float32 for every head, of `queries` positions
    against `keys`."""
    return batch * shape.heads * queries * keys * 4


EMBEDDING = re.compile(r"(^|\.)(embed_tokens|token_embd|wte)\.")
# A mixture's routed experts, which a step reads a share of: transformers' and mlx-lm's
# `experts`/`switch_mlp`, GGUF's `_exps`. Not a shared expert, which every token passes
# through: DeepSeek's `shared_experts`, Qwen2-MoE's `shared_expert`, GGUF's `_shexp`.
EXPERTS = re.compile(r"(?<!shared_)experts|_exps\.|switch_mlp")


def tensors_step_bytes(shape: ModelShape, tensors: dict[str, int], kv_dtype: str,
                       batch: int, depth: int, steps: int) -> float:
    """bytes_per_decode_step for a model whose tensors are known by name and size (a GGUF
    file's, a loaded model's): every tensor once but an untied embedding table (its token's
    row only) and a mixture's experts (the share its batch's tokens chose), and each
    sequence's keys and values in `kv_dtype`."""
    share = experts_share(shape, batch)
    weights = sum(0 if not shape.tied and EMBEDDING.search(name)
                  else b * share if EXPERTS.search(name) else b
                  for name, b in tensors.items())
    return weights + batch * kv_bytes(shape, kv_dtype, depth + (steps + 1) / 2)


def kv_refusal(shape: ModelShape) -> str | None:
    """Why the cache's bytes (kv_bytes) do not describe this model, so that no decode bound
    is divided by them; None where they do."""
    if shape.kv_latent:
        return (f"its attention is multi-head latent (a {shape.kv_latent}-wide latent, "
                "DeepSeek's MLA), whose cache each framework keeps its own way (transformers "
                "every head's keys and values, llama.cpp the latent), which the cache's bytes "
                "here, kv_heads x head_dim keys and values, do not describe")
    return None


def experts_share(shape: ModelShape, batch: int) -> float:
    """The part of a mixture's expert weights one decode step of `batch` reads (1 for a
    dense model)."""
    return shape.experts_read(batch) / shape.experts if shape.moe else 1.0


def moe_note(shape: ModelShape, batch: int) -> str:
    """What a mixture's decode bound counts, for its row; '' for a dense model."""
    if not shape.moe:
        return ""
    return (f"; of the {shape.experts} experts a layer holds, the router and the "
            f"{shape.experts_read(batch):.3g} that {batch} token(s) choosing "
            f"{shape.active_experts} each read, routing taken as uniform")


def describe_shape(shape: ModelShape) -> str:
    ffn = (f"{shape.experts} experts of {shape.expert_ffn}, {shape.active_experts} a token"
           if shape.moe else f"feed-forward {shape.ffn}")
    return (f"{shape.family}: {shape.layers} layers, hidden {shape.hidden}, {shape.heads} "
            f"heads ({shape.kv_heads} KV) of {shape.head_dim}, {ffn}, "
            f"vocabulary {shape.vocab}{', tied embeddings' if shape.tied else ''}")


def config_of(shape: ModelShape) -> dict:
    """The config.json a shape stands for (transformers' and mlx-lm's key names), the one
    mapping both engines build a preset's model from; shape_from_config reads it back. A
    mixture of experts has every layer a mixture, as Qwen3-30B-A3B's (decoder_sparse_step 1).
    A fresh dict: transformers writes into the one it is given."""
    config = {"model_type": shape.family, "hidden_size": shape.hidden,
              "num_hidden_layers": shape.layers, "intermediate_size": shape.ffn,
              "num_attention_heads": shape.heads, "num_key_value_heads": shape.kv_heads,
              "head_dim": shape.head_dim, "rms_norm_eps": shape.rms_eps,
              "vocab_size": shape.vocab, "max_position_embeddings": shape.max_positions,
              "rope_theta": shape.rope_theta, "tie_word_embeddings": shape.tied}
    if shape.rope_scaling:
        config["rope_scaling"] = dict(shape.rope_scaling)
    if shape.moe:
        config.update(num_experts=shape.experts, num_experts_per_tok=shape.active_experts,
                      moe_intermediate_size=shape.expert_ffn, decoder_sparse_step=1,
                      mlp_only_layers=[], norm_topk_prob=True)
    if shape.kv_latent:
        config["kv_lora_rank"] = shape.kv_latent
    return config


def shape_from_config(config: dict) -> ModelShape:
    """The shape a Hugging Face config.json gives (transformers' and mlx-lm's key names);
    ValueError with one sentence when a size the arithmetic needs is missing."""
    def size(*keys, default=None):
        for key in keys:
            value = config.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
        if default is not None:
            return default
        raise ValueError(f"config.json gives no {keys[0]}, which SiliconBench needs to size "
                         "the model.")
    hidden, heads = size("hidden_size", "n_embd", "d_model"), size("num_attention_heads")
    # transformers 5 writes rope_parameters (rope_theta and the scaling in one); configs
    # saved before it, and mlx-lm's, rope_theta and rope_scaling
    rope = config.get("rope_parameters")
    rope = dict(rope) if isinstance(rope, dict) else {}
    theta = config.get("rope_theta")
    theta = rope.pop("rope_theta", None) if theta is None else theta
    scaling = config.get("rope_scaling") if isinstance(config.get("rope_scaling"), dict) \
        else rope if rope.get("rope_type", "default") != "default" else None
    experts = size("num_experts", "num_local_experts", "n_routed_experts", default=0)
    tied = config.get("tie_word_embeddings", False)
    if not isinstance(tied, bool):
        raise ValueError(f"config.json's tie_word_embeddings is {_shown(tied)}, not true or "
                         "false.")
    return checked(ModelShape(
        family=config["model_type"] if isinstance(config.get("model_type"), str) and
        config["model_type"] else "unknown", layers=size("num_hidden_layers"),
        hidden=hidden, heads=heads, kv_heads=size("num_key_value_heads", default=heads),
        head_dim=size("head_dim", default=hidden // heads),
        ffn=size("intermediate_size", default=4 * hidden), vocab=size("vocab_size"),
        tied=tied, rope_theta=_real(theta, "rope_theta", 10000.0),
        rms_eps=_real(config.get("rms_norm_eps"), "rms_norm_eps", 1e-6),
        max_positions=size("max_position_embeddings", default=4096),
        rope_scaling=_scaling(scaling), experts=experts,
        active_experts=size("num_experts_per_tok", "experts_per_token", default=0)
        if experts else 0,
        expert_ffn=size("moe_intermediate_size", "intermediate_size", default=0)
        if experts else 0, kv_latent=size("kv_lora_rank", default=0)), "config.json")


GGUF_FAMILY = {"llama": "llama", "qwen3": "qwen3", "qwen3moe": "qwen3_moe"}


def shape_from_gguf(fields: dict, tensor_names: set[str]) -> ModelShape:
    """The shape a GGUF file's metadata gives (llama.cpp's key names, `{arch}.…`), tied
    where the file has no output.weight; ValueError with one sentence when a size is
    missing."""
    arch = str(fields.get("general.architecture", ""))

    def size(key, default=None):
        value = fields.get(f"{arch}.{key}")
        if isinstance(value, list):          # per-layer counts: the largest sizes the cache
            value = max(value) if value else None
        if isinstance(value, int) and value > 0:
            return int(value)
        if default is not None:
            return default
        raise ValueError(f"the GGUF file gives no {arch}.{key}, which SiliconBench needs to "
                         "size the model.")
    hidden, heads = size("embedding_length"), size("attention.head_count")
    tokens = fields.get("tokenizer.ggml.tokens.count") or 0
    vocab = size("vocab_size", tokens if isinstance(tokens, int) else 0)
    if not vocab:
        raise ValueError("the GGUF file gives no vocabulary size, which SiliconBench needs "
                         "to size the model.")
    experts = size("expert_count", 0)
    return checked(ModelShape(
        family=GGUF_FAMILY.get(arch, arch), layers=size("block_count"), hidden=hidden,
        heads=heads, kv_heads=size("attention.head_count_kv", heads),
        head_dim=size("attention.key_length", hidden // heads),
        ffn=size("feed_forward_length", 4 * hidden), vocab=vocab,
        tied="output.weight" not in tensor_names,
        rope_theta=_float32(fields.get(f"{arch}.rope.freq_base"), 10000.0),
        rms_eps=_float32(fields.get(f"{arch}.attention.layer_norm_rms_epsilon"), 1e-6),
        max_positions=size("context_length", 4096), experts=experts,
        active_experts=size("expert_used_count", 0) if experts else 0,
        expert_ffn=size("expert_feed_forward_length", 0) if experts else 0,
        kv_latent=size("attention.kv_lora_rank", 0)), "the GGUF file")


def _float32(value, default: float) -> float:
    """A GGUF float (stored as float32) at the 7 digits float32 holds: 1e-05, not
    9.999999747378752e-06."""
    return float(f"{float(value):.7g}") if isinstance(value, (int, float)) else default


# The largest of each size a model file may give: far past any published model (Llama 3.1
# 405B: 126 layers, hidden 16384, 128 heads; Gemma 3: a 262,144-token vocabulary; DeepSeek-V3:
# 256 experts), low enough that no size SiliconBench computes from them is absurd.
BOUNDS = {"layers": 4096, "hidden": 1 << 20, "heads": 4096, "kv_heads": 4096,
          "head_dim": 1 << 16, "ffn": 1 << 24, "vocab": 1 << 24, "max_positions": 1 << 31,
          "experts": 65536, "active_experts": 65536, "expert_ffn": 1 << 24}


def checked(shape: ModelShape, source: str) -> ModelShape:
    """`shape` when every size is one a model can have; ValueError with one sentence
    otherwise (before anything is computed from it: a layer count of 2^32 is refused, not
    summed)."""
    if isinstance(shape.heads, int) and isinstance(shape.hidden, int) and \
            shape.heads > shape.hidden > 0:
        raise ValueError(f"{source} gives {shape.heads} attention heads for a hidden size of "
                         f"{shape.hidden}; a model has at most one head per dimension.")
    for name, most in BOUNDS.items():
        value = getattr(shape, name)
        if not isinstance(value, int) or isinstance(value, bool) or value > most or \
                value < (0 if name in ("experts", "active_experts", "expert_ffn") else 1):
            raise ValueError(f"{source} gives {name.replace('_', ' ')} {_shown(value)}, which "
                             f"no model has (SiliconBench takes 1 to {most:,}).")
    for name in ("rope_theta", "rms_eps"):
        value = getattr(shape, name)
        if not isinstance(value, float) or not 0 < value < float("inf"):
            raise ValueError(f"{source} gives {name.replace('_', ' ')} {_shown(value)}, not "
                             "a positive number.")
    if shape.kv_heads > shape.heads or shape.heads % shape.kv_heads:
        raise ValueError(f"{source} gives {shape.kv_heads} key/value heads for "
                         f"{shape.heads} attention heads; the heads must be a whole multiple "
                         "of the key/value heads.")
    if shape.moe and not 1 <= shape.active_experts <= shape.experts or \
            shape.moe and not shape.expert_ffn:
        raise ValueError(f"{source} gives {shape.experts} experts, {shape.active_experts} a "
                         f"token, of width {shape.expert_ffn}: a mixture needs 1 to "
                         f"{shape.experts} a token and a width.")
    return shape


def _real(value, key: str, default: float) -> float:
    """A positive finite number of a config.json (None: `default`); ValueError otherwise."""
    import math
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or value <= 0:
        raise ValueError(f"config.json's {key} is {_shown(value)}, not a positive number.")
    return float(value)


def _scaling(value: dict | None) -> dict | None:
    """rope_scaling as engines read it: names to numbers, words or lists of numbers."""
    if value is None:
        return None
    for k, v in value.items():
        ok = isinstance(v, (int, float, str, type(None))) or isinstance(v, list) and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in v[:4096]) \
            and len(v) <= 4096
        if not ok:
            raise ValueError(f"config.json's rope_scaling gives {str(k)[:40]} as "
                             f"{_shown(v)}, which no RoPE scaling takes.")
    factor = value.get("factor")
    if factor is not None:
        _real(factor, "rope_scaling factor", 1.0)
    return value


def _shown(value) -> str:
    """A value as a sentence shows it: short, whatever it is."""
    kinds = {dict: "a JSON object", list: "a JSON array"}
    text = repr(value) if isinstance(value, (int, float, str, bool, type(None))) else \
        kinds.get(type(value), type(value).__name__)
    return text if len(text) <= 40 else text[:37] + "..."
