"""The published models' shapes the llm workload offers as presets (PRESETS, from each model's
config.json on the Hugging Face hub), and the parameter counts their publishers give, which
tests hold each preset's formula to."""

from __future__ import annotations

from siliconbench.core.kit.llm_shapes import ModelShape

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
