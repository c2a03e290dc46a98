"""Fidelity of the bandwidth workload against STREAM, in one run: SiliconBench's copy, scale,
add and triad GB/s (the real path: a child process, the measure protocol, its median) against
a plain STREAM loop in torch on the same device and array size, as McCalpin's stream.c runs
it: the three arrays a, b, c, the four kernels in STREAM's order (c = a; b = s*c; c = a + b;
a = b + s*c) NTIMES times, each timed on its own, the first pass left out. Like is compared
with like: SiliconBench's "best rate" (the fastest timed block, the row's note and samples)
with STREAM's "Best Rate" (bytes STREAM counts over the shortest pass), and SiliconBench's
median (the row's value) with the STREAM loop's median pass. Target: each ratio at least 0.97.
A block averages many calls where STREAM's best is one pass, so the best's ratio sits a little
under the median's on a machine whose passes vary. The sides alternate, --rounds rounds each,
so drift in the machine's speed hits both alike.

    .venv/bin/python benchmarks/stream_fidelity.py [--size-mb 256] [--device cpu]
        [--rounds 3]

The reference is torch's own kernels in STREAM's loop (torch.Tensor.copy_, torch.mul,
torch.add, torch.add(alpha=s)), so the two sides differ only in how they time: a plain numpy
loop would compare torch's threads with numpy's one and say nothing of the method. Each side
runs in a process of its own session (see benchmarks/llm_fidelity.py). On a machine busier
than its cores the ratios say little, and the script says so.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("SILICONBENCH_HOME", tempfile.mkdtemp(prefix="sb-bench-"))

from benchmarks.sides import child_json, rounds, sides, verdict  # noqa: E402
from siliconbench.core.workloads import bandwidth  # noqa: E402

TARGET = 0.97
NTIMES = 10            # stream.c's default


def siliconbench(args) -> dict[str, list[float]]:
    """{op: [best rate, median] GB/s} of the real run."""
    from siliconbench.core.runner import RunSpec, execute
    rec = execute(RunSpec("bandwidth", "torch", args.device,
                          {"sizes_mb": [args.size_mb], "ops": list(bandwidth.OPS)}))
    assert rec.status == "ok", rec.reason
    return {r.params["op"]: [bandwidth.best_rate(r), r.value] for r in rec.rows}


def stream_child(args) -> None:
    """STREAM's loop in torch; one JSON line {op: [best GB/s, median GB/s, average GB/s]}."""
    import time

    import torch
    device = torch.device("cuda" if args.device.startswith("cuda") else args.device)
    n = args.size_mb * bandwidth.MB // 4
    a, b, c = (torch.full((n,), v, dtype=torch.float32, device=device) for v in (1.0, 2.0, 0.0))
    a *= 2.0
    s = bandwidth.SCALAR
    kernels = {"copy": lambda: c.copy_(a), "scale": lambda: torch.mul(c, s, out=b),
               "add": lambda: torch.add(a, b, out=c),
               "triad": lambda: torch.add(b, c, alpha=s, out=a)}
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    times: dict[str, list[float]] = {op: [] for op in kernels}
    for _ in range(NTIMES):
        for op, kernel in kernels.items():
            sync()
            t0 = time.perf_counter()
            kernel()
            sync()
            times[op].append(time.perf_counter() - t0)
    out = {}
    for op, seconds in times.items():
        moved = bandwidth.MOVED[op] * n * 4 / 1e9
        kept = seconds[1:]                   # stream.c leaves the first pass out
        out[op] = [moved / min(kept), moved / statistics.median(kept),
                   moved / statistics.fmean(kept)]
    print(json.dumps(out))


def reference(args) -> dict[str, list[float]]:
    return child_json(os.path.abspath(__file__),
                      [f"--size-mb={args.size_mb}", f"--device={args.device}"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size-mb", type=int, default=256, help="each array's size (2^20 bytes)")
    p.add_argument("--device", default="cpu", help="torch's device: cpu, cuda, mps")
    args, ours, theirs = sides(p, stream_child, siliconbench, reference,
                               lambda a: f"torch, {a.size_mb} MB arrays, device {a.device}")
    if ours is None:
        return 0
    ok = True
    for op in bandwidth.OPS:
        best, median = (statistics.median(r[op][k] for r in ours) for k in (0, 1))
        s_best, s_median, s_avg = (statistics.median(r[op][k] for r in theirs)
                                   for k in (0, 1, 2))
        ratios = best / s_best, median / s_median
        passed = min(ratios) >= TARGET
        ok &= passed
        print(f"{op:>5} ({bandwidth.STREAM_KERNELS[op][0]}, {bandwidth.MOVED[op]} arrays): "
              f"best rate SiliconBench {best:.4g} / STREAM {s_best:.4g} GB/s = "
              f"{ratios[0]:.3f}; median {median:.4g} / {s_median:.4g} = {ratios[1]:.3f} "
              f"(rounds {rounds(r[op][1] for r in ours)}; STREAM's average {s_avg:.4g}) "
              f"(target >= {TARGET} each) {'PASS' if passed else 'FAIL'}")
    return verdict(ok)


if __name__ == "__main__":
    sys.exit(main())
