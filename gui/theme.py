"""Light or dark colours (core.palette) for plots and the few custom-drawn widgets, following
the system's appearance (QStyleHints.colorScheme, Qt 6.5+)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QGuiApplication, QPalette

from core.palette import DARK, LIGHT, Palette

if TYPE_CHECKING:
    from PySide6.QtCore import Qt


# The colours live in core.palette, shared with the HTML report.
Theme = Palette


def theme_for(scheme: Qt.ColorScheme | None = None) -> Theme:
    """The theme for a colour scheme; with none given, the running application's."""
    from PySide6.QtCore import Qt   # not before the first paint (gui/qt_values.py)
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
    as asking Qt for the colour scheme builds the Qt namespace (gui/qt_values.py); theme_for()
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


def window_style(theme: Theme) -> str:
    """The main window's style sheet: section titles, hints, errors and separators."""
    return (f"QLabel#SectionTitle {{ font-weight: 600; color: {theme.muted};"
            f" font-size: {font_pt(0.92)}pt; padding-top: 4px; }}"
            f"QLabel#SectionSubtitle {{ font-weight: 600; }}"
            f"QLabel[role='hint'] {{ color: {theme.muted}; font-size: {font_pt(0.9)}pt; }}"
            f"QLabel[role='error'] {{ color: {theme.error}; font-size: {font_pt(0.9)}pt; }}"
            f"QFrame#Separator {{ color: {theme.border}; }}")
