"""The desktop app as the Mac app uses it, offscreen (pytest-qt): a result file opened from
Finder (QFileOpenEvent) is imported, the first-run welcome appears once and queues the quick
suite, and the Help menu's entries."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt, QUrl  # noqa: E402
from PySide6.QtGui import QFileOpenEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from siliconbench.core.export import RESULT_SUFFIX  # noqa: E402
from siliconbench.core.frameworks import DeviceInfo  # noqa: E402
from siliconbench.core.results import records_from_json, records_to_json  # noqa: E402
from siliconbench.core.store import home  # noqa: E402
from siliconbench.core.suites import expand  # noqa: E402
from tests.helpers.dialogs import the_sheet  # noqa: E402
from tests.helpers.sample_records import gemm_run  # noqa: E402

CPU = DeviceInfo("torch", "cpu", "Test CPU", "cpu", 8 * 2**30)


def test_a_file_opened_from_finder_is_imported(qtbot, window, tmp_path):
    from siliconbench.gui.app import file_opener
    rec = gemm_run("M1 Max", 10.0)
    path = tmp_path / f"from-a-colleague{RESULT_SUFFIX}"
    path.write_text(records_to_json([rec]))
    app = QApplication.instance()
    opener = file_opener(window)
    app.installEventFilter(opener)
    try:
        QApplication.postEvent(app, QFileOpenEvent(str(path)))
        qtbot.waitUntil(lambda: window.store.get(rec.id) is not None, timeout=5000)
    finally:
        app.removeEventFilter(opener)
    assert window.statusBar().currentMessage() == "Imported 1 run."


def test_the_window_exports_sbresults_as_json(window, tmp_path):
    rec = gemm_run("M1 Max", 10.0)
    path = tmp_path / f"runs{RESULT_SUFFIX}"
    assert window.files.export_runs(str(path), [rec])
    assert [r.id for r in records_from_json(path.read_text())] == [rec.id]


def test_welcome_appears_once_and_queues_the_quick_suite(qtbot, window):
    dialog = window.show_welcome()
    assert dialog is not None and dialog.isVisible()
    assert str(home()) in dialog.text.text() and "a few minutes" in dialog.text.text()
    assert window.show_welcome() is None  # the second launch
    window.devices.set_devices([CPU], {"torch": "test"})
    dialog.run_button.click()
    assert not dialog.isVisible()
    titles = [job.title for job in window.queue.jobs]
    assert len(titles) == len(expand("quick", [CPU])) == 4   # no 8192 product on a CPU
    assert all(t.startswith("Quick suite · ") and "Test CPU" in t for t in titles)
    window.queue.cancel_all()


def test_the_quick_suite_waits_for_the_device_list(window):
    assert window.queue_quick_suite() == 0
    assert window.queue.jobs == []
    window.devices.set_devices([CPU], {"torch": "test"})  # discovery ends
    assert len(window.queue.jobs) == len(expand("quick", [CPU])) == 4
    window.queue.cancel_all()
    window.devices.set_devices([CPU], {"torch": "test"})  # a refresh queues nothing more
    assert len(window.queue.jobs) == 4


def test_help_menu_entries(window, monkeypatch):
    from siliconbench.gui import help as gui_help
    opened: list[QUrl] = []
    monkeypatch.setattr(gui_help, "open_url", lambda url: opened.append(url) or True)
    actions = {a.text(): a for a in window.menuBar().actions()[-1].menu().actions()}
    assert {"SiliconBench Help", "Show Data Folder", "How to Send Results…",
            "About SiliconBench"} <= set(actions)
    actions["SiliconBench Help"].trigger()
    actions["Show Data Folder"].trigger()
    assert [u.toLocalFile() for u in opened] == [str(gui_help.help_page()), str(home())]
    assert gui_help.help_page().is_file()
    actions["How to Send Results…"].trigger()
    said = the_sheet(window).text()
    assert RESULT_SUFFIX in said and "siliconbench import" in said


@pytest.mark.usefixtures("fake_workloads")
def test_a_failed_runs_stderr_shows_on_its_queue_row(qtbot, window):
    from siliconbench.core.runner import RunSpec
    from tests.helpers.fake_workloads import FRAMEWORK
    (job,) = window.queue.enqueue([RunSpec("fake-raises", FRAMEWORK)])
    qtbot.waitUntil(lambda: job.ended, timeout=120_000)
    tip = window.queue_view.row_for(job).step.toolTip()
    assert "RuntimeError: the workload broke" in tip


@pytest.mark.usefixtures("fake_workloads")
def test_a_runs_warnings_show_on_its_queue_row_and_in_the_results(qtbot, window):
    from siliconbench.core.runner import RunSpec
    from siliconbench.gui.results_browser import STATUS
    from tests.helpers.fake_workloads import FRAMEWORK
    (job,) = window.queue.enqueue([RunSpec("fake-warns", FRAMEWORK)])
    qtbot.waitUntil(lambda: job.ended, timeout=120_000)
    step = window.queue_view.row_for(job).step
    assert step.text().endswith("⚠ 1 warning (hover to read)")
    assert step.toolTip() == "⚠ These numbers measure a slow library, not the device."
    model = window.results.model
    qtbot.waitUntil(lambda: model.rowCount() == 1, timeout=10_000)
    index = model.index(0, STATUS)
    assert model.data(index) == "ok · ⚠ 1 warning"
    assert "slow library" in model.data(index, Qt.ItemDataRole.ToolTipRole)


def test_a_bug_in_a_slot_is_said_in_the_status_bar(window, capsys):
    from siliconbench.gui.app import excepthook_for
    hook = excepthook_for(window.statusBar())
    try:
        raise ValueError("no such run")
    except ValueError as e:
        hook(ValueError, e, e.__traceback__)
    assert window.statusBar().currentMessage() == "Internal error: ValueError: no such run"
    assert "ValueError: no such run" in capsys.readouterr().err and window.isVisible()
