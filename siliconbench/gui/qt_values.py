"""Qt enum settings of the widgets built before the window's first paint, written through
Qt's property system as Qt's own numbers (qnamespace.h). Reading PySide6's `Qt` namespace
builds all of its ~100 Python enums at once: 35-43 ms here, a sixth of the app's start
(benchmarks/gui_startup.py). After the first paint the app uses `Qt` as usual.
tests/gui/test_main_window_in_use.py checks every number against `Qt`."""

from __future__ import annotations

from PySide6.QtCore import QObject

VERTICAL = 2                   # Qt.Orientation.Vertical
ALIGN_CENTER = 0x84            # Qt.AlignmentFlag.AlignCenter
NO_FOCUS = 0                   # Qt.FocusPolicy.NoFocus
SCROLL_BAR_ALWAYS_OFF = 1      # Qt.ScrollBarPolicy.ScrollBarAlwaysOff
TEXT_SELECTABLE_BY_MOUSE = 1   # Qt.TextInteractionFlag.TextSelectableByMouse
CASE_INSENSITIVE = 0           # Qt.CaseSensitivity.CaseInsensitive
MATCH_CONTAINS = 1             # Qt.MatchFlag.MatchContains
USER_ROLE = 256                # Qt.ItemDataRole.UserRole (roles are plain ints in PySide6)
TOOL_TIP_ROLE = 3              # Qt.ItemDataRole.ToolTipRole


def set_value(obj: QObject, prop: str, value: int) -> None:
    """obj's Q_PROPERTY `prop` = value; a name that is no property is a mistake, not a new
    dynamic property."""
    if not obj.setProperty(prop, value):
        raise AttributeError(f"{type(obj).__name__} has no Qt property {prop!r}")
