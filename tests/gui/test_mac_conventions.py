"""The app behaves like a Mac app where Qt lets a Linux test tell: its settings file is named
after the bundle id, its shortcuts are the Mac's own per platform, every question is a sheet
(window-modal), it has a Window menu, and the app and the HTML report share one palette."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence

from siliconbench.gui import settings as prefs
from siliconbench.gui.shortcuts import chart_shortcut, shortcuts
from tests.helpers.dialogs import the_sheet

ROOT = Path(__file__).resolve().parents[2]


def bundle_id() -> str:
    spec = importlib.util.spec_from_file_location("setup_app", ROOT / "setup_app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PLIST["CFBundleIdentifier"]


# ---------------------------------------------------------------- settings

def test_the_mac_preferences_file_is_named_after_the_bundle_id():
    assert prefs.mac_preferences_id() == bundle_id() == "org.siliconbench.SiliconBench"
    # Qt's own examples of the rule: the domain's labels reversed and lowercased.
    assert prefs.mac_preferences_id("MySoft.com", "Star Runner") == "com.mysoft.Star Runner"
    assert prefs.settings_organization("darwin") == prefs.ORGANIZATION_DOMAIN
    assert prefs.settings_organization("linux") == prefs.ORGANIZATION_NAME


def test_the_app_and_its_settings_use_the_same_names(monkeypatch):
    monkeypatch.delenv("SILICONBENCH_HOME")
    before = (QCoreApplication.organizationName(), QCoreApplication.organizationDomain(),
              QCoreApplication.applicationName())
    try:
        prefs.identify_app()
        assert QCoreApplication.organizationDomain() == prefs.ORGANIZATION_DOMAIN
        ours, default = prefs.app_settings(), QSettings()  # what Qt makes of the app's names
        assert ours.format() == QSettings.Format.NativeFormat
        assert (ours.organizationName(), ours.applicationName()) == \
            (default.organizationName(), default.applicationName())
        assert ours.fileName() == default.fileName()
        assert ours.fileName().endswith("/SiliconBench/SiliconBench.conf")  # Linux's place
    finally:
        QCoreApplication.setOrganizationName(before[0])
        QCoreApplication.setOrganizationDomain(before[1])
        QCoreApplication.setApplicationName(before[2])


def test_with_siliconbench_home_the_settings_stay_in_it(siliconbench_home):
    s = prefs.app_settings()
    assert s.format() == QSettings.Format.IniFormat
    assert Path(s.fileName()) == siliconbench_home / "gui-settings.ini"


def test_settings_kept_under_the_old_name_are_carried_over_once(tmp_path):
    old = QSettings(str(tmp_path / "old.ini"), QSettings.Format.IniFormat)
    new = QSettings(str(tmp_path / "new.ini"), QSettings.Format.IniFormat)
    old.setValue("run/workload", "bandwidth")
    old.setValue("files/last_dir", str(tmp_path))
    assert prefs.carry_over(old, new)
    assert new.value("run/workload") == "bandwidth"
    assert new.value("files/last_dir") == str(tmp_path)
    old.setValue("run/workload", "gemm")
    assert not prefs.carry_over(old, new)  # the new file has settings of its own now
    assert new.value("run/workload") == "bandwidth"


# ---------------------------------------------------------------- shortcuts

# Keys macOS keeps for itself: Hide, Hide Others, Log Out, Quit and Keep Windows.
MAC_SYSTEM_KEYS = ("Ctrl+H", "Ctrl+Alt+H", "Ctrl+Shift+Q", "Ctrl+Alt+Q", "Ctrl+Alt+Shift+Q")


def test_on_a_mac_no_export_takes_save_and_delete_is_command_backspace():
    mac = shortcuts("darwin")
    used = {QKeySequence(k) for k in mac.values() if k}
    assert QKeySequence("Ctrl+S") not in used and QKeySequence("Ctrl+Shift+S") not in used
    assert mac["export_csv"] == mac["export_json"] == ""
    assert mac["export_png"] == "Ctrl+E"                  # ⌘E: Export Chart as PNG…
    assert mac["delete"] == "Ctrl+Backspace"              # Qt reads Ctrl as ⌘ there: ⌘⌫
    assert mac["minimize"] == "Ctrl+M"
    assert not used & {QKeySequence(k) for k in MAC_SYSTEM_KEYS}


@pytest.mark.parametrize("platform", ["linux", "win32"])
def test_elsewhere_delete_is_the_delete_key_and_save_exports(platform):
    keys = shortcuts(platform)
    assert keys["delete"] == "Del"
    assert (keys["export_csv"], keys["export_json"]) == ("Ctrl+S", "Ctrl+Shift+S")
    assert keys["refresh"] == "F5" and keys["help"] == "F1"


@pytest.mark.parametrize("platform", ["darwin", "linux"])
def test_no_two_entries_share_a_key(platform):
    """An ambiguous key fires neither entry (Qt's standard Refresh is ⌘R on a Mac, Run's)."""
    keys = [k for k in shortcuts(platform).values() if k] + [chart_shortcut(i) for i in range(7)]
    sequences = [QKeySequence(k) for k in keys]
    assert all(not s.isEmpty() for s in sequences)  # every one is a key Qt understands
    assert len(set(sequences)) == len(sequences)


def test_the_window_takes_this_platforms_keys(window):
    keys = shortcuts()
    for name in ("import", "export_csv", "export_json", "export_png", "export_svg", "copy",
                 "details", "delete", "run", "cancel", "queue_tab", "sidebar", "compare"):
        action = window.menu_actions[name]
        assert action.shortcut() == QKeySequence(keys[name]), name
    taken = [a.shortcut() for a in window.findChildren(QAction) if not a.shortcut().isEmpty()]
    assert len(taken) == len(set(taken))  # nothing ambiguous once the chart entries exist


# ---------------------------------------------------------------- Window menu

def test_the_window_menu_minimizes_zooms_and_brings_all_to_front(qtbot, window):
    titles = [a.text() for a in window.menuBar().actions()]
    assert titles == ["&File", "&Edit", "&Run", "&View", "&Window", "&Help"]  # before Help
    entries = {a.text(): a for a in window.menus["Window"].actions() if not a.isSeparator()}
    assert list(entries) == ["Minimize", "Zoom", "Bring All to Front"]
    assert entries["Minimize"].shortcut() == QKeySequence("Ctrl+M")
    entries["Zoom"].trigger()
    qtbot.waitUntil(window.isMaximized)
    entries["Zoom"].trigger()
    qtbot.waitUntil(lambda: not window.isMaximized())
    entries["Bring All to Front"].trigger()
    qtbot.waitUntil(window.isActiveWindow)
    entries["Minimize"].trigger()
    qtbot.waitUntil(window.isMinimized)


# ---------------------------------------------------------------- sheets

REAL_RUNS = Path(__file__).parent.parent / "data" / "runs" / "tiny-cpu-runs.json"


def with_runs(window) -> None:
    assert window.import_files([str(REAL_RUNS)])
    window.select_all_runs()


# (what to do first, the menu entry or button that asks, words in the dialog's title)
ASKS = {
    "delete, nothing selected": (None, "delete", "Delete Runs"),
    "delete": (with_runs, "delete", "Delete Runs"),
    "name machine": (with_runs, "rename", "Name Machine"),
    "export runs": (with_runs, "export_json", "Export Runs as JSON"),
    "export chart, none shown": (None, "export_png", "Nothing to export"),
    "export chart": (with_runs, "export_png", "Export Chart as PNG"),
    "import": (None, "import", "Import Results"),
    "about": (None, "About SiliconBench", "About SiliconBench"),
    "how to send": (None, "How to Send Results…", "How to Send Results"),
}


@pytest.mark.parametrize("case", list(ASKS))
def test_every_question_and_file_dialog_of_the_menus_is_a_sheet(qtbot, window, case):
    first, entry, title = ASKS[case]
    if first is not None:
        first(window)
    action = window.menu_actions.named.get(entry) or next(
        a for a in window.findChildren(QAction) if a.text() == entry)
    action.trigger()
    sheet = the_sheet(window)
    assert title in sheet.windowTitle()
    sheet.reject()
    qtbot.waitUntil(lambda: not sheet.isVisible())


def test_the_parameter_forms_and_compares_file_dialogs_are_sheets(qtbot, window, store):
    from tests.helpers.recorded import recorded
    window.catalogue.select("mlp")
    qtbot.mouseClick(window.form.fields["cifar"].choose_button, Qt.MouseButton.LeftButton)
    the_sheet(window).reject()
    for stem in ("gemm-torch", "gemm-torch-second"):
        store.save(recorded(stem))
    window.results.reload()
    window.select_all_runs()
    window.menu_actions["compare"].trigger()
    for button in (window.compare.export_chart_button, window.compare.export_report_button):
        assert button.isEnabled()  # two GEMM runs are compared
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        assert "Export" in the_sheet(window).windowTitle()
        the_sheet(window).reject()


def test_run_details_open_beside_the_window_not_over_it(window):
    """An inspector, like Finder's Get Info: modeless, so the charts stay usable beside it."""
    with_runs(window)
    window.menu_actions["details"].trigger()
    from siliconbench.gui.run_detail import RunDetail
    [detail] = [d for d in window.findChildren(RunDetail) if d.isVisible()]
    assert detail.isVisible() and not detail.isModal()
    assert detail.windowModality() == Qt.WindowModality.NonModal
    detail.close()


def test_the_welcome_is_a_sheet(window):
    dialog = window.show_welcome()
    assert the_sheet(window) is dialog
    dialog.reject()


def test_closing_while_runs_go_asks_in_a_sheet_and_cancel_keeps_the_window(qtbot, window):
    from siliconbench.core.runner import RunSpec
    window.ask_before_closing = True
    # In MLX (a tenth of a CPU-second to import, PyTorch three): any run under way will do.
    window.queue.enqueue([RunSpec("gemm", "mlx", "cpu", {"sizes": [64], "dtypes": ["float32"]},
                                  quick=True)], ["tiny gemm"])
    assert window.queue.busy
    assert not window.close()                         # not yet: it asks
    sheet = the_sheet(window)
    assert sheet.windowTitle() == "Stop the runs?"
    assert not window.close() and the_sheet(window) is sheet   # asked once at a time
    sheet.reject()                                    # Cancel: the window and the run go on
    assert window.isVisible() and window.queue.busy
    assert not window.close()
    close = next(b for b in the_sheet(window).buttons() if b.text() == "Close")
    qtbot.mouseClick(close, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.isVisible())


# ---------------------------------------------------------------- one palette

def test_the_app_and_the_html_report_take_one_palette(qtbot):
    """A comparison of two real GEMM runs: each machine has the same colour on the app's
    Compare chart as in its HTML report, and the report's verdict colours are the app's."""
    import re

    import pyqtgraph as pg

    from siliconbench.core import palette
    from siliconbench.core.report import to_html
    from siliconbench.gui import theme
    from siliconbench.gui.compare_view import CompareView
    from tests.helpers.recorded import recorded
    assert (theme.LIGHT, theme.DARK) == (palette.LIGHT, palette.DARK)
    view = CompareView()
    qtbot.addWidget(view)
    view.show()  # it draws only while in view
    view.apply_theme(palette.LIGHT)
    view.set_records([recorded("gemm-torch"), recorded("gemm-torch-second")])
    curves = [item for item in view.current_chart().plot_item.items
              if isinstance(item, pg.PlotDataItem)]  # GEMM: TFLOPS over the matrix size
    in_app = [pg.mkPen(item.opts["pen"]).color().name().upper() for item in curves]
    page = to_html(view.comparison)
    in_report = [c.upper() for c in re.findall(r'class="chip" style="background:(#\w{6})"', page)]
    assert in_app == in_report == list(palette.LIGHT.series[:2])
    for name, colour in (("ok", palette.LIGHT.ok), ("error", palette.LIGHT.error),
                         ("muted", palette.LIGHT.muted), ("warning", palette.LIGHT.warning)):
        assert f"--{name}:{colour}" in page
    assert ".faster{color:var(--ok)" in page and ".slower{color:var(--error)" in page
def test_help_names_each_shortcut_as_its_menu_entry_does(window):
    """siliconbench.gui.help keeps the menu entries' words beside the shortcut names: each must be the
    text of the window's action that has that shortcut (the menus may say more of a state,
    'Nothing to export', so the action's default text is read before any selection)."""
    from PySide6.QtGui import QAction, QKeySequence

    from siliconbench.gui.help import SHORTCUT_WORDS
    from siliconbench.gui.shortcuts import shortcuts
    keys = shortcuts()
    by_key = {}
    for a in window.findChildren(QAction):
        if not a.shortcut().isEmpty():
            by_key.setdefault(a.shortcut().toString(), []).append(a.text())
    for name, words in SHORTCUT_WORDS.items():
        if not keys.get(name):
            continue
        texts = by_key.get(QKeySequence(keys[name]).toString(), [])
        assert any(t.replace("&", "") == words for t in texts), (name, words, texts)
