"""Which read kernel streams as fast as a read can on this CPU, beside STREAM's triad, in one
run: the candidates for the bandwidth workload's read kernel (what a decode does: it reads
its weights, writes next to nothing) timed side by side with torch's triad
(torch.add(b, c, alpha=s, out=a), 3 arrays counted as STREAM counts them), each in GB/s of
the bytes it really reads plus writes, and its ratio to the triad (median with median, best
with best). The sides alternate, --rounds rounds of --calls calls each, so drift in the
machine's speed hits all alike. Target: the chosen kernel (the project's own, TorchOps.read,
shown as "ops.read") at least 1.0x the triad; where none is, a CPU's decode bound is the higher
of the read and the triad (siliconbench.core.kit.ceilings.decode_bound).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/read_kernel.py [--size-mb 256] [--rounds 5]
        [--calls 8]

On a machine busier than its cores the figures say little, and the script says so.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("SILICONBENCH_HOME", tempfile.mkdtemp(prefix="sb-bench-"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

MB = 2**20
WIDTH = 4096          # the inner size of the 2-D views (a row of a 4096-wide weight)


def compiled_read(b, c):
    """(b + c).sum() through torch.compile (inductor's C++ on a CPU): one fused loop that reads
    both arrays and writes nothing. None where it does not compile here."""
    try:
        fn = torch.compile(lambda x, y: (x + y).sum())
        fn(b, c)
    except Exception as e:  # noqa: BLE001 - a benchmark's optional candidate
        print(f"compiled read left out: {str(e).splitlines()[0][:120]}")
        return lambda: None
    return lambda: fn(b, c)


def candidates(a, b, c, n: int) -> dict:
    """{name: (call, bytes read + written per call)}. Every kernel reads all of `a` once."""
    from types import SimpleNamespace

    from siliconbench.core.frameworks.torch.ops import TorchOps
    ops = TorchOps(SimpleNamespace(device=torch.device("cpu"), device_id="cpu",
                                   sync=lambda: None))
    item = a.element_size()
    rows = a.view(-1, WIDTH)
    x = torch.randn(WIDTH)
    y = torch.randn(n // WIDTH)
    half = n // 2
    out = torch.empty_like(a)
    ones = np.ones(WIDTH, np.float32)
    # Left out, measured once here: torch.sum(a, dtype=torch.float64) and
    # a.view(torch.int32).sum() convert every element first (0.03x the triad), and
    # rows.sum(0) writes a row per pass (0.3x).
    kernels = {
        "triad (STREAM)": (lambda: torch.add(b, c, alpha=3.0, out=out), 3 * n * item),
        "ops.read": (ops.read(a), n * item),
        "torch.sum(a)": (lambda: torch.sum(a), n * item),
        "sum rows (dim 1)": (lambda: rows.sum(1), n * item + n // WIDTH * item),
        "amax": (lambda: torch.amax(a), n * item),
        # The same bytes as integers: a max with no NaN to carry, one compare per vector.
        "int32 amax": (lambda: torch.amax(a.view(torch.int32)), n * item),
        "int16 amax": (lambda: torch.amax(a.view(torch.int16)), n * item),
        "uint8 amax": (lambda: torch.amax(a.view(torch.uint8)), n * item),
        "numpy int32 max": (lambda: a.numpy().view(np.int32).max(), n * item),
        "numpy or-reduce u64": (lambda: np.bitwise_or.reduce(a.numpy().view(np.uint64)),
                                n * item),
        # The triad's two inputs read together, nothing written: two streams a thread, as the
        # triad has (dot), or the triad's own loop with its store left out (compiled).
        "dot(b, c)": (lambda: torch.dot(b, c), 2 * n * item),
        "compiled (b + c).sum()": (compiled_read(b, c), 2 * n * item),
        "vector_norm": (lambda: torch.linalg.vector_norm(a), n * item),
        "mv (W @ x)": (lambda: torch.mv(rows, x), n * item + n // WIDTH * item),
        "vm (y @ W)": (lambda: torch.mv(rows.t(), y), n * item + WIDTH * item),
        "dot of halves": (lambda: torch.dot(a[:half], a[half:]), n * item),
        "halves, summed": (lambda: a[:half].sum() + a[half:].sum(), n * item),
        "numpy sum": (lambda: a.numpy().sum(), n * item),
        "numpy W @ ones": (lambda: a.numpy().reshape(-1, WIDTH) @ ones,
                           n * item + n // WIDTH * item),
    }
    return kernels


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--threads", type=int, default=0,
                    help="torch's threads (default: torch's own count)")
    args = ap.parse_args()
    if args.size_mb < 1 or args.rounds < 1 or args.calls < 1:
        print("--size-mb, --rounds and --calls must be at least 1.", file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)
    n = args.size_mb * MB // 4 // WIDTH * WIDTH
    a, b, c = (torch.randn(n) for _ in range(3))
    kernels = candidates(a, b, c, n)
    seconds: dict[str, list[float]] = {name: [] for name in kernels}
    for call, _ in kernels.values():     # warm: first touch, threads up
        call()
    for _ in range(args.rounds):
        for name, (call, _) in kernels.items():
            for _ in range(args.calls):
                t0 = time.perf_counter()
                call()
                seconds[name].append(time.perf_counter() - t0)
    load = os.getloadavg()[0]
    print(f"{args.size_mb} MB arrays, torch {torch.__version__}, {torch.get_num_threads()} "
          f"threads, {os.cpu_count()} cores, load average {load:.2f}")
    if load > (os.cpu_count() or 1):
        print("The machine is busier than its cores: the figures say little.")
    rate = {name: (moved / 1e9 / statistics.median(seconds[name]),
                   moved / 1e9 / min(seconds[name])) for name, (_, moved) in kernels.items()}
    triad = rate["triad (STREAM)"]
    print(f"{'kernel':<20} {'median GB/s':>12} {'best GB/s':>10} {'x triad (med)':>14} "
          f"{'x triad (best)':>15}")
    for name, (median, best) in rate.items():
        print(f"{name:<20} {median:12.2f} {best:10.2f} {median / triad[0]:14.2f} "
              f"{best / triad[1]:15.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
