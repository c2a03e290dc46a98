"""The infer workload on a tiny resnet18 on the CPU: both data paths with their ratio, latency
percentiles, progress in images, and one-sentence refusals of impossible parameters."""

import re

import pytest
import torch

from siliconbench.core.cli import main
from siliconbench.core.frameworks.torch.infer import HostImages
from siliconbench.core.runner import RunSpec, execute
from siliconbench.core.store import Store
from siliconbench.core.workloads import infer
from tests.helpers.torch_cpu import by_metric, run_cli

TINY = {"model": "resnet18", "image_size": 32, "batch_size": 4, "images": 10}


@pytest.mark.usefixtures("short_protocol")   # the rows, not their numbers
def test_both_data_paths_through_the_runner_with_progress_in_images():
    events = []
    rec = execute(RunSpec("infer", params={**TINY, "data": "both"}, quick=True), Store(),
                  on_event=events.append)
    assert rec.status == "ok", rec.reason
    rates = {r.params["data"]: r for r in rec.rows if r.metric == "samples_per_s"}
    assert set(rates) == {"device", "host"}
    for r in rates.values():
        assert r.unit == "img/s" and r.value > 0 and len(r.samples) == r.stats.n
        assert r.params == {"model": "resnet18", "batch_size": 4, "data": r.params["data"]}
    ratio = by_metric(rec.rows)["host_device_ratio"]
    assert ratio.value == pytest.approx(rates["host"].value / rates["device"].value)
    for path in ("device", "host"):
        lat = {r.params["percentile"]: r for r in rec.rows
               if r.metric == "batch_latency" and r.params["data"] == path}
        assert sorted(lat) == [50, 90, 99]
        assert 0 < lat[50].value <= lat[90].value <= lat[99].value
        assert len(lat[50].samples) == 3          # 10 images in whole batches of 4: 3
    progress = [e for e in events if e["event"] == "progress"]
    assert {e["total"] for e in progress} == {20}
    assert progress[-1]["done"] == 20 and any(e["done"] == 10 for e in progress)


@pytest.mark.usefixtures("short_protocol")   # the rows, not their numbers
def test_device_path_through_the_command(capsys):
    code, rec, err = run_cli(capsys, "infer", "--model", "resnet18", "--image-size", "32",
                             "--batch-size", "2", "--images", "4")
    assert code == 0, err
    rows = by_metric(rec["rows"])
    assert set(rows) == {"samples_per_s", "batch_time", "tflops", "batch_latency",
                         "peak_memory"}
    assert rows["samples_per_s"]["params"]["data"] == "device"
    assert rows["tflops"]["value"] > 0


@pytest.mark.parametrize("args, says", [
    (["--images", "3", "--batch-size", "4"], "--images (3) must be at least --batch-size (4)."),
    (["--model", "resnet5000"], "--model does not know 'resnet5000'; did you mean resnet50"),
    (["--batch-size", "-1"], "--batch-size must be at least 1, not -1."),
    (["--data", "disk"], "--data must be one of device, host, both"),
])
def test_impossible_parameters_are_one_sentence_exit_2(capsys, args, says):
    code, rec, err = run_cli(capsys, "infer", "--image-size", "32", *args)
    assert code == 2 and rec is None
    assert says in err and len(err.strip().splitlines()) == 1
    assert Store().runs() == []


@pytest.mark.parametrize("workload, params, says", [
    ("infer", {"images": 3, "batch_size": 4}, "--images (3) must be at least --batch-size (4)."),
    ("mlp", {"samples": 16, "batch_size": 32},
     "--samples (16) must be at least --batch-size (32)."),
])
def test_what_the_parameters_alone_rule_out_is_refused_before_a_process_starts(
        monkeypatch, workload, params, says):
    from siliconbench.core import child
    from siliconbench.core.runner import ChildRun, RunSpec, UsageError
    monkeypatch.setattr(child.subprocess, "Popen", None)   # any start would raise TypeError
    with pytest.raises(UsageError, match=re.escape(says)):
        ChildRun(RunSpec(workload, "torch", "cpu", params)).start()


def test_host_images_are_normalised_random_batches():
    feed = HostImages(32, torch.device("cpu"), torch.contiguous_format)
    a, b = feed(3), feed(3)
    assert a.shape == (3, 3, 32, 32) and a.dtype == torch.float32
    assert not torch.equal(a, b)
    assert -2.2 < float(a.min()) < -1.5 and 2.0 < float(a.max()) < 2.7  # ImageNet-normalised


def test_percentiles():
    xs = [float(i) for i in range(1, 101)]
    assert infer.percentile(xs, 50) == pytest.approx(50.5)
    assert infer.percentile(xs, 99) == pytest.approx(99.01)
    assert infer.percentile([7.0], 90) == 7.0


def test_sustained_mode_through_the_command_prints_minutes_and_throttle_ratio(capsys,
                                                                            monkeypatch):
    # A terminal wide enough that no title is folded onto two lines (sustained mode's t_s
    # column and interval rows narrowed the metric column to "Throttle" over "ratio").
    monkeypatch.setenv("COLUMNS", "240")
    code = main(["run", "infer", "--model", "resnet18", "--image-size", "32", "--batch-size",
                 "2", "--images", "2", "--duration", "0.05", "--quick"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Throttle ratio" in out and "minute" in out   # metric titles as the app shows them
    rec = Store().runs()[0]
    assert rec.settings["duration_min"] == 0.05
    minutes = [r for r in rec.rows if r.metric == "samples_per_s" and "minute" in r.params]
    # A 3 s run (a little more where the last block overruns) is cut in halves.
    assert len(minutes) == 2 and minutes[0].params["minute"] == 0.0
    assert 0.025 <= minutes[1].params["minute"] < 0.05
    assert all(r.params["data"] == "device" and r.value > 0 for r in minutes)
    ratio = by_metric(rec.rows)["throttle_ratio"]
    assert ratio.unit == "×" and ratio.value > 0
    whole = [r for r in rec.rows if r.metric == "samples_per_s" and "minute" not in r.params]
    assert len(whole) == 1 and whole[0].stats.n >= len(minutes)


class ShapeCost:
    """A model whose first batch of each shape is slow, as cuDNN's kernel choice is: 0.5 s
    the first time it sees a batch size, 2 ms after (a loaded machine may stretch those 2 ms
    tenfold, never to 0.25 s)."""

    def __init__(self, warmed: int) -> None:
        self.seen = {warmed}
        self.sizes: list[int] = []

    def __call__(self, x):
        import time
        self.sizes.append(len(x))
        time.sleep(0.002 if len(x) in self.seen else 0.5)
        self.seen.add(len(x))


class Quiet:
    def sync(self) -> None:
        pass

    def progress(self, done, total, message="") -> None:
        pass


def test_the_latency_pass_times_only_the_batch_size_the_protocol_warmed():
    """The H200's tail (p50 16.8 ms, p99 78 ms over 1000 images in batches of 256) was its
    last batch of 232, a shape never run before: every batch of the pass is whole now."""
    model = ShapeCost(warmed=256)
    latencies = infer.latency_pass(Quiet(), model, lambda n: [0] * n, 256, 1000, 0, 1, "device")
    assert model.sizes == [256, 256, 256, 256]
    assert infer.percentile(latencies, 99) < 250        # ms: no batch paid for a new shape
    assert infer.latency_note(4, 256).startswith("from 4 synchronised batches of 256; fewer "
                                                 "than 100 batches")
    assert infer.latency_note(120, 8) == "from 120 synchronised batches of 8"
