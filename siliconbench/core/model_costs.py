"""What a model costs a run, counted from the model itself (no framework imported): its
parameters, the bytes a training step or an inference batch holds, its FLOPs per sample
(siliconbench/resources/model_sizes.json, scripts/model_sizes.py), for siliconbench.core.estimate's
train, memory, scaling, infer and mlp estimates."""

from __future__ import annotations

import functools
from dataclasses import dataclass

# A process with its framework imported holds this much before it builds anything: a Python
# with torch imported read 509 MB of peak RSS here (Linux x86-64, torch 2.x), 749 MB with
# transformers' BERT too. A CPU run's memory is its process's, so a CPU estimate adds it per
# process (a GPU's peak allocation does not include it).
PROCESS_BYTES = 512 * 2**20
# Under mixed precision most saved activations are float16 or bfloat16 (convolutions, matmuls
# and what follows them), so about half their float32 size: the H200's resnet50 at batch 128,
# mixed, peaked at 6.13 GB allocated (tests/data/h200/h200-train.json) where this gives 5.7.
MIXED_ACTIVATION_SHARE = 0.5
# Inference holds a few module outputs per sample at a time (a block's input, its output and
# a residual branch), about this many of the largest.
LIVE_OUTPUTS = 3
OPTIMIZER_SLOTS = {"sgd": 0, "adam": 2}      # state tensors per weight (SGD without momentum)
MLP_INPUTS, MLP_CLASSES = 32 * 32 * 3, 10    # the scaling workload's CIFAR-10 MLP


@dataclass(frozen=True)
class ModelSize:
    """What one sample costs a model, counted from the model itself
    (siliconbench/resources/model_sizes.json, scripts/model_sizes.py): its parameters, the
    float32 bytes a training forward keeps for the backward and the largest module output of
    an inference forward, per sample, its forward FLOPs per sample, and its input's bytes."""
    params: int
    saved_bytes: float | None
    output_bytes: float
    forward_flops: float
    input_bytes: float
    optimizer: str

    def train_bytes(self, batch: int, mixed: bool) -> float:
        """A training step's peak: weights, their gradients and the optimizer's state
        (float32, 4 bytes each: params x 4 x (2 + slots)), plus per sample the activations
        kept for the backward (half under mixed precision) and the ROTATING_BATCHES inputs
        the step cycles through."""
        from siliconbench.core.kit.training import ROTATING_BATCHES
        weights = self.params * 4 * (2 + OPTIMIZER_SLOTS[self.optimizer])
        kept = (self.saved_bytes or 0) * (MIXED_ACTIVATION_SHARE if mixed else 1)
        return weights + batch * (kept + ROTATING_BATCHES * self.input_bytes)

    def infer_bytes(self, batch: int, mixed: bool) -> float:
        """An inference batch's peak: the weights, and per sample the inputs made on the
        device and LIVE_OUTPUTS of the largest module output."""
        from siliconbench.core.kit.training import ROTATING_BATCHES
        live = LIVE_OUTPUTS * self.output_bytes * (MIXED_ACTIVATION_SHARE if mixed else 1)
        return self.params * 4 + batch * (live + ROTATING_BATCHES * self.input_bytes)


@functools.cache
def _sizes_table() -> dict:
    import json

    from siliconbench import resources
    return json.loads(resources.read_text("model_sizes.json"))


def model_size(params: dict) -> ModelSize | None:
    """The model of a train, memory, scaling or infer run at its image size, sequence length
    and layers; None for a model the table does not have. A CNN's activations and FLOPs grow
    with its pixels; an encoder's from its four measured points (see scripts/model_sizes.py):
    per layer a*L + c*L^2, the rest e*L + k, in L tokens."""
    from siliconbench.core.kit.encoders import ENCODERS
    table = _sizes_table()
    name = params["model"]
    if name == "mlp":
        # Linear layers: weights and biases; per sample the input and each hidden layer's
        # output before and after its ReLU kept for the backward.
        widths = [MLP_INPUTS] + list(params.get("widths") or [3000, 1000]) + [MLP_CLASSES]
        weights = sum(a * b + b for a, b in zip(widths, widths[1:]))
        hidden = sum(widths[1:-1]) * 4
        return ModelSize(weights, 2 * hidden + MLP_INPUTS * 4, hidden, 2 * weights,
                         MLP_INPUTS * 4, "sgd")
    if name in ENCODERS:
        return _encoder_size(table["encoders"][name]["points"],
                             params.get("layers") or ENCODERS[name].layers,
                             params.get("seq_len") or 128)
    found = table["vision"].get(name)
    if found is None:
        return None
    pixels = (params.get("image_size") or table["image_size"]) ** 2
    scale = pixels / table["image_size"] ** 2
    saved = found["saved_bytes"]
    return ModelSize(found["params"], None if saved is None else saved * scale,
                     found["output_bytes"] * scale, found["forward_flops"] * scale,
                     3 * pixels * 4, "sgd")


def _encoder_size(measured: list[dict], layers: int, tokens: int) -> ModelSize:
    """An encoder of `layers` layers on `tokens` tokens from its figures measured at two
    depths (l, l+1) and two lengths (t1, t2): a layer's share is the difference between the
    depths, a*L + c*L^2 through the two lengths; the rest (embeddings, head) e*L + k. Its
    parameters do not depend on the length: the first depth's and a layer's per layer."""
    points = {(p["layers"], p["tokens"]): p for p in measured}
    (depth, t1), (_, t2) = sorted(points)[:2]

    def at(key: str) -> float:
        def layer(t: int) -> float:
            return points[(depth + 1, t)][key] - points[(depth, t)][key]

        def rest(t: int) -> float:
            return points[(depth, t)][key] - depth * layer(t)
        c = (layer(t2) / t2 - layer(t1) / t1) / (t2 - t1)
        a = layer(t1) / t1 - c * t1
        e = (rest(t2) - rest(t1)) / (t2 - t1)
        return layers * (a * tokens + c * tokens**2) + e * tokens + rest(t1) - e * t1
    first, deeper = points[(depth, t1)]["params"], points[(depth + 1, t1)]["params"]
    return ModelSize(first + (layers - depth) * (deeper - first), at("saved_bytes"),
                     at("output_bytes"), at("forward_flops"), tokens * 8, "adam")
