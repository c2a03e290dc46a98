"""Whether the quick suite fits the machine it runs on: the whole suite as `siliconbench quick`
runs it (every entry on every usable device, each run a child process), its total time
(target: within 3 minutes on a 2-core CPU), and per device the headline of its GEMM and
inference runs beside the best point of a full sweep of the same workload on the same device
(target: ratio >= 0.9).

The full sweeps, measured after the suite with the full timing protocol:
- GEMM: N = 128, 256, 512, ... in each dtype of the suite, while three operands fit and one
  product is predicted under --max-product-s (from the last size's rate);
- inference (PyTorch): the suite's model at batch sizes 8, 16, ... --max-batch.

    .venv/bin/python benchmarks/quick_suite_fit.py [--frameworks torch,mlx] [--max-batch 64]
        [--sweep-devices cuda]
"""

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("SILICONBENCH_HOME", tempfile.mkdtemp(prefix="sb-bench-"))

from benchmarks.machine_load import warn_if_busy  # noqa: E402
from siliconbench.core.catalogue import headline  # noqa: E402
from siliconbench.core.numbers import number, span  # noqa: E402
from siliconbench.core.runner import RunSpec, discover_devices, execute  # noqa: E402
from siliconbench.core.store import Store  # noqa: E402
from siliconbench.core.suites import expand  # noqa: E402

SUITE_TARGET_S = 180
RATIO_TARGET = 0.9


def best(rec):
    row = headline(rec)
    return (row.value, row.params) if row is not None else (None, None)


def full_gemm(store, spec, max_product_s: float) -> tuple[float | None, dict | None, float]:
    """The best TFLOPS of a full sweep on the spec's device and dtypes, and its time."""
    t0 = time.monotonic()
    top, where = None, None
    for dtype in spec.params["dtypes"]:
        n, rate = 128, None
        while True:
            if rate is not None and 2 * n**3 / (rate * 1e12) > max_product_s:
                break
            rec = execute(RunSpec("gemm", spec.framework, spec.device,
                                  {"sizes": [n], "dtypes": [dtype]}), store)
            value, params = best(rec)
            if value is None:
                break
            rate = value
            if top is None or value > top:
                top, where = value, params
            n *= 2
    return top, where, time.monotonic() - t0


def full_infer(store, spec, max_batch: int) -> tuple[float | None, dict | None, float]:
    t0 = time.monotonic()
    top, where = None, None
    batch = 8
    while batch <= max_batch:
        params = {k: v for k, v in spec.params.items() if k not in ("grow", "budget_s")}
        rec = execute(RunSpec("infer", spec.framework, spec.device,
                              {**params, "batch_size": batch, "images": max(batch, 32)}), store)
        value, point = best(rec)
        if value is not None and (top is None or value > top):
            top, where = value, point
        batch *= 2
    return top, where, time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frameworks", default="", help="only these frameworks' devices "
                                                     "(default: every usable one)")
    ap.add_argument("--max-product-s", type=float, default=2.0,
                    help="the full GEMM sweep's largest single product, in seconds")
    ap.add_argument("--max-batch", type=int, default=64, help="the full inference sweep's "
                                                              "largest batch")
    ap.add_argument("--sweep-devices", default="", help="full sweeps on these devices only "
                    "(an id, cuda:0, or its kind, cuda; default: every device the suite ran on)")
    args = ap.parse_args()
    sweep_on = {d for d in args.sweep_devices.split(",") if d}
    wanted = {f for f in args.frameworks.split(",") if f}
    devices = [d for d in discover_devices(fresh=False)
               if d.usable and (not wanted or d.framework in wanted)]
    store = Store()
    specs = expand("quick", devices)
    print(f"quick suite: {len(specs)} runs on "
          f"{', '.join(sorted({f'{d.framework}:{d.id}' for d in devices}))}; "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    t0 = time.monotonic()
    records = []
    for spec in specs:
        started = time.monotonic()
        rec = execute(spec, store)
        records.append((spec, rec))
        value, params = best(rec)
        print(f"  {spec.workload:9s} {spec.framework}:{spec.device}  {rec.status}  "
              f"{span(time.monotonic() - started)}  headline {number(value) if value else '-'} "
              f"{params or rec.reason or ''}")
    total = time.monotonic() - t0
    print(f"quick suite total: {span(total)} (target <= {span(SUITE_TARGET_S)} on a 2-core "
          f"CPU): {'ok' if total <= SUITE_TARGET_S else 'OVER'}")
    warn_if_busy()

    print("\nheadline of the quick suite beside the best point of a full sweep "
          f"(target ratio >= {RATIO_TARGET})")
    ok = True
    for spec, rec in records:
        if sweep_on and not {spec.device, spec.device.split(":")[0]} & sweep_on:
            continue
        if spec.workload == "gemm" and spec.params.get("grow"):
            top, where, took = full_gemm(store, spec, args.max_product_s)
        elif spec.workload == "infer" and spec.params.get("grow"):
            top, where, took = full_infer(store, spec, args.max_batch)
        else:
            continue
        value, params = best(rec)
        # The same entry again, at once: on a machine whose speed drifts (a shared VM: this
        # project's swung 25% over tens of seconds), a gap that it closes is the machine's.
        again, _ = best(execute(spec, store))
        ratio = value / top if value and top else None
        ok = ok and ratio is not None and ratio >= RATIO_TARGET
        print(f"  {spec.workload:6s} {spec.framework}:{spec.device}  quick {number(value or 0)} "
              f"at {params}  full sweep {number(top or 0)} at {where} ({span(took)})  "
              f"ratio {ratio:.3f}; the quick entry again after the sweep "
              f"{number(again or 0)}" if ratio else f"  {spec.workload} {spec.framework}:"
              f"{spec.device}: no figure ({rec.reason})")
    warn_if_busy()
    return 0 if ok and total <= SUITE_TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
