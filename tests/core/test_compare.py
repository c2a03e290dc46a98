"""Comparisons: statistics on constructed samples with known answers, which way is better per
metric, row matching, the comparability warnings, what a compare argument may name, and the
`siliconbench compare` command."""

import json

import pytest

from siliconbench.core import cli
from siliconbench.core.compare_stats import (
    FAR_APART,
    INCONCLUSIVE,
    NO_SAMPLES_VERDICT,
    PUBLISHED_VERDICT,
    RUNS_OVERLAP,
    SAME,
    TOO_FEW,
    Side,
    UnknownSide,
    compare,
    direction,
    resolve_side,
    resolve_sides,
    smallest_p,
    verdict,
)
from siliconbench.core.compare_words import (
    FIXED,
    chart_groups,
    compared,
    headers,
    row_texts,
    side_name,
    sides_for,
    summary_text,
    value_tip,
    verdict_tip,
)
from siliconbench.core.export import to_json
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize
from siliconbench.core.store import Store
from tests.helpers.sample_records import QUICK_MEASURE, gemm_run, infer_run, samples

# ---------------------------------------------------------------- statistics

@pytest.mark.parametrize("metric, unit, better", [
    ("samples_per_s", "img/s", "higher"), ("tflops", "TFLOPS", "higher"),
    ("gb_per_s", "GB/s", "higher"), ("samples_per_watt", "img/s/W", "higher"),
    ("tflops_per_watt", "TFLOPS/W", "higher"), ("step_time", "ms", "lower"),
    ("epoch_seconds", "s", "lower"), ("train_seconds", "s", "lower"),
    ("us_per_sample", "µs", "lower"), ("joules_per_sample", "J/sample", "lower"),
    ("peak_memory", "bytes", "neutral"), ("power", "W", "neutral"),
    ("max_temperature", "°C", "neutral")])
def test_direction(metric, unit, better):
    assert direction(metric, unit) == better


def test_ten_percent_more_throughput_is_faster():
    word, p, ratio = verdict(samples(100), samples(110), "higher")
    assert word == "faster" and p < 1e-6 and ratio == pytest.approx(1.10)
    word, _, ratio = verdict(samples(110), samples(100), "higher")
    assert word == "slower" and ratio == pytest.approx(1 / 1.1)


def test_a_significant_difference_under_five_percent_is_no_difference():
    word, p, ratio = verdict(samples(100), samples(103), "higher")
    assert p < 0.01 and ratio == pytest.approx(1.03)
    assert word == SAME


def test_same_distribution_is_no_difference():
    word, p, ratio = verdict(samples(100), list(reversed(samples(100))), "higher")
    assert word == SAME and p > 0.5 and ratio == 1.0
    word, p, _ = verdict([5.0] * 10, [5.0] * 10, "higher")
    assert word == SAME and p == 1.0


def test_lower_is_better_metrics_are_faster_when_lower():
    assert verdict(samples(10.0), samples(8.0), "lower")[0] == "faster"
    assert verdict(samples(10.0), samples(12.5), "lower")[0] == "slower"
    assert verdict(samples(10.0), samples(12.5), "neutral")[0] == "higher"


def test_too_few_samples_never_make_a_difference():
    assert smallest_p(3, 3) == pytest.approx(0.1)
    assert smallest_p(10, 10) == pytest.approx(2 / 184756)
    word, p, ratio = verdict([100.0, 101, 102], [120.0, 121, 122], "higher")
    assert ratio == pytest.approx(1.19, abs=0.01) and p == pytest.approx(0.1)
    assert word == f"{INCONCLUSIVE}: {TOO_FEW}"


def test_far_apart_ranges_say_so_plainly_even_with_too_few_samples():
    # Two quick runs 30x apart: the test cannot reach 1%, the ranges still do not overlap.
    word, p, _ = verdict([0.170, 0.178, 0.181], [0.005, 0.0052, 0.0049], "higher")
    assert p >= 0.01
    assert word.startswith(f"{FAR_APART}: 35.6× slower") and TOO_FEW in word


def test_overlapping_noisy_samples_are_no_difference():
    base = [100, 130, 90, 120, 95, 125, 105, 110, 85, 115]
    other = [x * 1.06 for x in [120, 95, 130, 90, 110, 100, 125, 85, 105, 115]]
    word, p, _ = verdict(base, other, "higher")
    # Medians 6% apart that the test cannot separate: not "no difference", inconclusive.
    assert p > 0.01 and word == f"{INCONCLUSIVE}: the spread is too wide to tell"


# ---------------------------------------------------------------- matching

def test_rows_match_on_workload_metric_and_point_with_99_percent_intervals():
    a = gemm_run("MacBook Pro 14", 8.0)
    b = gemm_run("Mac Studio", 9.0, sizes=(2048, 4096))
    cmp = compare([Side("MacBook Pro 14", [a]), Side("Mac Studio", [b])])
    assert len(cmp.rows) == 1 and cmp.left_out == 2        # 1024 only in A, 4096 only in B
    r = cmp.rows[0]
    assert (r.workload, r.metric, r.params) == ("gemm", "tflops", {"size": 2048,
                                                                   "dtype": "float32"})
    base, other = r.cells
    s = summarize(samples(8.0), 0.99)
    assert (base.value, base.ci_low, base.ci_high, base.n) == (s.median, s.ci_low, s.ci_high, 20)
    assert base.confidence == 0.99 and base.verdict is None
    assert other.verdict == "faster" and other.ratio == pytest.approx(9 / 8)
    assert other.p_value < 0.01


def test_every_run_of_a_side_counts_and_baseline_is_first_side_with_the_row():
    """A side of two runs stands by both (the median of their medians, their range the
    run-to-run spread), not by its newest run alone (issue 50; the newest won before)."""
    old = gemm_run("Studio", 5.0, created_at="2024-01-01T00:00:00+00:00")
    new = gemm_run("Studio", 9.0, created_at="2024-06-01T00:00:00+00:00")
    only_4096 = gemm_run("Laptop", 8.0, sizes=(4096,))
    third = gemm_run("Server", 9.0, sizes=(4096,))
    cmp = compare([Side("Studio", [new, old]), Side("Laptop", [only_4096]),
                   Side("Server", [third])])
    r = cmp.rows[0]
    assert r.params["size"] == 4096 and r.baseline == 1 and r.cells[0] is None
    assert r.cells[2].verdict == "faster"
    cmp = compare([Side("Studio", [new, old]), Side("Studio again", [new])])
    for r in cmp.rows:
        two, one = r.cells
        scale = r.params["size"] / 2048
        assert two.runs == 2 and two.value == pytest.approx(7.0 * scale)
        assert two.spread == pytest.approx((5.0 * scale, 9.0 * scale))
        assert one.runs == 1 and one.value == pytest.approx(9.0 * scale)
        # The one run lies within the two's spread: the runs disagree as much as the sides.
        assert one.verdict == RUNS_OVERLAP


def test_published_and_sample_less_rows_compare_by_value_only():
    a, b = infer_run("Laptop", 250.0), infer_run("Studio", 260.0)
    b.rows.append(Row("peak_memory", 3e9, "bytes", {}))
    a.rows.append(Row("peak_memory", 2e9, "bytes", {}))
    pub = infer_run("Published", 263.1, source="published", provenance={"source": "a blog"})
    for r in pub.rows:
        r.stats, r.samples = None, []
    cmp = compare([Side("Laptop", [a]), Side("Studio", [b]), Side("Published", [pub])])
    thr = next(r for r in cmp.rows if r.metric == "samples_per_s")
    assert thr.cells[2].verdict == PUBLISHED_VERDICT and thr.cells[2].ci_low is None
    assert thr.cells[2].ratio == pytest.approx(263.1 / thr.cells[0].value)
    mem = next(r for r in cmp.rows if r.metric == "peak_memory")
    assert mem.cells[1].verdict == NO_SAMPLES_VERDICT and mem.cells[1].ratio == 1.5
    assert any("Published is no SiliconBench measurement but a figure from a blog" in w
               for w in cmp.warnings)


# ---------------------------------------------------------------- the Compare tab's words

def test_the_compare_tabs_sides_table_and_summary_need_no_display():
    """siliconbench.core.compare_words: what the Compare tab shows, worked out without Qt."""
    studio = gemm_run("Studio", 9.0, sizes=(1024,))
    laptop, server = gemm_run("Laptop", 8.0, sizes=(4096,)), gemm_run("Server", 9.0, sizes=(4096,))
    again = gemm_run("Laptop", 8.5, sizes=(4096,))
    # Runs of one device are compared run by run, under their identities.
    assert [s.label for s in sides_for([laptop, again])] == [laptop.identity, again.identity]
    cmp = compared(sides_for([studio, laptop, server]))
    # C's verdicts are against B (A never measured 4096): the column says so.
    assert headers(cmp.sides) == FIXED + ["A", "B", "C", "B vs A", "C vs A"]
    assert headers(cmp.sides, cmp.rows) == FIXED + ["A", "B", "C", "B vs A", "C vs B"]
    [r] = cmp.rows                                   # 4096: Laptop (B) is its baseline
    assert row_texts(r) == ["gemm", "Throughput (TFLOPS)", "dtype=float32 size=4096", "",
                            "16 TFLOPS", "18 TFLOPS", "", "1.12× faster (vs B)"]
    assert row_texts(r, [0, 0, 1])[-1] == "1.12× faster"
    assert verdict_tip(r, 2).startswith("C vs B: 1.12× faster (vs B)\nRatio of medians: ")
    assert value_tip(cmp.sides[1], r, 1).endswith("\n20 blocks; [ ]: 99% interval of the median")
    summary = summary_text(cmp, [studio, laptop, server], [])
    assert summary.startswith(
        # A shares no point, but its best vs best is a row of the table: A has its column.
        "1 result compared; 1 measured by one side only is not compared. "
        "A = Studio   B = Laptop   C = Server\ngemm dtype=float32, best vs best: B 3.56× "
        "faster than A (B 16 TFLOPS at size=4096, A 4.50 TFLOPS at size=1024).")
    assert summary_text(None, [], []).startswith("Select two or more runs under Results")
    assert chart_groups(cmp) == [("gemm", "tflops", "TFLOPS")]
    pub = infer_run("Published", 263.1, source="published")
    assert side_name(Side("M1 Max", [pub])) == side_name(Side("M1 Max (published)", [pub])) \
        == "M1 Max (published)" and side_name(cmp.sides[0]) == "Studio"


# ---------------------------------------------------------------- comparability

def warnings_between(a, b) -> list[str]:
    return compare([Side("A", [a]), Side("B", [b])]).warnings


def test_the_same_setup_warns_nothing():
    assert warnings_between(gemm_run("A", 8.0), gemm_run("B", 9.0)) == []


@pytest.mark.parametrize("change, expected", [
    ({"torch": "2.3.0"}, "other torch version (gemm): A 2.4.1, B 2.3.0"),
    ({"framework": "tensorflow"}, "other framework (gemm): A ran torch, B tensorflow"),
    ({"machine_kw": {"os_version": "15.1"}}, "other OS or OS version: A macOS 14.5, B macOS 15.1"),
    ({"params": {"sizes": [8], "dtypes": ["float32"], "tf32": True}},
     "other parameters (gemm): TF32 off vs on (A vs B)"),
    ({"settings": {"measure": QUICK_MEASURE, "tf32": False}},
     "different measurement settings (gemm): fewest blocks 10 vs 5, most measured time (s) "
     "10 vs 2"),
    ({"settings": {"measure": {"min_blocks": 10, "max_time_s": 10.0}, "tf32": True}},
     "other settings (gemm): TF32 off vs on (A vs B)"),
    ({"machine_kw": {"power_source": "battery"}}, "B ran on battery"),
    ({"machine_kw": {"low_power_mode": True}}, "B had Low Power Mode on"),
    ({"machine_kw": {"rosetta": True}}, "B ran under Rosetta"),
    # What a GitHub macos-26 runner's sysctl and system_profiler say (tests/data/macos).
    ({"machine_kw": {"model_identifier": "VirtualMac2,1", "chip": "Apple M1 (Virtual)"}},
     "B ran in a virtual Mac"),
])
def test_comparability_warnings(change, expected):
    change = dict(change)
    framework = change.pop("framework", None)
    b = gemm_run("B", 9.0, **change)
    if framework:
        b.framework = framework
    found = warnings_between(gemm_run("A", 8.0), b)
    assert any(w.startswith(expected) for w in found), found


def test_same_chip_with_other_cpu_cores_warns():
    # The two M3 Max sysctl captures in tests/data/macos: 12 + 4 and the binned 10 + 4 cores.
    full = [{"name": "performance", "cores": 12}, {"name": "efficiency", "cores": 4}]
    binned = [{"name": "performance", "cores": 10}, {"name": "efficiency", "cores": 4}]
    a = gemm_run("A", 8.0, machine_kw={"chip": "Apple M3 Max", "cpu_tiers": full})
    b = gemm_run("B", 9.0, machine_kw={"chip": "Apple M3 Max", "cpu_tiers": binned})
    assert ("same chip, other CPU cores: A 16-core CPU: 12 performance + 4 efficiency, "
            "B 14-core CPU: 10 performance + 4 efficiency") in warnings_between(a, b)
    # A record written before tiers were named (perf_cores/eff_cores) matches its new twin.
    old = gemm_run("B", 9.0, machine_kw={"chip": "Apple M3 Max", "perf_cores": 12,
                                         "eff_cores": 4})
    assert warnings_between(a, old) == []


def test_battery_seen_by_telemetry_warns_too():
    b = gemm_run("B", 9.0)
    b.telemetry = {"interval_s": 1.0, "series": {}, "summary": {"on_battery": True}}
    assert any(w.startswith("B ran on battery") for w in warnings_between(gemm_run("A", 8), b))


def test_synthetic_versus_real_data_and_suspect_flags_warn():
    found = warnings_between(infer_run("A", 250.0, flags=["synthetic"]),
                             infer_run("B", 260.0, flags=["fallback"]))
    assert "synthetic vs real data (infer): A used synthetic data, the others the real data set" \
        in found
    assert any(w.startswith("infer samples_per_s of B is flagged fallback") for w in found)


# ---------------------------------------------------------------- naming sides

def test_sides_from_files_ids_labels_and_references(tmp_path):
    store = Store()
    a, b, c = gemm_run("Laptop", 8.0), gemm_run("Laptop", 8.1), gemm_run("Studio", 9.0)
    for rec in (a, b, c):
        store.save(rec)
    path = tmp_path / "studio.json"
    path.write_text(to_json([c]))
    assert resolve_side(str(path)).label == "Studio"
    assert resolve_side(a.id[:10], store).records[0].id == a.id
    assert {r.id for r in resolve_side("laptop", store).records} == {a.id, b.id}
    pub = resolve_side("pub-infer-studio", store)
    assert pub.published and pub.label.endswith("(published)")
    with pytest.raises(UnknownSide, match="is not a result file, a run id"):
        resolve_side("nothing-like-this", store)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(UnknownSide, match="not a SiliconBench result file"):
        resolve_side(str(bad), store)
    with pytest.raises(UnknownSide, match="published references"):
        resolve_side("pub-", store)
    sides = resolve_sides([a.id, b.id], store)
    assert sides[0].label != sides[1].label and sides[0].label.startswith("Laptop [")


# ---------------------------------------------------------------- the command

def test_compare_command_prints_writes_and_refuses(tmp_path, capsys):
    store = Store()
    a, b = gemm_run("Laptop", 8.0), gemm_run("Studio", 9.0, machine_kw={"power_source": "battery"})
    store.save(a)
    store.save(b)
    html, csv_path = tmp_path / "r.html", tmp_path / "r.csv"
    assert cli.main(["compare", "Laptop", "Studio", "--html", str(html), "--csv",
                     str(csv_path)]) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert "faster" in out and "Studio ran on battery" in out and "99%" in out
    assert html.read_text().startswith("<!DOCTYPE html>") and csv_path.read_text()
    assert cli.main(["compare", "Laptop", "Studio", "--json"]) == cli.EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    assert [s["label"] for s in doc["sides"]] == ["Laptop", "Studio"]
    assert doc["rows"][0]["cells"][1]["verdict"] == "faster"
    assert cli.main(["compare", "Laptop"]) == cli.EXIT_USAGE
    assert cli.main(["compare", "Laptop", "nope"]) == cli.EXIT_USAGE
    assert cli.main(["compare", "Laptop", "pub-infer-studio"]) == cli.EXIT_USAGE  # nothing shared
    assert cli.main(["compare", "Laptop", "Studio", "--workload", "train"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert "no result in common" in err and "has no train run" in err
