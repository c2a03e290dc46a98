"""What a model folder's config.json claims, checked against itself and its weights before any
run starts (kit/model_files.py's describe_folder): code asked for anywhere in the config
(auto_map inside text_config too), and an MLX quantisation that the safetensors headers bear
out rather than one config.json alone declares; and a GGUF file's tensors against the shape its
metadata gives, as llama.cpp checks them when it loads (llama-model-loader's "wrong shape",
"missing tensor"). Each answer is one sentence or ''."""

from __future__ import annotations

import re

CODE_KEYS = ("auto_map", "model_file")
MLX_BITS = (2, 3, 4, 5, 6, 8)            # what mlx.core.quantize packs
MLX_GROUPS = (32, 64, 128)
MAX_NESTING = 32                          # a config's sub-configs: text_config, vision_config


def asks_for_code(config: dict, depth: int = 0) -> bool:
    """Whether the config, or any config nested in it (a multimodal model's text_config,
    vision_config...), names code of the model's own (auto_map, model_file,
    trust_remote_code); a config nested past MAX_NESTING counts as asking."""
    if depth > MAX_NESTING:
        return True
    if any(k in config for k in CODE_KEYS) or config.get("trust_remote_code"):
        return True
    return any(asks_for_code(v, depth + 1) for v in config.values() if isinstance(v, dict))


def packed(shapes: dict[str, tuple[list[int], str]]) -> list[tuple[int, int]]:
    """(packed uint32 columns, scale columns) of every MLX-quantised matrix: a U32 `.weight`
    beside its `.scales`."""
    out = []
    for key, (shape, dtype) in shapes.items():
        if dtype == "U32" and key.endswith(".weight") and len(shape) >= 2:
            scales = shapes.get(key[:-len(".weight")] + ".scales")
            if scales and len(scales[0]) >= 2:
                out.append((shape[-1], scales[0][-1]))
    return out


def quant_mismatch(quant, shapes: dict[str, tuple[list[int], str]]) -> str:
    """Why the MLX quantisation config.json declares (`quant`: its "quantization", None when
    it declares none) is not the one the weights hold, one sentence; '' when they agree."""
    matrices = packed(shapes)
    if quant is None:
        if matrices:
            return ("its weights are quantised (packed uint32 matrices with .scales) but "
                    "config.json does not say how, so no engine can load them.")
        return ""
    bits, group = quant.get("bits"), quant.get("group_size", 64)
    if bits not in MLX_BITS or group not in MLX_GROUPS or isinstance(bits, bool) \
            or isinstance(group, bool):
        return (f"config.json's quantization gives bits {str(bits)[:20]} and group size "
                f"{str(group)[:20]}; MLX packs {', '.join(map(str, MLX_BITS))} bits in groups "
                f"of {', '.join(map(str, MLX_GROUPS))}.")
    if not matrices:
        return (f"config.json says its weights are {bits}-bit (MLX) but no safetensors file "
                "holds a quantised matrix (packed uint32 with .scales).")
    # a row of `inputs` weights: inputs * bits / 32 packed columns, inputs / group scales
    if not any(cols * 32 == scales * group * bits for cols, scales in matrices):
        return (f"config.json says {bits}-bit in groups of {group} but no matrix is packed "
                "so (its columns and scales give other figures).")
    return ""


BLOCK = re.compile(r"^blk\.(\d+)\.")


def gguf_mismatch(tensors, shape) -> str:
    """Why llama.cpp would refuse a GGUF file whose `tensors` (kit/gguf_read.Tensor) do not
    match the `shape` its metadata gives (kit/llm_shapes.ModelShape), one sentence; ''
    when they match: the embedding (and output) table is hidden x vocabulary, and every
    layer up to block_count holds tensors, none past it."""
    dims = {t.name: t.dims for t in tensors}
    for name in ("token_embd.weight", "output.weight"):
        if name in dims and tuple(dims[name][:2]) != (shape.hidden, shape.vocab):
            got = " x ".join(map(str, dims[name]))
            return (f"its {name} is {got} but its metadata gives hidden size {shape.hidden} "
                    f"and vocabulary {shape.vocab}, so llama.cpp would refuse it.")
    blocks = {int(m.group(1)) for name in dims if (m := BLOCK.match(name))}
    missing = next((i for i in range(shape.layers) if i not in blocks), None)
    if missing is not None:
        return (f"its metadata gives {shape.layers} layers but it holds no tensors of layer "
                f"{missing}, so llama.cpp would refuse it.")
    extra = max(blocks, default=-1)
    if extra >= shape.layers:
        return (f"its metadata gives {shape.layers} layers but it holds tensors of layer "
                f"{extra}, so llama.cpp would refuse it.")
    return ""
