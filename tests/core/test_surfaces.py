"""Every surface of a run's rows says what the app's table says, on the records real runs
wrote: the H200's one-sample powers are 'power not trusted' in the CSV export, the terminal's
table and the HTML report (siliconbench.core.results.power_doubt); the H100's counter-measured
powers are trusted and not painted as a warning; peaks only beside throughput; no column
that no row fills; the report's power wording, chart labels and temperature."""

import csv
import io
import math
import re
from pathlib import Path

import pytest

from siliconbench.core.columns import TERMINAL
from siliconbench.core.compare_stats import Side, compare
from siliconbench.core.export import RUN_COLUMNS, to_csv
from siliconbench.core.numbers import metric_title, peak_text
from siliconbench.core.report import bar_chart, to_html
from siliconbench.core.results import records_from_file
from tests.helpers.h200_records import gpu_and_cpu, h200, h200_runs
from tests.helpers.recorded import every_run, recorded

H100 = Path(__file__).resolve().parents[1] / "data" / "h100"
# The app's words and the rows they concern, written out so the test stands apart from the
# code (siliconbench.core.results holds them).
UNTRUSTED_POWER = "power not trusted"
POWER_METRICS = ("power", "joules_per_sample", "samples_per_watt", "tflops_per_watt")
TRUST_FLAGS = ("energy_counter", "power_samples")


def untrusted(row) -> bool:
    return row.metric in POWER_METRICS and not set(TRUST_FLAGS) & set(row.flags)


def h100_runs():
    return [rec for p in sorted(H100.glob("*.json")) for rec in records_from_file(p)]


def test_power_doubt_marks_the_h200_one_sample_powers_and_trusts_the_h100_counter():
    from siliconbench.core.results import doubtful_flags, power_doubt
    h200_power = [row for rec in h200_runs() for row in rec.rows if row.metric in POWER_METRICS]
    assert h200_power and all(power_doubt(row).startswith(f"{UNTRUSTED_POWER}: ")
                              for row in h200_power)
    h100_power = [row for rec in h100_runs() for row in rec.rows
                  if row.metric in POWER_METRICS and row.value is not None]
    assert h100_power and all(set(TRUST_FLAGS) & set(row.flags) for row in h100_power)
    assert not any(power_doubt(row) for row in h100_power)
    # A trusted power's mark ('energy counter') is no warning; a doubt is.
    assert not any(doubtful_flags(row) for row in h100_power
                   if set(row.flags) <= set(TRUST_FLAGS))
    assert all(doubtful_flags(row) == [power_doubt(row)] for row in h200_power)


def test_csv_flags_each_untrusted_row_and_keeps_its_figure():
    seen = 0
    for rec in h200_runs():
        lines = list(csv.DictReader(io.StringIO(to_csv([rec]))))
        assert len(lines) == len(rec.rows)
        for row, line in zip(rec.rows, lines):
            marks = [f for f in line["flags"].split(";") if f.startswith(UNTRUSTED_POWER)]
            assert len(marks) == untrusted(row), (rec.workload, row.metric, line["flags"])
            assert all(m.startswith(f"{UNTRUSTED_POWER}: ") and len(m) > 30 for m in marks)
            seen += bool(marks)
            if row.value is not None:
                assert float(line["value"]) == row.value
    assert seen >= 20


def test_the_terminal_table_hides_an_untrusted_figure_and_says_why():
    rec = h200("h200-gemmtf32")
    cells = {c.heading: c for c in TERMINAL}
    per_watt = next(r for r in rec.rows if r.metric == "tflops_per_watt")
    assert cells["value"].text(per_watt) == "—"
    assert cells["flags"].text(per_watt).startswith(f"{UNTRUSTED_POWER}: ")
    assert cells["metric"].text(per_watt) == "TFLOPS per watt"
    tflops = next(r for r in rec.rows if r.metric == "tflops")
    assert cells["value"].text(tflops).startswith("360")


def test_no_csv_column_is_empty_in_every_line():
    for recs in [[rec] for rec in gpu_and_cpu()] + [gpu_and_cpu()]:
        lines = list(csv.reader(io.StringIO(to_csv(recs))))
        header, body = lines[0], lines[1:]
        always = [*RUN_COLUMNS, "metric", "value", "unit", "flags"]
        for j, name in enumerate(header):
            assert name in always or any(line[j] for line in body), (recs[0].workload, name)
    # The CPU GEMM run has no peak and no note: neither column is in its CSV.
    header = next(csv.reader(io.StringIO(to_csv([recorded("gemm-torch")]))))
    assert "pct_of_peak" not in header and "note" not in header and "flags" in header


def test_a_peak_is_said_only_beside_a_metric_held_against_one():
    rows = [row for rec in gpu_and_cpu() + h100_runs() for row in rec.rows]
    said = {row.unit for row in rows if peak_text(row)}
    assert said and all(unit == "TFLOPS" or unit.endswith("/s") for unit in said)   # rates
    power_and_heat = [row for row in rows if row.metric in (*POWER_METRICS, "max_temperature")]
    assert power_and_heat and not any(peak_text(row) for row in power_and_heat)
    # A CPU, whose peak SiliconBench does not know, still says so beside its TFLOPS.
    cpu = next(r for r in recorded("gemm-torch").rows if r.metric == "tflops")
    assert peak_text(cpu) == "peak unknown"
    assert metric_title("tflops_per_watt") == "TFLOPS per watt"


def report(*records) -> str:
    return to_html(compare([Side(rec.device_label, [rec]) for rec in records]))


def test_the_report_flags_the_h200s_mean_power_and_says_it_once_in_brackets():
    page = report(h200("h200-gemm"), recorded("gemm-torch"))
    machines = page.split('id="machines"')[1].split("</table>")[0]
    h200_line = next(tr for tr in machines.split("<tr>") if "NVIDIA H200" in tr)
    assert "425 W · board (NVML)" in h200_line
    assert f'<span class="flag">{UNTRUSTED_POWER}: ' in h200_line
    assert "((" not in page and "))" not in page


def test_the_report_tables_temperature_and_charts_no_bar_of_it():
    page = report(h200("h200-gemm"), h200("h200-gemmtf32"))
    assert "Highest temperature" in page                       # its table row
    charts = re.findall(r'<svg[^>]*aria-label="([^"]*)"', page)
    assert charts and "Highest temperature" not in charts


def test_chart_labels_lie_inside_the_picture():
    """Rotated point labels ('size=16384 dtype=bfloat16') were cut at the foot and the left
    edge: each one's slanted length now fits."""
    cmp = compare([Side(name, [h200("h200-gemm")]) for name in ("one", "again")])
    rows = [r for r in cmp.rows if r.metric == "tflops"]
    svg = bar_chart(cmp, rows, "t")
    char_w, slant = 6.5, 35   # Helvetica's widest lower case and digits at 11 px; the slant
    width, height = (float(v) for v in re.search(r'width="([\d.]+)" height="([\d.]+)"',
                                                  svg).groups())
    labels = re.findall(r'<text x="([\d.]+)" y="([\d.]+)" text-anchor="end" '
                        rf'transform="rotate\(-{slant} [^"]*\)">([^<]+)</text>', svg)
    assert labels
    slant = math.radians(slant)
    for x, y, text in labels:
        reach = char_w * len(text)
        assert float(x) - reach * math.cos(slant) >= 0, text
        assert float(y) + reach * math.sin(slant) <= height, text
    assert width > 0


def test_a_skipped_point_says_skipped_with_its_reason():
    from siliconbench.core.results import missing_why
    skipped = [row for rec in h100_runs() for row in rec.rows if "skipped" in row.flags]
    assert skipped
    for row in skipped:
        assert missing_why(row) == f"skipped: {row.note}"
        assert "unsupported" not in missing_why(row)


@pytest.mark.parametrize("rec", every_run(), ids=lambda r: f"{r.workload}-{r.framework}")
def test_cpu_runs_have_no_power_doubt_beside_their_rows(rec):
    """A CPU run without power rows: nothing in its CSV says 'power not trusted'."""
    if not any(row.metric in POWER_METRICS for row in rec.rows):
        assert UNTRUSTED_POWER not in to_csv([rec])
