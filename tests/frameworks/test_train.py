"""The train workload on tiny configs on the CPU: through the command end to end, in-process for
the details, and the trust checks it shares with infer and mlp (mixed precision said, compile
failure said, CPU fallback flagged, out of memory named with its batch size)."""

import json
import sys
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from siliconbench.core.context import RunContext
from siliconbench.core.frameworks.torch import adapter as torch_adapter
from siliconbench.core.frameworks.torch import models
from siliconbench.core.kit import checks
from siliconbench.core.kit.errors import out_of_memory_at
from siliconbench.core.measure import QUICK, MeasureSettings
from siliconbench.core.params import resolve
from siliconbench.core.results import Row
from siliconbench.core.store import Store
from siliconbench.core.worker import error_kind
from siliconbench.core.workloads import train
from tests.helpers.torch_cpu import by_metric, run_cli, run_limited

ROOT = Path(__file__).resolve().parents[2]
TINY_BERT = ["--model", "distilbert", "--layers", "1", "--seq-len", "16", "--batch-size", "2"]
TINY_CNN = ["--model", "mobilenet_v2", "--image-size", "32", "--batch-size", "4"]


class Events(list):
    def rows(self) -> list[Row]:
        return [Row.from_dict(e["row"]) for e in self if e["event"] == "row"]

    def of(self, kind: str) -> list[dict]:
        return [e for e in self if e["event"] == kind]


# The fewest steps the protocol can time (one discarded, one sizing a block, three blocks): for
# in-process runs whose steps are slow (bfloat16 autocast on a CPU without bfloat16 units takes
# seconds a step); the protocol itself is tested in test_measure.py.
FEWEST_STEPS = MeasureSettings(discard_calls=1, max_warmup_s=0.0, min_blocks=3, min_time_s=0.0,
                               max_time_s=0.0)


def context(events: Events, settings: MeasureSettings = QUICK) -> RunContext:
    return RunContext(framework="torch", device_id="cpu", adapter=torch_adapter,
                      device=torch.device("cpu"), device_name="test cpu", emit=events.append,
                      settings=settings)


@pytest.mark.usefixtures("short_protocol")   # the rows and the check, not their numbers
def test_one_layer_distilbert_trains_end_to_end_with_check(capsys):
    code, rec, err = run_cli(capsys, "train", *TINY_BERT, "--check", "--check-steps", "2")
    assert code == 0, (err, rec and rec["reason"])
    rows = by_metric(rec["rows"])
    assert set(rows) == {"samples_per_s", "step_time", "tflops", "peak_memory", "loss_rel_diff"}
    rate = rows["samples_per_s"]
    assert rate["unit"] == "seq/s" and rate["value"] > 0
    # The point as the published table gives it; the tiny config is in the run's params.
    assert rate["params"] == {"model": "distilbert", "batch_size": 2, "precision": "fp32"}
    assert rec["params"]["layers"] == 1 and rec["params"]["seq_len"] == 16
    for metric in ("samples_per_s", "step_time", "tflops"):
        assert len(rows[metric]["samples"]) == rows[metric]["stats"]["n"] >= QUICK.floor_blocks
    assert rows["peak_memory"]["unit"] == "bytes" and rows["peak_memory"]["value"] > 0
    check = rows["loss_rel_diff"]
    assert check["value"] == 0.0 and "wrong_result" not in check["flags"]  # CPU against CPU
    assert len(check["samples"]) == 2 and check["params"]["check_steps"] == 2
    assert rec["settings"]["flops_per_step"] > 0 and rec["settings"]["precision"] == "fp32"
    assert Store().get(rec["id"]).status == "ok"


def test_transformers_are_built_from_their_configs():
    distil = models.transformer_task("distilbert", seq_len=12, layers=1)
    model = distil.build()
    config = model.inner.config
    assert (config.n_layers, config.dim, config.num_labels) == (1, 768, 8)
    assert distil.unit == "seq/s" and distil.optimizer == "adam"
    tokens, labels = distil.batch(3, torch.device("cpu"))
    assert tokens.shape == (3, 12) and tokens.dtype == torch.long and labels.max() < 8
    assert model(tokens).shape == (3, 8)
    large = models.transformer_task("bert-large", seq_len=128, layers=1, dropout=False)
    config = large.build().inner.config
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads,
            config.intermediate_size, config.hidden_dropout_prob) == (1, 1024, 16, 4096, 0.0)


def test_cnn_mixed_precision_channels_last_in_process():
    events = Events()
    params = resolve(train.WORKLOAD.params, {"model": "mobilenet_v2", "image_size": 16,
                                             "batch_size": 2, "precision": "mixed",
                                             "channels_last": True})
    train.run(context(events, FEWEST_STEPS), params)
    rows = by_metric(events.rows())
    rate = rows["samples_per_s"]
    assert rate.unit == "img/s" and rate.value > 0 and rate.stats.n == 3
    assert rate.params == {"model": "mobilenet_v2", "batch_size": 2, "precision": "mixed"}
    assert rows["tflops"].value > 0 and rows["tflops"].pct_of_peak is None  # no CPU peak
    settings = {k: v for e in events.of("settings") for k, v in e["settings"].items()}
    assert settings["precision"] == "mixed-bf16"      # the CPU's autocast dtype
    assert settings["channels_last"] is True


@pytest.mark.parametrize("args, says", [
    (["--batch-size", "0"], "--batch-size must be at least 1, not 0."),
    (["--model", "gpt5"], "--model must be one of resnet50, mobilenet_v2"),
    (["--device", "tpu"], "PyTorch has no device 'tpu' here"),
    (["--seq-len", "0"], "--seq-len must be at least 1"),
])
def test_bad_parameters_are_one_sentence_exit_2_nothing_stored(capsys, args, says):
    code, rec, err = run_cli(capsys, "train", *TINY_BERT, *args)
    assert code == 2 and rec is None
    assert says in err and len(err.strip().splitlines()) == 1
    assert Store().runs() == []


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_DATA bounds mmap only on Linux")
def test_out_of_memory_is_a_failed_run_naming_the_batch_size(tmp_path):
    r = run_limited(["train", "--model", "mobilenet_v2", "--image-size", "32",
                     "--batch-size", "4096"], tmp_path, 1200 << 20)
    assert r.returncode == 1, r.stderr
    rec = json.loads(r.stdout)
    assert rec["status"] == "failed"
    assert rec["reason"].startswith("out of memory at batch size 4096 (")


def test_out_of_memory_keeps_the_workloads_words():
    with pytest.raises(MemoryError) as caught, out_of_memory_at(64):
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
    kind, message = error_kind(caught.value)
    assert kind == "oom"
    assert message == "out of memory at batch size 64 (CUDA out of memory. Tried to allocate " \
                      "2.00 GiB)"
    with pytest.raises(ValueError), out_of_memory_at(64):
        raise ValueError("not a memory problem")
    assert error_kind(RuntimeError("DefaultCPUAllocator: can't allocate memory"))[0] == "oom"


def test_cpu_fallback_is_captured_from_warnings_and_flagged():
    watch = models.FallbackWatch()
    with watch.watching():
        warnings.warn("The operator 'aten::_linalg_svd.U' is not currently supported on the "
                      "MPS backend and will fall back to run on the CPU. This may have "
                      "performance implications.", UserWarning)
        warnings.warn("The operator 'aten::_linalg_svd.U' is not currently supported on the "
                      "MPS backend and will fall back to run on the CPU.", UserWarning)
        watch.check_output(torch.zeros(1), torch.device("cpu"))
    assert watch.ops == ["aten::_linalg_svd.U"]
    assert watch.flags == ["fallback"] and "aten::_linalg_svd.U" in watch.note
    events = Events()
    watch.report(context(events))
    assert "aten::_linalg_svd.U" in events.of("warning")[0]["message"]

    elsewhere = models.FallbackWatch()
    with elsewhere.watching():
        elsewhere.check_output(torch.zeros(1), torch.device("mps"))
    assert elsewhere.flags == ["fallback"] and "the output was on cpu" in elsewhere.note
    quiet = models.FallbackWatch()
    with quiet.watching():
        pass
    assert quiet.flags == [] and quiet.note is None


def tiny_step() -> models.TrainStep:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    batches = [(torch.randn(4, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
    return models.TrainStep(model, "sgd", F.cross_entropy, batches)


def test_compile_failure_is_said_and_the_run_stays_eager(monkeypatch):
    def broken_compile(model):
        raise RuntimeError("Dynamo is not supported on this device\nlong details")
    monkeypatch.setattr(torch, "compile", broken_compile)
    events = Events()
    step = tiny_step()
    eager = step.model
    assert models.compile_or_eager(context(events), step) is False
    assert step.model is eager and step().isfinite()
    assert "torch.compile does not work on cpu here (Dynamo is not supported on this device)" \
        in events.of("warning")[0]["message"]
    assert events.of("settings")[0]["settings"] == {"compiled": False}


def test_train_step_rotates_batches_and_learns():
    step = tiny_step()
    first = [float(step()) for _ in range(3)]
    for _ in range(60):
        step()
    later = [float(step()) for _ in range(3)]
    assert len(set(first)) == 3                 # three different batches in turn
    assert sum(later) < sum(first)              # the optimizer steps


def test_loss_curve_check_flags_a_difference_beyond_tolerance(monkeypatch):
    # bfloat16 autocast against the float32 CPU reference: a real difference, far below the
    # bfloat16 tolerance; with the tolerance at zero the same difference must be flagged.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    batches = [(torch.randn(4, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
    events = Events()
    ours, cpu = models.compare_with_cpu(context(events), model, "sgd", F.cross_entropy,
                                        batches, torch.bfloat16, 4)
    row = checks.loss_check_row(context(events), ours, cpu, checks.check_tolerance("bfloat16"),
                                {"model": "tiny"})
    assert 0 < row.value < checks.MIXED_TOLERANCE["bfloat16"] and row.flags == []
    monkeypatch.setitem(checks.MIXED_TOLERANCE, "bfloat16", 0.0)
    ours, cpu = models.compare_with_cpu(context(events), model, "sgd", F.cross_entropy,
                                        batches, torch.bfloat16, 4)
    row = checks.loss_check_row(context(events), ours, cpu, checks.check_tolerance("bfloat16"),
                                {"model": "tiny"})
    assert row.flags == ["wrong_result"] and len(row.samples) == 4
    assert any("its results are wrong" in e["message"] for e in events.of("warning"))


def test_flops_count_depthwise_backward_as_dense_would_not():
    conv = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False)
    x = torch.randn(2, 16, 8, 8, requires_grad=True)
    forward = models.count_flops(lambda: conv(x))
    both = models.count_flops(lambda: conv(x).sum().backward())
    assert forward == 2 * 2 * 16 * 8 * 8 * 9
    assert both == 3 * forward                 # input and weight gradients cost a forward each


def test_mixed_precision_on_the_cpu_is_bfloat16():
    assert models.mixed_dtype(torch.device("cpu")) == (torch.bfloat16, None)
    assert models.precision_label(None) == "fp32"
    assert models.precision_label(torch.float16) == "mixed-fp16"


def test_sustained_training_reports_per_minute_rows_and_throttle_ratio(capsys):
    code, rec, err = run_cli(capsys, "train", *TINY_CNN, "--duration", "0.05")
    assert code == 0, err
    assert rec["settings"]["duration_min"] == 0.05
    metrics = [r["metric"] for r in rec["rows"]]
    # The whole-run rows come first, then throughput over time.
    assert metrics.index("samples_per_s") < metrics.index("throttle_ratio")
    minutes = [r for r in rec["rows"] if "minute" in r["params"]]
    # A run this short has two half-run windows; one holds no block end when a single block
    # outlasts half the run (a loaded machine), so only the windows that hold one have a row.
    # The windows themselves are checked with known block times in test_telemetry.py.
    starts = [r["params"]["minute"] for r in minutes]
    assert starts and starts == sorted(set(starts)) and len(starts) <= 2
    assert all(r["unit"] == "img/s" and r["value"] > 0 for r in minutes)
    assert by_metric(rec["rows"])["throttle_ratio"]["value"] > 0
