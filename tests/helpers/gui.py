"""The app's views shown offscreen for a test (Compare, the chart panel, the window at a size)
and the real runs a person would select. `view` and `panel` are fixtures, registered in
tests/conftest.py."""

from __future__ import annotations

import pytest

from tests.helpers.h200_records import h100, h200
from tests.helpers.recorded import recorded


def shown(qtbot, widget, width: int, height: int):
    """`widget` at width x height, shown, and closed at the test's end."""
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    return widget


@pytest.fixture
def view(qtbot):
    """Compare on its own at 1440x700, shown."""
    from siliconbench.gui.compare_view import CompareView
    return shown(qtbot, CompareView(), 1440, 700)


@pytest.fixture
def panel(qtbot):
    """The chart panel at 1100x700, shown."""
    from siliconbench.gui.charts.panel import ChartPanel
    return shown(qtbot, ChartPanel(), 1100, 700)


def ten_sides() -> list:
    """Runs of ten identities (machine, device, framework, settings), so Compare puts them on
    ten sides (A to J): the H200 with TF32 off and on, the H100 and its host's Xeon CPU, this
    machine's CPU with torch (two image sizes), TensorFlow, MLX and llama.cpp, and a run of
    it named "Lab Mac"."""
    stems = ["gemm-torch", "infer-torch", "infer-torch-reference", "gemm-tensorflow",
             "gemm-mlx", "gemm_cpu_tiny", "llm-llamacpp"]
    xeon = next(r for r in h100("h100-quick-suite")
                if r.workload == "gemm" and r.device == "cpu")
    return ([h200("h200-gemm"), h200("h200-gemmtf32")] + [recorded(s) for s in stems]
            + [xeon] + h100("h100-gemm"))


def this_cpu():
    import psutil

    from siliconbench.core.frameworks import DeviceInfo
    return DeviceInfo("torch", "cpu", "This CPU", "cpu", psutil.virtual_memory().total)


def compare_view(qtbot, width: int, height: int):
    """Compare on its own, shown at this size."""
    from siliconbench.gui.compare_view import CompareView
    view = CompareView()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    return view


def show_compare(window, qtbot, records: list, sidebar: bool, size=None):
    """The window at `size` (default: its smallest), these runs selected, Compare shown."""
    window.show_sidebar(sidebar)
    window.resize(*(size or window.minimumSize().toTuple()))
    window.store.import_records(records)
    window.results.reload()
    window.select_all_runs()
    window.charts.setCurrentWidget(window.compare)
    view = window.compare
    qtbot.waitUntil(lambda: view.comparison is not None and view.isVisible(), timeout=3000)
    qtbot.wait(50)
    return view
