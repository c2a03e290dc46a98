"""The app behaves like a Mac app where Qt lets a Linux test tell: its settings file is named
after the bundle id, its shortcuts are the Mac's own per platform, every question is a sheet
(window-modal), it has a Window menu, and the app and the HTML report share one palette."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QSettings

from gui import settings as prefs

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
