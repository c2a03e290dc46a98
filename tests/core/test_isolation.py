"""One framework per process: the worker refuses to import a second framework into a run's
process, and a framework that is not installed is listed with the pip extra that adds it, and
asking to run on it is one sentence and exit 2. The child imports this module for the
`fake-mix` workload (SILICONBENCH_EXTRA_WORKLOADS)."""

import importlib
import importlib.util
import subprocess
import sys

import pytest

from siliconbench.core import cli
from siliconbench.core.catalogue import Workload
from siliconbench.core.frameworks import FRAMEWORKS
from siliconbench.core.params import Param
from siliconbench.core.runner import RunSpec, UsageError, discover_devices, execute, prepare
from tests.helpers.cli_processes import ROOT

WORKLOAD = Workload(
    name="fake-mix", title="Imports a framework", summary="Tries to load another framework.",
    frameworks=tuple(FRAMEWORKS), module=__name__, entry="load_other", hidden=True,
    params=(Param("other", "str", "torch", "the module to import"),))


def load_other(ctx, params):
    importlib.import_module(params["other"])


def installed(*modules):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"{', '.join(missing)} not installed")


@pytest.fixture
def mixing_workload(monkeypatch):
    from siliconbench.core.catalogue import catalogue
    monkeypatch.setenv("SILICONBENCH_EXTRA_WORKLOADS", __name__)
    catalogue.cache_clear()
    yield
    catalogue.cache_clear()


@installed("tensorflow")
@pytest.mark.parametrize("runs, other, says", [
    ("tensorflow", "torch", "PyTorch cannot be loaded into this process, which runs TensorFlow"),
    ("torch", "tensorflow", "TensorFlow cannot be loaded into this process, which runs PyTorch"),
])
def test_a_run_never_loads_tensorflow_and_pytorch_together(mixing_workload, runs, other, says):
    rec = execute(RunSpec("fake-mix", framework=runs, params={"other": other}))
    assert rec.status == "failed"
    assert says in rec.reason and "a process of its own" in rec.reason


@installed("mlx")
def test_the_refusal_covers_every_framework_and_submodules(mixing_workload):
    rec = execute(RunSpec("fake-mix", framework="mlx", params={"other": "torch.nn"}))
    assert rec.status == "failed" and "PyTorch cannot be loaded" in rec.reason


@installed("mlx")
def test_a_process_that_already_has_a_framework_cannot_take_another():
    # MLX loaded first: a tenth of a CPU-second, where PyTorch takes three.
    code = ("import mlx.core\nfrom siliconbench.core.frameworks import isolate\n"
            "try:\n    isolate('torch')\nexcept ImportError as e:\n    print(e)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert r.stdout.strip() == ("PyTorch cannot be loaded into this process, which runs "
                                "MLX: SiliconBench keeps each framework in a process of its "
                                "own.")


# That each framework lists its devices in its own process, none in the asking one, is
# checked where `siliconbench devices` asks them all: tests/cli/test_cli.py,
# test_devices_lists_cpu_and_imports_no_tensorflow_or_qt.


@pytest.fixture
def mlx_missing(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mlx" else real(name, *a))


MISSING = "MLX is not installed; add it with pip install 'siliconbench[mlx]'."


def test_a_missing_framework_is_listed_with_its_pip_extra(mlx_missing, capsys):
    [mlx] = discover_devices(["mlx"])
    assert not mlx.usable and mlx.reason == MISSING
    with pytest.raises(UsageError, match=r"pip install 'siliconbench\[mlx\]'"):
        prepare(RunSpec("gemm", framework="mlx"))


def test_the_devices_table_shows_the_extra(mlx_missing, monkeypatch, capsys):
    monkeypatch.setattr("siliconbench.core.devices.FRAMEWORKS", {"mlx": FRAMEWORKS["mlx"]})
    assert cli.main(["devices"]) == 0
    assert "pip install 'siliconbench[mlx]'" in " ".join(capsys.readouterr().out.split())


def test_running_on_a_missing_framework_is_one_sentence_and_exit_2(mlx_missing, capsys):
    assert cli.main(["run", "bandwidth", "--framework", "mlx"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"siliconbench: {MISSING}"
