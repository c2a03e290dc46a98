"""Workloads that misbehave on purpose, for the runner's tests (loaded through
SILICONBENCH_EXTRA_WORKLOADS, hidden from listings)."""

import os
import signal
import time

from siliconbench.core.catalogue import Workload
from siliconbench.core.params import Param
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize

# The framework the tests run these in: the worker loads a run's framework before its workload,
# and MLX imports in a tenth of a second where PyTorch takes three CPU-seconds. Their lifecycle
# (rows, raise, crash, kill, hang, cancel) is the runner's, whatever the framework; PyTorch
# still runs them where a test is about it (tests/core/test_isolation.py).
FRAMEWORK = "mlx"

STEPS = (Param("steps", "int", 2, "rows before misbehaving", min=0, max=100),)


def _rows(ctx, n: int) -> None:
    for i in range(n):
        ctx.row(Row("things_per_s", float(i + 1), "1/s", {"step": i}, summarize([i + 1.0])))
        ctx.progress(i + 1, n + 1, f"step {i}")


def ok(ctx, p):
    print("stray output on stdout must not break the event stream")
    _rows(ctx, p["steps"])


def warns(ctx, p):
    _rows(ctx, p["steps"])
    ctx.warn("These numbers measure a slow library, not the device.")


def raises(ctx, p):
    _rows(ctx, p["steps"])
    raise RuntimeError("the workload broke")


def oom(ctx, p):
    _rows(ctx, p["steps"])
    raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")


def crash(ctx, p):
    _rows(ctx, p["steps"])
    os.kill(os.getpid(), signal.SIGSEGV)


def crash_inside(ctx, p):
    _rows(ctx, p["steps"])
    ctx.inside("libfake decoding tiny.gguf (Q4_0)", "report it to libfake's tracker")
    os.kill(os.getpid(), signal.SIGSEGV)


def killed(ctx, p):
    _rows(ctx, p["steps"])
    os.kill(os.getpid(), signal.SIGKILL)  # what the kernel's OOM killer does


def slow(ctx, p):
    _rows(ctx, p["steps"])
    while True:  # a long point: only a signal ends it
        time.sleep(0.1)


def hang(ctx, p):
    _rows(ctx, p["steps"])
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a stubborn child: needs SIGKILL
    while True:
        time.sleep(1)


WORKLOADS = [Workload(name=f"fake-{fn.__name__}", title=fn.__name__, summary="test workload",
                      frameworks=("torch", "mlx"), params=STEPS, module=__name__, entry=fn.__name__,
                      hidden=True, multiplies=False)
             for fn in (ok, warns, raises, oom, crash, crash_inside, killed, slow, hang)]
