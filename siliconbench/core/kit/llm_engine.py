"""What the LLM engines of the frameworks that build the shape themselves share (torch's
transformers models, MLX's mlx-lm classes): the model is the preset's shape with random
weights, so its size, the memory a run needs and the bytes each decode step reads all come from
the shape (siliconbench.core.kit.llm_shapes). A framework's engine subclasses BuiltEngine and
gives its precisions (DTYPES), its decode loops (LOOPS) and build(); the interface they fill in
is siliconbench.core.workloads.llm.LLMEngine."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from siliconbench.core.kit.llm_plan import run_own_model
from siliconbench.core.kit.llm_shapes import (
    ITEMSIZE,
    ModelShape,
    activation_dtype,
    bytes_per_decode_step,
    describe_shape,
    memory_needed,
    tensors_step_bytes,
    weight_bytes,
)
from siliconbench.core.params import ParamError


def plain_decoder(call: Callable[[], object]) -> Callable[[], object]:
    """A decode call of a loop that compiles nothing: no compile time, never recompiled."""
    call.compile_s, call.recompiled = None, lambda: False
    return call


def device_type(device_id: str) -> str:
    """A device id's type: 'cuda' of 'cuda:1', 'gpu', 'cpu'."""
    return device_id.strip().lower().split(":")[0]


class BuiltEngine:
    """An engine whose model the framework builds from the shape; `self.lm` is the built model
    (its parameters, stored_bytes, prefill, decoder, default_loop, cache_gap and release)."""
    DTYPES: tuple[str, ...] = ()
    LOOPS: tuple[str, ...] = ("eager",)
    DTYPE_HINTS: dict[str, str] = {}
    LOAD_STEPS = 1
    TTFT_NOTE: str | None = None
    PREFILL_DEPTHS = False       # prefill from an empty cache only

    def __init__(self, ctx, shape: ModelShape, params: dict) -> None:
        self.ctx, self.shape, self.dtype = ctx, shape, params["dtype"]
        # the user's model file, if given, as the run's plan read it
        self.own = run_own_model(ctx, params)
        self.lm, self.tensors = None, None

    def build(self):
        """The model on ctx.device: the shape with random weights, or the user's file."""
        raise NotImplementedError

    def builds(self, family: str) -> bool:
        """Whether the framework has a model class of this architecture."""
        raise NotImplementedError

    def check(self) -> None:
        """A model file's architecture is one the framework builds."""
        family = self.shape.family
        if self.own is not None and not (re.fullmatch(r"[a-z0-9_]+", family)
                                         and self.builds(family)):
            raise ParamError(f"{Path(self.own.file.path).name} is a {family!r} model, which "
                             f"{self.ctx.framework} has no model class for here.")

    def products_dtype(self) -> str | None:
        return activation_dtype(self.dtype)

    def gemm_dtype(self) -> str | None:
        return activation_dtype(self.dtype)

    def _weight_bytes(self) -> float:
        """The weights as stored: the shape's, or a file's (quantised as it is, else cast to
        the run's precision)."""
        own = self.own
        if own is None:
            return weight_bytes(self.shape, self.dtype)
        if self.tensors is not None:
            return sum(self.tensors.values())
        return own.file.size if own.stored_dtype else \
            own.file.parameters * ITEMSIZE[activation_dtype(self.dtype)]

    def memory_needed(self, batch: int, tokens: int) -> float:
        held = self.attention_bytes(self.shape, self.dtype, device_type(self.ctx.device_id),
                                    batch, tokens)
        return memory_needed(self.shape, self.dtype, batch, tokens, held) \
            - weight_bytes(self.shape, self.dtype) + self._weight_bytes()

    @staticmethod
    def attention_bytes(shape: ModelShape, dtype: str, device: str, batch: int,
                        tokens: int) -> float | None:
        """What a prefill's attention of `tokens` positions holds at once beyond its inputs
        and output on a device of this type (device_type: cpu, cuda, mps, gpu), for
        llm_shapes.memory_needed; None where that is not established: all its scores are
        counted. Static, so the estimate asks it before anything is built."""
        return None

    def settings(self) -> dict:
        """From the shape alone (the same before the model is built and after), or from the
        user's file."""
        if self.own is not None:
            return {"model": describe_shape(self.shape), "model_file": self.own.record(),
                    "parameters": self.own.file.parameters,
                    "weight_bytes": self._weight_bytes()}
        return {"model": describe_shape(self.shape), "parameters": self.shape.parameters,
                "weight_bytes": weight_bytes(self.shape, self.dtype)}

    def load(self, say: Callable[[int, str], None]) -> None:
        say(0, "building the model")
        self.lm = self.build()
        # a file's model is counted from its tensors, kept for rows made after release()
        self.tensors = self.lm.tensor_bytes() if self.own is not None else None

    def mismatch(self) -> str | None:
        """The roofline counts bytes from the shape: the built model must be that shape (a
        file's model is counted from its own tensors)."""
        if self.own is not None:
            return None
        lm, shape, stored = self.lm, self.shape, weight_bytes(self.shape, self.dtype)
        if (lm.parameters, lm.stored_bytes) == (shape.parameters, stored):
            return None
        return (f"The {self.ctx.framework} model has {lm.parameters:,} parameters in "
                f"{lm.stored_bytes:,} bytes where the shape has {shape.parameters:,} in "
                f"{stored:,}.")

    def default_loop(self) -> str:
        return self.lm.default_loop()

    def cache_check(self, tolerance: float) -> str | None:
        gap = self.lm.cache_gap(min(16, self.shape.max_positions))
        if gap <= tolerance:
            return None
        return (f"Decoding with the cache differs from running the whole sequence by "
                f"{gap:.2e} in the logits: the results are wrong.")

    def prefill(self, batch: int, prompt: int, depth: int) -> Callable[[], object]:
        if depth:
            raise ValueError("a built engine's prefill starts from an empty cache")
        return self.lm.prefill(batch, prompt)

    def placement(self) -> str | None:
        return None              # the framework's device, all of it

    def decoder(self, batch: int, depth: int, steps: int, loop: str):
        return self.lm.decoder(batch, depth, steps, loop)

    def step_bytes(self, batch: int, depth: int, steps: int) -> float:
        if self.own is not None:
            return tensors_step_bytes(self.shape, self.tensors,
                                      activation_dtype(self.dtype), batch, depth, steps)
        return bytes_per_decode_step(self.shape, self.dtype, batch, depth, steps)

    def prefill_label(self, prompt: int) -> str:
        return f"prefill {prompt} tokens"

    def decode_label(self, depth: int, steps: int) -> str:
        return f"decode {steps} tokens at depth {depth}"

    def decode_note(self, loop: str) -> str:
        return f"{loop} decode loop"

    def bound_note(self, loop: str) -> str:
        return self.decode_note(loop)

    def release(self) -> None:
        if self.lm is not None:
            self.lm.release()

    @staticmethod
    def bench_columns(settings: dict) -> list[str]:
        return ["batch"]

    @staticmethod
    def bench_cells(rec, point: dict) -> dict[str, str]:
        return {"model": f"{point['preset']} {point['dtype']}",
                "backend": f"{rec.framework} {rec.device}", "batch": str(point["batch"])}
