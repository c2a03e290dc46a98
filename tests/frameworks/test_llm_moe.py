"""Mixtures of experts: the Qwen3-30B-A3B preset's sizes against its model card and against
transformers' own model of its config, the decode bound counting the bytes a token reads (an
independent count from the built model: the experts' tensors at k/E, everything else once),
and the tiny mixture built and run by every engine with the shape's exact sizes."""

import json

import pytest
import torch

from siliconbench.core.kit import llm_shapes as shapes
from siliconbench.core.workloads import llm
from tests.helpers.cli_processes import sb
from tests.helpers.framework_runs import cpu_read, store_a_triad  # noqa: F401  (a fixture)

MOE = llm.PRESETS["qwen3-30b-a3b"]
TINY_MOE = llm.PRESETS["tiny-moe"]


def test_the_preset_is_30_5_billion_with_3_3_billion_active():
    # Qwen/Qwen3-30B-A3B model card: "30.5B in total and 3.3B activated".
    assert round(MOE.parameters / 1e9, 1) == 30.5
    # 3.353B by the shape (transformers' count below agrees to the weight): the card cuts
    # it to 3.3B rather than rounding it.
    assert 3.3e9 <= MOE.active_parameters < 3.4e9


def meta_model(shape):
    from siliconbench.core.frameworks.torch import llm as torch_llm
    with torch.device("meta"):
        return torch_llm.model_class(shape)(torch_llm.config(shape))


def test_a_decode_step_reads_the_active_experts_and_everything_else_once():
    """An independent count from transformers' Qwen3-MoE built from the config (on the meta
    device: sizes only): each tensor's elements at bfloat16, an expert tensor at 8/128 of its
    size, the embedding table left out (one row is read); plus the KV cache."""
    model = meta_model(MOE)
    assert sum(p.numel() for p in model.parameters()) == MOE.parameters
    k_over_e = MOE.active_experts / MOE.experts
    read = 0.0
    for name, p in model.named_parameters():
        if "embed_tokens" in name:
            continue
        read += 2 * p.numel() * (k_over_e if ".experts." in name else 1)
    steps = 128
    kv = shapes.kv_bytes(MOE, "bfloat16", (steps + 1) / 2)
    assert shapes.bytes_per_decode_step(MOE, "bfloat16", 1, 0, steps) == pytest.approx(
        read + kv, rel=1e-9)
    # About 3.3B weights less the 0.31B embedding, in bfloat16: ~6 GB, not the 61 GB stored.
    assert 5.5e9 < read < 6.5e9 < 0.15 * shapes.weight_bytes(MOE, "bfloat16")


def test_a_batch_reads_more_experts_up_to_all_of_them():
    one, eight, many = (MOE.experts_read(b) for b in (1, 8, 4096))
    assert one == MOE.active_experts
    assert one < eight < MOE.experts
    assert many == pytest.approx(MOE.experts)
    dense = llm.PRESETS["llama-3.2-1b"]
    assert dense.experts_read(8) == 0 and shapes.experts_share(dense, 8) == 1.0


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_torch_builds_the_tiny_mixture_with_the_shape_s_sizes(dtype):
    from siliconbench.core.frameworks.torch import llm as torch_llm
    lm = torch_llm.TorchLM(TINY_MOE, dtype, torch.device("cpu"))
    assert lm.parameters == TINY_MOE.parameters
    assert lm.stored_bytes == shapes.weight_bytes(TINY_MOE, dtype)
    assert lm.cache_gap(12) <= llm.CACHE_TOLERANCE[dtype]


@pytest.mark.usefixtures("short_protocol")
@pytest.mark.parametrize("framework, dtype", [("torch", "float32"), ("mlx", "q4")])
def test_a_mixture_runs_and_its_bound_says_what_it_counts(tmp_path, cpu_read, framework, dtype):
    """The bound's note, not the numbers: the short protocol, over a stored CPU read bound.
    (Each made a bandwidth run at 8 MB arrays, 5 CPU-s, which the llm run then passed over
    for its own at 256 MB: a bound is read past 4 times the last-level cache.)"""
    gb_s = store_a_triad(tmp_path, cpu_read)
    r = sb("run", "llm", "--framework", framework, "--device", "cpu", "--preset", "tiny-moe",
           "--prompts", "8", "--depths", "0", "--gen-tokens", "4", "--dtype", dtype,
           "--quick", "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["status"] == "ok"
    assert rec["settings"]["memory_bound"]["gb_per_s"] == gb_s
    (bound,) = [row for row in rec["rows"] if row["metric"] == "decode_roofline"]
    assert "of the 8 experts a layer holds" in bound["note"]
    assert "the 2 that 1 token(s) choosing 2 each read" in bound["note"]
    assert rec["rows"][0]["value"] > 0


@pytest.mark.parametrize("preset", sorted(llm.PRESETS))
def test_a_config_json_gives_back_the_preset_s_shape(preset):
    """The shape read from the config.json each engine's own writer makes of a preset
    (transformers 5's rope_parameters, mlx-lm's rope_theta/rope_scaling) is the preset, and
    building the config leaves the preset as it was."""
    from siliconbench.core.frameworks.mlx import llm as mlx_llm
    from siliconbench.core.frameworks.torch import llm as torch_llm
    shape = llm.PRESETS[preset]
    before = json.dumps(shape.rope_scaling, sort_keys=True)
    assert shapes.shape_from_config(torch_llm.config(shape).to_dict()) == shape
    assert shapes.shape_from_config(mlx_llm.model_args(shape)) == shape
    # Both are the one mapping's (kit.llm_shapes.config_of), which reads back as the shape.
    assert shapes.shape_from_config(shapes.config_of(shape)) == shape
    assert json.dumps(shape.rope_scaling, sort_keys=True) == before


def test_a_config_without_a_size_is_one_sentence():
    with pytest.raises(ValueError, match="config.json gives no num_hidden_layers"):
        shapes.shape_from_config({"model_type": "llama", "hidden_size": 64,
                                  "num_attention_heads": 4, "vocab_size": 10})
