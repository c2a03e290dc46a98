"""What was left of issue 41's Compare on the real records (tests/data): the Results' Machine
filter keeps two hosts of one CPU name apart; a GPU's GEMM beside a CPU's that share no point
gets its best vs best in the verdict table, on the chart and in the CSV export; a one-rank
all-reduce side says in the legend why nothing of it is drawn."""

from __future__ import annotations

import pytest

from siliconbench.gui.compare_view import CompareView
from tests.h200_records import h100, h200_runs
from tests.recorded import recorded


@pytest.fixture
def view(qtbot):
    v = CompareView()
    qtbot.addWidget(v)
    v.resize(1440, 700)
    v.show()
    return v


# ---------------------------------------------------------------- the Machine filter

def test_the_machine_filter_lists_two_hosts_of_one_cpu_name_as_two(qtbot, store):
    """The H100 host and the H200 host both report 'Intel(R) Xeon(R) Processor': the filter
    listed one machine holding both; now each is a machine of its own, named apart."""
    from siliconbench.gui.results_browser import MACHINE, ResultsBrowser
    h100_runs, h200s = h100("h100-quick-suite"), h200_runs()
    assert {r.machine_label for r in h100_runs + h200s} == {"Intel(R) Xeon(R) Processor"}
    store.import_records(h100_runs + h200s + [recorded("gemm-torch")])
    browser = ResultsBrowser(store)
    qtbot.addWidget(browser)
    browser.reload()
    combo = browser.combos[MACHINE]
    xeons = [combo.itemText(i) for i in range(1, combo.count())
             if combo.itemText(i).startswith("Intel(R) Xeon(R) Processor")]
    assert len(xeons) == 2, xeons
    h200_name = next(x for x in xeons if "H200" in x)
    browser.set_filter("Machine", h200_name)
    assert browser.shown_ids({r.id for r in h100_runs + h200s}) == {r.id for r in h200s}
    # The column says what the filter lists: the rows read apart too.
    assert browser.model.cell(h200s[0], MACHINE) == h200_name
