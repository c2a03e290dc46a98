"""What the app remembers between launches (QSettings): the window's geometry and panes, the
last run's choices (workload, devices, Quick, each form's fields) and the last folder used.

On a Mac, QSettings keeps them in ~/Library/Preferences/<id>.plist, the id made from the
organization's domain and the application's name; naming them as setup_app.py's bundle
identifier (org.siliconbench.SiliconBench) puts them where macOS and `defaults` expect."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from PySide6.QtCore import QByteArray, QCoreApplication, QSettings

ORGANIZATION_NAME = "SiliconBench"
ORGANIZATION_DOMAIN = "siliconbench.org"
APPLICATION_NAME = "SiliconBench"
# What QSettings used before it was named after the bundle id (Mac: com.siliconbench...).
OLD_ORGANIZATION = "SiliconBench"


def identify_app() -> None:
    """Name the application as the bundle does; QSettings() and the About box follow."""
    QCoreApplication.setOrganizationName(ORGANIZATION_NAME)
    QCoreApplication.setOrganizationDomain(ORGANIZATION_DOMAIN)
    QCoreApplication.setApplicationName(APPLICATION_NAME)


def settings_organization(platform: str = sys.platform) -> str:
    """The organization QSettings() is given on this platform: Qt uses the domain on a Mac
    (the plist's name) and the name elsewhere (~/.config/SiliconBench/SiliconBench.conf)."""
    return ORGANIZATION_DOMAIN if platform == "darwin" else ORGANIZATION_NAME


def mac_preferences_id(domain: str = ORGANIZATION_DOMAIN,
                       application: str = APPLICATION_NAME) -> str:
    """The name of the plist QSettings writes on a Mac: the domain's labels reversed and
    lowercased, then the application's name (Qt's qsettings_mac.cpp)."""
    return ".".join(reversed(domain.lower().split("."))) + "." + application


def app_settings() -> QSettings:
    """The app's QSettings; an ini file under SILICONBENCH_HOME when that is set (tests,
    portable installs), so nothing touches the user's real preferences."""
    home = os.environ.get("SILICONBENCH_HOME")
    if home:
        return QSettings(str(Path(home).expanduser() / "gui-settings.ini"),
                         QSettings.Format.IniFormat)
    settings = QSettings(settings_organization(), APPLICATION_NAME)
    if sys.platform == "darwin":
        carry_over(QSettings(OLD_ORGANIZATION, APPLICATION_NAME), settings)
    return settings


def carry_over(old: QSettings, new: QSettings) -> bool:
    """Copy what an older version remembered under another name, once: only while the new
    settings are still empty."""
    if new.allKeys() or not old.allKeys():
        return False
    for key in old.allKeys():
        new.setValue(key, old.value(key))
    new.sync()
    return True


def is_true(settings: QSettings, key: str, default: bool) -> bool:
    # Ini files give "true"/"false" back as strings, plists as booleans.
    return str(settings.value(key, "true" if default else "false")).lower() == "true"


def restore_window(window) -> None:
    """The window's geometry, panes and last run choices, as save_window left them."""
    s = window.settings
    geometry = s.value("window/geometry")
    if isinstance(geometry, QByteArray):
        window.restoreGeometry(geometry)
    for key, split in (("window/main_split", window.main_split),
                       ("window/right_split", window.right_split)):
        state = s.value(key)
        if isinstance(state, QByteArray):
            split.restoreState(state)
    window.show_sidebar(is_true(s, "window/sidebar", True))
    window.quick_box.setChecked(is_true(s, "run/quick", False))
    window.catalogue.select(s.value("run/workload"))
    devices = s.value("run/devices")
    if isinstance(devices, str):
        devices = [devices]
    if isinstance(devices, list):
        window.devices.set_checked(devices)


def restore_form(settings: QSettings, workload: str, form) -> None:
    """A workload's form as it was last filled in."""
    saved = settings.value(f"params/{workload}")
    if isinstance(saved, str):
        try:
            form.set_texts(json.loads(saved))
        except (ValueError, TypeError):
            pass  # settings from an older version: start from the defaults


def save_run_choices(window) -> None:
    s = window.settings
    w = window.catalogue.current()
    if w is not None:
        s.setValue("run/workload", w.name)
    s.setValue("run/devices", window.devices.checked_keys())
    s.setValue("run/quick", "true" if window.quick_box.isChecked() else "false")
    for name, form in window.forms.items():
        s.setValue(f"params/{name}", json.dumps(form.texts()))


def save_window(window) -> None:
    save_run_choices(window)
    s = window.settings
    s.setValue("window/geometry", window.saveGeometry())
    s.setValue("window/main_split", window.main_split.saveState())
    s.setValue("window/right_split", window.right_split.saveState())
    s.setValue("window/sidebar", "true" if window.sidebar_shown() else "false")
    s.sync()


def last_dir(settings: QSettings) -> str:
    """The folder the file dialogs open in: the last one used, else home."""
    return str(settings.value("files/last_dir", str(Path.home())))


def remember_dir(settings: QSettings, path: str) -> None:
    settings.setValue("files/last_dir", str(Path(path).parent))
