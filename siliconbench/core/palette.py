"""The colours of SiliconBench, one definition for the app (siliconbench/gui/theme.py draws with them) and
the HTML report (siliconbench/core/report.py), so a machine has one colour wherever its results are shown:
Apple's system colours, light and dark, for the window's own surfaces; the data series are
Okabe & Ito's colour-blind-safe set (ordered for contrast on each background), so two machines
stay apart for every reader in the app and in a report sent round. Plain data: core never
imports Qt."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Palette:
    """One colour scheme: the window's surfaces and text, and the data series in order."""
    dark: bool
    background: str      # plot canvas, page
    foreground: str      # axes and text
    muted: str           # secondary text
    card: str            # machine card, group and table-header backgrounds
    border: str
    warning: str
    error: str           # also "slower"
    ok: str              # also "faster"
    series: tuple[str, ...]

    def series_color(self, index: int) -> str:
        return self.series[index % len(self.series)]

    def css_variables(self) -> str:
        """The palette as CSS custom properties (--fg, --muted, ...) for a page's :root."""
        names = {"bg": self.background, "fg": self.foreground, "muted": self.muted,
                 "card": self.card, "border": self.border, "warning": self.warning,
                 "error": self.error, "ok": self.ok}
        return ":root{" + ";".join(f"--{k}:{v}" for k, v in names.items()) + "}"


LIGHT = Palette(
    dark=False, background="#FFFFFF", foreground="#1D1D1F", muted="#6E6E73", card="#F2F2F7",
    border="#D1D1D6", warning="#C93400", error="#D70015", ok="#248A3D",
    series=("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
            "#000000"))

DARK = Palette(
    dark=True, background="#1C1C1E", foreground="#E5E5EA", muted="#98989D", card="#2C2C2E",
    border="#3A3A3C", warning="#FF9F0A", error="#FF453A", ok="#30D158",
    series=("#56B4E9", "#E69F00", "#009E73", "#CC79A7", "#F0E442", "#D55E00", "#0072B2",
            "#FFFFFF"))
