"""The views on runs 1,000x apart: the H200's records (tests/h200_records.py) selected with
this machine's CPU runs (tests/recorded.py), as a person comparing a GPU with a laptop would.
Each test asserts what a person reads: names, axis modes and tick labels, legend names and
where the legend lies, ratio text and what was paired with what."""

from __future__ import annotations

import pytest

from gui.compare_view import CompareView
from gui.plots import ChartPanel
from tests.h200_records import gpu_and_cpu, h200, h200_runs
from tests.recorded import recorded


@pytest.fixture
def panel(qtbot):
    p = ChartPanel()
    qtbot.addWidget(p)
    p.resize(1100, 700)
    p.show()
    return p


@pytest.fixture
def view(qtbot):
    v = CompareView()
    qtbot.addWidget(v)
    v.resize(1100, 760)
    v.show()
    return v


def legend_names(chart) -> list[str]:
    return [label.text for _, label in chart.plot_item.legend.items]


# ---------------------------------------------------------------- identity

def test_a_gpu_run_is_named_by_its_gpu_and_a_cpu_run_by_its_cpu(panel, view):
    for rec in h200_runs():
        assert rec.identity.startswith("NVIDIA H200 · torch cuda · ")
        assert "Xeon" not in rec.identity
    cpu = recorded("gemm-torch")
    assert cpu.identity.startswith("AMD EPYC · torch cpu · ")
    # A name the user gave the machine stays the run's name.
    assert recorded("gemm_cpu_tiny").identity.startswith("Lab Mac · torch cpu · ")
    gpu = h200("h200-gemm")
    panel.show_records([gpu, cpu])
    names = legend_names(panel.curves["tflops"])
    assert any(n.startswith("NVIDIA H200") for n in names)
    assert any(n.startswith("AMD EPYC") for n in names)
    assert not any("Xeon" in n for n in names)
    # Compare: the GPU and the CPU are its two sides, each named by its device.
    view.set_records([gpu, cpu])
    assert [s.label for s in view.comparison.sides] == ["NVIDIA H200", "AMD EPYC"]
    assert "A = NVIDIA H200" in view.summary.text() and "Xeon" not in view.summary.text()


def test_run_details_title_names_the_gpu(qtbot):
    from gui.run_detail import RunDetail
    dialog = RunDetail(h200("h200-infer"))
    qtbot.addWidget(dialog)
    assert dialog.windowTitle().endswith("NVIDIA H200")
