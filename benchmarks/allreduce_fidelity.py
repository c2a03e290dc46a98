"""Fidelity of the all-reduce: SiliconBench's bus bandwidth (the real path: the engine's
launcher as the run's child, two ranks over loopback, the measure protocol with the ranks'
agreement, every call's sum checked) divided by a minimal loop written directly on each engine
and started by the same launcher, timed the way nccl-tests and MLX's distributed benchmark
time it: a few warm-up calls, then N back-to-back calls between two clock reads on rank 0
(MLX: y = all_sum(x); mx.eval(y). torch: dist.all_reduce(x), in place). float32 on the CPU.
The two alternate, ROUNDS rounds, and the ratio is the median of each round's ratio (load on
a shared machine comes and goes between rounds). Target: at least 0.95.

    .venv/bin/python benchmarks/allreduce_fidelity.py [mlx|torch ...]
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("SILICONBENCH_HOME", tempfile.mkdtemp(prefix="sb-bench-"))

# Bytes -> timed calls, fixed as nccl-tests' -n (every rank must make the same number).
ITERS = {4096: 200, 1 << 20: 50, 16 << 20: 10}
SIZES = tuple(ITERS)
RANKS = 2
ROUNDS = 3
TARGET = 0.95


def _timed(call, size: int) -> float:
    """Seconds per call: 5 warm-up calls, then ITERS[size] calls between two clock reads."""
    for _ in range(5):
        call()
    t0 = time.perf_counter()
    for _ in range(ITERS[size]):
        call()
    return (time.perf_counter() - t0) / ITERS[size]


def loop_mlx() -> dict:
    import mlx.core as mx
    g = mx.distributed.init(backend="ring", strict=True)
    times = {}
    for size in SIZES:
        x = mx.random.normal((size // 4,))
        mx.eval(x)
        times[size] = _timed(lambda: mx.eval(mx.distributed.all_sum(x, group=g)), size)
    return times if g.rank() == 0 else {}


def loop_torch() -> dict:
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo")
    times = {}
    for size in SIZES:
        x = torch.randn(size // 4)
        times[size] = _timed(lambda: dist.all_reduce(x), size)  # gloo: returns when done
    rank = dist.get_rank()
    dist.destroy_process_group()
    return times if rank == 0 else {}


def reference(framework: str) -> dict[int, float]:
    """busbw (GB/s) per size from the minimal loop, started by the engine's own launcher."""
    from siliconbench.core.launch import find_executable, launcher, reserve_ports
    part = launcher(framework)
    ports = reserve_ports(RANKS)   # held until this function returns
    port = ports.first
    me = [sys.executable, os.path.abspath(__file__), "--loop", framework]
    if framework == "mlx":
        cmd = [find_executable(part.EXECUTABLE), "-n", str(RANKS), "--backend", "ring",
               "--starting-port", str(port), "--", *me]
    else:
        cmd = [find_executable(part.EXECUTABLE), "--nproc-per-node", str(RANKS),
               "--master-addr", "127.0.0.1", "--master-port", str(port), *me[1:]]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, stdin=subprocess.PIPE)
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("{"))
    factor = 2 * (RANKS - 1) / RANKS
    return {int(s): int(s) / t / 1e9 * factor for s, t in json.loads(line).items()}


def siliconbench(framework: str) -> dict[int, float]:
    from siliconbench.core.runner import RunSpec, execute
    rec = execute(RunSpec("allreduce", framework, "cpu",
                          {"sizes": list(SIZES), "dtypes": ["float32"], "processes": RANKS}))
    assert rec.status == "ok", rec.reason
    return {r.params["size"]: r.value for r in rec.rows if r.metric == "busbw"}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--loop"]:
        times = loop_mlx() if argv[1] == "mlx" else loop_torch()
        if times:
            print(json.dumps(times), flush=True)
        return 0
    if any(a not in ("mlx", "torch") for a in argv):
        print("usage: allreduce_fidelity.py [mlx|torch ...] (no name: both)", file=sys.stderr)
        return 2
    worst = float("inf")
    for framework in argv or ["mlx", "torch"]:
        ours, ref = [], []
        for _ in range(ROUNDS):
            ours.append(siliconbench(framework))
            ref.append(reference(framework))
        print(f"{framework}, {RANKS} ranks over loopback, float32 on the CPU")
        print(f"{'bytes':>10} {'SiliconBench':>14} {'minimal loop':>14} {'ratio':>7}")
        for size in SIZES:
            ratio = statistics.median(o[size] / r[size] for o, r in zip(ours, ref))
            worst = min(worst, ratio)
            print(f"{size:>10} {statistics.median(o[size] for o in ours):>9.4f} GB/s "
                  f"{statistics.median(r[size] for r in ref):>9.4f} GB/s {ratio:>7.3f}")
    verdict = "PASS" if worst >= TARGET else "FAIL"
    print(f"lowest ratio {worst:.3f} (target >= {TARGET}): {verdict}")
    return 0 if worst >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
