"""Starting the app where Qt cannot: a missing X11 library is named in one sentence with the
packages to install, before Qt would abort."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from siliconbench.gui.app import qt_platform_problem, xcb_plugin

ROOT = Path(__file__).resolve().parents[2]


def _plugin_needing(tmp_path: Path, real: Path, name: bytes, missing: bytes) -> Path:
    """A copy of Qt's X11 plugin whose dependency `name` is renamed `missing` (same length, so
    the ELF stays intact), next to Qt's own libraries as its RUNPATH ($ORIGIN/../../lib)
    expects."""
    folder = tmp_path / "plugins" / "platforms"
    folder.mkdir(parents=True)
    (tmp_path / "lib").symlink_to(real.parent.parent.parent / "lib")
    data = real.read_bytes()
    assert name in data and len(name) == len(missing)
    (folder / "libqxcb.so").write_bytes(data.replace(name, missing))
    return folder / "libqxcb.so"


@pytest.mark.skipif(sys.platform != "linux" or xcb_plugin() is None,
                    reason="Qt's X11 plugin is a Linux thing")
def test_a_missing_xcb_library_is_named_with_the_packages_to_install(tmp_path, monkeypatch):
    """Whether or not this machine has Qt's X11 libraries: the plugin's first dependency is
    renamed to a library no machine has, so the dynamic loader stops at it before it looks for
    any system library, and that name must come out in one sentence with the packages."""
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    # libQt6XcbQpa.so.6 is the plugin's first DT_NEEDED entry in PySide6's wheels, and ships
    # with them: the loader opens the entries in order and fails at the first it cannot find.
    broken = _plugin_needing(tmp_path, xcb_plugin(), b"libQt6XcbQpa.so.6", b"libQt6XcbQpQ.so.6")
    message = qt_platform_problem(broken)
    assert message is not None and "\n" not in message and "Traceback" not in message
    assert "libQt6XcbQpQ.so.6" in message and "sudo apt install libxcb-cursor0" in message


def test_the_sentence_names_what_the_loader_could_not_find(monkeypatch):
    """The machine without libxcb-cursor, made here: the loader's own complaint (as glibc words
    it) becomes the sentence, whatever this machine has installed."""
    import ctypes
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    loaded: list[str] = []

    def loader(path: str, *args, **kwargs):
        loaded.append(path)
        raise OSError("libxcb-cursor.so.0: cannot open shared object file: No such file or "
                      "directory")
    monkeypatch.setattr(ctypes, "CDLL", loader)
    message = qt_platform_problem(Path("/nowhere/libqxcb.so"))
    assert loaded == ["/nowhere/libqxcb.so"]
    assert message.startswith("SiliconBench: the desktop app cannot open because "
                              "libxcb-cursor.so.0 (needed by Qt's X11 support) is missing")
    assert "sudo apt install libxcb-cursor0" in message and "\n" not in message
    monkeypatch.setattr(ctypes, "CDLL", lambda path, *a, **k: loaded.append(path))
    assert qt_platform_problem(Path("/here/libqxcb.so")) is None   # it loads: nothing to say


def test_without_a_display_the_app_says_so_in_one_sentence(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update(SILICONBENCH_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "siliconbench.gui"], env=env, capture_output=True,
                         text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2
    assert out.stderr.startswith("SiliconBench: no display found") and "Traceback" not in out.stderr


def test_the_app_refuses_in_one_sentence_before_qt_starts(monkeypatch, capsys):
    """main() gets the X11 check's answer from its preflight thread before it makes the
    QApplication: a missing library is said, not left to Qt's abort."""
    import siliconbench.gui.app
    sentence = "SiliconBench: the desktop app cannot open because libxcb-cursor.so.0 is missing."
    monkeypatch.setattr(siliconbench.gui.app, "qt_platform_problem", lambda: sentence)
    monkeypatch.setenv("DISPLAY", ":0")
    assert siliconbench.gui.app.main([]) == 2
    assert capsys.readouterr().err.strip() == sentence
    assert gc.isenabled()         # main() turns it off until the first paint
