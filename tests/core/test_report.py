"""Reports of a comparison: the CSV (one line per row and machine, injection escaped) and the
self-contained HTML file, which opens in headless Chromium and shows its tables and charts."""

import csv
import io
import shutil
import subprocess
import tempfile

import pytest

from siliconbench.core.compare_stats import Side, compare, resolve_side
from siliconbench.core.report import bar_chart, to_csv, to_html
from tests.helpers.sample_records import gemm_run, infer_run


def comparison():
    a = gemm_run("=MacBook Pro <14>", 8.0, sizes=(1024, 2048, 8192))
    b = gemm_run("Mac Studio", 9.0, sizes=(1024, 2048, 8192),
                 machine_kw={"power_source": "battery"})
    b.telemetry = {"interval_s": 1.0, "series": {},
                   "summary": {"power_w": 41.5, "power_source": "GPU (powermetrics)",
                               "max_temperature_c": None}}
    return compare([Side(a.label, [a]), Side(b.label, [b]), resolve_side("pub-tfmetal-gemm")])


def test_csv_has_a_line_per_row_and_machine():
    lines = list(csv.DictReader(io.StringIO(to_csv(comparison()))))
    assert len(lines) == 3 * 2 + 1                      # 8192 has the published figure too
    first = lines[0]
    assert first["machine"] == "'=MacBook Pro <14>"     # a spreadsheet must not run it
    assert (first["workload"], first["metric"], first["size"], first["dtype"]) == \
        ("gemm", "tflops", "1024", "float32")
    studio = lines[1]
    assert studio["verdict"] == "faster" and float(studio["ratio"]) == pytest.approx(1.125)
    assert studio["confidence"] == "0.99" and studio["n"] == "20"
    published = lines[-1]
    assert published["source"] == "published" and published["ci_low"] == ""
    assert published["verdict"] == "no statistics: published figure"


def test_html_is_self_contained_and_escaped():
    page = to_html(comparison())
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert 'src="http' not in page and "url(http" not in page   # nothing fetched
    assert "&lt;14&gt;" in page and "<14>" not in page
    assert page.count('<table class="comparison"') == 1 and 'id="machines"' in page
    assert page.count("<svg") == 1 and "hatch-1" in page        # the published bar
    # A run's mean power and its source, no brackets inside brackets; with no power row measured
    # over a point, the app's doubt beside it.
    assert "41.5 W · GPU (powermetrics)<br><span class=\"flag\">power not trusted: " in page
    assert "ran on battery" in page


def test_chart_labels_only_what_varies():
    cmp = comparison()
    svg = bar_chart(cmp, cmp.rows, "x")
    assert ">size=1024<" in svg and "dtype=float32" not in svg
    assert svg.count("<rect x=") >= 7                          # 3 + 3 + 1 bars, legend


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def test_report_opens_in_headless_chromium_and_shows_its_tables(tmp_path):
    browser = chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium)")
    cmp = compare([Side("Laptop", [infer_run("Laptop", 247.2)]),
                   Side("Studio", [infer_run("Studio", 263.1)])])
    report = tmp_path / "report.html"
    report.write_text(to_html(cmp), encoding="utf-8")
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--no-first-run", f"--user-data-dir={profile}", "--dump-dom", report.as_uri()],
            capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    dom = out.stdout
    assert '<table class="comparison" id="table-infer"' in dom and 'id="machines"' in dom
    assert "Throughput (img/s)" in dom and "faster" in dom and "<svg" in dom
    assert "1.064×" in dom
