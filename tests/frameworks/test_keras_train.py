"""train and mlp on TensorFlow (Keras) through the CLI on the CPU, tiny configs: a CNN and a
one-layer keras-hub DistilBERT, both MLP presets; the same rows as torch's."""

import importlib.util

import pytest

from siliconbench.core.kit.checks import MIXED_TOLERANCE
from siliconbench.core.kit.encoders import encoder_config, encoder_train_flops
from tests.helpers.framework_runs import (
    TINY_BERT,
    TINY_MLP,
    check_loss_row,
    check_mlp,
    check_train,
    run,
    shared_run,
)

# Looked up, not imported: this process has PyTorch, and TensorFlow loads only in the runs.
if importlib.util.find_spec("tensorflow") is None or \
        importlib.util.find_spec("keras_hub") is None:
    pytest.skip("TensorFlow or keras-hub is not installed", allow_module_level=True)


def test_cnn_training(tmp_path):
    rec = run(tmp_path, "train", "--framework", "tensorflow", "--model", "mobilenet_v2",
              "--image-size", "32", "--batch-size", "4", "--channels-last")
    point = {"model": "mobilenet_v2", "batch_size": 4, "precision": "fp32"}
    rows = check_train(rec, point, "img/s")
    assert rec["settings"]["flops_counted"].startswith("analytic: the Conv2D")
    flops = rec["settings"]["flops_per_step"]
    assert rows["tflops"]["value"] == pytest.approx(
        flops / 1e12 / (rows["step_time"]["value"] / 1e3), rel=0.2)
    assert rec["framework"] == "tensorflow" and rec["settings"]["xla"] is False
    assert any("--channels-last" in w and "ignored" in w for w in rec["warnings"])


# The Keras CNN FLOP count: a small model counted by hand, and the published forward cost of
# MobileNetV2 at 224x224 (300M multiply-adds, Sandler et al. 2018, table 3) and ResNet50 (3.8G
# multiply-adds, He et al. 2015, table 1). Built in a child: this process has PyTorch.
CNN_FLOPS = """
import json
from siliconbench.core.frameworks import isolate
isolate("tensorflow")
import keras
from siliconbench.core.frameworks.tensorflow import models as keras_models

x = keras.Input((8, 8, 3))
stem = keras.layers.Conv2D(4, 3, padding="same")(x)                     # 8*8 * 3*3*3*4
dw = keras.layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2)(stem)  # 8*8*3*3*4*2
side = keras.layers.Conv2D(8, 1, strides=2)(stem)                        # 4*4 * 1*1*4*8
pool = keras.layers.GlobalAveragePooling2D()(dw)
out = keras.layers.Dense(5)(pool)                                        # 8*5
tiny = keras.Model(x, [out, side])
published = {name: keras_models.cnn_train_flops_per_image(keras_models.cnn(name, 224)[0])
             for name in ("mobilenet_v2", "resnet50")}
print(json.dumps({"tiny": keras_models.cnn_train_flops_per_image(tiny), **published}))
"""


def test_keras_cnn_flops_are_counted_from_the_layers():
    import json
    import subprocess
    import sys

    from tests.helpers.cli_processes import ROOT
    r = subprocess.run([sys.executable, "-c", CNN_FLOPS], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    # 2 FLOPs per multiply-add; the stem reads the input (no input gradient): 2x its forward.
    stem, dw, side, dense = 8 * 8 * 108, 8 * 8 * 72, 4 * 4 * 32, 8 * 5
    assert out["tiny"] == 2 * (2 * stem + 3 * (dw + side + dense))
    # Forward multiply-adds are about a sixth of the training FLOPs (3x forward, 2 per MAC).
    assert out["mobilenet_v2"] / 6 == pytest.approx(300e6, rel=0.03)
    assert out["resnet50"] / 6 == pytest.approx(3.8e9, rel=0.03)


# A TensorFlow run costs seconds of imports and graph tracing here, so each run below serves
# every test that asserts on it: the same tiny run, with --check (whose comparison comes after
# the measured steps and leaves them as they are), made once per test session.
@pytest.fixture(scope="module")
def bert_mixed(tmp_path_factory) -> dict:
    return shared_run(tmp_path_factory, "tensorflow-bert", "train", "--framework",
                      "tensorflow", *TINY_BERT, "--precision", "mixed", "--check",
                      "--check-steps", "2")


@pytest.fixture(scope="module")
def wide_mlp(tmp_path_factory) -> dict:
    return shared_run(tmp_path_factory, "tensorflow-mlp", "mlp", "--framework", "tensorflow",
                      "--preset", "3000-1000", *TINY_MLP, "--check")


def test_transformer_training_mixed_precision(bert_mixed):
    rec = bert_mixed
    point = {"model": "distilbert", "batch_size": 2, "precision": "mixed"}
    rows = check_train(rec, point, "seq/s")
    assert rec["settings"]["precision"] == "mixed-fp16"
    flops = encoder_train_flops(encoder_config("distilbert", 1, 16), 2, 16)
    assert rec["settings"]["flops_per_step"] == flops
    assert rows["tflops"]["value"] == pytest.approx(
        flops / 1e12 / (rows["step_time"]["value"] / 1e3), rel=0.2)


def test_depth_sweep_preset(tmp_path):
    check_mlp(run(tmp_path, "mlp", "--framework", "tensorflow", "--preset", "depth-sweep",
                  *TINY_MLP), "depth-sweep")


def test_3000_1000_preset(wide_mlp):
    check_mlp(wide_mlp, "3000-1000")


def test_check_compares_mixed_precision_training_with_a_float32_cpu_twin(bert_mixed):
    rec = bert_mixed
    row = check_loss_row(rec, {"model": "distilbert", "batch_size": 2, "precision": "mixed"}, 2)
    # The device side ran in float16 and the twin in float32: close, but not the same.
    assert 0 < row["value"] < MIXED_TOLERANCE["float16"] and row["flags"] == []
    assert row["value"] == max(row["samples"])
    assert not rec["warnings"]


def test_check_on_the_mlp(wide_mlp):
    row = check_loss_row(wide_mlp, {"preset": "3000-1000"})
    # The CPU against itself in float32, same weights and batches: the same curve.
    assert row["value"] < 1e-6 and row["flags"] == ["synthetic"]
