"""The main window: machine card, devices and workloads on the left; charts over the run queue
and the results browser on the right; the menus (siliconbench.gui.menus). It owns the store,
the run queue and the parts that act on them, gives each part the few collaborators it uses,
and wires the panels' signals together."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSettings, QTimer
from PySide6.QtWidgets import (
    QApplication,
    QMainWindow,
    QSplitter,
    QWidget,
)

from siliconbench.core.catalogue import Workload
from siliconbench.gui import menus, singleton_refs
from siliconbench.gui import settings as prefs
from siliconbench.gui.keyboard import Keyboard
from siliconbench.gui.param_form import ParamForm
from siliconbench.gui.sheets import question_sheet, showing
from siliconbench.gui.theme import Theme, palette_theme, theme_for, tone, tone_role, tone_roles
from siliconbench.gui.window_layout import (  # noqa: F401 (the layout's sizes, named here too)
    CHARTS_FIRST_H,
    DEVICE_PANE_WIDTH,
    MIN_CHARTS_W,
    MIN_PANE_WIDTH,
    MIN_WINDOW,
    MIN_WITH_SIDEBAR_W,
    SETUP_PANE_WIDTH,
    ChartsFirstSplit,
    WindowLayout,
)

if TYPE_CHECKING:  # the run queue, Results, the runner and dialogs load after the first paint
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    from siliconbench.core.results import RunRecord
    from siliconbench.gui.run_queue import RunJob


class _BuiltLater:
    """A part of the window that build_rest makes (the store, the run queue, Results): reading
    it before then builds it then, so nothing can reach a part that is not there yet."""

    def __set_name__(self, owner, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, window, owner=None):
        if window is None:
            return self
        window.build_rest()
        return getattr(window, self.slot)


class MainWindow(WindowLayout, Keyboard, QMainWindow):
    store = _BuiltLater()
    queue = _BuiltLater()        # siliconbench.gui.run_queue.RunQueue
    queue_view = _BuiltLater()   # siliconbench.gui.queue_view.QueueView
    results = _BuiltLater()      # siliconbench.gui.results_browser.ResultsBrowser
    live_runs = _BuiltLater()    # siliconbench.gui.live_runs.LiveRuns
    files = _BuiltLater()        # siliconbench.gui.import_export.ImportExport
    results_actions = _BuiltLater()  # siliconbench.gui.results_actions.ResultsActions
    starter = _BuiltLater()      # siliconbench.gui.run_start.RunStarter

    def __init__(self, store=None, settings: QSettings | None = None,
                 parent: QWidget | None = None, defer: bool = False) -> None:
        """defer: paint the devices, the workloads and the form first, and build the rest
        (the store, the run queue, Results, then the charts with pyqtgraph and the published
        references) after the window is shown (build_rest, start_background) or when first
        needed. The store is opened then, unless one is given."""
        super().__init__(parent)
        self._given_store = store
        self._rest_built = False
        self.settings = settings or prefs.app_settings()
        self.theme: Theme | None = None
        self.ask_before_closing = True
        self._quit_when_closed = False
        self.forms: dict[str, ParamForm] = {}

        self.setWindowTitle("SiliconBench")
        self.setAcceptDrops(True)
        self.resize(1440, 900)
        self.setMinimumSize(*MIN_WINDOW)
        self._charts = None
        self.compare = None
        self._build()
        self.menus = menus.build_menu_bar(self.menuBar())
        self.menu_actions: menus.MenuActions | None = None   # the menus' entries: fill_menus
        self._connect()
        # pyqtgraph takes references to None/True/False it never gave back (on a resize, say):
        # keep the interpreter's counts far from zero (siliconbench/gui/singleton_refs.py).
        self.top_up_timer = QTimer(self, interval=singleton_refs.TOP_UP_EVERY_MS)
        self.top_up_timer.timeout.connect(singleton_refs.top_up)
        self.top_up_timer.start()
        self.show_sidebar(prefs.restore_window(self.settings, self, self._splits()))
        prefs.restore_run_choices(self.settings, self.catalogue, self.devices, self.quick_box)
        self._update_run_button()
        self.apply_theme(palette_theme())   # theme_for() confirms it in build_rest
        if not defer:
            self.fill_menus()
            self.build_charts()

    @property
    def charts(self):
        """The chart tabs (siliconbench.gui.charts.panel.ChartPanel), built on first use."""
        if self._charts is None:
            self.build_charts()
        return self._charts

    def build_rest(self, store=None) -> None:
        """The store (this one, the one given to the window, else the default), the run queue
        and Results: after the first paint when deferred."""
        if self._rest_built:
            return
        self.fill_menus()
        # The colour scheme, asked of Qt now that the window is painted
        # (siliconbench/gui/qt_values.py).
        self.apply_theme(theme_for())
        app = QApplication.instance()
        if app is not None:
            app.styleHints().colorSchemeChanged.connect(self.apply_color_scheme)
        from siliconbench.gui.import_export import ImportExport
        from siliconbench.gui.live_runs import LiveRuns
        from siliconbench.gui.queue_view import QueueView
        from siliconbench.gui.results_actions import ResultsActions
        from siliconbench.gui.results_browser import ResultsBrowser
        from siliconbench.gui.run_queue import RunQueue
        from siliconbench.gui.run_start import RunStarter
        store = store if store is not None else self._given_store
        if store is None:
            from siliconbench.core.run_store import open_store
            store = open_store()  # a StoreError leaves the window as it was, to try again
        self._rest_built = True  # before the parts below, which read each other through it
        self._store = store
        self._queue = RunQueue(store, self)
        self._queue_view = QueueView(self._queue)
        self._results = ResultsBrowser(store)
        self.bottom.addTab(self._queue_view, "Run Queue")
        self.bottom.addTab(self._results, "Results")
        self._starter = RunStarter(self, self.catalogue, self.devices, lambda: self.form,
                                   self.quick_box, self._queue, self.save_run_choices)
        # The queue's rows, telemetry and endings, shown.
        self._live_runs = LiveRuns(self._queue, self._results, self.statusBar(),
                                   charts=lambda: self.charts, compare=lambda: self.compare,
                                   show_queue=self.show_queue,
                                   select_new=lambda: prefs.selects_new_runs(self.settings),
                                   ask_before=self._starter.ask_before)
        self._files = ImportExport(self, self.settings, self.statusBar(), store, self._results,
                                   self.show_results, lambda: self.charts)
        self._results_actions = edits = ResultsActions(self, self._results, self.statusBar(),
                                                       self._draw_selection)
        results = self._results
        results.selection_changed.connect(self._draw_selection)
        results.rename_button.clicked.connect(edits.choose_machine_name)
        results.delete_button.clicked.connect(edits.confirm_delete)
        results.store_changed.connect(self._live_runs.update_status)
        results.machine_named.connect(self._machine_named)
        from PySide6.QtCore import Qt  # after the first paint (siliconbench/gui/qt_values.py)
        view = results.view
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(
            lambda pos: menus.results_context_menu(self, self.menu_actions, view, pos))
        view.doubleClicked.connect(lambda _: edits.show_run_details())
        if self.theme is not None:
            self._queue_view.apply_theme(self.theme)
            results.apply_theme(self.theme)
        from siliconbench.gui.store_banner import SharedStoreWatch
        self.store_watch = SharedStoreWatch(self)
        self.store_watch.opened(store)   # a shared store that refused: said now
        self._update_tab_order()

    def build_charts(self) -> None:
        """The charts and Compare: pyqtgraph and the published references load here, after the
        window is on screen when it was built with defer."""
        if self._charts is not None:
            return
        self.build_rest()
        from siliconbench.gui.charts.panel import ChartPanel
        from siliconbench.gui.compare_view import CompareView
        self._charts = charts = ChartPanel()
        self.compare = CompareView()
        self.compare.run_requested.connect(self.live_runs.queue_reference_run)
        self.compare.set_devices([d for d in self.devices.devices if d.usable])
        charts.addTab(self.compare, "Compare")
        self.chart_slot.addWidget(charts)
        self.chart_slot.setCurrentWidget(charts)
        self.fill_menus()
        menus.add_chart_entries(self, self.menu_actions, charts, self.compare)
        if self.theme is not None:
            charts.apply_theme(self.theme)
            self.compare.apply_theme(self.theme)
            tone_roles(charts, self.theme)
        self._draw_selection(self.results.selected_records())
        self._update_tab_order()

    def fill_menus(self) -> None:
        """The menus' entries (siliconbench.gui.menus.fill_menus), once: after the first paint when
        deferred (build_rest), else in the constructor."""
        if self.menu_actions is not None:
            return
        self.menu_actions = menus.fill_menus(self, self.menus, self._menu_slots())
        self._name_sidebar_action()
        self._update_run_button()

    def _menu_slots(self) -> dict[str, Callable]:
        """What each menu entry does, by action name (siliconbench.gui.menus.ENTRIES); the
        parts built with the rest are read when the entry is chosen."""
        return {"import": lambda: self.files.choose_import(),
                **{name: lambda _=False, f=fmt: self.files.choose_export_runs(f)
                   for name, fmt in (("export_csv", "csv"), ("export_json", "json"),
                                     ("export_send", "sbresults"))},
                **{name: lambda _=False, f=fmt: self.files.choose_export_chart(f)
                   for name, fmt in (("export_png", "png"), ("export_svg", "svg"))},
                "close": self.close, "quit": self.quit_app,
                "copy": lambda: self.results_actions.copy_selection(),
                "select_all": self.select_all_runs,
                "details": lambda: self.results_actions.show_run_details(),
                "rename": lambda: self.results_actions.choose_machine_name(),
                "delete": lambda: self.results_actions.confirm_delete(),
                "run": self.run_clicked, "quick_suite": self.queue_quick_suite,
                "sustained_check": self.ask_sustained_check,
                "cancel": self.cancel_current,
                "cancel_all": lambda: self.queue.cancel_all(), "refresh": self.devices.start,
                "queue_tab": self.show_queue, "results_tab": self.show_results,
                "sidebar": self.toggle_sidebar, "preferences": self.show_preferences}

    def show_preferences(self):
        """Edit > Preferences…: one window, brought forward when open."""
        from siliconbench.gui.preferences import Preferences
        if getattr(self, "_preferences", None) is None:
            self._preferences = Preferences(self.settings, self)
        self._preferences.show()
        self._preferences.raise_()
        return self._preferences

    def _splits(self) -> dict[str, QSplitter]:
        """The panes' splitters, by the names their states are kept under."""
        return {"main_split": self.main_split, "right_split": self.right_split}

    def save_run_choices(self) -> None:
        prefs.save_run_choices(self.settings, self.catalogue, self.devices, self.quick_box,
                               self.forms)

    def save_state(self) -> None:
        """What the next launch restores (siliconbench.gui.settings): on closing."""
        self.save_run_choices()
        prefs.save_window(self.settings, self, self._splits(), self.sidebar_shown())

    def sidebar_shown(self) -> bool:
        return not self.main_split.widget(0).isHidden()

    def toggle_sidebar(self) -> None:
        self.show_sidebar(not self.sidebar_shown())

    def show_sidebar(self, shown: bool) -> None:
        """View > Hide Sidebar: the devices and workload panes go, the charts take the room."""
        for pane in (self.device_pane, self.setup_pane):
            pane.setVisible(shown)
        self.setMinimumSize(MIN_WITH_SIDEBAR_W if shown else MIN_WINDOW[0], MIN_WINDOW[1])
        self._name_sidebar_action()

    def _name_sidebar_action(self) -> None:
        if self.menu_actions is not None:   # else fill_menus names it
            self.menu_actions["sidebar"].setText("Hide Sidebar" if self.sidebar_shown()
                                                 else "Show Sidebar")

    def _connect(self) -> None:
        self.catalogue.chosen.connect(self._on_workload)
        self.devices.checked_changed.connect(self._update_run_button)
        self.devices.checked_changed.connect(self._update_tab_order)
        self.devices.checked_changed.connect(self._tell_form_frameworks)
        self.devices.discovered.connect(self._on_devices_found)
        # Kept answers arrive first: the first launch's sensible choice need not wait for them all.
        self.devices.partly_found.connect(lambda _: self._pick_first_device())
        self.run_button.clicked.connect(self.run_clicked)

    def start_background(self) -> None:
        """After the window is shown: probe the machine and discover devices (threads), build
        the run queue and Results and load the results, then build the charts (a second of
        pyqtgraph) once those are under way."""
        self.machine_card.start()
        self.devices.start()
        self.results.load_in_background()
        QTimer.singleShot(0, self.build_charts)

    # ------------------------------------------------------------------ workloads and runs

    def _on_workload(self, w: Workload) -> None:
        form = self.forms.get(w.name)
        if form is None:
            form = self.forms[w.name] = ParamForm(w.params, check=w.plan)
            prefs.restore_form(self.settings, w.name, form)
            form.validity_changed.connect(self._update_run_button)
            if self.theme is not None:   # else apply_theme tones it
                form.apply_theme(self.theme)
            self.form_stack.addWidget(form)
        self.form_stack.setCurrentWidget(form)
        self.workload_summary.setText(w.summary)
        from siliconbench.core.frameworks import runs_on
        self.devices.restrict_to(runs_on(w))
        self._tell_form_frameworks()
        self._update_run_button()
        self._update_tab_order()

    def _tell_form_frameworks(self, *_) -> None:
        """The form offers what the ticked devices' frameworks run (the LLM's model files)."""
        if self.form is not None:
            self.form.set_frameworks({d.framework for d in self.devices.checked()})

    @property
    def form(self) -> ParamForm | None:
        w = self.catalogue.current()
        return self.forms.get(w.name) if w else None

    def _update_run_button(self, *_) -> None:
        devices = self.devices.checked()
        form = self.form
        problem = ""
        if self.catalogue.load_error:
            problem = self.catalogue.load_error
        elif self.catalogue.current() is None:
            problem = "Choose a workload."
        elif form is not None and not form.is_valid():
            problem = "Fix the marked parameter before running."
        elif not devices:
            problem = ("Waiting for the device list…" if not self.devices.devices
                       else "Tick at least one device.")
        n = len(devices)
        self.run_button.setText("Run" if n <= 1 else f"Run on {n} Devices")
        self.run_button.setEnabled(not problem)
        if self.menu_actions is not None:   # else fill_menus asks again
            self.menu_actions["run"].setEnabled(not problem)
        self.run_hint.setText(problem or ("Runs are queued and measured one at a time. "
                                          "The window stays usable meanwhile."))

    def run_clicked(self) -> list[RunJob]:
        """Run, the button or the menu: the runs queued now (siliconbench.gui.run_start)."""
        return self.starter.run() if self.run_button.isEnabled() else []

    def queue_quick_suite(self) -> int:
        """The quick suite on every usable device, compared when done; the runs queued now
        (siliconbench.gui.welcome)."""
        from siliconbench.gui.welcome import queue_quick_suite
        return queue_quick_suite(self.devices, self.statusBar(), self.live_runs.queue_compared,
                                 store=self.store)

    def ask_sustained_check(self):
        """Run > Run the Sustained Check: its time on the GPUs found, asked first
        (siliconbench.gui.welcome)."""
        from siliconbench.gui.welcome import ask_sustained_check
        return ask_sustained_check(self, self.devices, self.statusBar(),
                                   self.live_runs.queue_compared, self.store)

    def show_welcome(self):
        """The first launch's welcome, which offers the quick suite; None after that."""
        from siliconbench.gui.welcome import maybe_show_welcome
        return maybe_show_welcome(self.settings, self, self.queue_quick_suite)

    def cancel_current(self) -> None:
        if self.queue.current is not None:
            self.queue.cancel(self.queue.current)

    def _draw_selection(self, selected: list[RunRecord]) -> None:
        live = self.live_runs.running_records({r.id for r in selected})
        self.charts.show_records(selected + live)
        self.compare.set_records(selected)

    def _machine_named(self, keys: set[str], label: str) -> None:
        """Name Machine: the queue's runs of those machines and the machine card (this
        machine) take the name at once, as Results does."""
        from siliconbench.gui.results_browser import machine_key
        for job in self.queue.jobs:
            if job.record.machine and machine_key(job.record) in keys:
                job.record.label = label or None
                self.queue.job_changed.emit(job)
        info = self.machine_card.info
        if info is not None and info.key() in keys:
            self.machine_card.set_machine(info)

    def _on_devices_found(self) -> None:
        usable = [d for d in self.devices.devices if d.usable]
        if self.compare is not None:
            self.compare.set_devices(usable)
        self.statusBar().showMessage(f"{len(usable)} usable device"
                                     f"{'s' * (len(usable) != 1)} found.", 5000)
        self._pick_first_device()

    def _pick_first_device(self) -> None:
        """With nothing ticked (nor wished for from last time), tick the registry's first
        choice among the devices listed so far (DeviceList.tick_default)."""
        self.devices.tick_default()

    # ------------------------------------------------------------------ results

    def show_queue(self) -> None:
        self.bottom.setCurrentWidget(self.queue_view)

    def show_results(self) -> None:
        self.bottom.setCurrentWidget(self.results)

    def select_all_runs(self) -> None:
        self.show_results()
        self.results.view.selectAll()

    def import_files(self, paths: list[str]) -> bool:
        """Import result files (a drop, Finder, the command line): all or nothing."""
        return self.files.import_files(paths)

    # ------------------------------------------------------------------ drag and drop

    def dragEnterEvent(self, event) -> None:
        urls = event.mimeData().urls()
        if urls and all(u.isLocalFile() for u in urls):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.import_files(paths)

    # ------------------------------------------------------------------ theme

    def apply_color_scheme(self, scheme: Qt.ColorScheme) -> None:
        self.apply_theme(theme_for(scheme))

    def apply_theme(self, theme: Theme) -> None:
        if theme == self.theme:
            return
        self.theme = theme
        # Section titles, hints, errors and the line over Run: palettes and fonts, not a
        # style sheet (siliconbench.gui.theme.tone).
        for label in self.role_labels:
            tone_role(label, theme)
        for form in self.forms.values():
            form.apply_theme(theme)
        if self._charts is not None:
            tone_roles(self._charts, theme)
        tone(self.separator, theme.border)
        watch = getattr(self, "store_watch", None)   # built with the rest
        rest = (self._queue_view, self._results, watch and watch.banner) \
            if self._rest_built else ()
        for panel in (self.machine_card, self.devices, self._charts,
                      self.compare, *rest):
            if panel is not None:  # the charts may not be built yet
                panel.apply_theme(theme)

    def changeEvent(self, event) -> None:
        # Without colorSchemeChanged (older desktops) a palette change is the only signal.
        if event.type() == QEvent.Type.ApplicationPaletteChange:
            self.apply_theme(theme_for())
        super().changeEvent(event)

    def quit_app(self) -> None:
        self._quit_when_closed = True  # now, or once the runs' question is answered
        self.close()

    def closeEvent(self, event) -> None:
        # (Closed before build_rest, the window has no queue to ask about or stop.)
        if self._rest_built and self.queue.busy and self.ask_before_closing:
            event.ignore()
            if showing(self) is None:  # asked once at a time
                self.confirm_close()
            return
        self.save_state()
        if self._rest_built:
            self.queue.shutdown()
        super().closeEvent(event)
        if self._quit_when_closed:
            QApplication.quit()

    def confirm_close(self) -> QMessageBox:
        """Runs are going: ask in a sheet; Close closes (and quits, from Quit)."""
        from PySide6.QtWidgets import QMessageBox
        def close() -> None:
            self.ask_before_closing = False
            self.close()

        def stay() -> None:
            self._quit_when_closed = False
        return question_sheet(self, "Stop the runs?", "Runs are still going. Close anyway?",
                              "The current run is cancelled; the points it measured so far are "
                              "kept.", "Close", close, QMessageBox.ButtonRole.DestructiveRole,
                              otherwise=stay)
