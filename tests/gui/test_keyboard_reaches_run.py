"""The keyboard: Tab walks every workload's form through to Run, with no Qt warning, never
stops on a queued run's Cancel (Space there cancelled it), and comes round to the devices again
(it went back and forth between a tab bar and the queue's buttons); Ctrl+E exports the chart
while a text field has the focus (on X11 the field took it as Emacs' end of line)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from siliconbench.core.catalogue import catalogue
from siliconbench.core.frameworks import DeviceInfo

ROOT = Path(__file__).resolve().parents[2]


def _tab_round(window, start, limit: int = 120) -> list:
    """The widgets Tab gives the focus to from `start` until it comes back to it."""
    start.setFocus()
    visited = []
    for _ in range(limit):
        window.focusNextChild()
        widget = QApplication.focusWidget()
        if widget is start:
            return visited
        visited.append(widget)
    raise AssertionError(f"Tab did not come back to {type(start).__name__}: "
                         f"{[type(w).__name__ for w in visited[-12:]]}")


def test_tab_walks_every_form_to_run_and_never_onto_a_queued_runs_cancel(
        qtbot, window, qtlog, short_protocol):
    window.devices.set_devices([DeviceInfo("torch", "cpu", "This CPU", "cpu", 8 * 2**30)],
                               {"torch": "test"})
    window.catalogue.select("gemm")
    window.devices.boxes["torch:cpu"].setChecked(True)
    jobs = window.run_clicked()   # a queued run, with its row's Cancel
    assert jobs
    row = window.queue_view.row_for(jobs[0])
    assert row is not None
    window.show_queue()
    for name in catalogue():
        window.catalogue.select(name)
        form = window.form
        editors = [f.editor for f in form.fields.values() if f.editor.isVisibleTo(form)]
        visited = _tab_round(window, window.catalogue)
        assert window.run_button in visited, name
        run_at = visited.index(window.run_button)
        for editor in editors:
            reached = [i for i, w in enumerate(visited)
                       if w is editor or (w is not None and editor.isAncestorOf(w))]
            assert reached and reached[0] < run_at, (name, type(editor).__name__)
        assert row.cancel_button not in visited, name
        assert window.devices.refresh_button in visited[run_at:], name   # round again
    warned = [r.message for r in qtlog.records if "setTabOrder" in r.message]
    assert not warned, warned[:2]


_CTRL_E = r'''
import os, subprocess, sys
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication, QLineEdit
app = QApplication([])
from siliconbench.core.store import Store
from siliconbench.gui.main_window import MainWindow
w = MainWindow(Store(sys.argv[1]), QSettings(sys.argv[2], QSettings.Format.IniFormat))
w.ask_before_closing = False
w.show(); w.activateWindow()
hits = []
def start():
    w.catalogue.select("gemm")
    w.menu_actions["export_png"].triggered.disconnect()
    w.menu_actions["export_png"].triggered.connect(lambda *_: hits.append("png"))
    fields = [w.form.findChildren(QLineEdit)[0], w.results.search]
    def step(i=0):
        if i == len(fields):
            print("HITS", len(hits), flush=True); app.quit(); return
        fields[i].setFocus(); w.activateWindow()
        def press():
            assert isinstance(QApplication.focusWidget(), QLineEdit)
            subprocess.run(["xdotool", "key", "--clearmodifiers", "ctrl+e"], check=True)
            QTimer.singleShot(500, lambda: step(i + 1))
        QTimer.singleShot(500, press)
    step()
QTimer.singleShot(1500, start)
QTimer.singleShot(30000, app.quit)
app.exec()
'''


@pytest.mark.skipif(sys.platform != "linux" or not shutil.which("xvfb-run")
                    or not shutil.which("xdotool"),
                    reason="real X11 key presses need Xvfb and xdotool")
def test_ctrl_e_exports_the_chart_while_a_text_field_has_the_focus(tmp_path):
    """Real key presses on an X server (Qt's offscreen platform has no Emacs keys, and QTest
    skips the field's claim): two fields focused in turn, Ctrl+E pressed in each."""
    env = {**os.environ, "SILICONBENCH_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("QT_QPA_PLATFORM", None)
    out = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", sys.executable,
                          "-c", _CTRL_E, str(tmp_path / "r.sqlite3"), str(tmp_path / "g.ini")],
                         capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    if "could not load the Qt platform plugin" in out.stderr.lower():
        pytest.skip("Qt's X11 plugin cannot load here")
    assert "HITS 2" in out.stdout, (out.stdout, out.stderr[-2000:])
