"""Starts the desktop app: `siliconbench`, `siliconbench gui`, `python -m gui [FILE...]` and the
Mac app end here. Shows the window before anything slow (no ML framework is imported in this
process at all), then imports the result files it was given (on the command line, or by Finder
as QFileOpenEvents) and, on first launch, the welcome. With SILICONBENCH_GUI_EXIT_AFTER_SHOWN=1
it prints the time from launch to the shown window and quits (benchmarks/gui_startup.py)."""

from __future__ import annotations

import gc
import importlib.util
import os
import sys
import time
from pathlib import Path

EXIT_AFTER_SHOWN = "SILICONBENCH_GUI_EXIT_AFTER_SHOWN"
LAUNCHED_AT = "SILICONBENCH_GUI_LAUNCHED_AT"   # time.time() of the launcher, for the benchmark


def _since_launch_s() -> float:
    """Seconds since launch: from the launcher's clock when it gave one, else since the OS
    created this process (psutil's figure is coarse on Linux, whole seconds of boot time)."""
    launched = os.environ.get(LAUNCHED_AT)
    if launched:
        return time.time() - float(launched)
    import psutil
    return time.time() - psutil.Process().create_time()


# Debian/Ubuntu packages of the libraries Qt's X11 plugin needs (Qt's own list for 6.5+).
XCB_PACKAGES = ("libxcb-cursor0 libxkbcommon-x11-0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 "
                "libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 "
                "libegl1")


def xcb_plugin() -> Path | None:
    """PySide6's X11 platform plugin, found without importing Qt."""
    spec = importlib.util.find_spec("PySide6")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        plugin = Path(folder) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if plugin.exists():
            return plugin
    return None


def qt_platform_problem(plugin: Path | None = None) -> str | None:
    """One sentence when Qt's X11 plugin cannot load here (a library it needs is missing),
    which Qt itself reports only as "could not load the Qt platform plugin" and an abort."""
    platform_name = os.environ.get("QT_QPA_PLATFORM", "")
    wayland = os.environ.get("WAYLAND_DISPLAY") and os.environ.get("XDG_SESSION_TYPE") == "wayland"
    if sys.platform != "linux" or platform_name not in ("", "xcb") or wayland:
        return None
    plugin = plugin or xcb_plugin()
    if plugin is None:
        return None  # an unusual Qt build: let Qt speak for itself
    import ctypes
    try:
        ctypes.CDLL(str(plugin))  # the dynamic loader names the first missing library
    except OSError as e:
        missing = str(e).split(":")[0].strip()
        return (f"SiliconBench: the desktop app cannot open because {missing} (needed by Qt's "
                f"X11 support) is missing; install Qt's X11 libraries (on Debian or Ubuntu: "
                f"sudo apt install {XCB_PACKAGES}), or use the siliconbench command, e.g. "
                f"siliconbench quick.")
    return None


class Preflight:
    """What Qt needs of the system, made ready on another core while Python imports the
    catalogue, Qt and the window's modules (0.1-0.2 s on a 2-core Linux VM). ctypes lets go of
    the GIL while a library loads and while fontconfig reads, so the imports go on beside it:
    - whether Qt's X11 plugin can load (qt_platform_problem: it loads the plugin's libraries,
      which Qt then finds loaded);
    - on Linux, fontconfig's configuration, read by the first label Qt lays out otherwise:
      28 M instructions (callgrind). Qt's font database finds it read. (On a Mac, Qt asks
      Core Text instead.)"""

    def __init__(self) -> None:
        import threading
        self._problem: str | None = None
        self._thread = threading.Thread(target=self._run, name="preflight", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self._problem = qt_platform_problem()
        if self._problem is None and sys.platform == "linux":
            import ctypes
            try:
                ctypes.CDLL("libfontconfig.so.1").FcInit()
            except OSError:
                pass   # no fontconfig here: Qt's font database says so itself

    def problem(self) -> str | None:
        """qt_platform_problem's answer, once the work is done (before QApplication)."""
        self._thread.join()
        return self._problem


def file_opener(window):
    """An application event filter that imports the files Finder opens with the app (a double
    click on a .sbresults file, a drop on the Dock icon), like File > Import Results."""
    from PySide6.QtCore import QEvent, QObject

    class FileOpener(QObject):
        def eventFilter(self, obj, event) -> bool:
            if event.type() == QEvent.Type.FileOpen and event.file():
                window.import_files([event.file()])
                return True
            return False
    return FileOpener(window)


def excepthook_for(status):
    """A bug in a slot shows in the window's status bar and stderr; the window stays open."""
    def hook(kind, value, tb) -> None:
        sys.__excepthook__(kind, value, tb)
        try:
            status.showMessage(f"Internal error: {kind.__name__}: {value}", 15000)
        except RuntimeError:
            pass  # the window is gone
    return hook


def main(argv: list[str]) -> int:
    from siliconbench.core.display import has_display
    if not has_display():  # Qt would abort with a core dump instead
        print("SiliconBench: no display found (DISPLAY is not set): the desktop app cannot "
              "open; use the siliconbench command instead, e.g. siliconbench quick.",
              file=sys.stderr)
        return 2
    preflight = Preflight()
    # No cyclic garbage collection until the window is painted: the start makes hundreds of
    # thousands of objects that live as long as the app, which each collection would walk
    # again (16 M instructions to the first paint, callgrind). shown() turns it back on.
    gc.disable()
    # The workload catalogue the window lists (and the core modules under it) load before Qt:
    # PySide6 puts a hook on every import that follows it, which reads each module's source.
    from siliconbench.core.catalogue import catalogue
    catalogue()

    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    problem = preflight.problem()
    if problem:
        gc.enable()
        print(problem, file=sys.stderr)
        return 2
    from siliconbench.gui.settings import identify_app
    identify_app()  # before the first QSettings: its file is named after the bundle id
    app = QApplication.instance() or QApplication(["SiliconBench", *argv])

    from siliconbench.gui.main_window import MainWindow
    # The devices, workloads and form paint first; the log, the store, the run queue, Results
    # and the charts follow in shown().
    window = MainWindow(defer=True)
    show_error = excepthook_for(window.statusBar())

    def excepthook(kind, value, tb) -> None:
        from siliconbench.core.logs import log
        log.error("uncaught exception in the app", exc_info=(kind, value, tb))
        show_error(kind, value, tb)
    sys.excepthook = excepthook
    # Installed before the event loop: Finder's open event for the file that launched the app
    # arrives as the loop starts. Only on a Mac, the one platform Qt sends it on: a filter on
    # the application sees every event of every widget, a Python call each (an eighth of the
    # work before the first paint on Linux, measured with callgrind).
    opener = file_opener(window)  # held here: the filter must outlive app.exec()
    if sys.platform == "darwin":
        app.installEventFilter(opener)
    # Files named on the command line; "-psn_..." is what old macOS versions add.
    files = [a for a in argv if not a.startswith("-")]
    exit_after_shown = bool(os.environ.get(EXIT_AFTER_SHOWN))

    class FirstExpose(QObject):
        """Acts once the window is on screen and has had its first paint."""
        done = False

        def eventFilter(self, obj, event) -> bool:
            if event.type() == QEvent.Type.Expose and not self.done:
                self.done = True
                QTimer.singleShot(0, shown)  # once the expose is handled: painted
            return False

    def shown() -> None:
        gc.freeze()   # what the start made stays: later collections skip it
        gc.enable()
        if exit_after_shown:
            from siliconbench.core.frameworks import FRAMEWORKS
            loaded = [f.module for f in FRAMEWORKS.values() if f.module in sys.modules]
            print(f"SILICONBENCH_SHOWN {_since_launch_s():.3f} s; frameworks imported: "
                  f"{', '.join(loaded) or 'none'}", flush=True)
            window.ask_before_closing = False
            window.close()
            app.quit()
            return
        from siliconbench.core.logs import setup_logging
        setup_logging()
        from siliconbench.gui.settings import say_notice
        # A settings file moved aside (a FIFO, a link to a device).
        say_notice(window.statusBar())
        from siliconbench.core.run_store import open_store
        from siliconbench.core.store import StoreError
        from siliconbench.gui.settings import use_store_preference
        use_store_preference(window.settings)   # Preferences' shared store, if one
        try:
            store = open_store()   # chosen once here, and passed down
            if getattr(store, "offline", True) is None:
                store.sync()   # the runs kept here while the shared store was away
        except StoreError as e:
            from PySide6.QtWidgets import QMessageBox
            QMessageBox.critical(window, "SiliconBench cannot start", str(e))
            app.exit(1)
            return
        window.build_rest(store)
        from siliconbench import (
            __version__,  # package metadata: a tenth of a second, after the paint
        )
        QApplication.setApplicationVersion(__version__)
        window.start_background()
        if files:
            window.import_files(files)
        window.show_welcome()

    watcher = FirstExpose()
    window.show()
    handle = window.windowHandle()
    if handle is not None:
        handle.installEventFilter(watcher)
    # Platforms that expose before the filter is in place (or never send Expose) still start.
    QTimer.singleShot(500, lambda: None if watcher.done else watcher.eventFilter(
        None, QEvent(QEvent.Type.Expose)))
    return app.exec()
