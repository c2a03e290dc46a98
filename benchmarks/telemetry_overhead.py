"""What telemetry costs the workload: GEMM throughput in a child process (as runs have it) while
this process samples telemetry with the sources a run on this machine uses, against the same
with no sampler, in one run. Rounds alternate on/off in ABBA order so drift in the machine's
speed hits both alike; the figure is median(on) / median(off), target >= 0.99. The spread is
printed too: on a shared machine it can be wider than the effect being measured, so the CPU
time this process spends sampling is measured as well (getrusage, on rounds against off
rounds): the most throughput telemetry can take from the workload by competing for a core;
and the child's throughput per second of its own CPU time (process_time), which other
processes' load disturbs far less and which still shows telemetry disturbing the workload's
caches or memory.

    .venv/bin/python benchmarks/telemetry_overhead.py [--rounds 20] [--seconds 3] [--size 512]
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from siliconbench.core.telemetry import DEFAULT_INTERVAL_S, TelemetrySampler  # noqa: E402

# Runs float32 matmuls for the seconds asked on each stdin line; answers with the TFLOPS per
# second of wall-clock time and per second of its own CPU time.
CHILD = """
import sys, time, torch
n = int(sys.argv[1])
a, b, c = torch.randn(n, n), torch.randn(n, n), torch.empty(n, n)
for _ in range(20):
    torch.matmul(a, b, out=c)
print("ready", flush=True)
for line in sys.stdin:
    seconds, calls = float(line), 0
    t0, c0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - t0 < seconds:
        torch.matmul(a, b, out=c)
        calls += 1
    tflop = 2 * n**3 * calls / 1e12
    print(tflop / (time.perf_counter() - t0), tflop / (time.process_time() - c0), flush=True)
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20, help="rounds with telemetry on (and off)")
    ap.add_argument("--seconds", type=float, default=3.0, help="length of one round")
    ap.add_argument("--size", type=int, default=512, help="matrix size N (float32)")
    args = ap.parse_args()
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(args.size)], text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdout.readline().strip() == "ready"

    def gemm_round(cpu: list[float]) -> tuple[float, float]:
        """One round's TFLOPS (per wall second, per second of the child's CPU time); adds this
        process's CPU seconds per second of the round to cpu."""
        r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        child.stdin.write(f"{args.seconds}\n")
        child.stdin.flush()
        wall, per_cpu = map(float, child.stdout.readline().split())
        r1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        cpu.append((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / (t1 - t0))
        return wall, per_cpu

    on: list[tuple[float, float]] = []
    off: list[tuple[float, float]] = []
    cpu_on: list[float] = []
    cpu_off: list[float] = []
    sources: list[str] = []
    samples = 0
    try:
        gemm_round([])                                # one round unmeasured: clocks settle
        for i in range(args.rounds):
            for telemetry_on in ((True, False) if i % 2 == 0 else (False, True)):
                if not telemetry_on:
                    off.append(gemm_round(cpu_off))
                    continue
                sampler = TelemetrySampler("cpu").start()
                on.append(gemm_round(cpu_on))
                t = sampler.stop()
                sources = [s.name for s in sampler.sources]
                samples += max(len(s["v"]) for s in t["series"].values())
    finally:
        child.stdin.close()
        child.wait(10)

    wall_on, wall_off = [w for w, _ in on], [w for w, _ in off]
    ratio = statistics.median(wall_on) / statistics.median(wall_off)
    pairs = sorted(a / b for a, b in zip(wall_on, wall_off))
    cpu_ratio = statistics.median(c for _, c in on) / statistics.median(c for _, c in off)
    cpu_pairs = sorted(a[1] / b[1] for a, b in zip(on, off))

    def spread(xs: list[float]) -> str:
        q1, _, q3 = statistics.quantiles(xs, n=4)
        return (f"median {statistics.median(xs):.4f} TFLOPS, IQR {q1:.4f}..{q3:.4f}, "
                f"min..max {min(xs):.4f}..{max(xs):.4f}")

    print(f"GEMM {args.size}x{args.size} float32 on the CPU in a child process, "
          f"{args.rounds} rounds of {args.seconds:g} s each way, ABBA order; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the end")
    print(f"telemetry on  (sources {', '.join(sources)}; every {DEFAULT_INTERVAL_S:g} s, "
          f"{samples} samples): {spread(wall_on)}")
    print(f"telemetry off: {spread(wall_off)}")
    print(f"on/off per round pair: median {statistics.median(pairs):.3f}, "
          f"min..max {pairs[0]:.3f}..{pairs[-1]:.3f}")
    print(f"per second of the child's CPU time: median(on) / median(off) = {cpu_ratio:.4f}, "
          f"per round pair min..max {cpu_pairs[0]:.3f}..{cpu_pairs[-1]:.3f}")
    sampling_ms = 1000 * (statistics.mean(cpu_on) - statistics.mean(cpu_off))
    print(f"this process's CPU time: {1000 * statistics.mean(cpu_on):.2f} ms per second with "
          f"telemetry on, {1000 * statistics.mean(cpu_off):.2f} ms off: sampling costs "
          f"{sampling_ms:.2f} ms of CPU per second, {sampling_ms / 10 / os.cpu_count():.3f}% of "
          f"this machine's CPU time")
    print(f"wall clock: median(on) / median(off) = {ratio:.4f} (target >= 0.99): "
          f"{'PASS' if ratio >= 0.99 else 'FAIL'}")
    return 0 if ratio >= 0.99 else 1


if __name__ == "__main__":
    t0 = time.monotonic()
    code = main()
    print(f"({time.monotonic() - t0:.0f} s)")
    sys.exit(code)
