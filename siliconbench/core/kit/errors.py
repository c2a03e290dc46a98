"""How a workload's failures read: an out-of-memory recognised whatever the framework calls it,
and said with the batch size that caused it; an exception's first line for a message."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from siliconbench.core.text import first_line, is_out_of_memory


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


class ChildRunFailed(RuntimeError):
    """A run this workload started in a process of its own failed; the message is that run's
    reason, already one sentence (a rank that died, named with its host), and is kept as is."""
