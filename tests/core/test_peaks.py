"""Tests for the physical-peak table and the above-peak trust check."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from siliconbench.core.peaks import (
    ABOVE_PEAK_TOLERANCE,
    DTYPES,
    Peak,
    assess,
    find_peak,
    load_peaks,
)


def _raw_table() -> dict:
    return json.loads(files("siliconbench.resources").joinpath("peaks.json").read_text(encoding="utf-8"))


def test_table_loads_with_unique_ids() -> None:
    peaks = load_peaks()
    assert len(peaks) >= 39
    assert len({p.id for p in peaks}) == len(peaks)
    assert all(isinstance(p, Peak) for p in peaks)
    assert "_about" in _raw_table()


def test_every_number_has_a_source() -> None:
    for peak in load_peaks():
        numbers = {
            "tflops": peak.tflops,
            "tflops_tf32": peak.tflops_tf32,
            "tflops_non_tensor": peak.tflops_non_tensor,
            "bandwidth_gbs": peak.bandwidth_gbs,
        }
        for field_name, value in numbers.items():
            if value:
                source = peak.sources.get(field_name, "")
                assert len(source.strip()) > 20, f"{peak.id}: no source for {field_name}"


def test_dtype_keys_and_values_are_sane() -> None:
    for peak in load_peaks():
        assert peak.tflops, peak.id
        assert set(peak.tflops) <= set(DTYPES), peak.id
        assert all(rate > 0 for rate in peak.tflops.values()), peak.id


def test_derived_apple_figures_say_so_with_clock() -> None:
    for peak in load_peaks():
        if peak.vendor == "apple":
            assert "Derived" in peak.sources["tflops"] and "GHz" in peak.sources["tflops"], peak.id


def test_sanity_nvidia_bf16_at_least_fp32_and_apple_bandwidth_positive() -> None:
    peaks = load_peaks()
    nvidia = [p for p in peaks if p.vendor == "nvidia"]
    apple = [p for p in peaks if p.vendor == "apple"]
    assert nvidia and apple
    for peak in nvidia:
        assert peak.tflops["bfloat16"] >= peak.tflops["float32"], peak.id
        assert peak.tflops_tf32 is not None and peak.tflops_tf32 >= peak.tflops["float32"], peak.id
    for peak in apple:
        assert peak.bandwidth_gbs is not None and peak.bandwidth_gbs > 0, peak.id
        # No Apple GPU has a faster FP16 ALU rate than FP32 (verified for Apple7/8, assumed after).
        assert peak.tflops["float16"] == peak.tflops["float32"], peak.id


@pytest.mark.parametrize(
    ("device_name", "expected_id"),
    [
        ("NVIDIA H100 80GB HBM3", "nvidia-h100-sxm5-80gb"),
        ("NVIDIA H100 PCIe", "nvidia-h100-pcie-80gb"),
        ("NVIDIA H200", "nvidia-h200-sxm-141gb"),
        ("NVIDIA A100-SXM4-80GB", "nvidia-a100-sxm4-80gb"),
        ("NVIDIA A100-SXM4-40GB", "nvidia-a100-sxm4-40gb"),
        ("NVIDIA A100-PCIE-40GB", "nvidia-a100-pcie-40gb"),
        ("NVIDIA A100 80GB PCIe", "nvidia-a100-pcie-80gb"),
        ("NVIDIA GeForce RTX 3090", "nvidia-geforce-rtx-3090"),
        ("NVIDIA GeForce RTX 4090", "nvidia-geforce-rtx-4090"),
        ("nvidia geforce rtx 4090", "nvidia-geforce-rtx-4090"),
    ],
)
def test_nvidia_names_match_their_entry(device_name: str, expected_id: str) -> None:
    peak = find_peak(device_name)
    assert peak is not None and peak.id == expected_id


@pytest.mark.parametrize(
    "device_name",
    [
        "NVIDIA H200 NVL",  # different clocks and power than the SXM part
        "NVIDIA H100 NVL",
        "NVIDIA GH200 480GB",  # contains "H200" but is the Grace Hopper superchip
        "NVIDIA GeForce RTX 3090 Ti",
        "NVIDIA GeForce RTX 4090 D",
        "NVIDIA GeForce RTX 4090 Laptop GPU",
        "NVIDIA A100-SXM4-80GB MIG 1g.10gb",  # a slice of the GPU, not the whole
        "NVIDIA GeForce GTX 1080",
        "Intel(R) Xeon(R) Platinum 8480+",
        "cpu",
        "",
    ],
)
def test_unknown_or_different_parts_give_none(device_name: str) -> None:
    assert find_peak(device_name) is None


def test_no_arguments_give_none() -> None:
    assert find_peak() is None


def test_apple_core_count_variants_are_different_entries() -> None:
    m1max_24 = find_peak(chip="Apple M1 Max", gpu_cores=24)
    m1max_32 = find_peak(chip="Apple M1 Max", gpu_cores=32)
    assert m1max_24 is not None and m1max_32 is not None
    assert m1max_24.id == "apple-m1-max-24" and m1max_32.id == "apple-m1-max-32"
    assert m1max_24.tflops["float32"] < m1max_32.tflops["float32"]
    assert m1max_24.bandwidth_gbs == m1max_32.bandwidth_gbs == 400


@pytest.mark.parametrize(
    ("chip", "cores", "bandwidth"),
    [
        ("Apple M1", 8, 68.25),
        ("Apple M2 Ultra", 60, 800),
        ("Apple M2 Ultra", 76, 800),
        ("Apple M3 Max", 30, 300),
        ("Apple M3 Max", 40, 400),
        ("Apple M3 Ultra", 80, 819),
        ("Apple M4 Max", 32, 410),
        ("Apple M4 Max", 40, 546),
        ("Apple M4 Pro", 20, 273),
    ],
)
def test_apple_bandwidth_per_variant(chip: str, cores: int, bandwidth: float) -> None:
    peak = find_peak(chip=chip, gpu_cores=cores)
    assert peak is not None and peak.bandwidth_gbs == bandwidth


def test_apple_chip_spelling_is_forgiving() -> None:
    expected = find_peak(chip="Apple M2 Ultra", gpu_cores=76)
    assert expected is not None
    assert find_peak(chip="apple  m2 ultra", gpu_cores=76) == expected
    assert find_peak(chip="M2 Ultra", gpu_cores=76) == expected
    assert find_peak("Apple M2 Ultra", gpu_cores=76) == expected


def test_apple_unknown_core_count_matches_only_single_variant_chips() -> None:
    # Every chip in the table has two GPU variants, so without a core count the peak is unknown.
    assert find_peak(chip="Apple M1 Max") is None
    assert find_peak(chip="Apple M1 Max", gpu_cores=28) is None
    assert find_peak(chip="Apple M9 Hyper", gpu_cores=32) is None


def test_tflops_for_with_tf32() -> None:
    h100 = find_peak("NVIDIA H100 80GB HBM3")
    assert h100 is not None
    assert h100.tflops_for("float32") == h100.tflops["float32"]
    assert h100.tflops_for("float32", tf32=True) == h100.tflops_tf32
    assert h100.tflops_for("float16", tf32=True) == h100.tflops["float16"]
    assert h100.tflops_for("torch.bfloat16") == h100.tflops["bfloat16"]
    assert h100.tflops_for("fp64") == h100.tflops["float64"]
    assert h100.tflops_for("int8") is None


def test_tflops_for_tf32_without_tf32_peak_falls_back_to_fp32() -> None:
    m1max = find_peak(chip="Apple M1 Max", gpu_cores=32)
    assert m1max is not None and m1max.tflops_tf32 is None
    assert m1max.tflops_for("float32", tf32=True) == m1max.tflops["float32"]
    assert m1max.tflops_for("bfloat16") is None


def test_assess_half_of_peak() -> None:
    percent, above = assess(50.0, 100.0)
    assert percent == pytest.approx(50.0)
    assert above is False


def test_assess_flags_above_peak_beyond_tolerance_only() -> None:
    assert assess(100.0 * ABOVE_PEAK_TOLERANCE * 1.01, 100.0)[1] is True
    percent, above = assess(102.0, 100.0)  # within the rounding of published figures
    assert percent == pytest.approx(102.0)
    assert above is False


def test_assess_unknown_peak() -> None:
    assert assess(12.3, None) == (None, False)
    assert assess(12.3, 0.0) == (None, False)
    assert assess(float("nan"), 100.0) == (None, False)


def test_load_peaks_is_cached_but_returns_a_fresh_list() -> None:
    first, second = load_peaks(), load_peaks()
    assert first == second and first is not second
    assert first[0] is second[0]


def test_a_number_is_held_to_the_peak_by_one_rule() -> None:
    """GEMM, bandwidth and a training step's TFLOPS all go through held_to_peak: above the
    peak, the row is flagged and its note says why first, keeping what it said before."""
    from siliconbench.core.peaks import held_to_peak
    flags = ["noisy"]
    pct, got, note = held_to_peak(50.0, 100.0, "TFLOPS", flags, "n")
    assert (pct, got, note) == (50.0, ["noisy"], "n") and got is not flags
    pct, got, note = held_to_peak(200.0, 100.0, "GB/s", flags, "best rate 210 GB/s")
    assert pct == 200.0 and got == ["noisy", "above_peak"] and flags == ["noisy"]
    assert note == ("200 GB/s is above the device's physical peak: the measurement is wrong; "
                    "best rate 210 GB/s")
    assert held_to_peak(200.0, 100.0, "TFLOPS", [], None)[2].endswith("the measurement is wrong")
    assert held_to_peak(200.0, None, "TFLOPS", [], None) == (None, [], None)
