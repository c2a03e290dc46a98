"""What makes two runs' figures of one point alike: every setting that changes the measurement
(TF32, the decode loop, the model and its size, generation length, batch, image size,
precision, power mode, llama.cpp's repack and offload, ...). Compare pairs a point's figures
only where these agree; a setting one record lacks is unknown, never taken as agreeing: the
pair is then marked 'not known to be alike: decode loop unknown for B (older record)'."""

from __future__ import annotations

from typing import Any

from siliconbench.core.results import Row, RunRecord

# A run's parameters that choose which points it measures or how long it runs, not what a
# point measures: runs that differ only in these are repeats of one another.
NOT_SETTINGS = frozenset({
    "budget_s", "grow", "duration", "images", "samples", "epochs", "check", "check_steps",
    "download", "cifar", "port", "hosts", "processes", "probe_time_limit", "max_batch",
    "start_batch", "bisect_steps"})

# The run's recorded settings (what ran, where a parameter said 'auto') that change what a
# point measures. The model's size stands for the model beside the preset (a point's own).
RECORDED = ("tf32", "decode_loop", "parameters", "gguf_type", "n_gpu_layers", "repack",
            "op_offload", "kv_cache", "flash_attn", "precision", "channels_last", "compile")

# How a setting reads ('decode loop compiled vs eager').
WORDS = {"tf32": "TF32", "decode_loop": "decode loop", "parameters": "model size",
         "gguf_type": "GGUF type", "n_gpu_layers": "GPU layers", "op_offload": "op offload",
         "kv_cache": "KV cache", "flash_attn": "flash attention", "gen_tokens": "generated tokens",
         "image_size": "image size", "channels_last": "channels last", "gpu_layers": "GPU layers",
         "low_power_mode": "power mode", "batch_size": "batch size", "seq_len": "sequence length",
         "min_blocks": "fewest blocks", "min_time_s": "least measured time (s)",
         "max_time_s": "most measured time (s)", "max_warmup_s": "most warm-up (s)"}

# Settings whose absence is their default, not an unknown: a Linux record names no Low
# Power Mode, and runs before channels-last existed ran without it.
DEFAULTS = {"low_power_mode": "off", "channels_last": "off", "compile": "off"}


def measurement_settings(rec: RunRecord) -> dict:
    """The run's parameters that change what a point measures (TF32, precision, channels
    last, image size, compile, ...): its scalar parameters that are not a point's own (a
    row's model, batch size, dtype) nor NOT_SETTINGS."""
    points = {k for row in rec.rows for k in row.params}
    return {k: v for k, v in rec.params.items()
            if k not in points and k not in NOT_SETTINGS and v is not None
            and not isinstance(v, (list, dict))}


def value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def run_traits(rec: RunRecord) -> dict[str, str]:
    """{setting: value in words} of what about the run changes its measurement, beyond its
    points: its measurement settings, what its record says ran (settings), and Low Power Mode.
    A setting the record does not name is absent (unknown)."""
    out = {k: value_text(v) for k, v in measurement_settings(rec).items()}
    for k in RECORDED:
        v = (rec.settings or {}).get(k)
        if v is not None and not isinstance(v, (list, dict)):
            out[k] = value_text(v)
    if (rec.machine or {}).get("low_power_mode"):
        out["low_power_mode"] = "Low Power Mode"
    return out


def row_traits(rec: RunRecord, row: Row, run: dict[str, str] | None = None) -> dict[str, str]:
    """run_traits as far as they bear on this row: TF32 only on a float32 product (it does
    nothing to bfloat16), and nothing the row's point names itself."""
    out = dict(run_traits(rec) if run is None else run)
    if row.params.get("dtype", "float32") != "float32":
        out.pop("tf32", None)
    for k in row.params:
        out.pop(k, None)
    return out


def kind_words(traits: dict[str, str]) -> list[str]:
    """What kind of arithmetic a point's figure is of, beyond its dtype: 'TF32', 'precision
    mixed'. A best vs best pairs only like kinds, and names its kind with these."""
    out = []
    if traits.get("tf32") == "on":
        out.append("TF32")
    precision = traits.get("precision")
    if precision not in (None, "fp32", "float32"):
        out.append(f"precision {precision}")
    return out


def word(key: str) -> str:
    return WORDS.get(key, key.replace("_", " "))


def _value(traits: dict[str, str], key: str) -> str | None:
    return traits.get(key, DEFAULTS.get(key))


def differences(base: dict[str, str], other: dict[str, str], same_framework: bool = True
                ) -> tuple[list[tuple[str, str, str]], list[tuple[str, int]]]:
    """How `other`'s traits differ from `base`'s: ([(setting, other's, base's) where both
    name it and they differ], [(setting, 0 where base lacks it, 1 where other does)]). A
    setting only one record names is unknown on the other where both are of one framework
    (an older record); across frameworks a setting one of them has no notion of is neither."""
    differ, unknown = [], []
    for k in dict.fromkeys([*base, *other]):
        a, b = _value(base, k), _value(other, k)
        if a is not None and b is not None:
            if a != b:
                differ.append((k, b, a))
        elif same_framework:
            unknown.append((k, 0 if a is None else 1))
    return differ, unknown


def unlike_text(differ: list[tuple[str, str, str]]) -> str:
    """'TF32 on vs off, decode loop compiled vs eager': this side's vs the baseline's."""
    return ", ".join(f"{word(k)} {mine} vs {theirs}" for k, mine, theirs in differ)


def unknown_text(unknown: list[tuple[str, int]], names: tuple[str, str]) -> str:
    """'decode loop unknown for A (older record)': `names` are (the baseline's, this side's)."""
    return ", ".join(f"{word(k)} unknown for {names[which]} (older record)"
                     for k, which in unknown)


NOT_KNOWN = "not known to be alike"
