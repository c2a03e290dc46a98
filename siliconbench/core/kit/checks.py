"""--check, the same for every framework: a model trained on the run's device and its twin
trained on the CPU in float32 from the same weights on the same batches; the row compares
their loss curves."""

from __future__ import annotations

import math

from siliconbench.core.numbers import number
from siliconbench.core.results import Row

# Largest relative loss difference against a float32 CPU run that still counts as right.
MIXED_TOLERANCE = {"float16": 3e-2, "bfloat16": 6e-2}
FP32_TOLERANCE = 5e-3    # CUDA convolutions use TF32 by default, hence not 1e-5
CHECK_BATCH = 8          # the comparison trains on the CPU too: keep it affordable


def check_tolerance(mixed_dtype: str | None) -> float:
    """The tolerance for a run in float32 (None) or mixed precision in `mixed_dtype`."""
    return FP32_TOLERANCE if mixed_dtype is None else MIXED_TOLERANCE[mixed_dtype]


def loss_check_row(ctx, ours: list[float], reference: list[float], tol: float,
                   point: dict) -> Row:
    """The --check row: the largest relative difference between the loss curve of a model
    trained on the run's device and that of its twin trained on the CPU in float32 from the
    same weights on the same batches, flagged wrong_result above `tol` (MPS and the Metal
    plugin have had silent bugs). Both curves go into the record's settings."""
    steps = len(ours)
    point = {**point, "check_steps": steps}
    what = (f"largest relative difference of {steps} training losses from a float32 CPU run "
            f"(tolerance {tol:g})")
    if not all(math.isfinite(v) for v in ours + reference):
        ctx.warn(f"The correctness check's losses are not finite on {ctx.device_id}: {ours}.")
        return Row("loss_rel_diff", None, "", point, None, ["wrong_result"],
                   f"{what}: the losses were not finite")
    diffs = [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(ours, reference)]
    worst = max(diffs)
    flags = []
    if worst > tol:
        flags.append("wrong_result")
        ctx.warn(f"Training on {ctx.device_id} differs from the CPU by {number(worst)} in the loss "
                 f"(tolerance {number(tol)}): its results are wrong.")
    ctx.record_settings(check_losses={"device": ours, "cpu": reference})
    return Row("loss_rel_diff", worst, "", point, None, flags, what, None, diffs)
