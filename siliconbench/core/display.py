"""Whether a window can open here at all (no Qt: the command line asks before choosing between
the app and the headless suite)."""

from __future__ import annotations

import os
import sys


def has_display() -> bool:
    # sys.platform, not the platform module: this runs before the app's window, on its clock.
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                or os.environ.get("QT_QPA_PLATFORM") in ("offscreen", "minimal"))
