"""Run records built by hand for the comparison and report tests: known samples, known
machines, so every expected verdict and warning is known in advance."""

from siliconbench.core.results import Row, RunRecord
from siliconbench.core.stats import summarize

MEASURE = {"min_blocks": 10, "max_time_s": 10.0}
QUICK_MEASURE = {"min_blocks": 5, "max_time_s": 2.0}


def samples(center: float, n: int = 20) -> list[float]:
    """Deterministic per-block samples spread ±1% around `center`."""
    return [center * (1 + 0.01 * ((i % 5) - 2) / 2) for i in range(n)]


def row(metric: str, unit: str, params: dict, xs: list[float], flags=()) -> Row:
    s = summarize(xs)
    return Row(metric, s.median, unit, dict(params), s, list(flags), samples=list(xs))


def machine(label: str, **kw) -> dict:
    return {"model_name": label, "chip": "Apple M1 Max", "os_name": "macOS",
            "os_version": "14.5", "power_source": "ac", "low_power_mode": False} | kw


def gemm_run(label: str, tflops: float, *, sizes=(1024, 2048), torch="2.4.1", machine_kw=None,
             settings=None, params=None, created_at="2024-06-01T10:00:00+00:00", **kw) -> RunRecord:
    rows = [row("tflops", "TFLOPS", {"size": n, "dtype": "float32"}, samples(tflops * n / 2048))
            for n in sizes]
    return RunRecord(workload="gemm", framework="torch", device="mps",
                     params=params or {"sizes": list(sizes), "dtypes": ["float32"],
                                       "tf32": False},
                     label=label, machine=machine(label, **(machine_kw or {})),
                     software={"torch": torch},
                     settings=settings or {"measure": MEASURE, "tf32": False, "peak": "M1 Max"},
                     rows=rows, created_at=created_at, **kw)


def infer_run(label: str, img_s: float, flags=(), **kw) -> RunRecord:
    point = {"model": "resnet50", "batch_size": 64, "data": "host"}
    return RunRecord(workload="infer", framework="torch", device="mps", params=dict(point),
                     label=label, machine=machine(label), software={"torch": "2.4.1"},
                     settings={"measure": MEASURE},
                     rows=[row("samples_per_s", "img/s", point, samples(img_s), flags),
                           row("step_time", "ms", point, samples(64e3 / img_s), flags)], **kw)
