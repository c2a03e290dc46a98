"""How quick the command line is: `siliconbench devices` (target under 3 s, importing neither
TensorFlow nor Qt) and a GEMM sweep of 256..2048 float32 on the CPU (target under 30 s).

    .venv/bin/python benchmarks/cli_speed.py
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, SILICONBENCH_HOME=tempfile.mkdtemp(prefix="sb-bench-"))


def timed(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=ENV, check=True,
                   capture_output=True)
    return time.perf_counter() - t0


def main() -> int:
    probe = ("import sys; from core.cli import main; main(['devices', '--json']);"
             "print(sorted(m for m in ('tensorflow', 'PySide6', 'pyqtgraph') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=ENV, check=True,
                            capture_output=True, text=True).stdout.strip().splitlines()[-1]
    devices = [timed(["devices"]) for _ in range(5)]
    sweep = timed(["run", "gemm", "--sizes", "256,512,1024,2048", "--dtypes", "float32"])
    ok_devices = statistics.median(devices) < 3 and loaded == "[]"
    print(f"siliconbench devices: median {statistics.median(devices):.2f} s of 5 "
          f"(max {max(devices):.2f} s); TensorFlow/Qt modules loaded: {loaded}  "
          f"target < 3 s: {'PASS' if ok_devices else 'FAIL'}")
    print(f"gemm sweep 256..2048 float32 on cpu: {sweep:.1f} s  "
          f"target < 30 s: {'PASS' if sweep < 30 else 'FAIL'}")
    return 0 if ok_devices and sweep < 30 else 1


if __name__ == "__main__":
    sys.exit(main())
