"""The main window's menu bar: File, Edit, Run, View, Window and Help, their actions (kept on
the window as `<name>_action` where other code or tests use them) and their shortcuts
(siliconbench.gui.shortcuts, per platform). The menus only name what the window does."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication, QMenu

from siliconbench.gui import import_export
from siliconbench.gui.shortcuts import chart_shortcut, shortcuts


# File's exports: (action name, menu text, what asks for the file, the format).
EXPORTS = (
    ("export_csv", "Export Selected Runs as CSV…", import_export.choose_export_runs, "csv"),
    ("export_json", "Export Selected Runs as JSON…", import_export.choose_export_runs, "json"),
    ("export_send", "Export Selected Runs to Send…", import_export.choose_export_runs,
     "sbresults"),
    ("export_png", "Export Chart as PNG…", import_export.choose_export_chart, "png"),
    ("export_svg", "Export Chart as SVG…", import_export.choose_export_chart, "svg"),
)


def add_action(window, menu: QMenu, text: str, slot, shortcut: str = "",
               role: QAction.MenuRole | None = None, before: QAction | None = None) -> QAction:
    from PySide6.QtGui import QAction, QKeySequence   # after the first paint: fill_menus
    a = QAction(text, window)
    if shortcut:
        # fromString: QKeySequence(str) tries the Qt-enum overloads first, and building the Qt
        # namespace costs the window's first paint 35-43 ms (siliconbench/gui/qt_values.py).
        a.setShortcuts([QKeySequence.fromString(shortcut, QKeySequence.SequenceFormat.PortableText)])
    if role is not None:
        a.setMenuRole(role)
    a.triggered.connect(slot)
    menu.insertAction(before, a) if before is not None else menu.addAction(a)
    return a


MENUS = ("&File", "&Edit", "&Run", "&View", "&Window", "&Help")


def build_menu_bar(window) -> dict[str, QMenu]:
    """The menu bar's titles, for the window's first paint; fill_menus adds their entries
    after it (MainWindow.fill_menus). The entries, 30 actions with their shortcuts, and the
    QAction and QKeySequence classes PySide6 makes for them (imported where they are used)
    cost 23 M instructions before the first paint, 3% of the start (callgrind); nobody opens
    a menu that soon."""
    bar = window.menuBar()
    return {title.strip("&"): bar.addMenu(title) for title in MENUS}


def fill_menus(window, menus: dict[str, QMenu], platform: str = sys.platform) -> None:
    from PySide6.QtGui import QAction
    keys = shortcuts(platform)

    def action(menu, text, slot, key="", role=None) -> QAction:
        return add_action(window, menu, text, slot, keys.get(key, ""), role)

    file = menus["File"]
    window.import_action = action(file, "Import Results…",
                                  lambda: import_export.choose_import(window), "import")
    file.addSeparator()
    for name, text, choose, fmt in EXPORTS:
        setattr(window, f"{name}_action",
                action(file, text, lambda _=False, c=choose, f=fmt: c(window, f), name))
    file.addSeparator()
    action(file, "Close Window", window.close, "close")
    action(file, "Quit SiliconBench", window.quit_app, "quit", QAction.MenuRole.QuitRole)

    edit = menus["Edit"]
    window.copy_action = action(edit, "Copy", window.copy_selection, "copy")
    action(edit, "Select All Runs", window.select_all_runs, "select_all")
    edit.addSeparator()
    window.details_action = action(edit, "Show Run Details…", window.show_run_details, "details")
    window.rename_action = action(edit, "Name Machine…", window.choose_machine_name)
    window.delete_action = action(edit, "Delete Selected Runs…", window.confirm_delete, "delete")

    run = menus["Run"]
    window.run_action = action(run, "Run", window.run_clicked, "run")
    window.cancel_action = action(run, "Cancel Current Run", window.cancel_current, "cancel")
    action(run, "Cancel All Runs", lambda: window.queue.cancel_all(), "cancel_all")
    run.addSeparator()
    action(run, "Refresh Devices", window.devices.start, "refresh")

    window.view_menu = view = menus["View"]
    # The chart entries go before this separator once the charts exist (add_chart_entries).
    window.chart_entries_end = view.addSeparator()
    window.queue_tab_action = action(
        view, "Run Queue", lambda: window.bottom.setCurrentWidget(window.queue_view), "queue_tab")
    action(view, "Results", lambda: window.bottom.setCurrentWidget(window.results),
           "results_tab")
    view.addSeparator()
    window.sidebar_action = action(view, "Hide Sidebar", window.toggle_sidebar, "sidebar")

    window.window_menu = fill_window_menu(window, menus["Window"], keys)

    help_menu = menus["Help"]
    action(help_menu, "SiliconBench Help", lambda: gui_help().open_help(), "help")
    action(help_menu, "Show Data Folder", lambda: gui_help().show_data_folder())
    action(help_menu, "How to Send Results…", lambda: gui_help().show_how_to_send(window))
    help_menu.addSeparator()
    action(help_menu, "About SiliconBench", lambda: gui_help().show_about(window),
           role=QAction.MenuRole.AboutRole)
    action(help_menu, "About Qt", QApplication.aboutQt, role=QAction.MenuRole.AboutQtRole)


def gui_help():
    """siliconbench.gui.help, loaded when a Help entry is chosen: not before the window's first paint."""
    from siliconbench.gui import help
    return help


def fill_window_menu(window, menu: QMenu, keys: dict[str, str]) -> QMenu:
    """The Mac's Window menu: Minimize (⌘M), Zoom, Bring All to Front."""
    add_action(window, menu, "Minimize", window.showMinimized, keys["minimize"])
    add_action(window, menu, "Zoom", lambda: zoom(window))
    menu.addSeparator()
    add_action(window, menu, "Bring All to Front", lambda: bring_all_to_front(window))
    return menu


def zoom(window) -> None:
    """Between the size the user gave the window and the whole screen, as the Mac's green
    button does."""
    window.showNormal() if window.isMaximized() else window.showMaximized()


def bring_all_to_front(window) -> None:
    for widget in QApplication.topLevelWidgets():
        if widget.isVisible() and widget is not window:
            widget.raise_()
    window.raise_()  # the main window on top, and the one with the keyboard
    window.activateWindow()


def add_chart_entries(window, charts) -> None:
    """View > one entry per chart tab and the table (⌘1…), and Compare Selected Runs."""
    last = charts.indexOf(charts.table)
    for i in range(last + 1):
        add_action(window, window.view_menu,
                   f"{charts.tabText(i)} Chart" if i < last else "Result Rows Table",
                   lambda _=False, i=i: charts.setCurrentIndex(i), chart_shortcut(i),
                   before=window.chart_entries_end)
    window.compare_action = add_action(
        window, window.view_menu, "Compare Selected Runs",
        lambda: charts.setCurrentWidget(window.compare), shortcuts()["compare"],
        before=window.chart_entries_end)
    add_y_axis_menu(window, charts)


def add_y_axis_menu(window, charts) -> QMenu:
    """View > Y Axis: every chart's y axis automatic (log where the series span more than
    30x), linear or logarithmic; each plot's context menu sets its own."""
    from PySide6.QtGui import QActionGroup
    from siliconbench.gui.charts.axes import Y_MODES
    menu = QMenu("Y Axis", window)
    group = QActionGroup(menu)
    window.y_axis_actions = {}
    for mode, text in Y_MODES.items():
        a = menu.addAction(text)
        a.setCheckable(True)
        a.setChecked(mode == "auto")
        group.addAction(a)
        a.triggered.connect(lambda _=False, m=mode: charts.set_y_mode(m))
        window.y_axis_actions[mode] = a
    window.view_menu.insertMenu(window.chart_entries_end, menu)
    window.y_axis_menu = menu
    return menu


def results_context_menu(window, pos) -> QMenu:
    """Right-click on Results: what the Edit and File menus do with the selected runs."""
    menu = QMenu(window)
    for a in (window.details_action, window.copy_action, window.export_json_action,
              window.export_send_action, window.rename_action, window.delete_action):
        menu.addAction(a)
    window.context_menu = menu  # kept alive while open (tests read it)
    menu.popup(window.results.view.viewport().mapToGlobal(pos))
    return menu
