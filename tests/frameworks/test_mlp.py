"""The mlp workload on a 200-image CIFAR-10 archive (the real loader) and on synthetic data:
fit seconds per depth, per-epoch rows for 3000-1000, the synthetic flag, the CPU check."""

import pytest
import torch

from siliconbench.core.frameworks.torch import models
from siliconbench.core.store import Store
from tests.helpers.cifar import make_archive
from tests.helpers.torch_cpu import run_cli


def test_depth_sweep_on_a_tiny_real_format_archive(capsys, tmp_path):
    archive = make_archive(tmp_path / "cifar-10-python.tar.gz")
    code, rec, err = run_cli(capsys, "mlp", "--cifar", str(archive), "--depths", "1,2",
                             "--epochs", "2", "--check", "--check-steps", "3")
    assert code == 0, err
    assert rec["settings"]["cifar"] == str(archive) and rec["settings"]["samples"] == 200
    assert any("not verified as the published CIFAR-10 archive" in w for w in rec["warnings"])
    for depth in (1, 2):
        rows = {r["metric"]: r for r in rec["rows"] if r["params"].get("depth") == depth
                and r["metric"] != "loss_rel_diff"}
        assert set(rows) == {"samples_per_s", "step_time", "tflops", "train_seconds",
                             "epoch_seconds", "us_per_sample", "final_loss", "final_accuracy"}
        assert all(r["params"] == {"preset": "depth-sweep", "depth": depth}
                   for r in rows.values())
        fit = rows["train_seconds"]
        assert fit["unit"] == "s" and len(fit["samples"]) == 2      # one per epoch
        assert fit["value"] >= sum(fit["samples"])                  # model build included
        assert rows["epoch_seconds"]["samples"] == fit["samples"][1:]   # steady state
        assert rows["samples_per_s"]["unit"] == "img/s" and rows["samples_per_s"]["value"] > 0
        assert 0 <= rows["final_accuracy"]["value"] <= 1 and rows["final_loss"]["value"] > 0
    assert all("synthetic" not in r["flags"] for r in rec["rows"])
    check = [r for r in rec["rows"] if r["metric"] == "loss_rel_diff"]
    assert len(check) == 1 and check[0]["value"] == 0.0 and check[0]["flags"] == []


def test_3000_1000_without_data_is_synthetic_and_says_so(capsys):
    code, rec, err = run_cli(capsys, "mlp", "--preset", "3000-1000", "--samples", "64",
                             "--epochs", "2")
    assert code == 0, err
    assert rec["settings"]["cifar"] == "synthetic"
    assert any("synthetic data" in w and "--download" in w for w in rec["warnings"])
    assert rec["rows"] and all("synthetic" in r["flags"] for r in rec["rows"])
    per_epoch = {(r["metric"], r["params"]["epoch"]): r["value"] for r in rec["rows"]
                 if "epoch" in r["params"]}
    assert set(per_epoch) == {(m, e) for m in ("loss", "accuracy") for e in (1, 2)}
    summary = {r["metric"]: r for r in rec["rows"] if r["params"] == {"preset": "3000-1000"}}
    assert summary["us_per_sample"]["unit"] == "µs"
    assert summary["us_per_sample"]["value"] == pytest.approx(
        summary["epoch_seconds"]["value"] / 64 * 1e6)
    assert summary["final_accuracy"]["value"] == per_epoch[("accuracy", 2)]


@pytest.mark.parametrize("args, says", [
    (["--cifar", "/nonexistent/cifar.tar.gz"], "/nonexistent/cifar.tar.gz: no such file"),
    (["--samples", "16", "--batch-size", "32"], "--samples (16) must be at least --batch-size"),
    (["--preset", "huge"], "--preset must be one of depth-sweep, 3000-1000"),
    (["--epochs", "0"], "--epochs must be at least 1, not 0."),
])
def test_bad_parameters_are_one_sentence_exit_2(capsys, args, says):
    code, rec, err = run_cli(capsys, "mlp", *args)
    assert code == 2 and rec is None
    assert says in err and len(err.strip().splitlines()) == 1
    assert Store().runs() == []


def test_too_many_samples_for_the_archive(capsys, tmp_path):
    archive = make_archive(tmp_path / "tiny.tar.gz")
    code, _, err = run_cli(capsys, "mlp", "--cifar", str(archive), "--samples", "500")
    assert code == 2 and "--samples must be at most 200" in err


def test_keras_sigmoid_crossentropy_and_glorot_mlp():
    logits = torch.tensor([[2.0, -1.0, 0.5], [0.0, 0.0, 3.0]])
    labels = torch.tensor([0, 2])
    p = torch.sigmoid(logits)
    p = p / p.sum(dim=1, keepdim=True)
    expected = -(p[0, 0].log() + p[1, 2].log()) / 2
    assert float(models.sigmoid_categorical_crossentropy(logits, labels)) == \
        pytest.approx(float(expected))
    net = models.mlp([1024] * 3)
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    assert [m.out_features for m in linears] == [1024, 1024, 1024, 10]
    assert linears[0].in_features == 3072 and all(not m.bias.detach().any() for m in linears)
    assert net(torch.rand(5, 3072)).shape == (5, 10)
