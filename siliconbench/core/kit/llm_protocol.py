"""The interface the llm workload (siliconbench.core.workloads.llm) drives every framework's
engine through: LLMEngine, the class Engine(ctx, shape, params) of
siliconbench.core.frameworks.<framework>.llm, and the decode call it makes (DecodeCall)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable


class DecodeCall(Protocol):
    """One decode measurement's call (LLMEngine.decoder): greedy tokens after a context, each
    fetched to the host as a generator does, from a cache filled to the depth once and rewound
    before every call. A compiled loop on CUDA may say `graphs_skipped` (CUDA graphs inductor
    did not use)."""
    compile_s: float | None     # seconds of a compiled loop's first call, else None

    def __call__(self) -> object: ...

    def recompiled(self) -> bool:
        """Whether the loop was compiled again since its first call (timed calls then
        included compilation)."""


@runtime_checkable
class LLMEngine(Protocol):
    """A framework's engine for the llm workload: Engine(ctx, shape, params) in
    siliconbench.core.frameworks.<framework>.llm, made before anything is loaded (it imports
    no framework). torch and MLX build the shape themselves (kit.llm_engine.BuiltEngine: its
    sizes are the shape's); llama.cpp writes it as a GGUF file and loads that, as llama-bench
    would. The run checks, sizes, loads, then times each prompt and depth through it."""
    DTYPES: tuple[str, ...]          # the precisions it runs
    LOOPS: tuple[str, ...]           # the decode loops it runs ("eager", "compiled")
    DTYPE_HINTS: Mapping[str, str]   # what another engine's precision is called here
    LOAD_STEPS: int                  # progress steps load() takes
    TTFT_NOTE: str | None            # the time-to-first-token rows' note
    PREFILL_DEPTHS: bool             # prefill at every depth as well (llama-bench's -d)

    def check(self) -> None:
        """Refuses (ParamError) what only this engine cannot run, before anything is built."""

    def products_dtype(self) -> str | None:
        """The precision its matrix products run in, which the device is asked for before
        anything is built (a tiny product); None where it multiplies in kernels of its own
        (llama.cpp's), which no framework's product speaks for."""

    def gemm_dtype(self) -> str | None:
        """The precision of the GEMM runs prefill's TFLOPS are held against; None: none."""

    def memory_needed(self, batch: int, tokens: int) -> float:
        """Bytes of the model with `tokens` positions of context for each of `batch`."""

    def settings(self) -> dict:
        """What the record says of the model as far as known: asked before load and after."""

    def load(self, say: Callable[[int, str], None]) -> None:
        """Makes the model on ctx.device; say(step, text) for each of its LOAD_STEPS."""

    def mismatch(self) -> str | None:
        """A warning where the loaded model is not the shape its bytes are counted from."""

    def default_loop(self) -> str:
        """The decode loop the framework's own generator runs on the device."""

    def cache_check(self, tolerance: float) -> str | None:
        """The last logits of a whole sequence against a prefill of all but its last token
        and one decode step (the cache is real); a warning where they disagree: beyond
        `tolerance` (relative), or on the next token where the engine compares that."""

    def prefill(self, batch: int, prompt: int, depth: int) -> Callable[[], object]:
        """A call: a cache holding `depth` positions (0 but where PREFILL_DEPTHS), the prompt,
        the first token (or its logits) on the host (one call is the time to first token)."""

    def placement(self) -> str | None:
        """What every row says of where the model ran (llama.cpp: its layers offloaded and
        whether its operations may be), or None."""

    def decoder(self, batch: int, depth: int, steps: int, loop: str) -> DecodeCall:
        """A call of `steps` greedy tokens after a context of `depth`, run by `loop`."""

    def step_bytes(self, batch: int, depth: int, steps: int) -> float:
        """Bytes one decode step reads, averaged over `steps` steps from `depth`."""

    def prefill_label(self, prompt: int) -> str:
        """The progress line of a prefill point."""

    def decode_label(self, depth: int, steps: int) -> str:
        """The progress line of a decode point."""

    def decode_note(self, loop: str) -> str:
        """What the decode rows say they timed."""

    def bound_note(self, loop: str) -> str:
        """What the roofline row says each step reads."""

    def release(self) -> None:
        """Frees the model and its caches."""

    @staticmethod
    def bench_columns(settings: dict) -> list[str]:
        """The llama-bench table's columns of its records between backend and test."""

    @staticmethod
    def bench_cells(rec, point: dict) -> dict[str, str]:
        """A line's model, backend and bench_columns cells, of one of its records."""
