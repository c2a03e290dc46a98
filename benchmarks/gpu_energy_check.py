"""On an NVIDIA GPU: the per-point energy rows of a GEMM sweep against the board's energy
counter read by this script around the whole run, and the throttle flags of each point.

The points' energies (telemetry["energy"]: what the worker read around each point's timed
blocks) must add up to less than the whole run's (set-up, warm-up and the checks between
points are outside them), and each point's power must lie between the idle power and the
board's power limit (CAP_OVERSHOOT above it at most). Printed side by side, with each point's
flags and SM clock.

    .venv/bin/python benchmarks/gpu_energy_check.py [--device cuda] [--sizes 4096,8192,16384]
"""

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("SILICONBENCH_HOME", tempfile.mkdtemp(prefix="sb-bench-"))

from siliconbench.core.numbers import number, span  # noqa: E402
from siliconbench.core.runner import RunSpec, execute  # noqa: E402
from siliconbench.core.store import Store  # noqa: E402
from siliconbench.core.telemetry import nvml_index, power_trusted  # noqa: E402

# The board holds its power limit on average over a control window, so a point of a second or
# two can read above it: on an H100 (700 W limit) float32 N=4096 read 737 W by the counter
# (1.053x). A power row far outside [idle, limit] is what this check exists to catch: the old
# one-sample rows read 78.6 W at 360 TFLOPS.
CAP_OVERSHOOT = 1.10


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--sizes", default="4096,8192,16384")
    ap.add_argument("--dtypes", default="bfloat16,float32")
    args = ap.parse_args()
    import pynvml
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(nvml_index(args.device,
                                                     os.environ.get("CUDA_VISIBLE_DEVICES")))
    limit_w = pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000
    e0, t0 = pynvml.nvmlDeviceGetTotalEnergyConsumption(h) / 1000, time.monotonic()
    rec = execute(RunSpec("gemm", "torch", args.device,
                          {"sizes": [int(s) for s in args.sizes.split(",")],
                           "dtypes": args.dtypes.split(",")}), Store())
    e1, t1 = pynvml.nvmlDeviceGetTotalEnergyConsumption(h) / 1000, time.monotonic()
    whole_j, whole_s = e1 - e0, t1 - t0
    print(f"{rec.device_name}: run {rec.status}, whole run {number(whole_j)} J over "
          f"{span(whole_s)} = {number(whole_j / whole_s)} W by the counter read here "
          f"(power limit {number(limit_w)} W)")
    tel = rec.telemetry or {}
    idle = tel.get("summary", {}).get("idle_power_w")
    print(f"idle before the first point: {number(idle) if idle else '?'} W; "
          f"counter: {tel.get('summary', {}).get('energy_counter')}")
    points_j = sum(e.get("joules") or 0 for e in tel.get("energy", []))
    print(f"points' timed blocks: {number(points_j)} J = {points_j / whole_j:.3f} of the "
          "whole run's (must be < 1)")
    ok = 0 < points_j < whole_j
    tflops = {(r.params["size"], r.params["dtype"]): r for r in rec.rows if r.metric == "tflops"}
    for r in rec.rows:
        if r.metric != "power":
            continue
        key = (r.params["size"], r.params["dtype"])
        t = tflops.get(key)
        shown = power_trusted(r)
        inside = r.value is not None and (idle or 0) <= r.value <= limit_w * CAP_OVERSHOOT
        ok = ok and (r.value is None or inside)
        print(f"  N={key[0]} {key[1]}: {number(t.value) if t and t.value else '-'} TFLOPS, "
              f"power {number(r.value) if r.value else '-'} W {r.flags} shown={shown}; "
              f"flags on the TFLOPS row {t.flags if t else []}: {t.note if t else ''}")
    print("OK" if ok else "CHECK FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
