"""The app behaves like a Mac app where Qt lets a Linux test tell: its settings file is named
after the bundle id, its shortcuts are the Mac's own per platform, every question is a sheet
(window-modal), it has a Window menu, and the app and the HTML report share one palette."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QSettings
from PySide6.QtGui import QAction, QKeySequence

from gui import settings as prefs
from gui.shortcuts import chart_shortcut, shortcuts

ROOT = Path(__file__).resolve().parent.parent


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
        action = getattr(window, f"{name}_action")
        assert action.shortcut() == QKeySequence(keys[name]), name
    taken = [a.shortcut() for a in window.findChildren(QAction) if not a.shortcut().isEmpty()]
    assert len(taken) == len(set(taken))  # nothing ambiguous once the chart entries exist


# ---------------------------------------------------------------- Window menu

def test_the_window_menu_minimizes_zooms_and_brings_all_to_front(qtbot, window):
    titles = [a.text() for a in window.menuBar().actions()]
    assert titles == ["&File", "&Edit", "&Run", "&View", "&Window", "&Help"]  # before Help
    entries = {a.text(): a for a in window.window_menu.actions() if not a.isSeparator()}
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
