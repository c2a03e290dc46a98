"""Writes siliconbench/resources/model_sizes.json: what siliconbench.core.estimate needs to know
of every model train, memory, scaling and infer build, counted from the models themselves, so
the estimate (which runs where no framework is imported: the app, the command before its
child) can refuse a run that cannot fit before it starts. Run again after upgrading torch,
torchvision or transformers; tests/core/test_estimate_workloads.py checks it against the
installed ones in a child process.

Each model is built on torch's meta device (no memory, no arithmetic: shapes only) with the
settings the runs build it with (siliconbench.core.frameworks.torch.models):

- params: the number of parameters (the sum of every parameter's numel).
- saved_bytes: float32 bytes per sample that a training forward keeps for the backward
  (torch.autograd.graph.saved_tensors_hooks sees every saved tensor; each storage counted
  once, the parameters left out): the activations a training step holds at its peak.
- output_bytes: float32 bytes per sample of the largest output of any one module in an
  inference forward (eval mode, no gradients): what inference holds at a time is a few of them.
- forward_flops: FLOPs per sample of one forward (torch.utils.flop_counter, which counts
  matmuls and convolutions).

CNNs are measured at 224x224 pixels (a run at another size scales them by the pixels). The
encoders are measured at 1 and 2 layers and 64 and 128 tokens: a layer's saved tensors are
a*L + c*L^2 bytes (its projections and the attention matrix), the embeddings' and head's
e*L + k, so the four figures give every length and depth exactly.

    python scripts/model_sizes.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "siliconbench" / "resources" / "model_sizes.json"
IMAGE = 224
ENCODER_POINTS = [(1, 64), (1, 128), (2, 64), (2, 128)]     # (layers, tokens)


def per_sample(model, make_input) -> dict:
    """The figures of one model (built on the meta device) for inputs of make_input(n)."""
    import torch
    from torch.multiprocessing.reductions import StorageWeakRef
    from torch.utils.flop_counter import FlopCounterMode
    n = 2                                   # batch norm in training needs two samples
    weights = {StorageWeakRef(p.untyped_storage()) for p in model.parameters()}
    saved: dict = {}

    def pack(t):
        key = StorageWeakRef(t.untyped_storage())
        if key not in weights:
            saved[key] = t.untyped_storage().nbytes()
        return t
    model.train()
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            model(make_input(n))
    except Exception as e:      # inception_v3's auxiliary head trains at 299 pixels only
        print(f"{type(model).__name__} does not train at this size: {e}", file=sys.stderr)
        saved = None
    largest = [0]

    def watch(module, args, out):
        outs = out if isinstance(out, (tuple, list)) else [out]
        for o in outs:
            if isinstance(o, torch.Tensor):
                largest[0] = max(largest[0], o.numel() * o.element_size())
    model.eval()
    hooks = [m.register_forward_hook(watch) for m in model.modules()]
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model(make_input(n))
    for h in hooks:
        h.remove()
    return {"params": sum(p.numel() for p in model.parameters()),
            "saved_bytes": None if saved is None else sum(saved.values()) // n, "output_bytes": largest[0] // n,
            "forward_flops": counter.get_total_flops() // n}


def vision(name: str) -> dict:
    import torch
    import torchvision

    from siliconbench.core.kit.training import NUM_CLASSES
    try:
        with torch.device("meta"):
            model = torchvision.models.get_model(name, weights=None, num_classes=NUM_CLASSES)
    except NotImplementedError:     # RegNet's initialisation copies data: built, then moved
        model = torchvision.models.get_model(name, weights=None, num_classes=NUM_CLASSES)
        model = model.to("meta")
    return per_sample(model, lambda n: torch.randn(n, 3, IMAGE, IMAGE, device="meta"))


def encoder(name: str) -> dict:
    import torch

    from siliconbench.core.frameworks.torch.models import transformer_task
    points = []
    for layers, tokens in ENCODER_POINTS:
        task = transformer_task(name, tokens, layers)
        with torch.device("meta"):
            model = task.build()
        figures = per_sample(model, lambda n, t=tokens: torch.zeros(n, t, dtype=torch.long,
                                                                     device="meta"))
        points.append({"layers": layers, "tokens": tokens, **figures})
    return {"points": points}


def measured() -> dict:
    import torch
    import torchvision
    import transformers
    names = json.loads((ROOT / "siliconbench" / "resources" / "torchvision_models.json")
                       .read_text())["models"]
    vision_sizes = {}
    for name in names:
        try:
            vision_sizes[name] = vision(name)
        except Exception as e:          # said, and left out: the estimate then has no figure
            print(f"{name}: {e}", file=sys.stderr)
    return {"torch": torch.__version__, "torchvision": torchvision.__version__,
            "transformers": transformers.__version__, "image_size": IMAGE,
            "vision": vision_sizes,
            "encoders": {name: encoder(name) for name in ("distilbert", "bert-large")}}


def main() -> None:
    sys.path.insert(0, str(ROOT))
    sizes = measured()
    OUT.write_text(json.dumps(sizes, indent=1) + "\n")
    print(f"Wrote {len(sizes['vision'])} vision models and {len(sizes['encoders'])} encoders "
          f"to {OUT}")


if __name__ == "__main__":
    main()
