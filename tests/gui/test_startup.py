"""The window as siliconbench.gui.app opens it (MainWindow(defer=True)): the devices, the workloads and the
form paint first, with nothing else loaded; the store, the run queue, Results and the charts come
after that paint, or at once when something reaches for them first (a file Finder opens)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[2]
REAL_RUNS = Path(__file__).parent.parent / "data" / "runs" / "tiny-cpu-runs.json"

# Built and painted as siliconbench.gui.app does, then asked what it holds and what it loaded.
FIRST_PAINT = """
import json, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(["SiliconBench"])
from siliconbench.gui.main_window import MainWindow
w = MainWindow(defer=True)
def report():
    print(json.dumps({
        "loaded": sorted(m for m in ("pyqtgraph", "siliconbench.core.store", "siliconbench.core.runner", "siliconbench.core.telemetry",
                                     "siliconbench.gui.results_browser", "siliconbench.gui.queue_view", "siliconbench.gui.help",
                                     "siliconbench.gui.compare_view", "logging.handlers")
                         if m in sys.modules),
        "workloads": w.catalogue.count(), "form": sorted(w.form.fields),
        "menus": [a.text() for a in w.menuBar().actions()],
        "entries": sum(len(m.actions()) for m in w.menus.values()), "tabs": w.bottom.count()}))
    app.quit()
class First(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Expose:
            QTimer.singleShot(0, report)
        return False
first = First()
w.show()
w.windowHandle().installEventFilter(first)
app.exec()
"""


def test_the_first_paint_shows_the_form_and_loads_nothing_else(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SILICONBENCH_HOME=str(tmp_path),
               PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", FIRST_PAINT], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["loaded"] == []
    from siliconbench.core.catalogue import catalogue
    gemm = sorted(p.name for p in catalogue()["gemm"].params)
    assert seen["workloads"] >= 5 and seen["form"] == gemm and "sizes" in gemm
    assert seen["menus"] == ["&File", "&Edit", "&Run", "&View", "&Window", "&Help"]
    assert seen["entries"] == 0                                # their entries: after the paint
    assert seen["tabs"] == 0                                   # Run Queue and Results: later
    assert not (tmp_path / "results.sqlite3").exists()        # the store is not even opened


@pytest.fixture
def deferred(qtbot, store, settings):
    from siliconbench.gui.main_window import MainWindow
    w = MainWindow(settings=settings, defer=True)
    w.ask_before_closing = False
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    if w._rest_built:
        w.queue.cancel_all()
        qtbot.waitUntil(lambda: not w.queue.busy, timeout=60_000)


def test_the_rest_is_built_after_the_paint_over_the_given_store(deferred, store):
    assert not deferred._rest_built and deferred._charts is None
    deferred.build_rest(store)
    assert deferred.store is store
    assert [deferred.bottom.tabText(i) for i in range(deferred.bottom.count())] == [
        "Run Queue", "Results"]
    deferred.build_charts()
    assert deferred.compare is not None and deferred.charts.count() > 2
    assert deferred.charts.tabBar() in deferred.focus_chain()
    assert deferred.results.view in deferred.focus_chain()


def test_a_file_opened_before_the_rest_is_built_builds_it_and_shows_its_runs(
        qtbot, deferred, siliconbench_home):
    """Finder's open event can come before the first paint is done with: the real runs in the
    file land in the store and in Results all the same, and every chart tab draws them."""
    assert deferred.import_files([str(REAL_RUNS)])
    assert deferred._rest_built
    assert len(deferred.store.runs()) == 2 == deferred.results.model.rowCount()
    deferred.select_all_runs()
    deferred.build_charts()
    charts = deferred.charts
    drawn = [charts.tabText(i) for i in range(charts.count())
             if getattr(charts.widget(i), "has_data", lambda: False)()]
    assert drawn == ["TFLOPS", "Bandwidth"]          # the file's GEMM and bandwidth runs


def test_the_menus_entries_come_with_the_rest_and_agree_with_the_window(deferred, store):
    """The menu bar's titles paint first; build_rest fills them in, with their shortcuts, Run's
    entry enabled as the Run button is, and the sidebar's entry named for its state."""
    assert [m.actions() for m in deferred.menus.values()] == [[]] * 6
    deferred.show_sidebar(False)               # as a restored window can be before the paint
    deferred.build_rest(store)
    run = {a.text(): a for a in deferred.menus["Run"].actions()}
    assert run["Run"] is deferred.menu_actions["run"] and not run["Run"].shortcut().isEmpty()
    assert deferred.menu_actions["run"].isEnabled() == deferred.run_button.isEnabled()
    assert deferred.menu_actions["sidebar"].text() == "Show Sidebar"
    deferred.show_sidebar(True)
    assert deferred.menu_actions["sidebar"].text() == "Hide Sidebar"
    filled = [len(m.actions()) for m in deferred.menus.values()]
    deferred.fill_menus()                                     # once only
    assert [len(m.actions()) for m in deferred.menus.values()] == filled and min(filled) > 0


def test_kept_devices_make_run_available_at_once_in_the_deferred_window(
        qtbot, deferred, store, monkeypatch):
    """As siliconbench.gui.app starts it: the rest built over the store, then the background work; the
    devices kept from the last launch enable Run while every framework is asked again."""
    import threading

    from siliconbench.core import devices
    from siliconbench.core.frameworks import FRAMEWORKS, DeviceInfo
    from siliconbench.core.store import home
    kept = {name: [DeviceInfo(name, "cpu", "Kept CPU", "cpu", 8 * 2**30).to_dict()]
            for name in FRAMEWORKS}
    home().mkdir(parents=True, exist_ok=True)
    (home() / devices.DEVICE_CACHE).write_text(json.dumps(
        {"key": devices._installation_key(), "frameworks": kept}))
    release = threading.Event()
    monkeypatch.setattr(devices, "_ask_child", lambda name, fw: (release.wait(30), [
        DeviceInfo(name, "cpu", "Fresh CPU", "cpu", 8 * 2**30)])[1])
    monkeypatch.setattr(deferred.machine_card, "start", lambda: None)  # no system probe here
    deferred.catalogue.select("gemm")
    assert not deferred.run_button.isEnabled()                # no device listed yet
    deferred.build_rest(store)
    deferred.start_background()
    qtbot.waitUntil(lambda: deferred.run_button.isEnabled(), timeout=10_000)
    assert not deferred.devices._call.finished.is_set()       # still asking afresh
    release.set()
    qtbot.waitUntil(lambda: deferred.devices._call.finished.is_set(), timeout=30_000)


def test_a_store_that_cannot_open_leaves_the_window_to_try_again(deferred, store,
                                                                  siliconbench_home,
                                                                  monkeypatch):
    """Reached before siliconbench.gui.app opened the store, and the default store cannot be opened: the
    one-sentence StoreError, and the window still whole to be given a store."""
    from siliconbench.core.store import StoreError
    siliconbench_home.parent.mkdir(parents=True, exist_ok=True)
    blocker = siliconbench_home.parent / "not-a-folder"
    blocker.write_text("a file where the store's folder should be")
    monkeypatch.setenv("SILICONBENCH_HOME", str(blocker / "home"))
    with pytest.raises(StoreError):
        deferred.results
    assert not deferred._rest_built and deferred.bottom.count() == 0
    deferred.build_rest(store)
    assert deferred.results.store is store and deferred.bottom.count() == 2
