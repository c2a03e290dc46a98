"""What every framework's training step takes alike, so their numbers compare: the synthetic
batches it cycles through, the classes, the optimizers; and the fallbacks a framework's part
of train or mlp uses (--compile that fails, parameters it does not apply)."""

from __future__ import annotations

from collections.abc import Callable

from siliconbench.core.text import first_line, is_out_of_memory

# Synthetic batches a timed step cycles through, so no single batch sits in a cache.
ROTATING_BATCHES = 3
NUM_CLASSES = 8          # the published TF-Metal training benchmark classified into 8 classes
# Optimizer class (the same name in torch.optim, keras.optimizers and mlx.optimizers) and
# learning rate: Keras's SGD rate; an Adam rate BERT trains with.
OPTIMIZERS = {"sgd": ("SGD", 0.01), "adam": ("Adam", 1e-4)}


def compile_or_eager(ctx, compiler: str, attempt: Callable[[], None],
                     undo: Callable[[], None]) -> bool:
    """--compile: `attempt` compiles the step and runs it once (compilers work at the first
    call). Where that fails for another reason than memory (a device the compiler does not
    support, no C++ compiler), `undo` puts the eager step back and the run says so."""
    try:
        attempt()
    except Exception as e:
        if is_out_of_memory(e):
            raise
        undo()
        ctx.warn(f"{compiler} does not work on {ctx.device_id} here ({first_line(e)}); "
                 "this run is eager.")
        ctx.record_settings(compiled=False)
        return False
    ctx.record_settings(compiled=True)
    return True


def warn_ignored(ctx, params: dict, why: dict[str, str]) -> None:
    """Say which set parameters this framework does not apply: {name: why}."""
    for name, reason in why.items():
        if params.get(name):
            ctx.warn(f"--{name.replace('_', '-')} {reason}; ignored.")
