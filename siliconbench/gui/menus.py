"""The main window's menu bar: File, Edit, Run, View, Window and Help, their entries (ENTRIES)
and their shortcuts (siliconbench.gui.shortcuts, per platform). The menus only name what the
window does: fill_menus is given a slot per entry and returns the actions (MenuActions), which
the window keeps."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QApplication, QMenu

from siliconbench.gui.shortcuts import chart_shortcut, shortcuts

if TYPE_CHECKING:  # QAction is imported after the first paint (fill_menus)
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QAbstractItemView, QMenuBar, QWidget

# Each menu's entries in order, (action name, text), and None for a separator. An action's
# name is its shortcut's (siliconbench.gui.shortcuts) where it has one, and its slot's.
ENTRIES = {
    "File": (("import", "Import Results…"), None,
             ("export_csv", "Export Selected Runs as CSV…"),
             ("export_json", "Export Selected Runs as JSON…"),
             ("export_send", "Export Selected Runs to Send…"),
             ("export_png", "Export Chart as PNG…"),
             ("export_svg", "Export Chart as SVG…"), None,
             ("close", "Close Window"), ("quit", "Quit SiliconBench")),
    "Edit": (("copy", "Copy"), ("select_all", "Select All Runs"), None,
             ("details", "Show Run Details…"), ("rename", "Name Machine…"),
             ("delete", "Delete Selected Runs…"), None, ("preferences", "Preferences…")),
    # The quick suite the first launch's welcome offers, for whoever chose Not Now; the
    # Sustained check (suites.json "sustained": minutes of load per GPU) asks first.
    "Run": (("run", "Run"), ("quick_suite", "Run the Quick Suite"),
            ("sustained_check", "Run the Sustained Check…"), None,
            ("cancel", "Cancel Current Run"), ("cancel_all", "Cancel All Runs"), None,
            ("refresh", "Refresh Devices")),
    # The chart entries go before View's first separator once the charts exist
    # (add_chart_entries).
    "View": (None, ("queue_tab", "Run Queue"), ("results_tab", "Results"), None,
             ("sidebar", "Hide Sidebar")),
    # The Mac's Window menu: Minimize (⌘M), Zoom, Bring All to Front.
    "Window": (("minimize", "Minimize"), ("zoom", "Zoom"), None,
               ("front", "Bring All to Front")),
    "Help": (("help", "SiliconBench Help"), ("data_folder", "Show Data Folder"),
             ("how_to_send", "How to Send Results…"), None,
             ("about", "About SiliconBench"), ("about_qt", "About Qt")),
}

# The entries a Mac moves into the application menu: their QAction.MenuRole.
ROLES = {"quit": "QuitRole", "about": "AboutRole", "about_qt": "AboutQtRole",
         "preferences": "PreferencesRole"}

# Right-click on Results: what the Edit and File menus do with the selected runs.
CONTEXT = ("details", "copy", "export_json", "export_send", "rename", "delete")


@dataclass
class MenuActions:
    """The menus' entries by action name (`actions["run"]`); View's separator the chart entries
    go before; once the charts exist, "compare", and View > Y Axis with its entries by mode."""
    named: dict[str, QAction]
    view: QMenu
    chart_entries_end: QAction
    y_axis_menu: QMenu | None = None
    y_axis: dict[str, QAction] = field(default_factory=dict)

    def __getitem__(self, name: str) -> QAction:
        return self.named[name]


def add_action(parent: QWidget, menu: QMenu, text: str, slot, shortcut: str = "",
               role: QAction.MenuRole | None = None, before: QAction | None = None) -> QAction:
    from PySide6.QtGui import QAction, QKeySequence  # after the first paint: fill_menus
    a = QAction(text, parent)
    if shortcut:
        # fromString: QKeySequence(str) tries the Qt-enum overloads first, and building the Qt
        # namespace costs the window's first paint 35-43 ms (siliconbench/gui/qt_values.py).
        a.setShortcuts([QKeySequence.fromString(shortcut,
                                                QKeySequence.SequenceFormat.PortableText)])
    if role is not None:
        a.setMenuRole(role)
    a.triggered.connect(slot)
    menu.insertAction(before, a) if before is not None else menu.addAction(a)
    return a


def build_menu_bar(bar: QMenuBar) -> dict[str, QMenu]:
    """The menu bar's titles, for the window's first paint; fill_menus adds their entries
    after it (MainWindow.fill_menus). The entries, 30 actions with their shortcuts, and the
    QAction and QKeySequence classes PySide6 makes for them (imported where they are used)
    cost 23 M instructions before the first paint, 3% of the start (callgrind); nobody opens
    a menu that soon."""
    return {title: bar.addMenu(f"&{title}") for title in ENTRIES}


def fill_menus(window: QWidget, menus: dict[str, QMenu], slots: dict[str, Callable],
               platform: str = sys.platform) -> MenuActions:
    """Every menu's entries, each calling its slot: the window's `slots` by action name, and
    the Window and Help menus' own (own_slots)."""
    from PySide6.QtGui import QAction
    keys = shortcuts(platform)
    slots = {**own_slots(window), **slots}
    named: dict[str, QAction] = {}
    separators: dict[str, QAction] = {}   # each menu's first
    for title, entries in ENTRIES.items():
        menu = menus[title]
        for entry in entries:
            if entry is None:
                separators.setdefault(title, menu.addSeparator())
                continue
            name, text = entry
            role = getattr(QAction.MenuRole, ROLES[name]) if name in ROLES else None
            named[name] = add_action(window, menu, text, slots[name], keys.get(name, ""), role)
    return MenuActions(named, menus["View"], separators["View"])


def own_slots(window: QWidget) -> dict[str, Callable]:
    """The Window menu's entries and Help's: they need nothing but the window itself."""
    return {"minimize": window.showMinimized, "zoom": lambda: zoom(window),
            "front": lambda: bring_all_to_front(window),
            "help": lambda: gui_help().open_help(window),
            "data_folder": lambda: gui_help().show_data_folder(),
            "how_to_send": lambda: gui_help().show_how_to_send(window),
            "about": lambda: gui_help().show_about(window),
            "about_qt": QApplication.aboutQt}


def gui_help():
    """siliconbench.gui.help, loaded when a Help entry is chosen: not before the window's
    first paint."""
    from siliconbench.gui import help
    return help


def zoom(window: QWidget) -> None:
    """Between the size the user gave the window and the whole screen, as the Mac's green
    button does."""
    window.showNormal() if window.isMaximized() else window.showMaximized()


def bring_all_to_front(window: QWidget) -> None:
    for widget in QApplication.topLevelWidgets():
        if widget.isVisible() and widget is not window:
            widget.raise_()
    window.raise_()  # the main window on top, and the one with the keyboard
    window.activateWindow()


def add_chart_entries(window: QWidget, actions: MenuActions, charts, compare) -> None:
    """View > one entry per chart tab and the table (⌘1…), and Compare Selected Runs."""
    last = charts.indexOf(charts.table)
    for i in range(last + 1):
        add_action(window, actions.view,
                   f"{charts.tabText(i)} Chart" if i < last else "Result Rows Table",
                   lambda _=False, i=i: charts.setCurrentIndex(i), chart_shortcut(i),
                   before=actions.chart_entries_end)
    actions.named["compare"] = add_action(
        window, actions.view, "Compare Selected Runs",
        lambda: charts.setCurrentWidget(compare), shortcuts()["compare"],
        before=actions.chart_entries_end)
    add_y_axis_menu(window, actions, charts)


def add_y_axis_menu(window: QWidget, actions: MenuActions, charts) -> QMenu:
    """View > Y Axis: every chart's y axis automatic (log where the series span more than
    30x), linear or logarithmic; each plot's context menu sets its own."""
    from PySide6.QtGui import QActionGroup

    from siliconbench.gui.charts.axes import Y_MODES
    menu = QMenu("Y Axis", window)
    group = QActionGroup(menu)
    for mode, text in Y_MODES.items():
        a = menu.addAction(text)
        a.setCheckable(True)
        a.setChecked(mode == "auto")
        group.addAction(a)
        a.triggered.connect(lambda _=False, m=mode: charts.set_y_mode(m))
        actions.y_axis[mode] = a
    actions.view.insertMenu(actions.chart_entries_end, menu)
    actions.y_axis_menu = menu
    return menu


def results_context_menu(window: QWidget, actions: MenuActions, view: QAbstractItemView,
                         pos) -> QMenu:
    """Right-click on Results (`view`): what the Edit and File menus do with the selected
    runs."""
    menu = QMenu(window)
    for name in CONTEXT:
        menu.addAction(actions[name])
    menu.popup(view.viewport().mapToGlobal(pos))
    return menu
