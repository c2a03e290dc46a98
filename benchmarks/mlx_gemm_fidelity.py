"""Fidelity of the MLX GEMM: SiliconBench's TFLOPS (the real path: child process, the measure
protocol, mx.async_eval per call, a block closed by mx.eval + mx.synchronize) divided by a
minimal mx loop measured in the same run (c = a @ b; mx.eval(c), timed over many calls).
float32 on the CPU (the GPU on a Mac with `--device gpu`). Target: at least 0.95. The two
alternate, five rounds per size, and the ratio is the median of each round's ratio: on a shared
machine, load comes and goes between rounds, not within one.

    .venv/bin/python benchmarks/mlx_gemm_fidelity.py [--device gpu]
"""

import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("SILICONBENCH_HOME", tempfile.mkdtemp(prefix="sb-bench-"))

from siliconbench.core.frameworks import isolate  # noqa: E402
from siliconbench.core.runner import RunSpec, execute  # noqa: E402

SIZES = {"cpu": (512, 1024), "gpu": (2048, 4096)}
MIN_LOOP_S = 2.0    # each minimal loop runs at least this long
ROUNDS = 5
TARGET = 0.95


def loop_tflops(mx, device, n: int) -> float:
    a = mx.random.normal((n, n), stream=device)
    b = mx.random.normal((n, n), stream=device)
    mx.eval(a, b)
    for _ in range(3):
        mx.eval(mx.matmul(a, b, stream=device))
    calls, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < MIN_LOOP_S:
        mx.eval(mx.matmul(a, b, stream=device))
        calls += 1
    return 2 * n**3 * calls / (time.perf_counter() - t0) / 1e12


def siliconbench_tflops(device: str, n: int) -> float:
    rec = execute(RunSpec("gemm", "mlx", device, {"sizes": [n], "dtypes": ["float32"]}))
    assert rec.status == "ok", rec.reason
    return rec.rows[0].value


def main(argv: list[str]) -> int:
    device_id = "gpu" if argv[:2] == ["--device", "gpu"] else "cpu"
    isolate("mlx")
    import mlx.core as mx
    device = mx.Device(mx.gpu if device_id == "gpu" else mx.cpu)
    print(f"MLX {mx.__version__}, float32 on the {device_id.upper()}")
    print(f"{'N':>6} {'SiliconBench':>14} {'minimal mx loop':>16} {'ratio':>7}")
    worst = float("inf")
    for n in SIZES[device_id]:
        ours, ref = [], []
        for _ in range(ROUNDS):
            ours.append(siliconbench_tflops(device_id, n))
            ref.append(loop_tflops(mx, device, n))
        ratio = statistics.median(x / y for x, y in zip(ours, ref))
        worst = min(worst, ratio)
        print(f"{n:>6} {statistics.median(ours):>11.4f} TF {statistics.median(ref):>13.4f} TF "
              f"{ratio:>7.3f}")
    verdict = "PASS" if worst >= TARGET else "FAIL"
    print(f"lowest ratio {worst:.3f} (target >= {TARGET}): {verdict}")
    return 0 if worst >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
