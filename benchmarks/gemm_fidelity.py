"""Fidelity of the GEMM workload: SiliconBench's TFLOPS (the real path: child process, the
measure protocol) divided by an independent torch.utils.benchmark measurement taken in the
same run, float32 on the CPU. Target: at least 0.97. The two alternate, three rounds each,
so drift in the machine's speed hits both alike.

    .venv/bin/python benchmarks/gemm_fidelity.py
"""

import os
import statistics
import sys
import tempfile

import torch
import torch.utils.benchmark as tb

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("SILICONBENCH_HOME", tempfile.mkdtemp(prefix="sb-bench-"))

from siliconbench.core.runner import RunSpec, execute  # noqa: E402

SIZES = (1024, 2048)
ROUNDS = 3


def reference_tflops(n: int) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    c = torch.empty(n, n)
    timer = tb.Timer("torch.matmul(a, b, out=c)", globals={"torch": torch, "a": a, "b": b, "c": c},
                     num_threads=torch.get_num_threads())
    m = timer.adaptive_autorange(threshold=0.05, min_run_time=2.0)
    return 2 * n**3 / m.median / 1e12


def siliconbench_tflops(n: int) -> float:
    rec = execute(RunSpec("gemm", "torch", "cpu", {"sizes": [n], "dtypes": ["float32"]}))
    assert rec.status == "ok", rec.reason
    return rec.rows[0].value


def main() -> int:
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, float32 on the CPU")
    print(f"{'N':>6} {'SiliconBench':>14} {'torch.utils.benchmark':>22} {'ratio':>7}")
    worst = float("inf")
    for n in SIZES:
        ours, ref = [], []
        for _ in range(ROUNDS):
            ours.append(siliconbench_tflops(n))
            ref.append(reference_tflops(n))
        a, b = statistics.median(ours), statistics.median(ref)
        worst = min(worst, a / b)
        print(f"{n:>6} {a:>11.4f} TF {b:>19.4f} TF {a / b:>7.3f}")
    print(f"lowest ratio {worst:.3f} (target >= 0.97): {'PASS' if worst >= 0.97 else 'FAIL'}")
    return 0 if worst >= 0.97 else 1


if __name__ == "__main__":
    sys.exit(main())
