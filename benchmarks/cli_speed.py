"""How quick the command line is:
- a tiny run (`siliconbench run gemm --framework torch --device cpu --sizes 128 --dtypes float32
  --quick`) against the work it stands for, a plain process that imports torch and times the
  same product with the same protocol (siliconbench.core.measure, quick settings): the two alternate,
  ROUNDS rounds, and the ratio of their medians must be at most 1.5;
- `siliconbench devices` against the command's own start (`siliconbench --version`), side by
  side: the kept answer must cost at most DEVICES_TARGET times that and import neither
  TensorFlow nor Qt; asking every framework afresh is bounded by TensorFlow's import, so that
  figure is printed for information;
- a GEMM sweep of 256..2048 float32 on the CPU, printed for information (its time is the
  protocol's work and the machine's speed, which differ 3-7x between machines: no target).

    .venv/bin/python benchmarks/cli_speed.py [--tiny-only]
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, SILICONBENCH_HOME=tempfile.mkdtemp(prefix="sb-bench-"))


ROUNDS = 7
TINY_TARGET = 1.5
DEVICES_TARGET = 1.5
TINY_RUN = ["run", "gemm", "--framework", "torch", "--device", "cpu", "--sizes", "128",
            "--dtypes", "float32", "--quick"]
# The tiny run's work, nothing else: import torch, then one 128x128 float32 product timed by
# the protocol every run uses, with the quick settings.
PLAIN_WORK = """
import torch
from siliconbench.core.measure import QUICK, measure
a, b = torch.randn(128, 128), torch.randn(128, 128)
out = torch.empty_like(a)
measure(lambda: torch.matmul(a, b, out=out), lambda: None, QUICK)
"""


def timed(args: list[str]) -> float:
    return timed_python(["-m", "siliconbench.core.cli", *args])


def timed_python(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=ROOT, env=ENV, check=True, capture_output=True)
    return time.perf_counter() - t0


def tiny_run_ratio() -> bool:
    runs, plain = [], []
    for i in range(ROUNDS):  # alternate which goes first, so drifting load hits both alike
        pair = [(runs, TINY_RUN), (plain, None)]
        for times, args in pair if i % 2 == 0 else pair[::-1]:
            times.append(timed(args) if args else timed_python(["-c", PLAIN_WORK]))
    ratio = statistics.median(runs) / statistics.median(plain)
    print(f"tiny run `siliconbench {' '.join(TINY_RUN)}`: median {statistics.median(runs):.2f} s "
          f"of {ROUNDS}; plain process importing torch and timing the same product: median "
          f"{statistics.median(plain):.2f} s; ratio {ratio:.2f} (per round: "
          f"{', '.join(f'{r / p:.2f}' for r, p in zip(runs, plain))})  target <= {TINY_TARGET}: "
          f"{'PASS' if ratio <= TINY_TARGET else 'FAIL'}")
    return ratio <= TINY_TARGET


def main() -> int:
    ok_tiny = tiny_run_ratio()
    if sys.argv[1:] == ["--tiny-only"]:
        return 0 if ok_tiny else 1
    probe = ("import sys; from siliconbench.core.cli import main; main(['devices', '--json']);"
             "print(sorted(m for m in ('tensorflow', 'PySide6', 'pyqtgraph') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=ENV, check=True,
                            capture_output=True, text=True).stdout.strip().splitlines()[-1]
    fresh = [timed(["devices", "--refresh"]) for _ in range(3)]   # every framework asked
    kept, start = [], []
    for _ in range(5):  # alternating, so drifting load hits both alike
        kept.append(timed(["devices"]))                             # the kept answer
        start.append(timed(["--version"]))                          # the command's own start
    sweep = timed(["run", "gemm", "--sizes", "256,512,1024,2048", "--dtypes", "float32"])
    ratio = statistics.median(kept) / statistics.median(start)
    ok_devices = ratio <= DEVICES_TARGET and loaded == "[]"
    print(f"siliconbench devices --refresh (each framework imported in a child): median "
          f"{statistics.median(fresh):.2f} s of 3 (max {max(fresh):.2f} s)")
    print(f"siliconbench devices (answer kept until the installation changes): median "
          f"{statistics.median(kept):.2f} s of 5 against {statistics.median(start):.2f} s for "
          f"siliconbench --version; ratio {ratio:.2f}; TensorFlow/Qt modules loaded in the "
          f"command: {loaded}  target <= {DEVICES_TARGET} and none loaded: "
          f"{'PASS' if ok_devices else 'FAIL'}")
    print(f"gemm sweep 256..2048 float32 on cpu: {sweep:.1f} s (for information)")
    return 0 if ok_tiny and ok_devices else 1


if __name__ == "__main__":
    sys.exit(main())
