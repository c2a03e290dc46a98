"""Light or dark colours (siliconbench.core.palette) for plots and the few custom-drawn widgets, following
the system's appearance (QStyleHints.colorScheme, Qt 6.5+)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette

from siliconbench.core.palette import DARK, LIGHT, Palette

if TYPE_CHECKING:
    from PySide6.QtCore import Qt


# The colours live in siliconbench.core.palette, shared with the HTML report.
Theme = Palette


def theme_for(scheme: Qt.ColorScheme | None = None) -> Theme:
    """The theme for a colour scheme; with none given, the running application's."""
    from PySide6.QtCore import Qt  # not before the first paint (siliconbench/gui/qt_values.py)
    app = QGuiApplication.instance()
    if scheme is None and app is not None:
        scheme = app.styleHints().colorScheme()
    if scheme == Qt.ColorScheme.Dark:
        return DARK
    if scheme == Qt.ColorScheme.Light or app is None:
        return LIGHT
    # Unknown (Linux without a desktop portal, offscreen): judge by the palette's window colour.
    return palette_theme()


def palette_theme() -> Theme:
    """The theme the application's palette suggests (its window colour): the first paint's,
    as asking Qt for the colour scheme builds the Qt namespace (siliconbench/gui/qt_values.py); theme_for()
    confirms it right after. Qt's macOS, Windows and desktop-portal themes give a dark palette
    in dark mode."""
    app = QGuiApplication.instance()
    if app is None:
        return LIGHT
    window = app.palette().color(QPalette.ColorRole.Window)
    return DARK if window.lightness() < 128 else LIGHT


def series_color(theme: Theme, index: int) -> str:
    return theme.series_color(index)


def font_pt(scale: float) -> float:
    """A font size relative to the application's (13 pt on a Mac, 9-10 pt on Linux)."""
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance()
    base = app.font().pointSizeF() if app is not None else 13.0
    return round((base if base > 0 else 13.0) * scale, 1)


# What a label's "role" property asks for: (the theme's colour, font scale, bold). Hints and
# errors are labels anywhere in the window; tone_roles finds them.
ROLES = {"section": ("muted", 0.92, True), "subsection": (None, 1.0, True),
         "hint": ("muted", 0.9, False), "error": ("error", 0.9, False)}


def tone(widget, color: str | None = None, scale: float = 1.0, bold: bool = False) -> None:
    """A widget's text colour (a colour of the theme, as its palette's WindowText and Text: a
    label on a list's viewport paints with Text, its background being Base) and font
    (scaled from the application's; bold is semibold): what a style sheet would say, without
    one. A style sheet costs a polish of the widget and all inside it, and sends each of
    their paints through Qt's style-sheet style: the few this window had cost 38 M
    instructions, a fifth of its build and show before the first paint (callgrind)."""
    if color is not None:
        palette = widget.palette()   # a copy (QPalette(...) would build Qt's enums: qt_values)
        for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text):
            palette.setColor(role, QColor(color))
        widget.setPalette(palette)
    if scale != 1.0 or bold:
        font = QFont(widget.font())
        if scale != 1.0:
            font.setPointSizeF(font_pt(scale))
        if bold:
            font.setWeight(QFont.Weight.DemiBold)
        widget.setFont(font)


def tone_role(label, theme: Theme) -> None:
    """Tone a label as its role property asks, in this theme (none: left as it is)."""
    role = label.property("role")
    if role in ROLES:
        color, scale, bold = ROLES[role]
        tone(label, getattr(theme, color) if color else None, scale, bold)


def tone_roles(root, theme: Theme) -> None:
    """tone_role for every label under root. Not before the first paint: findChildren makes
    Python types for every widget Qt made inside root (scroll bars, tab bars...), 16 sets of
    enums in the window's sidebar."""
    from PySide6.QtWidgets import QLabel
    for label in root.findChildren(QLabel):
        tone_role(label, theme)
