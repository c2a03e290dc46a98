"""The memory an llm run plans for a context of N positions: the weights, the cache, the
feed-forward's activations and what the engine's attention holds at once on its device. The
score matrix (every head's N x N, float32) is counted only where the engine holds it; a fused
kernel (PyTorch's SDPA on CUDA and on a CPU, MLX's on a Metal GPU) holds none, and llama.cpp
holds a ubatch's rows of it. An NVIDIA H100 refused Llama-3.2-1B's depth-32768 decode row for
138 GB of scores that flash attention never makes."""

import json
import subprocess
import sys
from dataclasses import replace
from types import SimpleNamespace

import pytest

from siliconbench.core.estimate import estimate
from siliconbench.core.frameworks import DeviceInfo, implementation
from siliconbench.core.kit import llm_shapes as shapes
from siliconbench.core.kit.headroom import fits
from siliconbench.core.workloads import llm
from tests.helpers.cli_processes import ROOT
from tests.helpers.h200_records import h100

PRESET = "llama-3.2-1b"
SHAPE = llm.PRESETS[PRESET]
GEN = next(p.default for p in llm.WORKLOAD.params if p.name == "gen_tokens")
TOKENS = 32768 + GEN                       # decode from depth 32768
# The H100 the row was refused on, as its own llama-3.2-1b record gives its memory.
H100_MEMORY = h100("h100-llm1b")[0].machine["gpu_memory_bytes"]


def engine(framework: str, device_id: str, dtype: str = "bfloat16"):
    cls = implementation(framework, "llm").Engine
    params = {p.name: p.default for p in llm.WORKLOAD.params} | {"preset": PRESET,
                                                                  "dtype": dtype}
    kind = device_id.split(":")[0]
    ctx = SimpleNamespace(device=SimpleNamespace(type=kind), device_id=device_id,
                          framework=framework)
    return cls(ctx, SHAPE, params)


def held(framework: str, device: str, shape=SHAPE, tokens: int = TOKENS):
    """What the framework's engine says its attention holds on the device type."""
    return implementation(framework, "llm").Engine.attention_bytes(shape, "bfloat16", device,
                                                                    1, tokens)


def test_the_1b_model_at_32k_positions_fits_an_h100_with_torch():
    need = engine("torch", "cuda:0").memory_needed(1, TOKENS)
    assert fits(need, H100_MEMORY)
    # not for want of counting: the weights, the cache, the feed-forward and the mask are in
    mask = TOKENS * TOKENS * (1 + 2)
    assert held("torch", "cuda") == mask
    assert need > shapes.weight_bytes(SHAPE, "bfloat16") \
        + shapes.kv_bytes(SHAPE, "bfloat16", TOKENS) + mask
    # the scores alone would not have fitted
    assert not fits(shapes.score_bytes(SHAPE, 1, TOKENS, TOKENS), H100_MEMORY)


def h100_device(framework: str, device_id: str) -> DeviceInfo:
    return DeviceInfo(framework, device_id, "NVIDIA H100 80GB HBM3", "gpu", H100_MEMORY)


def test_the_estimate_plans_the_32k_decode_on_an_h100_as_the_run_does():
    params = {"preset": PRESET, "dtype": "bfloat16", "depths": [0, 32768]}
    est = estimate("llm", params, h100_device("torch", "cuda:0"))
    assert est.too_big == [] and est.points == len(llm.DEFAULT_PROMPTS) + 2
    assert est.peak_bytes == int(engine("torch", "cuda:0").memory_needed(1, 32768 + GEN))
    # a device that counts the scores skips it, as its run does
    est = estimate("llm", params, h100_device("torch", "mps"))
    assert [t for t in est.too_big if "decode from depth 32768" in t]


@pytest.mark.parametrize("framework, device", [
    ("torch", "mps"),               # SDPA on MPS: not established
    ("mlx", "cpu"),                 # MLX's CPU falls back to a matrix product
    ("mlx", "gpu"),                 # on Linux: MLX's CUDA GPU, not established
])
def test_where_no_fused_kernel_is_established_the_scores_are_counted(framework, device):
    assert held(framework, device) is None
    need = engine(framework, device).memory_needed(1, TOKENS)
    assert need == shapes.memory_needed(SHAPE, "bfloat16", 1, TOKENS)
    assert need > shapes.score_bytes(SHAPE, 1, TOKENS, TOKENS)
    assert not fits(need, H100_MEMORY)


def test_a_torch_model_whose_heads_no_fused_kernel_takes_counts_its_scores():
    """CUDA's flash kernel takes head_dim up to 256; past it SDPA may compute the scores."""
    assert held("torch", "cuda", replace(SHAPE, head_dim=512)) is None
    assert held("torch", "cuda", replace(SHAPE, family="gemma2")) is None


def test_mlx_on_a_metal_gpu_counts_no_scores_for_the_head_sizes_its_kernel_takes(
        monkeypatch):
    from siliconbench.core.frameworks.mlx import llm as mlx_llm
    monkeypatch.setattr(mlx_llm.sys, "platform", "darwin")
    assert held("mlx", "gpu") == 0
    assert fits(engine("mlx", "gpu").memory_needed(1, TOKENS), H100_MEMORY)
    assert held("mlx", "gpu", replace(SHAPE, head_dim=96)) is None    # its fallback's
    assert held("mlx", "cpu") is None


def test_llama_cpp_counts_one_ubatch_of_scores():
    from siliconbench.core.frameworks.llamacpp.llm import N_UBATCH
    assert held("llamacpp", "cuda") == shapes.score_bytes(SHAPE, 1, N_UBATCH, TOKENS) \
        + N_UBATCH * TOKENS * 4
    assert held("llamacpp", "cuda") < shapes.score_bytes(SHAPE, 1, TOKENS, TOKENS) / 32
    # a prompt shorter than a ubatch: its own rows
    assert held("llamacpp", "cpu", tokens=100) == shapes.score_bytes(SHAPE, 1, 100, 100) \
        + 100 * 100 * 4


PEAK = """
import dataclasses, json, resource, torch
from siliconbench.core.frameworks.torch.llm import TorchLM
from siliconbench.core.workloads.llm import PRESETS
shape = dataclasses.replace(PRESETS["llama-3.2-1b"], layers=1, hidden=1024, heads=16,
                            kv_heads=4, head_dim=64, ffn=256, vocab=256)
torch.set_num_threads(1)
lm = TorchLM(shape, "float32", torch.device("cpu"))
call = lm.prefill(1, {n})
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
call()
rise = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
print(json.dumps({{"rise": rise, "heads": shape.heads}}))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux only")
def test_torch_s_attention_on_a_cpu_holds_no_score_matrix():
    """The CPU declaration's ground: a one-layer prefill of 4096 positions through the
    engine's own path (transformers' SDPA, a static cache) raises the process's peak resident
    memory by far less than its 1 GiB of float32 scores (0.1 GiB with torch 2.14)."""
    n = 4096
    r = subprocess.run([sys.executable, "-c", PEAK.format(n=n)], capture_output=True,
                       text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    found = json.loads(r.stdout.strip().splitlines()[-1])
    scores = found["heads"] * n * n * 4
    assert found["rise"] < scores / 4
