"""train (a one-layer DistilBERT-sized encoder) and mlp on MLX through the CLI on the CPU;
the same rows as torch's, and CNNs refused in one sentence."""

import importlib.util

import pytest

from tests.helpers.cli_processes import sb
from tests.helpers.framework_runs import (
    TINY_BERT,
    TINY_MLP,
    check_loss_row,
    check_mlp,
    check_train,
    run,
    shared_run,
)

if importlib.util.find_spec("mlx") is None:
    pytest.skip("MLX is not installed", allow_module_level=True)


# Each run below serves every test that asserts on it: the same tiny run with --check, whose
# comparison comes after the measured steps and leaves them as they are (one MLX step of the
# one-layer encoder takes seconds on this CPU), made once per test session. The encoder's
# run is also the --compile run: the check builds its own eager models.
@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> dict:
    return shared_run(tmp_path_factory, "mlx-bert", "train", "--framework", "mlx", *TINY_BERT,
                      "--precision", "mixed", "--compile", "--check", "--check-steps", "2")


@pytest.fixture(scope="module")
def depth_mlp(tmp_path_factory) -> dict:
    return shared_run(tmp_path_factory, "mlx-mlp", "mlp", "--framework", "mlx", "--preset",
                      "depth-sweep", *TINY_MLP, "--check")


def test_transformer_training(bert):
    rec = bert
    check_train(rec, {"model": "distilbert", "batch_size": 2, "precision": "fp32"}, "seq/s")
    assert rec["framework"] == "mlx" and rec["settings"]["precision"] == "fp32"
    assert any("--precision mixed is not available on MLX" in w for w in rec["warnings"])


def test_cnn_is_a_usage_error(tmp_path):
    r = sb("run", "train", "--framework", "mlx", "--device", "cpu", "--model", "resnet50",
           "--quick", home=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip().endswith(
        "resnet50 is not available on MLX; choose distilbert or bert-large.")


def test_depth_sweep_preset(depth_mlp):
    check_mlp(depth_mlp, "depth-sweep")


def test_3000_1000_preset(tmp_path):
    check_mlp(run(tmp_path, "mlp", "--framework", "mlx", "--preset", "3000-1000", *TINY_MLP),
              "3000-1000")


# Sustained mode (--duration) has no MLX code: siliconbench.core.kit.rows.measure_run times any
# engine's step in blocks for that long. It runs end to end on torch's training and inference
# (test_train.py, test_infer.py); MLX's step is timed here in the normal protocol.


@pytest.mark.parametrize("name, point, steps", [
    pytest.param("bert", {"model": "distilbert", "batch_size": 2, "precision": "fp32"}, 2,
                 id="train"),
    pytest.param("depth_mlp", {"preset": "depth-sweep", "depth": 2}, 5, id="mlp")])
def test_check_trains_a_cpu_twin_with_the_same_weights(request, name, point, steps):
    row = check_loss_row(request.getfixturevalue(name), point, steps)
    # Each build draws new random weights; only the copy makes the two curves one (on Linux
    # the run's device is the CPU too).
    assert row["value"] < 1e-6
    assert "wrong_result" not in row["flags"]


# --compile on MLX is mx.compile of the whole step; it must train exactly as the eager step.
# A narrow encoder with a small vocabulary: the same layers and step as DistilBERT's without
# the 23M-weight embedding whose Adam update makes each step cost a second here.
COMPILED = """
import json
from siliconbench.core.frameworks import isolate
isolate("mlx")
import mlx.core as mx
from siliconbench.core.frameworks.mlx import models as mlx_models
from siliconbench.core.kit.encoders import EncoderConfig

config = EncoderConfig(layers=1, hidden=32, heads=2, ffn=64, vocab=64, max_positions=16)
mx.random.seed(0)
weights = mlx_models.encoder(config, 8, 0.0).parameters()
batches = [(mx.random.randint(0, config.vocab, (2, 16)), mx.random.randint(0, 8, (2,)))
           for _ in range(3)]
curves = {}
for compiled in (False, True):
    model = mlx_models.encoder(config, 8, 0.0)
    model.update(weights)
    step = mlx_models.TrainStep(model, "adam", mlx_models.cross_entropy, batches)
    if compiled:
        step.compile()
    curves[str(compiled)] = [step.on(*batches[i % 3])[0].item() for i in range(4)]
print(json.dumps(curves))
"""


def test_compile_is_mx_compile_and_trains_as_the_eager_step(bert):
    import subprocess
    import sys

    from tests.helpers.cli_processes import ROOT
    r = subprocess.run([sys.executable, "-c", COMPILED], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    import json
    curves = json.loads(r.stdout.strip().splitlines()[-1])
    assert curves["True"] == pytest.approx(curves["False"], rel=1e-4)
    assert len(set(curves["True"])) > 1            # it trained: the loss moved
    assert bert["settings"]["compiled"] is True
    assert not any("--compile" in w or "mx.compile" in w for w in bert["warnings"])


COMPILE_FAILS = """
import json
from siliconbench.core.frameworks import isolate
isolate("mlx")
import mlx.core as mx
import mlx.nn  # compiles its activations at import, before the compiler breaks
from siliconbench.core.frameworks.mlx import models as mlx_models
from siliconbench.core.kit.encoders import EncoderConfig

def broken(*args, **kwargs):
    raise RuntimeError("no C++ compiler found\\nmore")
mx.compile = broken
config = EncoderConfig(layers=1, hidden=32, heads=2, ffn=64, vocab=64, max_positions=16)
batches = [(mx.random.randint(0, config.vocab, (2, 16)), mx.random.randint(0, 8, (2,)))]
step = mlx_models.TrainStep(mlx_models.encoder(config, 8), "adam", mlx_models.cross_entropy,
                            batches)
events = []
ctx = type("Ctx", (), {"device_id": "cpu", "warn": lambda self, m: events.append(m),
                       "record_settings": lambda self, **s: events.append(s)})()
compiled = mlx_models.compile_or_eager(ctx, step)
loss, _ = step.on(*batches[0])
print(json.dumps({"compiled": compiled, "events": events, "loss": loss.item()}))
"""


def test_a_failing_mx_compile_is_said_and_the_run_stays_eager():
    import json
    import math
    import subprocess
    import sys

    from tests.helpers.cli_processes import ROOT
    r = subprocess.run([sys.executable, "-c", COMPILE_FAILS], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["compiled"] is False and math.isfinite(out["loss"])
    assert out["events"] == ["mx.compile does not work on cpu here (no C++ compiler found); "
                             "this run is eager.", {"compiled": False}]
