"""How a workload's failures read: an out-of-memory recognised whatever the framework calls it,
and said with the batch size that caused it; an exception's first line for a message."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


def is_out_of_memory(exc: BaseException) -> bool:
    """CUDA and MPS say "out of memory"; the CPU allocator says "can't allocate memory"."""
    text = str(exc).lower()
    return isinstance(exc, MemoryError) or "out of memory" in text \
        or "can't allocate memory" in text or type(exc).__name__ == "OutOfMemoryError"


@contextmanager
def out_of_memory_at(batch_size: int) -> Iterator[None]:
    """Say which batch size ran out of memory; the worker makes it the failed run's reason."""
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
