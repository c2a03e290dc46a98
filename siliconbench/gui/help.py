"""The Help menu's own entries: the bundled help page, the data folder, how to send results,
and the About box with the versions of everything that shapes a number."""

from __future__ import annotations

import platform
from html import escape
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMessageBox, QWidget

from siliconbench import resources
from siliconbench.core.files import NotWritable, write_atomic
from siliconbench.core.params import LIST_ALL_UP_TO
from siliconbench.gui.sheets import message_sheet


def send_results_text() -> str:
    """How to Send Results, in the help page too. The entries as the menus name them
    (siliconbench.gui.menus.ENTRIES; a test holds every 'Menu > Entry' the help names to
    them, as SHORTCUT_WORDS are: the menus load this module, so it does not load them)."""
    from siliconbench.core.export import RESULT_SUFFIX
    return (
        "1. Under Results, select the runs to send.\n"
        "2. File > Export Selected Runs to Send… (also on the runs' right-click menu) writes "
        f"them to one {RESULT_SUFFIX} file: JSON with all the measurements and the machine "
        "they ran on.\n"
        "3. Send that file, by mail or chat.\n\n"
        "The other side double-clicks it (SiliconBench opens and imports it), drops it on the "
        "window, uses File > Import Results…, or runs: siliconbench import FILE")


def send_results_html() -> str:
    """send_results_text for the help page: the same words."""
    return "<p>" + escape(send_results_text()).replace("\n\n", "</p><p>").replace(
        "\n", "<br>") + "</p>"


def help_template() -> str:
    return resources.read_text("help.html")


def parameters_html() -> str:
    """Every listed workload's parameters, from their declarations (so the page cannot drift
    from the form or the command line)."""
    from siliconbench.core.catalogue import listed
    from siliconbench.core.frameworks import runs_on
    from siliconbench.gui.param_form import param_hint
    parts = []
    for w in listed():
        parts.append(f"<h3>{escape(w.title)}</h3><p>{escape(w.summary)} Runs on: "
                     f"{escape(', '.join(runs_on(w)))}.</p><dl>")
        for p in w.params:
            default = p.format(p.default) if p.default is not None else "auto"
            if p.kind == "choice" and len(p.choices) > LIST_ALL_UP_TO:
                extra = f" One of {len(p.choices)}: {', '.join(p.choices)}."
            else:
                extra = ""
            parts.append(f"<dt><b>{escape(p.label)}</b> <code>{escape(p.flag)}</code> "
                         f"(default: {escape(default)})</dt>"
                         f"<dd>{escape(param_hint(p) + extra)}</dd>")
        parts.append("</dl>")
    return "\n".join(parts)


def flags_html() -> str:
    from siliconbench.core.results import FLAGS
    return "\n".join(f"<dt><b>{escape(name.replace('_', ' '))}</b></dt><dd>"
                     f"{escape(text[0].upper() + text[1:])}.</dd>" for name, text in FLAGS.items())


# What each shortcut of siliconbench.gui.shortcuts does, as the menus name it.
SHORTCUT_WORDS = {
    "run": "Run", "cancel": "Cancel Current Run", "cancel_all": "Cancel All Runs",
    "compare": "Compare Selected Runs", "details": "Show Run Details…", "copy": "Copy",
    "select_all": "Select All Runs", "delete": "Delete Selected Runs…",
    "import": "Import Results…", "export_png": "Export Chart as PNG…",
    "export_svg": "Export Chart as SVG…", "export_csv": "Export Selected Runs as CSV…",
    "export_json": "Export Selected Runs as JSON…", "refresh": "Refresh Devices",
    "queue_tab": "Run Queue", "results_tab": "Results", "sidebar": "Hide Sidebar",
    "help": "SiliconBench Help", "minimize": "Minimize", "close": "Close Window",
    "quit": "Quit SiliconBench", "preferences": "Preferences…"}


def shortcuts_html(platform_name: str | None = None) -> str:
    """The keyboard shortcuts of this platform, from siliconbench.gui.shortcuts (the keys cannot drift from
    the menus; SHORTCUT_WORDS' words are held to the menu entries by a test in
    tests/gui/test_mac_conventions.py): one line each, and the charts' ⌘1… (Ctrl+1… elsewhere)."""
    import sys

    from siliconbench.gui.shortcuts import chart_shortcut, shortcuts
    keys = shortcuts(platform_name or sys.platform)
    rows = [(SHORTCUT_WORDS[name], key) for name, key in keys.items()
            if key and name in SHORTCUT_WORDS]
    rows.append(("The charts and the table, in tab order", f"{chart_shortcut(0)}…"))
    from PySide6.QtGui import QKeySequence

    def native(key: str) -> str:    # ⌘O on a Mac, Ctrl+O elsewhere
        return QKeySequence(key.removesuffix("…")).toString(
            QKeySequence.SequenceFormat.NativeText) + ("…" if key.endswith("…") else "")
    return "\n".join(f"<dt><b>{escape(native(key))}</b></dt><dd>{escape(what)}</dd>"
                     for what, key in rows)


def help_page() -> Path:
    """The help page, written to the data folder from siliconbench/resources/help.html with the parameter
    and flag sections generated; rewritten each time it is opened."""
    from siliconbench.core.store import home
    text = help_template().replace("<!-- PARAMETERS -->", parameters_html())
    text = text.replace("<!-- FLAGS -->", flags_html())
    text = text.replace("<!-- SHORTCUTS -->", shortcuts_html())
    text = text.replace("<!-- SEND RESULTS -->", send_results_html())
    page = home() / "help.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(page, text, own=True)  # a link or FIFO there is replaced, a target untouched
    return page


def open_url(url: QUrl) -> bool:
    """One place that opens things outside the app, so tests can stand in for it."""
    return QDesktopServices.openUrl(url)


def open_help(parent: QWidget | None = None) -> bool:
    """The help page in the browser; where it cannot be written (a folder in its place, a
    full disk), a sentence over `parent` instead."""
    try:
        page = help_page()
    except NotWritable as e:
        why = str(e)
    except OSError as e:
        why = f"The help page could not be written to the data folder ({e.strerror or e})."
    else:
        return open_url(QUrl.fromLocalFile(str(page)))
    if parent is not None:
        message_sheet(parent, "SiliconBench Help", why)
    return False


def show_data_folder() -> bool:
    from siliconbench.core.store import home
    folder = home()
    folder.mkdir(parents=True, exist_ok=True)
    return open_url(QUrl.fromLocalFile(str(folder)))


def show_how_to_send(parent: QWidget) -> QMessageBox:
    return message_sheet(parent, "How to Send Results", send_results_text(),
                         QMessageBox.Icon.Information)


def about_text() -> str:
    """Versions of everything that shapes a number, as the About box shows them."""
    import pyqtgraph
    import PySide6
    from PySide6.QtCore import qVersion

    from siliconbench import __version__
    from siliconbench.core.frameworks import FRAMEWORKS
    from siliconbench.core.machine import framework_versions
    lines = [f"SiliconBench {__version__}",
             f"Python {platform.python_version()} ({platform.machine()})",
             f"Qt {qVersion()} · PySide6 {PySide6.__version__} · pyqtgraph "
             f"{pyqtgraph.__version__}"]
    # Every framework the registry knows, in its order; then the libraries beside them that
    # shape a number (torchvision, transformers, keras, tensorflow-metal). Package metadata
    # only: nothing is imported.
    others = framework_versions()
    found = [fw.distribution() or ((fw.name, others[fw.name]) if fw.name in others else None)
             for fw in FRAMEWORKS.values()]          # (others: an old Mac's tensorflow-macos)
    lines += [f"{name} {version}" for name, version in filter(None, found)] or \
        ["No ML framework installed"]
    lines += [f"{name} {version}" for name, version in sorted(others.items())
              if name not in FRAMEWORKS]
    return "\n".join(lines)


def show_about(parent: QWidget) -> QMessageBox:
    return message_sheet(parent, "About SiliconBench",
                         "<h3>SiliconBench</h3><p>Benchmarks for machine learning on Apple "
                         "Silicon, NVIDIA GPUs and CPUs.</p><pre>" + about_text() + "</pre>",
                         QMessageBox.Icon.Information)
