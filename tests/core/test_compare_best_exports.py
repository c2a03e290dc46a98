"""Exports as honest as Compare's screen (issue 41), on the real records (tests/data): the HTML
report paints only doubts in the warning colour, the comparison's CSV carries each side's best
vs best, and `siliconbench run --json` marks an untrusted power as the JSON export does."""

from __future__ import annotations

import csv
import io
import json
import re

from siliconbench.core.compare_words import compared, sides_for
from siliconbench.core.report import to_csv, to_html
from tests.helpers.h200_records import h100, h200
from tests.helpers.recorded import recorded


def h100_gemm_runs():
    """The H100's GEMM sweep and its quick suite's GPU GEMM runs: power rows measured by the
    GPU's energy counter on both sides, and power-capped throughput rows."""
    quick = [r for r in h100("h100-quick-suite")
             if r.workload == "gemm" and r.device.startswith("cuda")]
    return h100("h100-gemm") + quick


def test_the_report_paints_only_doubts_in_the_warning_colour():
    """'energy_counter' says the power is trusted: it was painted in the warning colour as
    'power not trusted' is. Now muted; a doubt (power_capped) keeps the warning colour."""
    page = to_html(compared(sides_for(h100_gemm_runs())))
    warned = " ".join(re.findall(r'<span class="flag"[^>]*>([^<]*)</span>', page))
    muted = " ".join(re.findall(r'<span class="meta"[^>]*>([^<]*)</span>', page))
    assert "energy counter" not in warned and "energy counter" in muted
    assert "power capped" in warned and "power capped" not in muted
    # In words, never the raw key (issue 50); what it means on hover.
    assert "power_capped" not in page and "energy_counter" not in page


def test_the_csv_of_a_gpu_beside_a_cpu_carries_the_best_vs_best():
    """H200 GEMM from N=4096 up, this CPU's from 64 to 2048: no shared point, and the CSV
    was a header alone. Now a line per side's best, the ratio on the CPU's, labelled."""
    gpu, cpu = h200("h200-gemm"), recorded("gemm-torch")
    cmp = compared(sides_for([gpu, cpu]))
    assert not cmp.rows and cmp.best
    lines = list(csv.DictReader(io.StringIO(to_csv(cmp))))
    best = [line for line in lines if line["compared"].startswith("best vs best")]
    assert {line["run_id"] for line in best} == {gpu.id, cpu.id}
    by_run = {line["run_id"]: line for line in best}
    gpu_best = max(r.value for r in gpu.rows if r.metric == "tflops" and r.value)
    assert float(by_run[gpu.id]["value"]) <= gpu_best
    g, c = float(by_run[gpu.id]["value"]), float(by_run[cpu.id]["value"])
    assert float(by_run[cpu.id]["ratio"]) == c / g and by_run[gpu.id]["ratio"] == ""
    # The points each best was measured at: the GPU's is a size its sweep ran, not the CPU's.
    gpu_sizes = {r.params["size"] for r in gpu.rows if r.metric == "tflops"}
    cpu_sizes = {r.params["size"] for r in cpu.rows if r.metric == "tflops"}
    assert int(by_run[gpu.id]["size"]) in gpu_sizes - cpu_sizes
    assert int(by_run[cpu.id]["size"]) in cpu_sizes - gpu_sizes
    assert by_run[cpu.id]["compared"] == (f"best vs best: size={by_run[cpu.id]['size']} vs "
                                          f"size={by_run[gpu.id]['size']}")


def test_run_json_marks_an_untrusted_power_as_the_json_export_does(capsys, monkeypatch):
    """`siliconbench run --json` printed the record as stored: the H200's 78.5 W, one sample
    taken while the GPU idled, with no flag, where `results --json` and the JSON export say
    'power not trusted'. The run itself is the H200's record (no GPU here): the command's
    own printing is what is tested."""
    from siliconbench.core import runner
    from siliconbench.core.results import UNTRUSTED_POWER, exported
    from tests.helpers.cli_processes import cli_in_process
    rec = h200("h200-gemm")
    assert any(r.metric == "power" and not r.flags for r in rec.rows)
    monkeypatch.setattr(runner, "execute_kept", lambda spec, on_event=None: (rec, None))
    rc, out, err = cli_in_process(capsys, "run", "gemm", "--framework", "torch", "--device",
                                  "cpu", "--sizes", "64", "--dtypes", "float32", "--quick",
                                  "--yes", "--json")
    assert rc == 0, err
    printed = json.loads(out)
    assert printed == json.loads(json.dumps(exported(rec)))
    power = [r for r in printed["rows"] if r["metric"] == "power"]
    assert power and all(any(f.startswith(UNTRUSTED_POWER) for f in r["flags"]) for r in power)
