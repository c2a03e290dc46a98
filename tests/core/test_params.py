"""Parameter declarations: parsing what users type, bounds, choices, one-sentence errors."""

import math

import pytest

from siliconbench.core.params import Param, ParamError, resolve

SIZES = Param("sizes", "int_list", None, "sizes", min=1, max=65536)
DTYPES = Param("dtypes", "choice_list", ["float32"], "dtypes", choices=("float32", "float16"))
TF32 = Param("tf32", "bool", False, "tf32")
BATCH = Param("batch_size", "int", 64, "batch", min=1)


def test_parse_lists_and_bools():
    assert SIZES.parse("256, 512,1024") == [256, 512, 1024]
    assert DTYPES.parse("float16") == ["float16"]
    assert TF32.parse("yes") is True and TF32.parse("off") is False
    assert BATCH.flag == "--batch-size"
    assert SIZES.format([1, 2]) == "1,2" and TF32.format(True) == "true"


@pytest.mark.parametrize("param, text, message", [
    (SIZES, "0", "--sizes must be at least 1, not 0."),
    (SIZES, "12x", "--sizes takes whole numbers, not '12x'."),
    (SIZES, " , ", "--sizes needs at least one value."),
    (DTYPES, "float8", "--dtypes must be one of float32, float16, not 'float8'."),
    (TF32, "maybe", "--tf32 takes true or false, not 'maybe'."),
    (BATCH, "-3", "--batch-size must be at least 1, not -3."),
])
def test_bad_values_get_one_sentence(param, text, message):
    with pytest.raises(ParamError) as e:
        param.parse(text)
    assert str(e.value) == message


def test_large_bounds_are_written_in_full_in_errors_and_in_the_form():
    """:g made 2**36, all-reduce's largest message, into 6.87195e+10 in the form's hint and
    in the CLI's sentence; whole numbers are written in full."""
    from siliconbench.core.catalogue import workload
    from siliconbench.gui.param_form import param_hint
    sizes = next(p for p in workload("allreduce").params if p.name == "sizes")
    assert "From 16 to 68,719,476,736." in param_hint(sizes)
    with pytest.raises(ParamError) as e:
        sizes.parse("99999999999")
    assert str(e.value) == "--sizes must be at most 68,719,476,736, not 99,999,999,999."
    assert "From 0.5 to 2." in param_hint(Param("f", "float", 1.0, "f", min=0.5, max=2.0))


def test_resolve_fills_defaults_and_refuses_unknown_names():
    assert resolve((SIZES, DTYPES, TF32), {"sizes": [64]}) == \
        {"sizes": [64], "dtypes": ["float32"], "tf32": False}
    with pytest.raises(ParamError, match="Unknown parameter 'size'"):
        resolve((SIZES,), {"size": 3})
    with pytest.raises(ParamError):
        resolve((BATCH,), {"batch_size": True})  # a bool is not a batch size


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "Infinity", "1e999"])
def test_every_float_parameter_refuses_what_is_not_finite(text):
    """NaN passes every bound check (it compares false), and an infinite time limit is none."""
    from siliconbench.core.catalogue import catalogue
    from siliconbench.core.cli import TIME_LIMIT
    floats = [p for w in catalogue().values() for p in w.params if p.kind == "float"]
    for p in floats + [TIME_LIMIT]:
        with pytest.raises(ParamError, match="takes a finite number"):
            p.parse(text)
    assert TIME_LIMIT.parse("2.5") == 2.5


def test_the_shipped_torchvision_model_list_is_the_installed_ones():
    """siliconbench/resources/torchvision_models.json (scripts/torchvision_models.py) against torchvision,
    asked in a child process: this one never imports torch."""
    import importlib.util
    import json
    import subprocess
    import sys

    import pytest
    if importlib.util.find_spec("torchvision") is None:   # found, not imported (3 s, torch's)
        pytest.skip("torchvision is not installed")
    from siliconbench.core.catalogue import workload
    code = ("import json; from scripts.torchvision_models import installed_models; "
            "print(json.dumps(installed_models()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    version, names = json.loads(out.stdout)
    model = next(p for p in workload("infer").params if p.name == "model")
    assert list(model.choices) == names, f"run scripts/torchvision_models.py (torchvision {version})"


def test_estimates_question_huge_runs_and_pass_small_ones():
    from siliconbench.core.estimate import estimate
    from siliconbench.core.frameworks import DeviceInfo
    laptop = DeviceInfo("torch", "cpu", "Laptop CPU", "cpu", 16 * 2**30)
    huge = estimate("gemm", {"sizes": [32768], "dtypes": ["float64"]}, laptop)
    assert huge.too_big == ["N=32768 in float64 (24 GB)"]
    slow = estimate("gemm", {"sizes": [16384], "dtypes": ["float64"]}, laptop)
    # 2 * 16384^3 flops at (15 GFLOPS x cores) for at least 6 calls: minutes, whatever the cores.
    assert slow.seconds > 300 and "may take about" in slow.warnings("Laptop CPU", 16 * 2**30)[0]
    small = estimate("gemm", {"sizes": [128], "dtypes": ["float32"]}, laptop, quick=True)
    assert small.seconds < 10 and small.warnings("Laptop CPU", 16 * 2**30) == []
    h100 = DeviceInfo("torch", "cuda:0", "NVIDIA H100 80GB HBM3", "gpu", 80 * 2**30)
    assert estimate("gemm", {"sizes": [8192], "dtypes": ["float32"]}, h100).seconds < 60
    # infer is sized from the model's own figures (resources/model_sizes.json)
    assert estimate("infer", {}, laptop).seconds > 0


def test_the_command_line_asks_before_a_huge_cpu_run_and_refuses_what_cannot_fit():
    import psutil

    from siliconbench.core.estimate import verdict
    from siliconbench.core.frameworks import DeviceInfo
    from siliconbench.core.runner import RunSpec
    cpu = DeviceInfo("torch", "cpu", "This CPU", "cpu", psutil.virtual_memory().total)
    too_big = 2 ** int(math.log2(math.sqrt(psutil.virtual_memory().total / 8 / 3)) + 1)
    refusal, asked = verdict(RunSpec("gemm", "torch", "cpu", {"sizes": [64, too_big],
                                                              "dtypes": ["float64"]}), cpu)
    assert refusal is None and f"N={too_big} in float64" in asked[0]
    assert verdict(RunSpec("gemm", "torch", "cpu", {"sizes": [64]}, quick=True), cpu) == \
        (None, [])
    # Nothing of it fits: refused before it starts, in one sentence (exit 2)
    refusal, _ = verdict(RunSpec("gemm", "torch", "cpu", {"sizes": [too_big],
                                                          "dtypes": ["float64"]}), cpu)
    assert refusal.startswith("Nothing of this run fits in ") and \
        f"N={too_big} in float64" in refusal
