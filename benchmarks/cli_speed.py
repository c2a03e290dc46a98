"""How quick the command line is: `siliconbench devices` (target under 3 s, importing neither
TensorFlow nor Qt; asking every framework afresh is bounded by TensorFlow's import, so the
figure is given both ways) and a GEMM sweep of 256..2048 float32 on the CPU (target < 30 s).

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
    fresh = [timed(["devices", "--refresh"]) for _ in range(3)]   # every framework asked
    kept = [timed(["devices"]) for _ in range(5)]                   # the kept answer
    sweep = timed(["run", "gemm", "--sizes", "256,512,1024,2048", "--dtypes", "float32"])
    ok_devices = statistics.median(kept) < 3 and loaded == "[]"
    print(f"siliconbench devices --refresh (each framework imported in a child): median "
          f"{statistics.median(fresh):.2f} s of 3 (max {max(fresh):.2f} s)")
    print(f"siliconbench devices (answer kept until the installation changes): median "
          f"{statistics.median(kept):.2f} s of 5 (max {max(kept):.2f} s); TensorFlow/Qt "
          f"modules loaded in the command: {loaded}  target < 3 s: "
          f"{'PASS' if ok_devices else 'FAIL'}")
    print(f"gemm sweep 256..2048 float32 on cpu: {sweep:.1f} s  "
          f"target < 30 s: {'PASS' if sweep < 30 else 'FAIL'}")
    return 0 if ok_devices and sweep < 30 else 1


if __name__ == "__main__":
    sys.exit(main())
