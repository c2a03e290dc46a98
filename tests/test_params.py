"""Parameter declarations: parsing what users type, bounds, choices, one-sentence errors."""

import pytest

from core.params import Param, ParamError, resolve

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
    from core.cli import TIME_LIMIT
    from core.workloads import catalogue
    floats = [p for w in catalogue().values() for p in w.params if p.kind == "float"]
    for p in floats + [TIME_LIMIT]:
        with pytest.raises(ParamError, match="takes a finite number"):
            p.parse(text)
    assert TIME_LIMIT.parse("2.5") == 2.5
