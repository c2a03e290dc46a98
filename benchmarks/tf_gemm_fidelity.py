"""Fidelity of the TensorFlow GEMM: SiliconBench's TFLOPS (the real path: child process, the
measure protocol, a tf.function chaining up to 10 products per call, a block closed by fetching
one element) divided by the classic sweep's method: a tf.function chaining 10 matmuls, the
result fetched once per call, timed over several calls. float32, N=2048, on the CPU. Every
measurement runs in a fresh process, as a SiliconBench run does. Target: every round's ratio
at least 0.97.

A round interleaves three series, each measured ALTERNATIONS times: SiliconBench, classic A
and classic B, in an order that rotates at each alternation (S A B, A B S, B S A, ...), so a
slow spell of a shared machine falls on every series alike. Each series is summarised by its
median; SiliconBench is divided by the median of all the classic measurements of the round,
and classic A by classic B is the same division with the method against itself: the noise
floor of this machine in this run, under which no round's ratio can be trusted.

    .venv/bin/python benchmarks/tf_gemm_fidelity.py [--rounds R] [--alternations K]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("SILICONBENCH_HOME", tempfile.mkdtemp(prefix="sb-bench-"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from siliconbench.core.frameworks import isolate  # noqa: E402
from siliconbench.core.runner import RunSpec, execute  # noqa: E402

N = 2048
CHAIN = 10          # matmuls per tf.function call, as in the classic sweep (which used 100)
CALLS = 5           # timed calls per measurement
TARGET = 0.97


def classic_tflops(tf, n: int) -> float:
    """The tflops_sweep way: x <- x @ b, CHAIN times inside one graph, one fetch per call."""
    with tf.device("/CPU:0"):
        a = tf.random.normal((n, n))
        b = tf.random.normal((n, n)) / n**0.5  # keeps the chain's values from overflowing

        @tf.function
        def chain(x, y):
            for _ in range(CHAIN):
                x = tf.linalg.matmul(x, y)
            return x

        chain(a, b).numpy()  # trace and warm up
        times = []
        for _ in range(CALLS):
            t0 = time.perf_counter()
            chain(a, b).numpy()
            times.append(time.perf_counter() - t0)
    return CHAIN * 2 * n**3 / statistics.median(times) / 1e12


def siliconbench_tflops(n: int) -> float:
    rec = execute(RunSpec("gemm", "tensorflow", "cpu", {"sizes": [n], "dtypes": ["float32"]}))
    assert rec.status == "ok", rec.reason
    return rec.rows[0].value


def classic_in_fresh_process(n: int) -> float:
    """The classic method in its own new process, as SiliconBench's run is: TensorFlow's CPU
    speed differs between a fresh and a long-warmed process by more than the target's margin,
    so both sides must start alike."""
    out = subprocess.run([sys.executable, __file__, "--classic", str(n)], check=True,
                         capture_output=True, text=True, env=dict(os.environ))
    return float(out.stdout.strip().splitlines()[-1])


SERIES = {"SiliconBench": lambda: siliconbench_tflops(N),
          "classic A": lambda: classic_in_fresh_process(N),
          "classic B": lambda: classic_in_fresh_process(N)}


def one_round(alternations: int) -> dict[str, list[float]]:
    """Each series measured `alternations` times, interleaved, the order rotating."""
    names = list(SERIES)
    got: dict[str, list[float]] = {name: [] for name in names}
    for j in range(alternations):
        for name in names[j % 3:] + names[:j % 3]:
            got[name].append(SERIES[name]())
    return got


def main() -> int:
    if sys.argv[1:2] == ["--classic"]:
        isolate("tensorflow")
        import tensorflow as tf
        print(classic_tflops(tf, int(sys.argv[2])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--alternations", type=int, default=3,
                    help="measurements of each series per round, interleaved")
    args = ap.parse_args()
    import importlib.metadata
    print(f"TensorFlow {importlib.metadata.version('tensorflow')}, float32 N={N} on the CPU; "
          f"each measurement in a fresh process; {args.alternations} interleaved measurements "
          "of each series per round, TFLOPS")
    ratios, floors = [], []
    for i in range(args.rounds):
        got = one_round(args.alternations)
        ours = statistics.median(got["SiliconBench"])
        classic = statistics.median(got["classic A"] + got["classic B"])
        ratios.append(ours / classic)
        floors.append(statistics.median(got["classic A"]) / statistics.median(got["classic B"]))
        for name, values in got.items():
            print(f"round {i + 1} {name:>12}: {' '.join(f'{v:.4f}' for v in values)}  "
                  f"median {statistics.median(values):.4f}")
        print(f"round {i + 1}: SiliconBench / classic {ratios[-1]:.3f}; "
              f"classic A / classic B {floors[-1]:.3f}", flush=True)
    ok = min(ratios) >= TARGET
    print(f"SiliconBench / classic per round: {', '.join(f'{r:.3f}' for r in ratios)}; "
          f"median {statistics.median(ratios):.3f}, lowest {min(ratios):.3f} "
          f"(target every round >= {TARGET}): {'PASS' if ok else 'FAIL'}")
    spread = max(abs(1 - r) for r in floors)
    print(f"classic A / classic B per round (noise floor): "
          f"{', '.join(f'{r:.3f}' for r in floors)}: the method against itself moves by up "
          f"to {spread:.1%} in this run")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
