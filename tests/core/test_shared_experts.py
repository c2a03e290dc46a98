"""A mixture's shared experts are read by every token: the bytes a decode step reads count them
in full, and only the routed experts at the share a batch's tokens choose. DeepSeek's
`mlp.shared_experts.*` matched the routed pattern (`experts`) and were scaled by k/E as if
routed; Qwen2-MoE's `shared_expert` and GGUF's `_shexp` never did. The tensors are those of a
real transformers DeepSeek-V3 model, built on the meta device (sizes, no weights). MLA models'
caches are not what kv_bytes describes: their decode gets no bound, and says why."""

import pytest
import torch

from siliconbench.core.kit import llm_shapes as shapes

transformers = pytest.importorskip("transformers")

TINY_DEEPSEEK = dict(vocab_size=256, hidden_size=64, intermediate_size=128,
                     moe_intermediate_size=32, num_hidden_layers=3, num_attention_heads=4,
                     num_key_value_heads=4, n_routed_experts=8, num_experts_per_tok=2,
                     n_shared_experts=1, first_k_dense_replace=1, kv_lora_rank=16,
                     q_lora_rank=24, qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=16,
                     n_group=1, topk_group=1)


@pytest.mark.parametrize("version", ["V2", "V3"])
def test_deepseek_shared_experts_are_counted_in_full(version):
    config = getattr(transformers, f"Deepseek{version}Config")(**TINY_DEEPSEEK)
    with torch.device("meta"):
        model = getattr(transformers, f"Deepseek{version}ForCausalLM")(config)
    tensors = {name: p.numel() * 2 for name, p in model.named_parameters()}
    shared = {n: b for n, b in tensors.items() if ".shared_experts." in n}
    routed = {n: b for n, b in tensors.items() if ".experts." in n}
    assert shared and routed and not set(shared) & set(routed)
    shape = shapes.shape_from_config(config.to_dict())
    assert (shape.experts, shape.active_experts, shape.kv_latent) == (8, 2, 16)
    share = shapes.experts_share(shape, 1)
    assert share == pytest.approx(2 / 8)
    assert not shape.tied        # the embedding table: its token's row only, not counted
    rest = sum(b for n, b in tensors.items() if n not in routed and "embed_tokens" not in n)
    kv = shapes.kv_bytes(shape, "bfloat16", 0 + (1 + 1) / 2)
    got = shapes.tensors_step_bytes(shape, tensors, "bfloat16", 1, 0, 1)
    # every other tensor in full, the shared experts too; the routed experts at 2 of 8
    assert got == pytest.approx(rest + share * sum(routed.values()) + kv)


@pytest.mark.parametrize("name, routed", [
    ("model.layers.1.mlp.experts.gate_up_proj", True),
    ("model.layers.1.mlp.experts.3.down_proj.weight", True),
    ("model.layers.1.mlp.switch_mlp.gate_proj.weight", True),          # mlx-lm
    ("blk.1.ffn_down_exps.weight", True),                              # GGUF
    ("model.layers.1.mlp.shared_experts.up_proj.weight", False),       # DeepSeek
    ("model.layers.1.mlp.shared_expert.up_proj.weight", False),        # Qwen2-MoE
    ("model.layers.1.mlp.shared_expert_gate.weight", False),
    ("blk.1.ffn_down_shexp.weight", False),                            # GGUF
])
def test_which_tensors_are_routed(name, routed):
    assert bool(shapes.EXPERTS.search(name)) is routed


def test_an_mla_model_s_decode_has_no_bound_and_says_why():
    from siliconbench.core.workloads import llm
    config = transformers.DeepseekV3Config(**TINY_DEEPSEEK)
    shape = shapes.shape_from_config(config.to_dict())
    assert "multi-head latent" in shapes.kv_refusal(shape)
    assert shapes.kv_refusal(llm.PRESETS["llama-3.1-8b"]) is None

    class Engine:
        def step_bytes(self, batch, depth, steps):
            return 1e6

        def decode_note(self, loop):
            return "eager decode loop"

        def placement(self):
            return None

    m = type("M", (), {"noisy": False, "rates": lambda self, work: [10.0, 11.0, 12.0]})()
    decoded = llm.Decoded(m, "eager", None)
    rows = llm._decode_rows(Engine(), shape, {"batch": 1, "depth": 0, "gen_tokens": 4}, [],
                            llm.Ceiling(100.0, "a triad", llm.MEASURED_TRIAD), decoded)
    assert [r.metric for r in rows] == ["decode_tokens_per_s"]
    assert rows[0].pct_of_peak is None and "above_peak" not in rows[0].flags
    assert "no memory bound: its attention is multi-head latent" in rows[0].note
