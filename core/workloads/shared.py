"""What the model workloads share that needs no framework (so TensorFlow and MLX runs, where
torch may not be imported, use it too): result rows from a measurement, peak memory, the
transformer encoders' sizes and analytic FLOP counts, and parameters a framework ignores."""

from __future__ import annotations

import math
import resource
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise

from core.measure import Measurement
from core.params import ParamError
from core.results import Row
from core.stats import summarize

# Synthetic batches a timed step cycles through, so no single batch sits in a cache.
ROTATING_BATCHES = 3
NUM_CLASSES = 8          # the published TF-Metal training benchmark classified into 8 classes
# Optimizer class (the same name in torch.optim, keras.optimizers and mlx.optimizers) and
# learning rate: Keras's SGD rate; an Adam rate BERT trains with.
OPTIMIZERS = {"sgd": ("SGD", 0.01), "adam": ("Adam", 1e-4)}


# ---------------------------------------------------------------- transformer encoders

@dataclass(frozen=True)
class EncoderConfig:
    """A BERT-style encoder's size: the default configs of transformers' DistilBertConfig
    and the BERT-Large BertConfig that models.transformer_task builds for torch."""
    layers: int
    hidden: int
    heads: int
    ffn: int
    vocab: int = 30522
    max_positions: int = 512


ENCODERS = {"distilbert": EncoderConfig(6, 768, 12, 3072),
            "bert-large": EncoderConfig(24, 1024, 16, 4096)}


def encoder_config(name: str, layers: int | None, seq_len: int) -> EncoderConfig:
    """The model's config, with --layers applied; ParamError for what it cannot take."""
    if name not in ENCODERS:
        raise ParamError(f"Unknown transformer {name!r}; choose distilbert or bert-large.")
    config = ENCODERS[name]
    if seq_len > config.max_positions:
        raise ParamError(f"--seq-len must be at most {config.max_positions} for {name}, "
                         f"not {seq_len}.")
    return EncoderConfig(layers or config.layers, config.hidden, config.heads, config.ffn,
                         config.vocab, config.max_positions)


def encoder_train_flops(config: EncoderConfig, batch_size: int, seq_len: int) -> float:
    """FLOPs of one training step of the encoder layers, counted as torch's FLOP counter counts
    them (matmuls only): per layer, Q, K, V and output projections 8·T·h², the feed-forward
    4·T·h·f, attention scores and context 4·B·L²·h, with T = B·L tokens; backward twice the
    forward. Embeddings and the classifier head are left out (a fraction of a percent)."""
    tokens = batch_size * seq_len
    h, f = config.hidden, config.ffn
    forward = config.layers * (8 * tokens * h * h + 4 * tokens * h * f
                               + 4 * batch_size * seq_len * seq_len * h)
    return 3.0 * forward


def mlp_train_flops(widths: list[int], batch_size: int, inputs: int = 32 * 32 * 3,
                    classes: int = 10) -> float:
    """FLOPs of one training step of the CIFAR-10 MLP: 2·in·out per sample per Dense layer
    forward, backward twice that."""
    sizes = [inputs, *widths, classes]
    return 3.0 * 2 * batch_size * sum(a * b for a, b in pairwise(sizes))


# ---------------------------------------------------------------- the --check comparison

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
        ctx.warn(f"Training on {ctx.device_id} differs from the CPU by {worst:.2e} in the loss "
                 f"(tolerance {tol:g}): its results are wrong.")
    ctx.record_settings(check_losses={"device": ours, "cpu": reference})
    return Row("loss_rel_diff", worst, "", point, None, flags, what, None, diffs)


# ---------------------------------------------------------------- --compile

def compile_or_eager(ctx, compiler: str, attempt: Callable[[], None],
                     undo: Callable[[], None]) -> bool:
    """--compile: `attempt` compiles the step and runs it once (compilers work at the first
    call). Where that fails for another reason than memory (a device the compiler does not
    support, no C++ compiler), `undo` puts the eager step back and the run says so."""
    from core.worker import is_out_of_memory
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


# ---------------------------------------------------------------- parameters

def warn_ignored(ctx, params: dict, why: dict[str, str]) -> None:
    """Say which set parameters this framework does not apply: {name: why}."""
    for name, reason in why.items():
        if params.get(name):
            ctx.warn(f"--{name.replace('_', '-')} {reason}; ignored.")


# ---------------------------------------------------------------- failures

@contextmanager
def out_of_memory_at(batch_size: int) -> Iterator[None]:
    """Say which batch size ran out of memory; the worker makes it the failed run's reason."""
    from core.worker import is_out_of_memory
    try:
        yield
    except Exception as e:
        if is_out_of_memory(e) or type(e).__name__ == "ResourceExhaustedError":  # TF's OOM
            raise MemoryError(f"out of memory at batch size {batch_size} ({first_line(e)})") \
                from e
        raise


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


# ---------------------------------------------------------------- rows

def peak_memory(ctx) -> tuple[int | None, str]:
    """Peak bytes, and what they are: the device's allocator where it keeps count, else the
    process's peak resident memory (a CPU has no separate device memory)."""
    value = ctx.adapter.peak_memory(ctx.device)
    if value is not None:
        kind = "allocated now" if ctx.device.type == "mps" else "peak allocated"
        return int(value), f"{ctx.device.type} {kind}"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(rss if sys.platform == "darwin" else rss * 1024), "process peak resident memory"


def memory_row(ctx, point: dict, flags: list[str]) -> Row:
    value, what = peak_memory(ctx)
    return Row("peak_memory", value, "bytes", point, None, list(flags), what)


def throughput_rows(ctx, m: Measurement, batch_size: int, unit: str, point: dict,
                    flops_per_call: float | None, dtype: str, flags: list[str],
                    note: str | None, time_metric: str = "step_time") -> list[Row]:
    """samples/s, time per call and TFLOPS (with % of peak for `dtype`, the name the peak
    table knows: float32, float16, bfloat16) from one measurement."""
    flags = (["noisy"] if m.noisy else []) + flags
    rates = m.rates(batch_size)
    rows = [Row("samples_per_s", summarize(rates).median, unit, point, summarize(rates),
                list(flags), note, None, rates)]
    ms = [t * 1e3 for t in m.per_call_s]
    rows.append(Row(time_metric, summarize(ms).median, "ms", point, summarize(ms), list(flags),
                    note, None, ms))
    if flops_per_call:
        tflops = m.rates(flops_per_call / 1e12)
        stats = summarize(tflops)
        pct, tf_flags, tf_note = None, list(flags), note
        if ctx.peak is not None:
            from core.peaks import assess
            pct, above = assess(stats.median, ctx.peak.tflops_for(dtype))
            if above:
                tf_flags.append("above_peak")
                tf_note = (f"{stats.median:.1f} TFLOPS is above the device's physical peak: "
                           "the measurement is wrong")
        rows.append(Row("tflops", stats.median, "TFLOPS", point, stats, tf_flags, tf_note, pct,
                        tflops))
    return rows


def models_for(framework: str):
    """The module that runs train and mlp on a framework other than torch."""
    import importlib
    return importlib.import_module({"tensorflow": "core.frameworks.tensorflow.models",
                                    "mlx": "core.frameworks.mlx.models"}[framework])


def emit_throughput(ctx, m: Measurement, batch_size: int, unit: str, point: dict,
                    flops_per_call: float | None, dtype: str, flags: list[str],
                    more: list[Row] | None = None, memory: bool = False,
                    more_after: list[Row] | None = None) -> None:
    """Send a Keras or MLX run's rows: throughput_rows, then `more`, peak memory, then
    `more_after` (sustained-mode rows come after the whole-run rows, as torch sends them)."""
    rows = throughput_rows(ctx, m, batch_size, unit, point, flops_per_call, dtype, flags,
                           None) + (more or [])
    if memory:
        rows.append(memory_row(ctx, point, flags))
    rows += more_after or []
    for row in rows:
        ctx.row(row)



def emit_mlp_point(ctx, m: Measurement, preset: str, widths: list[int], batch_size: int,
                   flags: list[str], fit) -> None:
    """A Keras or MLX MLP's rows at one depth: throughput, then the fit's timings and
    accuracy (per epoch for 3000-1000), as torch's mlp sends them."""
    from core.workloads.mlp import point_for
    point = point_for(preset, widths)
    emit_throughput(ctx, m, batch_size, "img/s", point, mlp_train_flops(widths, batch_size),
                    "float32", flags, fit.rows(point, flags, preset == "3000-1000"))

# ---------------------------------------------------------------- sustained mode

def measure_run(ctx, call: Callable[[], object], duration_min: float | None,
                label: str = "") -> Measurement:
    """The normal protocol, or with `duration_min` (--duration) sustained mode: blocks back to
    back for that long, progress reported about once a second as seconds elapsed of the
    duration."""
    if duration_min is None:
        return ctx.measure(call)
    from core.measure import measure_for
    ctx.record_settings(duration_min=duration_min)
    duration_s = duration_min * 60
    reported = [-math.inf]

    def on_block(elapsed: float) -> None:
        # Blocks last ~20 ms: one progress event per block would flood the event stream.
        if elapsed - reported[0] >= 1.0:
            reported[0] = elapsed
            ctx.progress(min(elapsed, duration_s), duration_s,
                         f"{label}sustained: {elapsed:.0f} of {duration_s:.0f} s")
    return measure_for(call, ctx.sync, duration_s, ctx.settings, on_block=on_block)


def sustained_rows(m: Measurement, batch_size: int, unit: str, point: dict) -> list[Row]:
    """Throughput per minute and the last/first-minute ratio of a sustained measurement;
    none for the normal protocol."""
    if not m.block_end_s:
        return []
    from core.telemetry import sustained_rows as rows_over_time
    return rows_over_time(m.block_end_s, m.rates(batch_size), unit, point)
