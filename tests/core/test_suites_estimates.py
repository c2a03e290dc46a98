"""The quick suite sized to the device (GEMM sizes and the inference batch doubling until they
stop gaining or the budget is spent, the LLM preset by the device's memory and time), and the
estimate before every run: refused when nothing fits (the 64 GB all-reduce), questioned when
long (the Qwen3-4B reference on a 2-core CPU, in the CLI and in the app's Run It Here), and a
run whose every point was unsupported ending as failed, not as Done."""

from __future__ import annotations

import os
import types

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from siliconbench.core.estimate import estimate, spec_verdicts  # noqa: E402
from siliconbench.core.frameworks import DeviceInfo  # noqa: E402
from siliconbench.core.measure import QUICK  # noqa: E402
from siliconbench.core.runner import RunSpec, execute  # noqa: E402
from siliconbench.core.store import Store  # noqa: E402
from siliconbench.core.suites import expand  # noqa: E402
from tests.helpers.dialogs import the_sheet  # noqa: E402
from tests.helpers.h200_records import H100  # noqa: E402

GB = 2**30
LAPTOP = DeviceInfo("torch", "cpu", "Test CPU", "cpu", int(23.5 * GB))
H200 = DeviceInfo("torch", "cuda:0", "NVIDIA H200", "gpu", 141 * 10**9)
QWEN_REFERENCE = {"batch": 1, "depths": [2048], "dtype": "bfloat16", "gen_tokens": 128,
                  "preset": "qwen3-4b", "prompts": [2048]}      # siliconbench/resources/reference/mlx-lm


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)


# ---------------------------------------------------------------- the quick suite

@pytest.mark.usefixtures("two_cores")
def test_the_quick_suite_fits_each_device():
    specs: dict = {}
    for spec in expand("quick", [LAPTOP, H200]):
        specs.setdefault((spec.workload, spec.device), spec.params)   # the first of each
    # The LLM: the largest preset that fits memory and the time budget; the tiny one where
    # nothing larger runs in time (a 2-core CPU), in the device's precision.
    assert specs[("llm", "cuda:0")]["preset"] == "llama-3.1-8b"
    assert specs[("llm", "cuda:0")]["dtype"] == "bfloat16"
    assert (specs[("llm", "cpu")]["preset"], specs[("llm", "cpu")]["dtype"]) == ("tiny", "float32")
    # GEMM and inference grow within budgets; the 8192 product of the M1 Max sweep is a GPU's.
    for where in ("cpu", "cuda:0"):
        assert specs[("gemm", where)]["grow"] and specs[("infer", where)]["grow"]
    assert [s.params["sizes"] for s in expand("quick", [H200]) if s.workload == "gemm"] == \
        [[256], [8192]]
    # Each run's estimate within its budget, and the suite's in 3 minutes on this CPU.
    total = sum(estimate(s.workload, s.params, LAPTOP, s.quick).seconds or 0
                for s in expand("quick", [LAPTOP]))
    assert total <= 180


def test_a_small_gpu_gets_the_preset_that_fits_its_memory():
    small = DeviceInfo("torch", "cuda:0", "NVIDIA H200", "gpu", 12 * 10**9)   # H200's rates
    [llm] = [s for s in expand("quick", [small]) if s.workload == "llm"]
    assert llm.params["preset"] == "qwen3-4b"       # 8B bf16 (16 GB of weights) does not fit


@pytest.mark.usefixtures("short_protocol")
def test_gemm_grows_until_the_budget_and_says_where_it_stopped():
    """On MLX's CPU (a tenth of a CPU-second to import): sizes double from 64; the budget of
    one second cannot hold all of them, so the sweep ends at a skipped size that says why."""
    rec = execute(RunSpec("gemm", "mlx", params={"sizes": [64], "dtypes": ["float32"],
                                                 "grow": True, "budget_s": 1}, quick=True),
                  Store())
    assert rec.status == "ok", rec.reason
    rows = [r for r in rec.rows if r.metric == "tflops"]
    sizes = [r.params["size"] for r in rows]
    assert sizes == [64 * 2**k for k in range(len(sizes))] and len(sizes) >= 2
    last = rows[-1]
    grew = rec.settings.get("grow_float32", "")
    # Either a size gained less than 3% (and the sweep says so), or the budget stopped it
    assert (last.value is None and "skipped" in last.flags and "time budget" in last.note) or \
        grew.startswith(f"sizes doubled up to {sizes[-1]}")


def test_inference_grows_its_batch_and_stops_at_the_budget(monkeypatch):
    """The doubling with a stand-in for one batch size's measurement: 100, 180, 182 img/s
    stops at the third (under 3% gain); a budget that cannot hold twice the last batch's
    time stops before it."""
    from siliconbench.core.workloads import infer
    seen: list[int] = []
    rates = {8: 100.0, 16: 180.0, 32: 182.0, 64: 400.0}

    now = [0.0]

    def one(ctx, params, batch, step):
        seen.append(batch)
        now[0] += 10.0                                 # each batch size "takes" 10 s
        return {"device": rates[batch]}, False
    monkeypatch.setattr(infer, "_run_batch", one)
    said = {}
    ctx = types.SimpleNamespace(record_settings=said.update, progress=lambda *a: None,
                                settings=QUICK)
    infer._grow(ctx, {"batch_size": 8, "images": 32, "budget_s": None})
    assert seen == [8, 16, 32]
    assert said["grow"] == "batch sizes doubled from 8: batch size 32 gained less than 3% " \
                           "over the best before it"
    seen.clear()
    monkeypatch.setattr("time.monotonic", lambda: now[0])
    # 10 s a batch size, nearly all of it fixed (building the model): 8 and 16 fit in 25 s
    infer._grow(ctx, {"batch_size": 8, "images": 32, "budget_s": 25})
    assert seen == [8, 16]
    assert said["grow"].startswith("batch sizes doubled from 8: batch size 32 would take about")


def test_the_next_batch_size_is_predicted_from_what_depends_on_the_batch():
    from siliconbench.core.measure import QUICK, point_seconds
    from siliconbench.core.workloads.infer import next_batch_s
    # 12 s at batch 8, 0.1 s a batch of it: the protocol's part and 4 latency batches scale
    measured = point_seconds(0.1, QUICK) + 4 * 0.1
    fixed = 12 - measured
    assert next_batch_s(12.0, 0.1, 8, 32, 1, 32, QUICK) == pytest.approx(
        fixed + point_seconds(0.2, QUICK) + 2 * 0.2)       # 16: 2 whole batches of 32 images


# ---------------------------------------------------------------- estimates

def test_every_workload_with_known_work_is_estimated(two_cores):
    gemm = estimate("gemm", {"sizes": [4096], "dtypes": ["float32"]}, LAPTOP, quick=True)
    assert gemm.peak_bytes == 3 * 4096**2 * 4 and gemm.seconds > 0
    bw = estimate("bandwidth", {}, LAPTOP, quick=True)       # the default 64/256/1024 MB
    assert bw.peak_bytes == 3 * 1024 * 2**20 and bw.seconds > 0   # STREAM's add, triad
    ar = estimate("allreduce", {"sizes": [2**28], "processes": 2}, LAPTOP)
    # every rank's buffers and, on a CPU, its process (issue 51: ranks are not free)
    from siliconbench.core.estimate import PROCESS_BYTES
    assert ar.peak_bytes == 2 * (3 * 2**28 + PROCESS_BYTES) and ar.seconds > 0
    default = estimate("allreduce", {}, LAPTOP)               # 4 KB .. 256 MB, two dtypes
    assert default.points == 34 and default.seconds > 300     # it took 8 minutes: questioned
    assert default.warnings("Test CPU", LAPTOP.memory_bytes)[0].startswith(
        "This run may take about ")
    from siliconbench.core.frameworks.torch.llm import Engine
    from siliconbench.core.kit import llm_shapes as lm
    from siliconbench.core.workloads.llm import PRESETS
    llm = estimate("llm", QWEN_REFERENCE, LAPTOP)
    qwen = PRESETS["qwen3-4b"]
    # weights + the cache of 2048 + 128 positions + a prefill's activations, its attention's
    # as torch's engine holds it on a CPU
    held = Engine.attention_bytes(qwen, "bfloat16", "cpu", 1, 2048 + 128)
    assert llm.peak_bytes == int(lm.memory_needed(qwen, "bfloat16", 1, 2048 + 128, held))
    assert lm.weight_bytes(qwen, "bfloat16") > 8e9 and llm.points == 2
    assert llm.seconds > 3600 and "2-core CPU" in llm.basis


def test_the_64_gb_allreduce_is_refused_before_it_starts(monkeypatch, capsys):
    """The all-reduce of 2^36-byte messages on a machine of 23.5 GB: one sentence, exit 2,
    and no process started."""
    import psutil

    from siliconbench.core import cli, runner
    monkeypatch.setattr(psutil, "virtual_memory",
                        lambda: types.SimpleNamespace(total=int(23.5 * GB),
                                                      available=int(23.5 * GB)))

    def no_run(*args, **kwargs):
        raise AssertionError("a run was started")
    monkeypatch.setattr(runner, "ChildRun", no_run)
    code = cli.main(["run", "allreduce", "--framework", "torch", "--device", "cpu",
                     "--sizes", str(2**36)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("siliconbench: Nothing of this run fits in ") and "\n" not in err
    assert ("'s 23.5 GB of free memory that a run may fill: an all-reduce of 64 GB float32 "
            "messages on 2 ranks (385 GB)") in err    # with each rank's process


def test_the_qwen3_4b_reference_on_a_cpu_is_questioned(two_cores):
    refusals, [sentence] = spec_verdicts([RunSpec("llm", "torch", "cpu", QWEN_REFERENCE)],
                                         [LAPTOP])
    assert refusals == []
    assert sentence.startswith("This run may take about ") and " h on Test CPU (" in sentence


def test_run_it_here_of_the_qwen3_4b_reference_on_a_cpu_asks(qtbot, window, two_cores):
    """Compare's Run It Here goes through the same question as Run: nothing is queued until
    the answer is Run Anyway."""
    from PySide6.QtWidgets import QMessageBox
    window.devices.set_devices([LAPTOP], {"torch": "test"})
    window.live_runs.queue_reference_run([RunSpec("llm", "torch", "cpu", QWEN_REFERENCE)])
    assert window.queue.jobs == []
    box = the_sheet(window)
    assert [b for b in window.findChildren(QMessageBox) if b.isVisible()] == [box]  # asked once
    assert "This run may take about" in box.informativeText()
    box.reject()                                    # Cancel: nothing runs
    assert window.queue.jobs == []


def test_a_run_whose_every_point_was_unsupported_fails_with_the_reason():
    """Every point refused (three 60000 x 60000 float64 matrices fit no test machine's 80%):
    the run fails and says why, instead of a green Done with nothing in it."""
    import psutil

    from siliconbench.core.kit.headroom import MEMORY_SHARE
    need = 3 * 60000**2 * 8
    assert need > MEMORY_SHARE * psutil.virtual_memory().total
    rec = execute(RunSpec("gemm", "mlx", params={"sizes": [60000], "dtypes": ["float32"]},
                          quick=True), Store())
    assert rec.status == "failed"
    assert rec.reason.startswith("nothing was measured: the point was unsupported (")


class GrowingGemm:
    """gemm.run's surroundings made up: a device whose TFLOPS per size is given, whose points
    are measured instantly (or flagged noisy), and a clock the test moves."""

    def __init__(self, monkeypatch, tflops: dict, noisy: set = frozenset(),
                 point_s: float = 0.0) -> None:
        from siliconbench.core.frameworks import ops
        from siliconbench.core.results import Row
        from siliconbench.core.workloads import gemm
        self.rows, self.settings = [], {}
        self.now = 0.0

        def measure_point(ctx, ops_, n, point, tf32, wrong):
            self.now += point_s
            return Row("tflops", tflops[n], "TFLOPS", point,
                       flags=["noisy"] if n in noisy else [])
        fake_ops = types.SimpleNamespace(tf32_capable=False, gemm_call="test",
                                         itemsize=lambda dtype: 4)
        monkeypatch.setattr(ops, "for_run", lambda ctx: fake_ops)
        monkeypatch.setattr(gemm, "_measure_point", measure_point)
        monkeypatch.setattr(gemm, "unsupported_reason", lambda ops_, dtype: None)
        monkeypatch.setattr(gemm, "_relative_error", lambda ops_, dtype: 0.0)
        monkeypatch.setattr(gemm, "_seconds_per_product", lambda ops_, dtype: 1e-4)
        monkeypatch.setattr("time.monotonic", lambda: self.now)
        from siliconbench.core.measure import QUICK
        self.ctx = types.SimpleNamespace(
            device=types.SimpleNamespace(type="cpu"), settings=QUICK,
            adapter=types.SimpleNamespace(free_memory=lambda dev: 64 * GB),
            warn=lambda m: None, progress=lambda *a: None, row=self.rows.append,
            record_settings=lambda **kw: self.settings.update(kw))

    def run(self, **params):
        from siliconbench.core.workloads import gemm
        gemm.run(self.ctx, {"sizes": [256], "dtypes": ["float32"], "tf32": False, **params})
        return [(r.params["size"], r.value) for r in self.rows]


def test_gemm_grows_until_a_size_gains_less_than_3_percent(monkeypatch):
    fake = GrowingGemm(monkeypatch, {256: 1.0, 512: 2.0, 1024: 2.5, 2048: 2.55, 4096: 9.0})
    assert fake.run(grow=True) == [(256, 1.0), (512, 2.0), (1024, 2.5), (2048, 2.55)]
    assert fake.settings["grow_float32"] == ("sizes doubled up to 2048: it gained less than "
                                             "3% over the best before it")


def test_a_noisy_point_does_not_end_the_growth(monkeypatch):
    fake = GrowingGemm(monkeypatch, {256: 1.0, 512: 0.5, 1024: 2.0, 2048: 2.01},
                       noisy={512})
    assert [n for n, _ in fake.run(grow=True)] == [256, 512, 1024, 2048]


def test_the_budget_ends_the_growth_with_a_skipped_size(monkeypatch):
    # Each point "takes" 4 s of the 10 s budget: 256 and 512 leave 2 s, 1024 (predicted well
    # under that) leaves none, and 2048 is skipped, ending the growth.
    fake = GrowingGemm(monkeypatch, {256: 0.2, 512: 0.5, 1024: 1.0, 2048: 2.0, 4096: 4.0},
                       point_s=4.0)
    rows = fake.run(grow=True, budget_s=10)
    assert rows == [(256, 0.2), (512, 0.5), (1024, 1.0), (2048, None)]
    skipped = fake.rows[-1]
    assert skipped.value is None and skipped.flags == ["skipped"]
    assert skipped.note.startswith("N=2048 would take about ")
    assert skipped.note.endswith("left of the time budget")


def test_a_quantized_llama_cpp_model_on_a_cpu_is_estimated_at_the_float32_rate(monkeypatch):
    """llama.cpp's q4_0 products run in its own SIMD kernels at about the float32 rate: taken
    at the bfloat16 figure (0.5 GFLOPS a core), a llama-2-7b Q4_0 pp512/tg128 run on a 2-core
    CPU read "about 11.4 h"; it took minutes."""
    import siliconbench.core.estimate
    from siliconbench.core import params as P
    from siliconbench.core.catalogue import catalogue
    from siliconbench.core.estimate import estimate
    from siliconbench.core.frameworks import DeviceInfo
    monkeypatch.setattr(siliconbench.core.estimate.os, "cpu_count", lambda: 2)
    cpu = DeviceInfo("llamacpp", "cpu", "A 2-core CPU", "cpu", memory_bytes=24 * 2**30)
    params = P.resolve(catalogue()["llm"].params,
                       {"preset": "llama-2-7b", "dtype": "q4_0", "prompts": [512],
                        "depths": [0], "gen_tokens": 128})
    est = estimate("llm", params, cpu, False)
    assert est.points == 2 and 5 * 60 < est.seconds < 60 * 60


def test_a_cpu_whose_triad_is_stored_gets_the_llm_its_bandwidth_runs(monkeypatch, tmp_path):
    """The H100 machine's 16-core Xeon measured a 115 GB/s triad in its quick suite, which
    still gave its CPU the tiny LLM: the estimate took a rough 10 GB/s for every CPU. With a
    triad of the device in the store of this machine (that run's, made this machine's), the
    estimate reads it and the suite fits a real model."""
    from siliconbench.core.machine import probe
    from siliconbench.core.results import records_from_file
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path))
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    xeon = DeviceInfo("torch", "cpu", "Intel(R) Xeon(R) Processor", "cpu", 126 * 10**9)
    store = Store(tmp_path / "results.sqlite3")     # the command's or the app's, passed down

    def fitted() -> str:
        [llm] = [s for s in expand("quick", [xeon], store=store) if s.workload == "llm"]
        return llm.params["preset"]
    assert fitted() == "tiny"
    [triad] = [r for r in records_from_file(H100 / "h100-quick-suite.json")
               if r.workload == "bandwidth" and r.device == "cpu"]
    assert triad.device_name == xeon.name and triad.rows[0].value > 100
    triad.machine = probe().to_dict()
    store.save(triad)
    assert fitted() == "llama-3.2-1b"
    est = estimate("llm", {"preset": "llama-3.2-1b", "dtype": "float32"}, xeon, store=store)
    assert "the triad measured here" in est.basis
    # Without the store, the rough figures: the estimate opens none of its own.
    assert "the triad measured here" not in estimate(
        "llm", {"preset": "llama-3.2-1b", "dtype": "float32"}, xeon).basis
    store.close()


def test_the_sustained_check_is_one_suite_and_the_quick_one_stays_short():
    """The Sustained check: 10 minutes of GEMM then 5 of LLM decode on each GPU, none on a
    CPU; the quick suite keeps no --duration."""
    specs = expand("sustained", [LAPTOP, H200])
    assert [(s.workload, s.device, s.params["duration"]) for s in specs] == [
        ("gemm", "cuda:0", 10), ("llm", "cuda:0", 5)]
    assert all("duration" not in s.params for s in expand("quick", [LAPTOP, H200]))
    from siliconbench.core.child import prepare
    for spec in specs:             # the parameters are the workloads' own, and valid
        prepare(spec)
