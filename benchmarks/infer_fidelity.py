"""Fidelity of the infer workload: SiliconBench's img/s for ResNet50 on the CPU, batch 8, data
made on the device (the real path: child process, the measure protocol) divided by a minimal
hand-written torch loop (eval, inference_mode) in the same run. Target: at least 0.97. The two
alternate, five rounds each, so drift in the machine's speed hits both alike; on a busy
machine (load above its cores) the ratios say little, and the script says so.
Then the host/device data-path ratio (img/s with host-prepared data over device-made data) for
ResNet50 and MobileNetV2, the gap the original image benchmark's RTX 3090 fell into.

    .venv/bin/python benchmarks/infer_fidelity.py [--device cpu] [--ratio-batch 64] [--threads N]

On a machine shared with other work, --threads 1 keeps the comparison fair: with every core's
thread in the pool, one busy core stalls the others at each barrier and speeds swing 5x.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

import psutil
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("SILICONBENCH_HOME", tempfile.mkdtemp(prefix="sb-bench-"))

from benchmarks.machine_load import warn_if_busy  # noqa: E402
from siliconbench.core.frameworks.torch.adapter import synchronizer  # noqa: E402
from siliconbench.core.runner import RunSpec, execute  # noqa: E402

FIDELITY_MODEL, FIDELITY_BATCH = "resnet50", 8
ROUNDS = 5
HAND_LOOP_S = 5.0
QUIET_CPU_PERCENT = 20
RATIO_MODELS = ("resnet50", "mobilenet_v2")


def wait_for_quiet(limit_s: float = 90) -> None:
    """On a shared machine, start a measurement when the CPUs are idle (up to limit_s)."""
    deadline = time.monotonic() + limit_s
    while psutil.cpu_percent(interval=1.0) > QUIET_CPU_PERCENT and time.monotonic() < deadline:
        pass


def hand_loop(device: str) -> float:
    """img/s of the plainest correct loop: one input, eval, inference_mode, synchronised."""
    dev = torch.device(device)
    sync = synchronizer(dev)
    model = torchvision.models.get_model(FIDELITY_MODEL, weights=None).to(dev).eval()
    x = torch.randn(FIDELITY_BATCH, 3, 224, 224, device=dev)
    with torch.inference_mode():
        for _ in range(3):
            model(x)
        sync()
        calls, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < HAND_LOOP_S:
            model(x)
            calls += 1
        sync()
        return calls * FIDELITY_BATCH / (time.perf_counter() - t0)


def siliconbench(device: str, params: dict) -> dict[str, float]:
    """The run's metrics by data path: {"device": img/s, ..., "ratio": host/device}."""
    rec = execute(RunSpec("infer", "torch", device, params))
    assert rec.status == "ok", rec.reason
    out = {r.params["data"]: r.value for r in rec.rows if r.metric == "samples_per_s"}
    for r in rec.rows:
        if r.metric == "host_device_ratio":
            out["ratio"] = r.value
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--ratio-batch", type=int, default=64,
                   help="batch size of the data-path runs (64: the original benchmark's)")
    p.add_argument("--threads", type=int, help="CPU threads for both (default: torch's own)")
    args = p.parse_args()
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)   # the runs' child processes
        torch.set_num_threads(args.threads)
    device, ratio_batch = args.device, args.ratio_batch
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {device}, "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

    ours, ref = [], []
    for _ in range(ROUNDS):
        wait_for_quiet()
        ours.append(siliconbench(device, {"model": FIDELITY_MODEL, "batch_size": FIDELITY_BATCH,
                                          "images": FIDELITY_BATCH, "data": "device"})["device"])
        wait_for_quiet()
        ref.append(hand_loop(device))
    a, b = statistics.median(ours), statistics.median(ref)
    print(f"{FIDELITY_MODEL} batch {FIDELITY_BATCH}: SiliconBench {a:.2f} img/s "
          f"(rounds {', '.join(f'{v:.2f}' for v in ours)}), hand loop {b:.2f} img/s "
          f"(rounds {', '.join(f'{v:.2f}' for v in ref)})")
    ok = a / b >= 0.97
    print(f"fidelity ratio {a / b:.3f} (target >= 0.97): {'PASS' if ok else 'FAIL'}")

    for model in RATIO_MODELS:
        wait_for_quiet()
        r = siliconbench(device, {"model": model, "batch_size": ratio_batch,
                                  "images": 2 * ratio_batch, "data": "both"})
        print(f"{model} batch {ratio_batch}: device data {r['device']:.1f} img/s, host data "
              f"{r['host']:.1f} img/s, host/device ratio {r['ratio']:.3f}")
    warn_if_busy()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
