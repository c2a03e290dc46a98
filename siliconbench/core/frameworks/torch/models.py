"""PyTorch's models and what its parts of train, infer and mlp share: models built from code,
synthetic data, mixed precision, the training step, FLOP counts, and the trust checks (the
--check twin on the CPU, CPU fallback). Imported only inside a run (it imports torch)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

import torch
from torch import nn

from siliconbench.core.kit import training
from siliconbench.core.kit.training import NUM_CLASSES, OPTIMIZERS
from siliconbench.core.params import ParamError, closest
from siliconbench.core.text import clip, first_line

# ---------------------------------------------------------------- models and their data

@dataclass
class Task:
    """A model and the random data it runs on, buildable identically on any device."""
    name: str
    unit: str                                       # "img/s" or "seq/s"
    optimizer: str                                  # "sgd" or "adam", as the benchmark had it
    build: Callable[[], nn.Module]                  # a fresh model on the CPU
    inputs: Callable[[int, torch.device], torch.Tensor]
    num_classes: int
    is_image: bool

    def batch(self, n: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """Random inputs and labels, made on the device (never zeros, never constant)."""
        return self.inputs(n, device), torch.randint(0, self.num_classes, (n,), device=device)


@cache
def vision_model_names() -> tuple[str, ...]:
    import torchvision
    return tuple(sorted(torchvision.models.list_models(module=torchvision.models)))


def vision_task(name: str, image_size: int, num_classes: int = NUM_CLASSES,
                dropout: bool = True) -> Task:
    """A torchvision classifier, untrained (weights=None: nothing is downloaded)."""
    names = vision_model_names()
    if name not in names:
        near = closest(name, names)
        raise ParamError(f"Unknown model {clip(name)!r}; try {near or 'resnet50'} (any of "
                         f"torchvision's {len(names)} classification models works).")

    def build() -> nn.Module:
        import torchvision
        model = torchvision.models.get_model(name, weights=None, num_classes=num_classes)
        if not dropout:
            _remove_dropout(model)
        return model

    def images(n: int, device: torch.device) -> torch.Tensor:
        return torch.randn(n, 3, image_size, image_size, device=device)

    return Task(name, "img/s", "sgd", build, images, num_classes, is_image=True)


def transformer_task(name: str, seq_len: int, layers: int | None,
                     dropout: bool = True) -> Task:
    """DistilBERT (its default config) or BERT-Large as a sequence classifier, from code."""
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        DistilBertConfig,
        DistilBertForSequenceClassification,
    )
    if name == "distilbert":
        config = DistilBertConfig(num_labels=NUM_CLASSES)
        if layers:
            config.n_layers = layers
        if not dropout:
            config.dropout = config.attention_dropout = config.seq_classif_dropout = 0.0
        model_class = DistilBertForSequenceClassification
    elif name == "bert-large":
        config = BertConfig(hidden_size=1024, num_hidden_layers=layers or 24,
                            num_attention_heads=16, intermediate_size=4096,
                            num_labels=NUM_CLASSES)
        if not dropout:
            config.hidden_dropout_prob = config.attention_probs_dropout_prob = 0.0
            config.classifier_dropout = 0.0
        model_class = BertForSequenceClassification
    else:
        raise ParamError(f"Unknown transformer {name!r}; choose distilbert or bert-large.")
    if seq_len > config.max_position_embeddings:
        raise ParamError(f"--seq-len must be at most {config.max_position_embeddings} for "
                         f"{name}, not {seq_len}.")

    def build() -> nn.Module:
        return LogitsOnly(model_class(config))

    def tokens(n: int, device: torch.device) -> torch.Tensor:
        return torch.randint(0, config.vocab_size, (n, seq_len), device=device)

    return Task(name, "seq/s", "adam", build, tokens, NUM_CLASSES, is_image=False)


def mlp(widths: list[int], inputs: int = 32 * 32 * 3, classes: int = 10) -> nn.Sequential:
    """Flatten -> Dense(w, ReLU) for each width -> Dense(classes), initialised as Keras does
    (Glorot-uniform weights, zero biases) so accuracies match the published Keras runs."""
    layers: list[nn.Module] = [nn.Flatten()]
    for width in widths:
        layers += [nn.Linear(inputs, width), nn.ReLU()]
        inputs = width
    layers.append(nn.Linear(inputs, classes))
    for layer in layers:
        if isinstance(layer, nn.Linear):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)
    return nn.Sequential(*layers)


def sigmoid_categorical_crossentropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Keras's Dense(10, sigmoid) + categorical_crossentropy: the sigmoid outputs are scaled to
    sum to one, clipped, and the label's negative log taken."""
    p = torch.sigmoid(logits)
    p = (p / p.sum(dim=-1, keepdim=True)).clamp(1e-7, 1 - 1e-7)
    return nn.functional.nll_loss(p.log(), labels)


class LogitsOnly(nn.Module):
    """A Hugging Face classifier seen as tokens -> logits, like every other model here."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.inner(input_ids=input_ids).logits


def _remove_dropout(model: nn.Module) -> None:
    # Dropout draws from the device's own RNG, so two devices would train different networks.
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0


# ---------------------------------------------------------------- precision

def mixed_dtype(device: torch.device) -> tuple[torch.dtype | None, str | None]:
    """The autocast dtype for --precision mixed on this device, or (None, why not)."""
    if device.type == "cuda":
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    elif device.type == "mps":
        dtype = torch.float16          # bfloat16 on MPS needs macOS 14; float16 works everywhere
    else:
        dtype = torch.bfloat16         # the CPU autocast dtype
    try:
        layer = nn.Linear(8, 8).to(device)
        with torch.autocast(device.type, dtype=dtype):
            out = layer(torch.randn(2, 8, device=device))
    except (RuntimeError, NotImplementedError, ValueError) as e:
        return None, f"autocast to {dtype_name(dtype)} failed on {device}: {first_line(e)}"
    if out.dtype != dtype:
        return None, f"autocast on {device} does not compute in {dtype_name(dtype)}"
    return dtype, None


def autocast(device: torch.device, dtype: torch.dtype | None):
    return torch.autocast(device.type, dtype=dtype, enabled=dtype is not None)


def precision_label(dtype: torch.dtype | None) -> str:
    """What a row says ran: fp32, mixed-bf16 or mixed-fp16."""
    return "fp32" if dtype is None else {torch.float16: "mixed-fp16",
                                         torch.bfloat16: "mixed-bf16"}[dtype]


def dtype_name(dtype: torch.dtype | None) -> str:
    return "float32" if dtype is None else str(dtype).removeprefix("torch.")


def resolve_precision(ctx, precision: str) -> torch.dtype | None:
    """--precision fp32|mixed -> the autocast dtype (None: fp32). Where mixed is not available
    the run says so and goes on in fp32."""
    dtype = None
    if precision == "mixed":
        dtype, why = mixed_dtype(ctx.device)
        if dtype is None:
            ctx.warn(f"--precision mixed is not available on {ctx.device} ({why}); "
                     "this run is fp32.")
    ctx.record_settings(precision=precision_label(dtype))
    return dtype


# ---------------------------------------------------------------- the training step



class TrainStep:
    """One training step: forward, loss, backward, optimizer step. Called without arguments it
    trains on the next of a few batches in turn, so no call sees the same data twice running."""

    def __init__(self, model: nn.Module, optimizer: str,
                 loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
                 batches: list[tuple[torch.Tensor, torch.Tensor]],
                 amp_dtype: torch.dtype | None = None, lr: float | None = None) -> None:
        self.model = model                       # may be swapped for its compiled form
        cls, default_lr = OPTIMIZERS[optimizer]
        self.optimizer = getattr(torch.optim, cls)(model.parameters(), lr=lr or default_lr)
        self.loss_fn = loss_fn
        self.batches = batches
        self.amp_dtype = amp_dtype
        self.device = batches[0][0].device
        self.scaler = None
        if amp_dtype == torch.float16:           # float16 gradients underflow without scaling
            self.scaler = torch.amp.GradScaler(self.device.type)
        self._next = 0

    def __call__(self) -> torch.Tensor:
        x, y = self.batches[self._next % len(self.batches)]
        self._next += 1
        return self.on(x, y)[0]

    def on(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Train on (x, y); the loss and the logits, detached and left on the device."""
        self.optimizer.zero_grad(set_to_none=True)
        with autocast(self.device, self.amp_dtype):
            logits = self.model(x)
            loss = self.loss_fn(logits, y)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            self.optimizer.step()
        return loss.detach(), logits.detach()


def compile_or_eager(ctx, step: TrainStep) -> bool:
    """torch.compile the step's model; where compiling fails the run says so, stays eager."""
    eager = step.model

    def attempt() -> None:
        step.model = torch.compile(eager)
        step()
        ctx.sync()
    return training.compile_or_eager(ctx, "torch.compile", attempt,
                                     lambda: setattr(step, "model", eager))


def compare_with_cpu(ctx, model: nn.Module, optimizer: str,
                     loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
                     batches: list[tuple[torch.Tensor, torch.Tensor]],
                     amp_dtype: torch.dtype | None, steps: int, channels_last: bool = False,
                     lr: float | None = None) -> tuple[list[float], list[float]]:
    """--check: train copies of one CPU-built model on the same CPU-made batches for `steps`
    steps, on the run's device (its precision) and on the CPU (float32); the two loss curves
    (siliconbench.core.kit.checks compares them: MPS has had silent bugs)."""
    import copy
    cpu = torch.device("cpu")
    curves = []
    for device, dtype in ((ctx.device, amp_dtype), (cpu, None)):
        twin = copy.deepcopy(model).to(device)
        on_device = [(x.to(device), y.to(device)) for x, y in batches]
        if channels_last and device == ctx.device:
            twin = twin.to(memory_format=torch.channels_last)
            on_device = [(x.contiguous(memory_format=torch.channels_last), y)
                         for x, y in on_device]
        step = TrainStep(twin, optimizer, loss_fn, on_device, dtype, lr)
        curves.append([float(step()) for _ in range(steps)])
        ctx.sync()
    ours, reference = curves
    return ours, reference


# ---------------------------------------------------------------- trust checks

_FALLBACK = re.compile(r"operator '([^']+)' is not (?:currently )?(?:supported|implemented) "
                       r"(?:on|for) the MPS")


class FallbackWatch:
    """Collects the ops PyTorch ran on the CPU instead of the asked device (with
    PYTORCH_ENABLE_MPS_FALLBACK=1 it warns once per op and carries on, silently slower)."""

    def __init__(self) -> None:
        self._caught: list = []
        self.wrong_device: str | None = None     # an output found on another device

    @contextmanager
    def watching(self) -> Iterator[FallbackWatch]:
        with warnings.catch_warnings(record=True) as caught:
            # The fallback warning fires once per process: none may be lost to the filters.
            warnings.simplefilter("always")
            self._caught = caught
            yield self
        for w in caught:   # everything else goes to stderr as usual, kept with the run
            if not _FALLBACK.search(str(w.message)):
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)

    @property
    def ops(self) -> list[str]:
        found = (_FALLBACK.search(str(w.message)) for w in self._caught)
        return list(dict.fromkeys(f.group(1) for f in found if f))

    def check_output(self, tensor: torch.Tensor, device: torch.device) -> None:
        if tensor.device.type != device.type:
            self.wrong_device = str(tensor.device)

    @property
    def flags(self) -> list[str]:
        return ["fallback"] if self.note else []

    @property
    def note(self) -> str | None:
        parts = []
        if self.ops:
            parts.append("ran on the CPU: " + ", ".join(self.ops))
        if self.wrong_device:
            parts.append(f"the output was on {self.wrong_device}")
        return "; ".join(parts) or None

    def report(self, ctx) -> None:
        if self.note:
            ctx.warn(f"Not everything ran on {ctx.device}: {self.note}.")
            ctx.record_settings(cpu_fallback_ops=self.ops, output_device=self.wrong_device)


# ---------------------------------------------------------------- counting FLOPs

def count_flops(call: Callable[[], object]) -> float:
    """FLOPs of one call (matmuls, convolutions, attention), from torch's FLOP counter."""
    from torch.utils.flop_counter import FlopCounterMode
    fixed = {torch.ops.aten.convolution_backward: _convolution_backward_flops}
    with FlopCounterMode(display=False, custom_mapping=fixed) as counter:
        call()
    return float(counter.get_total_flops())


def _convolution_backward_flops(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding,
                                _dilation, transposed, _output_padding, _groups, output_mask,
                                out_shape=None, **kwargs) -> int:
    """Each of the input and weight gradients costs what the forward convolution did.
    torch's own formula ignores groups and counts a depthwise convolution's backward (all of
    MobileNet's) as if it were dense, some 20x too many FLOPs for MobileNetV2."""
    from torch.utils.flop_counter import conv_flop_count
    forward = conv_flop_count(list(x_shape), list(w_shape), list(grad_out_shape), transposed)
    return forward * (int(output_mask[0]) + int(output_mask[1]))
