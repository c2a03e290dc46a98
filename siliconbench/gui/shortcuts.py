"""The menus' keyboard shortcuts per platform, as Qt's portable key text (on a Mac Qt reads
Ctrl as ⌘ and Meta as ⌃, so "Ctrl+Backspace" is ⌘⌫). A plain function of the platform's name,
so every platform's keys are tested on any machine.

The Mac's own rules: ⌘S and ⇧⌘S mean Save and Save As, so no export takes them; deleting is
⌘⌫ (a Mac keyboard has no Delete key); ⌘M minimizes; ⌘H, ⌥⌘H, ⇧⌘Q and ⌥⌘Q belong to the
system; ⌘R runs, so refreshing the devices is not Qt's standard Refresh (⌘R there too)."""

from __future__ import annotations

import sys

# Keys every platform shares.
COMMON = {
    "import": "Ctrl+O",
    "export_png": "Ctrl+E",
    "export_svg": "Ctrl+Shift+E",
    "close": "Ctrl+W",
    "quit": "Ctrl+Q",
    "copy": "Ctrl+C",
    "select_all": "Ctrl+A",
    "details": "Ctrl+I",
    "run": "Ctrl+R",
    "cancel": "Ctrl+.",
    "cancel_all": "Ctrl+Shift+.",
    "compare": "Ctrl+K",
    # The lower tabs as the charts' Ctrl+1…6 are the upper ones.
    "queue_tab": "Ctrl+Alt+1",
    "results_tab": "Ctrl+Alt+2",
    "minimize": "Ctrl+M",
    "preferences": "Ctrl+,",      # ⌘, on a Mac
}

MAC = {
    "export_csv": "",
    "export_json": "",
    "delete": "Ctrl+Backspace",   # ⌘⌫
    "refresh": "Ctrl+Shift+R",
    "sidebar": "Ctrl+Meta+S",     # ⌃⌘S, the Mac's key for a sidebar
    "help": "Ctrl+?",
}

# Linux and Windows: no document to save, so Save and Save As export the selected runs.
OTHERS = {
    "export_csv": "Ctrl+S",
    "export_json": "Ctrl+Shift+S",
    "delete": "Del",
    "refresh": "F5",
    "sidebar": "F9",              # as file managers show and hide theirs
    "help": "F1",
}


def shortcuts(platform: str = sys.platform) -> dict[str, str]:
    """Action name -> portable key text ("" for none) on this platform."""
    return {**COMMON, **(MAC if platform == "darwin" else OTHERS)}


def chart_shortcut(index: int) -> str:
    """View > the index-th chart tab (Ctrl+1 for the first)."""
    return f"Ctrl+{index + 1}"
