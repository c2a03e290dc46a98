"""Starting the app where Qt cannot: a missing X11 library is named in one sentence with the
packages to install, before Qt would abort."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gui.app import qt_platform_problem, xcb_plugin

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(sys.platform != "linux" or xcb_plugin() is None,
                    reason="Qt's X11 plugin is a Linux thing")
def test_a_missing_xcb_library_is_named_with_the_packages_to_install(tmp_path, monkeypatch):
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    real = xcb_plugin()
    assert qt_platform_problem(real) is None          # this machine has the libraries
    # The same plugin asking for a library no machine has (same length, so the ELF is intact),
    # next to Qt's own libraries as its RUNPATH ($ORIGIN/../../lib) expects.
    (tmp_path / "plugins" / "platforms").mkdir(parents=True)
    (tmp_path / "lib").symlink_to(real.parent.parent.parent / "lib")
    broken = tmp_path / "plugins" / "platforms" / "libqxcb.so"
    data = real.read_bytes()
    assert b"libxcb-cursor.so.0" in data
    broken.write_bytes(data.replace(b"libxcb-cursor.so.0", b"libxcb-cursQr.so.0"))
    message = qt_platform_problem(broken)
    assert message is not None and "\n" not in message and "Traceback" not in message
    assert "libxcb-cursQr.so.0" in message and "sudo apt install libxcb-cursor0" in message


def test_without_a_display_the_app_says_so_in_one_sentence(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update(SILICONBENCH_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "gui"], env=env, capture_output=True,
                         text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 2
    assert out.stderr.startswith("SiliconBench: no display found") and "Traceback" not in out.stderr


def test_the_app_refuses_in_one_sentence_before_qt_starts(monkeypatch, capsys):
    """main() gets the X11 check's answer from its preflight thread before it makes the
    QApplication: a missing library is said, not left to Qt's abort."""
    import gui.app
    sentence = "SiliconBench: the desktop app cannot open because libxcb-cursor.so.0 is missing."
    monkeypatch.setattr(gui.app, "qt_platform_problem", lambda: sentence)
    monkeypatch.setenv("DISPLAY", ":0")
    assert gui.app.main([]) == 2
    assert capsys.readouterr().err.strip() == sentence
    assert gc.isenabled()         # main() turns it off until the first paint
