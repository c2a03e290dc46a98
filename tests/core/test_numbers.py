"""One way a figure reads (siliconbench.core.numbers): the same real run records give the same strings in
`siliconbench compare`, `siliconbench results`, the HTML report and the app's Results and
Compare tabs, and no surface falls back to scientific notation for everyday values."""

from __future__ import annotations

import html
import re

import pytest

from siliconbench.core import cli
from siliconbench.core.catalogue import headline
from siliconbench.core.compare_stats import compare, resolve_sides
from siliconbench.core.numbers import (
    duration,
    metric_heading,
    number,
    quantity,
    ratio,
    row_with_spread,
    size,
    span,
    with_spread,
)
from siliconbench.gui.compare_view import FIXED, CompareView
from siliconbench.gui.results_browser import BEST, cell_text
from siliconbench.gui.row_table import RowTable
from siliconbench.gui.row_text import headline_text
from tests.helpers.recorded import recorded

# Two runs of one machine with points in common; TensorFlow's MLP reaches over 1,000 img/s.
STEMS = ("mlp-torch", "mlp-tensorflow")
SCIENTIFIC = re.compile(r"\d[eE][+-]\d")


def sb(capsys, *args) -> str:
    capsys.readouterr()
    assert cli.main([str(a) for a in args]) == 0
    return capsys.readouterr().out


@pytest.fixture
def runs(store, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")   # rich wraps no cell of the command's tables
    records = [recorded(s) for s in STEMS]
    store.import_records(records)
    return records


def test_compare_results_report_and_app_show_the_same_strings(runs, store, capsys, qtbot,
                                                              tmp_path):
    ids = [r.id for r in runs]
    report = tmp_path / "report.html"
    command = sb(capsys, "compare", *ids, "--html", report)
    page = report.read_text("utf-8")
    listing = sb(capsys, "results")
    cmp = compare(resolve_sides(ids, store))
    view = CompareView()
    qtbot.addWidget(view)
    view.show()
    view.set_records(runs)
    assert view.comparison.rows and len(view.comparison.rows) == len(cmp.rows)

    shown = 0
    for i, r in enumerate(cmp.rows):
        heading = metric_heading(r.metric, r.unit)
        assert heading in command and html.escape(heading) in page
        assert view.table.item(i, FIXED.index("Metric")).text() == heading
        for k, c in enumerate(r.cells):
            text = with_spread(c.value, c.ci_low, c.ci_high, r.unit)
            assert text in command and html.escape(text) in page
            app = view.table.item(i, len(FIXED) + k)
            assert app.text() == quantity(c.value, r.unit) and text in app.toolTip()
            shown += 1
    # The thousands case is among them, separated, as the app always showed it.
    big = next(c for r in cmp.rows for c in r.cells if c and (c.value or 0) >= 1000)
    assert re.fullmatch(r"\d,\d{3}", number(big.value))
    assert shown >= 2 * 8 and not SCIENTIFIC.search(command) and not SCIENTIFIC.search(listing)

    # Results: the command's listing and the app's Results tab give one headline per run, and
    # the app's row table the same value as Compare for the same row.
    table = RowTable()
    qtbot.addWidget(table)
    for rec in runs:
        best = headline(rec)
        assert headline_text(rec) == row_with_spread(best)
        assert cell_text(rec, BEST).startswith(headline_text(rec))
        assert headline_text(rec) in listing
        table.set_records([rec])
        header = [table.horizontalHeaderItem(j).text() for j in range(table.columnCount())]
        keys = [(row.metric, row.params) for row in rec.rows]
        same = 0
        for line, row in enumerate(rec.rows):
            for r in cmp.rows:   # a point measured twice (per epoch) compares its last row
                if (r.metric, r.params) == keys[line] and keys.count(keys[line]) == 1:
                    cell = r.cells[runs.index(rec)]
                    assert table.item(line, header.index("Value")).text() == \
                        quantity(cell.value, row.unit)
                    same += 1
        assert same == len(cmp.rows)


def test_everyday_values_read_without_exponents():
    """The forms every surface above relies on, at the edges of each range."""
    assert [number(v) for v in (12345.0, 999.6, 263.14, 99.96, 20.71, 9.996, 1.234, 0.1784,
                                0.9996, 4.0, 0, -3.2)] == \
        ["12,345", "1,000", "263", "100", "20.7", "10.0", "1.23", "0.178", "1.00", "4", "0",
         "-3.20"]
    assert [number(v) for v in (0.0001234, 3.28e-5, 1.5e-7)] == ["0.000123", "0.0000328",
                                                                  "1.50e-07"]
    assert with_spread(20.71, 20.5, 21.2, "img/s") == "20.7 img/s [20.5–21.2]"
    assert with_spread(None, 1.0, 2.0, "img/s") == "—"
    assert quantity(1.5 * 2**30, "bytes") == "1.5 GB"
    assert [size(n) for n in (16 * 2**30, 7.5 * 2**30, 117 * 2**20, 512)] == \
        ["16 GB", "7.5 GB", "117 MB", "512 bytes"]
    assert [duration(s) for s in (0, 0.3, 45, 200, 9000, 3 * 86400)] == \
        ["0 s", "1 s", "45 s", "3 min", "2.5 h", "3 days"]
    assert [span(s) for s in (0, 1.509138, 45, 60, 150, 4320)] == \
        ["0 s", "1.51 s", "45 s", "1 min", "2.50 min", "1.20 h"]
    # Near parity the third decimal matters; a 57x gap does not need it.
    assert [ratio(v) for v in (1.0134, 0.018, 9.9994, 57.821, 1234.5)] == \
        ["1.013×", "0.018×", "9.999×", "57.8×", "1,234×"]
    assert metric_heading("tflops", "TFLOPS") == "Throughput (TFLOPS)"
    assert metric_heading("final_loss", "") == "Final loss (no unit)"


def test_exports_keep_the_raw_numbers(runs):
    """CSV and JSON carry full precision: the formatter is for reading, never for files."""
    from siliconbench.core.export import csv_table
    header, lines = csv_table(runs)
    values = [line[header.index("value")] for line in lines]
    assert values == [row.value for rec in runs for row in rec.rows]
    assert any(isinstance(v, float) and number(v) != repr(v) for v in values)


def test_times_apart_reads_at_one_precision_whatever_the_size():
    from siliconbench.core.numbers import times
    # 360 TFLOPS over 0.0561: thousands apart, never '0.000×'.
    assert times(360.4 / 0.0561) == "≈6,420×" == times(0.0561 / 360.4)
    assert [times(v) for v in (1.234, 12.34, 143.2, 1 / 36)] == ["1.23×", "12.3×", "143×",
                                                                "36.0×"]


def test_axis_ticks_read_in_human_units():
    from siliconbench.core.numbers import compact
    assert [compact(v) for v in (15_000, 2_500_000, 680, 0.05, 1e-5, 999.9)] == \
        ["15K", "2.5M", "680", "0.05", "0.00001", "1K"]
    assert compact(1.5 * 2 ** 30, "bytes") == "1.5 GB"
