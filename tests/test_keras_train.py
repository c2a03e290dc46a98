"""train and mlp on TensorFlow (Keras) through the CLI on the CPU, tiny configs: a CNN and a
one-layer keras-hub DistilBERT, both MLP presets; the same rows as torch's."""

import importlib.util

import pytest

from core.workloads import shared
from tests.framework_runs import TINY_BERT, TINY_MLP, check_mlp, check_train, run

# Looked up, not imported: this process has PyTorch, and TensorFlow loads only in the runs.
if importlib.util.find_spec("tensorflow") is None or \
        importlib.util.find_spec("keras_hub") is None:
    pytest.skip("TensorFlow or keras-hub is not installed", allow_module_level=True)


def test_cnn_training(tmp_path):
    rec = run(tmp_path, "train", "--framework", "tensorflow", "--model", "mobilenet_v2",
              "--image-size", "32", "--batch-size", "4", "--channels-last")
    point = {"model": "mobilenet_v2", "batch_size": 4, "precision": "fp32"}
    # No FLOP count for Keras CNNs, so no tflops row (the settings say so).
    check_train(rec, point, "img/s", {"samples_per_s", "step_time", "peak_memory"})
    assert "not counted" in rec["settings"]["flops_counted"]
    assert rec["framework"] == "tensorflow" and rec["settings"]["xla"] is False
    assert any("--channels-last" in w and "ignored" in w for w in rec["warnings"])


def test_transformer_training_mixed_precision(tmp_path):
    rec = run(tmp_path, "train", "--framework", "tensorflow", *TINY_BERT, "--precision",
              "mixed")
    point = {"model": "distilbert", "batch_size": 2, "precision": "mixed"}
    rows = check_train(rec, point, "seq/s")
    assert rec["settings"]["precision"] == "mixed-fp16"
    flops = shared.encoder_train_flops(shared.encoder_config("distilbert", 1, 16), 2, 16)
    assert rec["settings"]["flops_per_step"] == flops
    assert rows["tflops"]["value"] == pytest.approx(
        flops / 1e12 / (rows["step_time"]["value"] / 1e3), rel=0.2)


@pytest.mark.parametrize("preset", ["depth-sweep", "3000-1000"])
def test_mlp_presets(tmp_path, preset):
    check_mlp(run(tmp_path, "mlp", "--framework", "tensorflow", "--preset", preset,
                  *TINY_MLP), preset)
