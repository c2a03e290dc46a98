"""Compare tells the truth (issue #41), on the runs real machines wrote (tests/data/records:
this machine's CPU; tests/data/h200 and tests/data/h100: the GPU hosts'): a side is one run
identity (machine, device, framework, measurement settings) with its own values, machines
of one CPU name are told apart, sides that share no point still get a best-vs-best answer
in core, in `siliconbench compare` and in the HTML report, and the counts, headers and
notes say what was compared against what."""

from __future__ import annotations

import json
import re

import pytest

from siliconbench.core import cli
from siliconbench.core.compare_stats import compare, resolve_sides
from siliconbench.core.compare_words import (
    best_lines,
    column_baseline,
    compared,
    headers,
    machine_names,
    row_texts,
    sides_for,
    summary_text,
)
from siliconbench.core.export import to_json
from siliconbench.core.report import to_html
from siliconbench.core.telemetry import power_trusted
from tests.helpers.h200_records import FOLDER, h100, h200
from tests.helpers.recorded import FOLDER as CPU_FOLDER
from tests.helpers.recorded import recorded


def host_cpu(workload: str):
    """The H100 host's own Xeon CPU run of a workload (its quick suite)."""
    return next(r for r in h100("h100-quick-suite")
                if r.workload == workload and r.device == "cpu")


def h100_quick_gemm():
    """The quick suite's GEMM on the H100 (cuda:0): a repeat of h100-gemm's setup."""
    return next(r for r in h100("h100-quick-suite")
                if r.workload == "gemm" and r.device.startswith("cuda") and r.params["grow"])


def vm_named_xeon(stem: str):
    """A run of this VM as the issue's VM wrote it: a 2-core VM whose CPU reports the name
    the H100 host's 16 cores report. Only that name is changed; cores, memory and values
    are this VM's."""
    rec = recorded(stem)
    rec.machine["cpu_model"] = host_cpu("gemm").machine["cpu_model"]
    return rec


def values(rec, metric: str) -> dict[str, float]:
    return {json.dumps(r.params, sort_keys=True): r.value for r in rec.rows
            if r.metric == metric and r.value is not None}


def side_of(cmp, rec):
    (side,) = [s for s in cmp.sides if any(r.id == rec.id for r in s.records)]
    return cmp.sides.index(side)


# ---------------------------------------------------------------- one side per run identity

def test_five_gemm_runs_are_one_side_per_identity_each_with_its_own_values():
    """This CPU's TensorFlow, torch and MLX GEMM runs with two H100 GEMM runs: TensorFlow's
    values stood for all three CPU runs on one side 'AMD EPYC'. Now each framework is a side
    of its own, the two H100 runs (same machine, device, framework, settings) one side that
    says it holds two runs, and every cell is its own side's run's value."""
    cpu = [recorded("gemm-tensorflow"), recorded("gemm-torch"), recorded("gemm-mlx")]
    gpu = h100("h100-gemm") + [h100_quick_gemm()]
    cmp = compared(sides_for(cpu + gpu))
    assert len(cmp.sides) == 4
    for rec in cpu:
        side = cmp.sides[side_of(cmp, rec)]
        assert [r.id for r in side.records] == [rec.id]
        assert side.label == f"{rec.device_label} · {rec.framework} cpu"
    h100_side = cmp.sides[side_of(cmp, gpu[0])]
    assert {r.id for r in h100_side.records} == {r.id for r in gpu}
    assert h100_side.label.endswith("· 2 runs")
    # Each compared cell is the value its own side's run measured at that point.
    rows = [r for r in cmp.rows if r.metric == "tflops"]
    assert rows
    for row in rows:
        point = json.dumps(row.params, sort_keys=True)
        for side, cell in zip(cmp.sides, row.cells):
            if cell is None:
                continue
            (run,) = [r for r in side.records if r.id == cell.run_id]
            assert cell.value == pytest.approx(values(run, "tflops")[point], rel=1e-9)
    # The three CPU frameworks' 64 and 128 points are all in the table, side by side.
    at_64 = next(r for r in rows if r.params["size"] == 64)
    ids = {c.run_id for c in at_64.cells if c is not None}
    assert ids == {r.id for r in cpu}


def test_ten_runs_keep_the_vm_and_the_h100_hosts_cpu_apart():
    """Ten runs: a 2-core VM's and the H100 host's 16-core CPU, which report one CPU name,
    and the H100. They were one side 'Intel(R) Xeon(R) Processor', showing sizes the VM never
    ran; now each machine is a side, named apart by what differs."""
    vm = [vm_named_xeon(s) for s in ("gemm-torch", "bandwidth-torch", "infer-torch")]
    host = [host_cpu(w) for w in ("gemm", "bandwidth", "infer", "llm")]
    gpu = [r for r in h100("h100-quick-suite") if r.device.startswith("cuda")
           and r.workload in ("gemm", "bandwidth", "infer")][:3]
    runs = vm + host + gpu
    assert len(runs) == 10
    cmp = compared(sides_for(runs))
    vm_side, host_side = cmp.sides[side_of(cmp, vm[0])], cmp.sides[side_of(cmp, host[0])]
    assert vm_side is not host_side
    assert {r.id for r in vm_side.records} == {r.id for r in vm}
    assert {r.id for r in host_side.records} == {r.id for r in host}
    name = vm[0].device_label
    assert host[0].device_label == name
    assert vm_side.label.startswith(f"{name} [2 cores") and "no GPU" in vm_side.label
    assert host_side.label.startswith(f"{name} [16 cores") and "H100" in host_side.label
    # The VM's side shows the sizes the VM ran, and no other.
    i = cmp.sides.index(vm_side)
    vm_points = {json.dumps(r.params, sort_keys=True) for rec in vm for r in rec.rows}
    for row in cmp.rows:
        if row.cells[i] is not None:
            assert json.dumps(row.params, sort_keys=True) in vm_points
    # The Machine filter's names tell the two hosts apart too.
    names = machine_names(runs)
    assert names[vm[0].id] != names[host[0].id]
    assert len({names[r.id] for r in vm}) == len({names[r.id] for r in host}) == 1


def test_two_macs_of_one_chip_name_are_two_sides():
    """An M3 Max and a binned one (the two sysctl captures in tests/data/macos: 12 + 4 and
    10 + 4 cores), neither named: two machines, named apart by their cores."""
    from tests.helpers.sample_records import gemm_run
    full = [{"name": "performance", "cores": 12}, {"name": "efficiency", "cores": 4}]
    binned = [{"name": "performance", "cores": 10}, {"name": "efficiency", "cores": 4}]
    a = gemm_run("", 8.0, machine_kw={"chip": "Apple M3 Max", "cpu_tiers": full})
    b = gemm_run("", 9.0, machine_kw={"chip": "Apple M3 Max", "cpu_tiers": binned})
    other = h200("h200-gemm")
    for rec in (a, b):
        rec.label = None
        rec.machine["model_name"] = None
    sides = sides_for([a, b, other])
    assert len(sides) == 3
    assert sides[0].label == "Apple M3 Max [16-core CPU: 12 performance + 4 efficiency]"
    assert sides[1].label == "Apple M3 Max [14-core CPU: 10 performance + 4 efficiency]"


def test_repeats_alone_are_compared_run_by_run():
    """Two runs of one identity and nothing else: each is a side, under its identity."""
    a, b = recorded("gemm-torch"), recorded("gemm-torch-second")
    assert [s.label for s in sides_for([a, b])] == [a.identity, b.identity]


def test_settings_that_change_the_measurement_make_two_sides():
    """The H200's plain float32 GEMM and its TF32 one are two sides, named by the setting."""
    plain, tf32 = h200("h200-gemm"), h200("h200-gemmtf32")
    sides = sides_for([plain, tf32, recorded("gemm-torch")])
    assert [s.label for s in sides] == [f"{plain.device_label} · TF32 off",
                                        f"{plain.device_label} · TF32 on", "AMD EPYC"]


# ---------------------------------------------------------------- best vs best

def gpu_beside_cpu():
    return h200("h200-gemm"), recorded("gemm-torch")


def best_float32(rec) -> tuple[int, float]:
    rows = [r for r in rec.rows if r.metric == "tflops" and r.params["dtype"] == "float32"
            and r.value is not None]
    best = max(rows, key=lambda r: r.value)
    return best.params["size"], best.value


def test_a_gpu_and_a_cpu_that_share_no_point_get_a_best_vs_best_ratio():
    """The H200's sweep starts at N=4096 and this CPU's stops at N=128: no point in common,
    'Nothing to compare' before. Now each side's best float32 product, as a ratio, with the
    points it divides."""
    gpu, cpu = gpu_beside_cpu()
    cmp = compared(sides_for([gpu, cpu]))
    assert cmp.rows == []
    (best,) = [b for b in cmp.best if b.workload == "gemm"]
    (gpu_n, gpu_v), (cpu_n, cpu_v) = best_float32(gpu), best_float32(cpu)
    assert [c.value for c in best.cells] == pytest.approx([gpu_v, cpu_v], rel=1e-9)
    assert best.cells[1].ratio == pytest.approx(cpu_v / gpu_v, rel=1e-9)
    assert [p["size"] for p in best.points] == [gpu_n, cpu_n]
    text = summary_text(cmp, [gpu, cpu], [])
    assert "Nothing to compare" not in text
    assert "gemm dtype=float32, best vs best: B " in text
    assert f"at size={cpu_n}, A " in text and f"at size={gpu_n})" in text
    assert "× slower than A" in best_lines(cmp)[0]


def test_best_vs_best_never_pairs_unlike_kinds():
    """A tiny LLM on this CPU and Llama-3.1-8B on the H200 are not one benchmark: no best
    vs best between them."""
    cmp = compared(sides_for([h200("h200-llm8b"), recorded("llm-torch")]))
    assert cmp.best == [] and cmp.rows == []


def cli_compare(capsys, *args) -> tuple[int, str, str]:
    code = cli.main(["compare", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_command_answers_best_vs_best_in_its_output_json_and_html(capsys, tmp_path):
    gpu, cpu = gpu_beside_cpu()
    (gpu_n, gpu_v), (cpu_n, cpu_v) = best_float32(gpu), best_float32(cpu)
    files = [str(FOLDER / "h200-gemm.json"), str(CPU_FOLDER / "gemm-torch.json")]
    html = tmp_path / "cmp.html"
    code, out, err = cli_compare(capsys, *files, "--html", str(html))
    assert code == cli.EXIT_OK, err
    assert "gemm dtype=float32: best vs best" in out
    assert f"best vs best: size={cpu_n} vs size={gpu_n}" in out
    assert "0 results compared;" in out
    from siliconbench.core.compare_stats import ratio_words
    words = ratio_words(cpu_v / gpu_v, "higher")
    assert words in out
    # The HTML report: the best-vs-best table, both sides' values, the ratio in words.
    page = html.read_text(encoding="utf-8")
    (table,) = re.findall(r'<table class="best".*?</table>', page, re.S)
    assert "NVIDIA H200" in table and "AMD EPYC" in table
    assert f"size={gpu_n}" in table and f"size={cpu_n}" in table and words in table
    code, out, _ = cli_compare(capsys, *files, "--json")
    doc = json.loads(out)
    assert code == cli.EXIT_OK and doc["rows"] == []
    (best,) = doc["best"]
    assert best["cells"][1]["ratio"] == pytest.approx(cpu_v / gpu_v, rel=1e-9)


def test_the_html_report_of_the_app_shows_best_vs_best_too():
    gpu, cpu = gpu_beside_cpu()
    page = to_html(compared(sides_for([gpu, cpu])))
    assert '<table class="best"' in page and "best vs best: size=" in page


# ---------------------------------------------------------------- counts, headers, notes

def valued_keys(rec) -> set:
    return {(r.metric, json.dumps(r.params, sort_keys=True)) for r in rec.rows
            if r.value is not None and power_trusted(r)}


def test_only_results_both_sides_measured_are_counted_as_compared():
    """The H200's GEMM beside this CPU's N=8192 run: one point in common. A point one side
    has without a value (what gemm.py writes for a dtype the device does not support) is no
    measurement: neither compared nor, where no side measured it, counted."""
    gpu, cpu = h200("h200-gemm"), recorded("gemm-torch-quick-8192")
    cmp = compare(sides_for([gpu, cpu]))
    a, b = valued_keys(gpu), valued_keys(cpu)
    assert len(cmp.rows) == len(a & b) == 1
    assert cmp.left_out == len(a ^ b)
    assert summary_text(cmp, [gpu, cpu], []).startswith(
        f"1 result compared; {len(a ^ b)} measured by one side only are not compared.")
    # The H100 host's CPU skipped N=16384 in its quick suite (a row without a value, as
    # gemm.py writes a point it does not measure) where the H200 measured it: that point is
    # neither compared nor counted as both sides'.
    (host,) = [r for r in h100("h100-quick-suite") if r.workload == "gemm"
               and r.device == "cpu"]
    skipped = {"dtype": "float32", "size": 16384}
    assert any(r.params == skipped and r.value is None for r in host.rows)
    cmp = compare(sides_for([gpu, host]))
    a, b = valued_keys(gpu), valued_keys(host)
    assert len(cmp.rows) == len(a & b) > 0 and cmp.left_out == len(a ^ b)
    assert all(row.params != skipped for row in cmp.rows)


def test_verdicts_are_headed_by_the_side_they_are_against():
    """The H200's two GEMM runs and this CPU's torch and MLX ones: the CPU's points have C
    (torch) for their baseline, so D's column is 'D vs C', and its cells say no '(vs C)'."""
    runs = [h200("h200-gemm"), h200("h200-gemmtf32"), recorded("gemm-torch"),
            recorded("gemm-mlx")]
    cmp = compare(sides_for(runs))
    assert headers(cmp.sides, cmp.rows)[-3:] == ["B vs A", "C vs A", "D vs C"]
    bases = [column_baseline(cmp.rows, k) for k in range(len(cmp.sides))]
    for row in cmp.rows:
        if row.cells[3] is not None:
            assert "(vs" not in row_texts(row, bases)[-1]


def test_sides_the_table_leaves_out_and_one_rank_all_reduce_are_said():
    """A one-rank all-reduce beside two CPU GEMM runs: its side shares no result and has no
    column, and its bus bandwidth is 0 by definition; the summary, the command and the
    report say both."""
    allred = h200("h200-allred")
    runs = [allred, recorded("gemm-torch"), recorded("gemm-mlx")]
    cmp = compared(sides_for(runs))
    text = summary_text(cmp, runs, [])
    assert "A shares no result with another side and is not in the table." in text
    assert "ran all-reduce on one rank: its bus bandwidth is 0 by definition" in text
    assert any("one rank" in n for n in cmp.notes)
    assert "ran all-reduce on one rank" in to_html(cmp)


def test_compare_command_splits_an_argument_by_run_identity(capsys, tmp_path):
    """A result file holding this CPU's torch and MLX GEMM runs is two sides, not one whose
    points mix them."""
    both = tmp_path / "cpu.json"
    both.write_text(to_json([recorded("gemm-torch"), recorded("gemm-mlx")]))
    code, out, err = cli_compare(capsys, str(both), str(FOLDER / "h200-gemm.json"), "--json")
    assert code == cli.EXIT_OK, err
    labels = [s["label"] for s in json.loads(out)["sides"]]
    assert labels == ["AMD EPYC · torch cpu", "AMD EPYC · mlx cpu", "NVIDIA H200"]
    # resolve_sides alone still gives one side per argument; the command splits it.
    assert len(resolve_sides([str(both), str(FOLDER / "h200-gemm.json")])) == 2
