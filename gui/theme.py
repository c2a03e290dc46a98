"""Light and dark colours for plots and the few custom-drawn widgets, following the system's
appearance (QStyleHints.colorScheme, Qt 6.5+), with Apple's system colours for data series."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPalette


@dataclass(frozen=True)
class Theme:
    dark: bool
    background: str      # plot canvas
    foreground: str      # axes and text on plots
    muted: str           # secondary text
    card: str            # machine card and group backgrounds
    border: str
    warning: str
    error: str
    ok: str
    series: tuple[str, ...]


LIGHT = Theme(
    dark=False, background="#FFFFFF", foreground="#1D1D1F", muted="#6E6E73", card="#F2F2F7",
    border="#D1D1D6", warning="#C93400", error="#D70015", ok="#248A3D",
    series=("#007AFF", "#FF9500", "#34C759", "#AF52DE", "#FF2D55", "#30B0C7", "#5856D6",
            "#A2845E", "#FF3B30", "#00C7BE"))

DARK = Theme(
    dark=True, background="#1C1C1E", foreground="#E5E5EA", muted="#98989D", card="#2C2C2E",
    border="#3A3A3C", warning="#FF9F0A", error="#FF453A", ok="#30D158",
    series=("#0A84FF", "#FF9F0A", "#30D158", "#BF5AF2", "#FF375F", "#40C8E0", "#5E5CE6",
            "#AC8E68", "#FF453A", "#66D4CF"))


def theme_for(scheme: Qt.ColorScheme | None = None) -> Theme:
    """The theme for a colour scheme; with none given, the running application's."""
    app = QGuiApplication.instance()
    if scheme is None and app is not None:
        scheme = app.styleHints().colorScheme()
    if scheme == Qt.ColorScheme.Dark:
        return DARK
    if scheme == Qt.ColorScheme.Light or app is None:
        return LIGHT
    # Unknown (Linux without a desktop portal, offscreen): judge by the palette's window colour.
    window = app.palette().color(QPalette.ColorRole.Window)
    return DARK if window.lightness() < 128 else LIGHT


def series_color(theme: Theme, index: int) -> str:
    return theme.series[index % len(theme.series)]


def font_pt(scale: float) -> float:
    """A font size relative to the application's (13 pt on a Mac, 9-10 pt on Linux)."""
    from PySide6.QtWidgets import QApplication
    app = QApplication.instance()
    base = app.font().pointSizeF() if app is not None else 13.0
    return round((base if base > 0 else 13.0) * scale, 1)
