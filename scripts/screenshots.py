"""Screenshots of the real app for the README: opens the main window (offscreen, or on the
display in DISPLAY), runs the quick suite and a small bandwidth run on this machine's devices
through the window's own run queue, then writes one PNG per chart tab and per bottom tab to
docs/screenshots/, and one of a run's details. Uses a fresh results store; nothing of the user's is touched.

    python scripts/screenshots.py [--devices torch:cpu,...] [--out docs/screenshots]
    python scripts/screenshots.py --records tests/data/h200/*.json tests/data/records/*.json

With --records, nothing runs: those run records (a GPU's beside this machine's CPU runs, say)
are imported into the fresh store, selected together, and every chart and Compare is shot
(the Run Queue, empty then, is not). With --cases too, the selections a person comparing
machines makes (CASES: Compare with 2, 5 and 10 sides, the LLM tab with every GPU LLM run
and with a context sweep)
are shot at 1440x900 and at the window's minimum size with and without the sidebar,
those whose files were given:

    python scripts/screenshots.py --cases --records tests/data/h200/*.json \
        tests/data/h100/*.json tests/data/records/*.json
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZE = (1440, 900)
RUNS_TIMEOUT_S = 900


def wait_until(app, done, timeout_s: float, what: str) -> None:
    end = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > end:
            sys.exit(f"screenshots: gave up waiting for {what} after {timeout_s:.0f} s")
        app.processEvents()
        time.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", help="comma-separated device keys (torch:cpu, mlx:gpu); "
                                          "default: every usable device")
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    parser.add_argument("--records", nargs="+", metavar="FILE",
                        help="run records to import and show instead of running anything")
    parser.add_argument("--cases", action="store_true",
                        help="with --records: shoot CASES' selections at 1440x900 and at the "
                             "minimum size")
    args = parser.parse_args()
    if sys.platform == "linux" and not os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["SILICONBENCH_HOME"] = tempfile.mkdtemp(prefix="sb-screenshots-")
    sys.path.insert(0, str(ROOT))

    from PySide6.QtWidgets import QApplication

    from siliconbench.core.runner import RunSpec
    from siliconbench.core.store import Store
    from siliconbench.gui.main_window import MainWindow
    from siliconbench.gui.welcome import SHOWN_KEY

    app = QApplication(["SiliconBench"])
    window = MainWindow(Store())
    window.settings.setValue(SHOWN_KEY, "true")
    window.ask_before_closing = False
    window.resize(*SIZE)
    window.show()
    if args.records:
        return (shoot_cases if args.cases else shoot_records)(app, window, args)
    window.start_background()
    wait_until(app, lambda: window.devices.devices and not window.devices.busy.isVisible(),
               300, "the device list")
    devices = [d for d in window.devices.devices if d.usable]
    if args.devices:
        wanted = set(args.devices.split(","))
        devices = [d for d in devices if f"{d.framework}:{d.id}" in wanted]
    if not devices:
        sys.exit("screenshots: no usable device to run on")
    window.devices.devices = devices            # the quick suite runs on these
    window.devices.set_checked([f"{d.framework}:{d.id}" for d in devices[:1]])
    queued = window.queue_quick_suite()
    bandwidth = [RunSpec("bandwidth", d.framework, d.id, {"sizes_mb": [16, 64]}, quick=True)
                 for d in devices if d.framework == "torch"]
    window.queue.enqueue(bandwidth, [f"Bandwidth · {d.name}" for d in devices
                                     if d.framework == "torch"])
    print(f"running {queued} quick-suite runs and {len(bandwidth)} bandwidth runs on "
          f"{', '.join(f'{d.framework}:{d.id}' for d in devices)}", flush=True)
    t0 = time.monotonic()
    wait_until(app, lambda: window.queue.jobs and not window.queue.busy, RUNS_TIMEOUT_S,
               "the runs")
    print(f"runs done in {time.monotonic() - t0:.0f} s", flush=True)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def shot(name: str) -> None:
        for _ in range(20):          # let layouts and plots settle
            app.processEvents()
            time.sleep(0.02)
        window.grab().save(str(out / f"{name}.png"))
        print(f"wrote {out / f'{name}.png'}", flush=True)

    # The queue as the app leaves it when the runs are done: the chart in front is the one
    # the window opened on (a run never changes the tab; the user does).
    window.bottom.setCurrentWidget(window.queue_view)
    shot("run-queue")
    window.bottom.setCurrentWidget(window.results)
    window.select_all_runs()
    charts = window.charts
    for i in range(charts.count()):
        if charts.widget(i) is not window.compare:
            charts.setCurrentIndex(i)
            shot(charts.tabText(i).lower().replace(" ", "-"))
    # Compare as the first launch ends: the suite's runs that match a published machine,
    # side by side with it (LiveRuns.show_comparison, what the welcome's suite calls).
    window.live_runs.show_comparison([j.record for j in window.queue.jobs if j.saved])
    shot("compare")
    gemm = [r for r in window.results.selected_records() if r.workload == "gemm"]
    window.results.select_ids({gemm[0].id} if gemm else set())
    detail = window.results_actions.show_run_details()
    if detail is not None:
        for _ in range(10):
            app.processEvents()
        detail.grab().save(str(out / "run-details.png"))
        print(f"wrote {out / 'run-details.png'}", flush=True)
        detail.close()
    window.close()
    return 0


def shoot_records(app, window, args) -> int:
    """The charts and Compare of imported records, all selected: nothing is run."""
    from siliconbench.core.results import records_from_json
    for path in args.records:
        for rec in records_from_json(Path(path).read_text(encoding="utf-8")):
            window.store.save(rec)
    window.results.reload()
    window.select_all_runs()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    charts = window.charts
    for i in range(charts.count()):
        charts.setCurrentIndex(i)
        for _ in range(40):          # let layouts and plots settle
            app.processEvents()
            time.sleep(0.02)
        name = "compare" if charts.widget(i) is window.compare else \
            charts.tabText(i).lower().replace(" ", "-")
        window.grab().save(str(out / f"{name}.png"))
        print(f"wrote {out / f'{name}.png'}", flush=True)
    # The details of the first GEMM run with a GPU name, else of the first GEMM run.
    gemm = sorted((r for r in window.results.selected_records() if r.workload == "gemm"),
                  key=lambda r: r.device == "cpu")
    window.results.select_ids({gemm[0].id} if gemm else set())
    detail = window.results_actions.show_run_details()
    if detail is not None:
        for _ in range(20):
            app.processEvents()
            time.sleep(0.02)
        detail.grab().save(str(out / "run-details.png"))
        print(f"wrote {out / 'run-details.png'}", flush=True)
        detail.close()
    window.close()
    return 0


def _gemm_gpu(recs):
    return [r for r in recs if r.workload == "gemm" and r.device != "cpu"]


# name: (the tab shot, the runs selected from {file stem: its runs}). The five are this
# CPU's quick-suite GEMM runs on three frameworks with two H100 GEMM runs; the ten, ten run
# identities (tests/helpers/gui.py's ten_sides).
CASES = {
    "compare-2-sides": ("Compare", lambda f: f["h200-gemm"] + f["gemm-torch"]),
    "compare-5-sides": ("Compare", lambda f: f["gemm-tensorflow"] + f["gemm-torch"]
                        + f["gemm-mlx"] + f["h100-gemm"]
                        + _gemm_gpu(f["h100-quick-suite"])[:1]),
    "compare-10-sides": ("Compare", lambda f: f["h200-gemm"] + f["h200-gemmtf32"] + [
        r for stem in ("gemm-torch", "infer-torch", "infer-torch-reference", "gemm-tensorflow",
                       "gemm-mlx", "gemm_cpu_tiny", "llm-llamacpp") for r in f[stem]]
        + [r for r in f["h100-quick-suite"] if r.workload == "gemm" and r.device == "cpu"]
        + f["h100-gemm"]),
    "llm-gpu-runs": ("LLM", lambda f: [r for recs in f.values() for r in recs
                                       if r.workload == "llm" and r.device != "cpu"]),
    # A context sweep's decode over its depths, 0 to 3968, on a log2 axis.
    "llm-context-sweep": ("LLM", lambda f: f["llm-torch-context-sweep"]),
    # Issue 50's cases (the Mac records as tests/helpers/mac_records.py makes them,
    # written by scripts/mac_records.py): two Macs of one chip and a colleague's identical
    # MacBook Pro; three repeats with one outlier; TF32 beside a CPU's float32; the H100's
    # and H200's Llama-3.1-8B runs, one without its decode loop.
    "compare-three-macs": ("Compare", lambda f: f["mac-mbp"] + f["mac-studio"]
                           + f["mac-mbp-colleague"]),
    "compare-repeats": ("Compare", lambda f: f["mac-studio-repeats"] + f["mac-mbp"]),
    "compare-tf32-cpu": ("Compare", lambda f: f["h200-gemmtf32"] + f["gemm-torch"]),
    "compare-8b": ("Compare", lambda f: f["h100-llm8b-quick"] + f["h200-llm8b"]),
}


def shoot_cases(app, window, args) -> int:
    """CASES' selections, each at 1440x900 and at the window's minimum size."""
    from siliconbench.core.results import records_from_json
    files: dict[str, list] = {}
    for path in args.records:
        files[Path(path).stem] = records_from_json(Path(path).read_text(encoding="utf-8"))
        for rec in files[Path(path).stem]:
            window.store.save(rec)
    window.results.reload()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    charts = window.charts
    for name, (tab, pick) in CASES.items():
        try:
            chosen = pick(files)
        except KeyError as e:
            print(f"skipped {name}: no {e.args[0]}.json given", flush=True)
            continue
        window.show_results()
        window.results.select_ids({r.id for r in chosen})
        charts.setCurrentIndex(next(i for i in range(charts.count())
                                    if charts.tabText(i) == tab))
        # 1440x900; the narrowest with the sidebar; the window's smallest, sidebar hidden.
        for sidebar, tag in ((True, ""), (True, "-minimum"), (False, "-minimum-no-sidebar")):
            window.show_sidebar(sidebar)
            window.resize(*(SIZE if not tag else window.minimumSize().toTuple()))
            for _ in range(40):          # let layouts and plots settle
                app.processEvents()
                time.sleep(0.02)
            window.grab().save(str(out / f"{name}{tag}.png"))
            print(f"wrote {out / f'{name}{tag}.png'} ({len(chosen)} runs, "
                  f"{window.width()}x{window.height()})", flush=True)
        window.show_sidebar(True)
    window.close()
    return 0


if __name__ == "__main__":
    code = main()
    # PySide6 6.12 can abort while the interpreter tears down after such a session ("none_dealloc
    # ... refcount error", as tests/conftest.py notes); the PNGs are written: leave without it.
    sys.stdout.flush()
    os._exit(code)
