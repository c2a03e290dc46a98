"""What the app remembers between launches (QSettings): the window's geometry and panes, the
last run's choices (workload, devices, Quick, each form's fields) and the last folder used.

On a Mac, QSettings keeps them in ~/Library/Preferences/<id>.plist, the id made from the
organization's domain and the application's name; naming them as setup_app.py's bundle
identifier (org.siliconbench.SiliconBench) puts them where macOS and `defaults` expect."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QCoreApplication, QPoint, QRect, QSettings, QSize
from PySide6.QtGui import QGuiApplication

if TYPE_CHECKING:
    from PySide6.QtWidgets import QCheckBox, QSplitter, QStatusBar, QWidget

    from siliconbench.gui.device_list import DeviceList
    from siliconbench.gui.param_form import ParamForm
    from siliconbench.gui.workload_catalogue import WorkloadCatalogue

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


SETTINGS_LIMIT = 1 << 20   # the window's state and every form's fields take a few KB
TEXT_LIMIT = 10_000        # one remembered field or folder; longer is not something typed
# What the app says once when it could not use its settings file (app.py shows it).
notice: str | None = None


def settings_file(platform: str = sys.platform) -> Path | None:
    """The file QSettings reads, where it is a file: the ini under SILICONBENCH_HOME, else
    ~/.config/SiliconBench/SiliconBench.conf on Linux (a Mac's plist goes through cfprefsd,
    Windows keeps the registry)."""
    home = os.environ.get("SILICONBENCH_HOME")
    if home:
        return Path(home).expanduser() / "gui-settings.ini"
    if platform.startswith("linux"):
        config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        return Path(config) / ORGANIZATION_NAME / f"{APPLICATION_NAME}.conf"
    return None


def unusable_settings(path: Path) -> str | None:
    """Why QSettings must not read or write `path` (one sentence), or None when it may:
    QSettings reads the file whole as it starts, so a FIFO would keep the window from ever
    appearing and a link to /dev/zero would fill memory; and it saves through QSaveFile, which
    follows a link, so a link there (to a file of the user's, or to nothing: the file would be
    made outside the data folder) would have the settings written over its target. Looked at
    with lstat: a link is never followed."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"{path} cannot be read ({e.strerror or e})"
    if stat.S_ISLNK(info.st_mode):
        return f"{path} is a link, which SiliconBench does not write its settings through"
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file"
    if info.st_size > SETTINGS_LIMIT:
        return f"{path} holds {info.st_size:,} bytes, more than any settings file"
    return None


def _set_aside(path: Path, problem: str) -> Path | None:
    """Move a settings file QSettings must not read out of the way (a link itself, never its
    target); None when it could not be moved, and `notice` says what happened in either
    case."""
    global notice
    aside = path.with_name(f"{path.name}.unreadable-{int(time.time())}")
    try:
        os.replace(path, aside)
    except OSError:
        notice = (f"SiliconBench started with its default settings: {problem}, and it could "
                  "not be moved aside, so nothing is remembered until it is removed.")
        return None
    notice = (f"SiliconBench started with its default settings: {problem}, so it was moved "
              f"to {aside.name}.")
    return aside


def say_notice(status: QStatusBar) -> str | None:
    """Say `notice` once (the window's status bar for a minute, and the log), then forget
    it; what was said, or None."""
    global notice
    said, notice = notice, None
    if said:
        from siliconbench.core.logs import log
        log.warning("%s", said)
        status.showMessage(said, 60_000)
    return said


def app_settings() -> QSettings:
    """The app's QSettings; an ini file under SILICONBENCH_HOME when that is set (tests,
    portable installs), so nothing touches the user's real preferences. A settings file that
    is not a regular file of a sane size is moved aside first (unusable_settings), or, where
    it cannot be, the app keeps its settings in a temporary file for this launch."""
    path = settings_file()
    problem = unusable_settings(path) if path is not None else None
    if problem and _set_aside(path, problem) is None:
        import tempfile
        return QSettings(str(Path(tempfile.mkdtemp(prefix="siliconbench-settings-")) /
                             "gui-settings.ini"), QSettings.Format.IniFormat)
    if os.environ.get("SILICONBENCH_HOME"):
        return QSettings(str(path), QSettings.Format.IniFormat)
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


def value_of(settings: QSettings, key: str, kind: type | tuple[type, ...]):
    """The value kept under `key` when it is a `kind` (a str no longer than TEXT_LIMIT), else
    None: a value of another type (a hand-edited file, another version) is as if never
    kept, and its default applies."""
    try:
        value = settings.value(key)
    except Exception:        # a value Qt cannot give Python (an unknown @Variant)
        return None
    if not isinstance(value, kind) or isinstance(value, str) and len(value) > TEXT_LIMIT:
        return None
    return value


# Preferences (siliconbench.gui.preferences): a run that ends joins Results selected (on), or
# leaves the user's selection as it is (off, the default).
SELECT_NEW_RUNS = "results/select_new_runs"


def selects_new_runs(settings: QSettings) -> bool:
    return is_true(settings, SELECT_NEW_RUNS, False)


def is_true(settings: QSettings, key: str, default: bool) -> bool:
    # Ini files give "true"/"false" back as strings, plists as booleans.
    value = value_of(settings, key, (bool, str))
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value if isinstance(value, bool) else default


# What the window manager adds around a window (borders, a title bar of 28 px on macOS and
# about 30-37 on Linux and Windows), which a window's size does not count: a first window of
# 1440x900 stood 20 px taller than a 1440x900 Mac screen's room under its menu bar.
FRAME_ALLOWANCE = QSize(16, 40)


def available_geometry(window) -> QRect | None:
    """The room the window's screen leaves for windows (less the menu bar, the Dock and
    panels), or None where there is no screen."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else None


def first_window_place(wanted: QSize, minimum: QSize, available: QRect) -> tuple[QSize, QPoint]:
    """The first window's size and its frame's top-left: the size wanted where the screen
    has the room for it with its frame, else as much as there is (never under the minimum),
    centred in the available room."""
    width = max(minimum.width(), min(wanted.width(),
                                     available.width() - FRAME_ALLOWANCE.width()))
    height = max(minimum.height(), min(wanted.height(),
                                       available.height() - FRAME_ALLOWANCE.height()))
    spare_w = available.width() - width - FRAME_ALLOWANCE.width()
    spare_h = available.height() - height - FRAME_ALLOWANCE.height()
    return QSize(width, height), QPoint(available.left() + max(0, spare_w // 2),
                                        available.top() + max(0, spare_h // 2))


def restore_window(s: QSettings, window: QWidget, splits: dict[str, QSplitter]) -> bool:
    """The window's geometry and panes (`splits`, by name), as save_window left them; a value
    of the wrong kind leaves its default. A first window is fitted to its screen. Returns
    whether the sidebar was shown."""
    geometry = value_of(s, "window/geometry", QByteArray)
    if geometry is not None:
        window.restoreGeometry(geometry)
    else:
        available = available_geometry(window)
        if available is not None and available.isValid():
            size, corner = first_window_place(window.size(), window.minimumSize(), available)
            window.resize(size)
            window.move(corner)     # a window's position is its frame's
    for name, split in splits.items():
        state = value_of(s, f"window/{name}", QByteArray)
        if state is not None:
            split.restoreState(state)
    return is_true(s, "window/sidebar", True)


def restore_run_choices(s: QSettings, catalogue: WorkloadCatalogue, devices: DeviceList,
                        quick_box: QCheckBox) -> None:
    """The last run's choices, as save_run_choices left them; a value of the wrong kind
    leaves its default (each form's fields: restore_form, when the form is made)."""
    quick_box.setChecked(is_true(s, "run/quick", False))
    catalogue.select(value_of(s, "run/workload", str))
    keys = value_of(s, "run/devices", (str, list))
    if isinstance(keys, str):
        keys = [keys]
    if isinstance(keys, list) and all(isinstance(k, str) and len(k) <= TEXT_LIMIT
                                      for k in keys):
        devices.set_checked(keys)


def restore_form(settings: QSettings, workload: str, form) -> None:
    """A workload's form as it was last filled in: each field whose kept text it accepts; the
    others (of the wrong type, too long, no longer valid) keep their defaults."""
    saved = value_of(settings, f"params/{workload}", str)
    try:
        texts = json.loads(saved) if saved is not None else None
    except (ValueError, RecursionError):
        return
    if not isinstance(texts, dict):
        return
    form.set_texts({name: text for name, text in texts.items()
                    if isinstance(text, str) and len(text) <= TEXT_LIMIT}, keep_valid=True)


def save_run_choices(s: QSettings, catalogue: WorkloadCatalogue, devices: DeviceList,
                     quick_box: QCheckBox, forms: dict[str, ParamForm]) -> None:
    w = catalogue.current()
    if w is not None:
        s.setValue("run/workload", w.name)
    s.setValue("run/devices", devices.checked_keys())
    s.setValue("run/quick", "true" if quick_box.isChecked() else "false")
    for name, form in forms.items():
        s.setValue(f"params/{name}", json.dumps(form.texts()))


def save_window(s: QSettings, window: QWidget, splits: dict[str, QSplitter],
                sidebar_shown: bool) -> None:
    """The window's geometry, its panes (`splits`, by name) and whether the sidebar is shown;
    then everything kept is written (after save_run_choices)."""
    s.setValue("window/geometry", window.saveGeometry())
    for name, split in splits.items():
        s.setValue(f"window/{name}", split.saveState())
    s.setValue("window/sidebar", "true" if sidebar_shown else "false")
    s.sync()


def last_dir(settings: QSettings) -> str:
    """The folder the file dialogs open in: the last one used while it is a folder, else
    home."""
    kept = value_of(settings, "files/last_dir", str)
    return kept if kept and os.path.isdir(kept) else str(Path.home())


def remember_dir(settings: QSettings, path: str) -> None:
    settings.setValue("files/last_dir", str(Path(path).parent))


# ---------------------------------------------------------------- the store (Preferences)

STORE_KEY = "store/shared"   # the shared store's address, without its password; absent: local


def shared_store(settings: QSettings) -> str | None:
    """The shared store Preferences chose, or None for "This machine only". An address kept
    with a password in it (an older SiliconBench read `#` or `?` in one as a URL's fragment
    or query and kept it) is kept again without it; one libpq cannot read is forgotten."""
    from siliconbench.core.store_address import SECRET_KEYS, UnreadableAddress, parse, shown
    from siliconbench.core.store_pg import is_url
    url = value_of(settings, STORE_KEY, str)
    if not is_url(url):
        return None
    try:
        if not any(key in parse(url) for key in SECRET_KEYS):
            return url
        url = shown(url)
        settings.setValue(STORE_KEY, url)
    except UnreadableAddress:
        url = None
        settings.remove(STORE_KEY)
    settings.sync()
    return url


def keep_shared_store(settings: QSettings, url: str | None) -> None:
    """Remember the store chosen: its address with any password taken out (libpq finds the
    password in ~/.pgpass, a service file or PGPASSWORD), or none for this machine only."""
    from siliconbench.core.store_pg import without_password
    if url:   # StoreError (one sentence, never the address) where libpq cannot read it
        settings.setValue(STORE_KEY, without_password(url))
    else:
        settings.remove(STORE_KEY)
    settings.sync()


def use_store_preference(settings: QSettings) -> None:
    """Before the app opens its store: the shared store Preferences chose, unless
    SILICONBENCH_STORE already names one (the environment wins, as on the command line)."""
    url = shared_store(settings)
    if url and not os.environ.get("SILICONBENCH_STORE"):
        os.environ["SILICONBENCH_STORE"] = url


def store_preferences(parent, settings: QSettings):
    """Preferences: "This machine only" or "Shared store: <address>", with a button that tries
    the address and says in one sentence what it found. OK keeps the choice (without password);
    it applies from the app's next start. The dialog, for tests to drive; exec() it to show."""
    from PySide6.QtWidgets import (
        QButtonGroup,
        QDialog,
        QDialogButtonBox,
        QLabel,
        QLineEdit,
        QPushButton,
        QRadioButton,
        QVBoxLayout,
    )

    from siliconbench.core.store_pg import check
    dialog = QDialog(parent)
    dialog.setWindowTitle("Preferences")
    layout = QVBoxLayout(dialog)
    layout.addWidget(QLabel("Where runs are kept:"))
    local = QRadioButton("This machine only")
    shared = QRadioButton("Shared store:")
    group = QButtonGroup(dialog)
    for button in (local, shared):
        group.addButton(button)
        layout.addWidget(button)
    address = QLineEdit(shared_store(settings) or "")
    address.setPlaceholderText("postgresql://machine@db.lab.example/siliconbench?"
                               "sslmode=verify-full  or  service=lab")
    layout.addWidget(address)
    (shared if shared_store(settings) else local).setChecked(True)
    test = QPushButton("Test Connection")
    answer = QLabel("")
    answer.setWordWrap(True)
    layout.addWidget(test)
    layout.addWidget(answer)
    layout.addWidget(QLabel("Passwords stay in ~/.pgpass, a service file or PGPASSWORD; "
                            "SiliconBench keeps none. The choice applies from the next start."))
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok |
                               QDialogButtonBox.StandardButton.Cancel)
    layout.addWidget(buttons)

    def try_it() -> None:
        answer.setText(check(address.text().strip())[1])

    def keep() -> None:
        url = address.text().strip() if shared.isChecked() else None
        from siliconbench.core.store_pg import StoreError, is_url
        if url is not None and not is_url(url):
            answer.setText("Give a PostgreSQL address: postgresql://user@host/db or "
                           "service=NAME.")
            return
        try:
            keep_shared_store(settings, url)
        except StoreError as e:
            answer.setText(str(e))
            return
        dialog.accept()

    address.textEdited.connect(lambda _: shared.setChecked(True))
    test.clicked.connect(try_it)
    buttons.accepted.connect(keep)
    buttons.rejected.connect(dialog.reject)
    dialog.address, dialog.shared, dialog.local, dialog.test, dialog.answer = (
        address, shared, local, test, answer)
    return dialog
